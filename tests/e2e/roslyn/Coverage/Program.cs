// Known coverage for tests/e2e_coverage.rs: every line's expected hit count
// is written there by hand from this source. Keep line numbers stable.
using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading.Tasks;

namespace E2E.Coverage
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            int total = 0;
            for (int i = 0; i < 3; i++)
            {
                total += Classify(i);
            }
            Console.WriteLine("total=" + total);
            Console.WriteLine("switch=" + Pick(1) + Pick(7));
            Console.WriteLine("guarded=" + Guarded(0) + Guarded(5));
            Console.WriteLine("async=" + TwiceAsync(4).Result);
            int sum = 0;
            foreach (int n in Evens(3))
            {
                sum += n;
            }
            Console.WriteLine("evens=" + sum);
            Func<int, int> square = x => x * x;
            Console.WriteLine("lambda=" + square(5));
            Console.WriteLine("generic=" + Echo(7) + Echo("s"));
            Console.WriteLine("excluded=" + Excluded());
            return 3;
        }

        static int Classify(int i)
        {
            if (i > 5)
            {
                return 100;
            }
            return i;
        }

        static string Pick(int k)
        {
            switch (k)
            {
                case 0:
                    return "zero";
                case 1:
                    return "one";
                case 2:
                    return "two";
                default:
                    return "many";
            }
        }

        static int Guarded(int d)
        {
            int r = 0;
            try
            {
                r = 10 / d;
            }
            catch (DivideByZeroException)
            {
                r = -1;
            }
            finally
            {
                r += 1;
            }
            return r;
        }

        static async Task<int> TwiceAsync(int v)
        {
            await Task.Delay(1);
            return v * 2;
        }

        static IEnumerable<int> Evens(int count)
        {
            for (int i = 0; i < count; i++)
            {
                yield return i * 2;
            }
        }

        static T Echo<T>(T value)
        {
            return value;
        }

        static int NeverCalled()
        {
            return 42;
        }

        [ExcludeFromCodeCoverage]
        static int Excluded()
        {
            return 1;
        }
    }
}
