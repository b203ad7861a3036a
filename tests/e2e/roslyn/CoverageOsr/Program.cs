// Covered methods first reached from code the JIT compiled after the
// method was instrumented (issue 37), on one thread, counts known:
// (d) from a loop that went on-stack replacement (OSR, .NET 7+: the loop
//     starts in tier-0 code with a patchpoint and continues in optimized
//     code compiled from the instrumented IL; on 3.1 a method with a loop
//     is optimized at once), and (e) from precompiled (ReadyToRun)
//     framework code: List<int>.ForEach calls Visit.
// tests/e2e_coverage.rs checks every line's count.
using System;
using System.Collections.Generic;

namespace E2E.CoverageOsr
{
    public static class Program
    {
        static int visited;

        public static int Main()
        {
            long hot = Hot(200000);
            int framework = FromFramework();
            Console.WriteLine("hot=" + hot);
            Console.WriteLine("framework=" + framework);
            return 0;
        }

        static long Hot(int n)
        {
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += i & 7;
                if (i >= 150000 && i % 10000 == 0)
                {
                    sum += Rare(i);
                }
            }
            return sum;
        }

        static int Rare(int x)
        {
            if (x > 170000)
            {
                return 2;
            }
            return 1;
        }

        static int FromFramework()
        {
            var list = new List<int> { 1, 2, 3, 4, 5 };
            list.ForEach(Visit);
            return visited;
        }

        static void Visit(int x)
        {
            if (x % 2 == 0)
            {
                visited += 10;
            }
            else
            {
                visited += 1;
            }
        }
    }
}
