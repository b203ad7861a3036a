// Small covered methods first reached from callers the JIT optimizes
// (issue 37): tests/e2e_coverage.rs checks every line's count. Each callee
// is called a known number of times, on one thread; Main has no loop, so it
// runs at tier 0 and inlines nothing itself.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.CoverageInlining
{
    public static class Program
    {
        public static int Main()
        {
            int a = Eager(5);
            int b = Looping(3);
            int c = Warmed();
            Console.WriteLine("eager=" + a);
            Console.WriteLine("looping=" + b);
            Console.WriteLine("warmed=" + c);
            return 0;
        }

        // (a) Optimized at its first compilation: Sign is first met here,
        // at two call sites.
        [MethodImpl(MethodImplOptions.AggressiveOptimization)]
        static int Eager(int x)
        {
            return Sign(x) * 10 + Sign(-x);
        }

        static int Sign(int x)
        {
            if (x > 0)
            {
                return 1;
            }
            return -1;
        }

        // (b) A loop: optimized at its first compilation on 3.1 (quick JIT
        // leaves methods with loops alone); Clamp is first met here.
        static int Looping(int n)
        {
            int sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += Clamp(i);
            }
            return sum;
        }

        static int Clamp(int x)
        {
            if (x > 1)
            {
                return 1;
            }
            return x;
        }

        // (c) Warm runs often enough to be compiled again at tier 1 before
        // it first calls Late.
        static int Warmed()
        {
            int sum = 0;
            for (int round = 0; round < 5; round++)
            {
                for (int i = 0; i < 50; i++)
                {
                    sum += Warm(false);
                }
                Thread.Sleep(200);
            }
            sum += Warm(true);
            sum += Warm(true);
            return sum;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Warm(bool last)
        {
            if (last)
            {
                return Late(7);
            }
            return 0;
        }

        static int Late(int x)
        {
            return x + 1;
        }
    }
}
