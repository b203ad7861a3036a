// Benchmark workload for the ELT hooks (scripts/bench/bench-hooks.sh): a section
// that does little but call small methods, timed in-process, so that the
// hooks' cost per call shows. Every method is [MethodImpl(NoInlining)].
//
//   CallHeavy [fib-n] [mix-calls]     (defaults 30 and 3000000)
//
// Prints the results, the number of calls the section made, and its time.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace E2E.CallHeavy
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Fib(int n) { return n < 2 ? n : Fib(n - 1) + Fib(n - 2); }

        // A call that does a little work: four rounds of a 64-bit LCG.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static long Mix(long x)
        {
            for (int i = 0; i < 4; i++)
            {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            return x;
        }

        // The number of calls Fib(n) makes: 2 * Fib(n + 1) - 1.
        static long FibCalls(int n)
        {
            long a = 0, b = 1;
            for (int i = 0; i < n + 1; i++) { long t = a + b; a = b; b = t; }
            return 2 * a - 1;
        }

        static int Main(string[] args)
        {
            int n = args.Length > 0 ? int.Parse(args[0]) : 30;
            int mixCalls = args.Length > 1 ? int.Parse(args[1]) : 3000000;
            var watch = Stopwatch.StartNew();
            int fib = Fib(n);
            long mixed = 0;
            for (int i = 0; i < mixCalls; i++)
            {
                mixed = Mix(mixed);
            }
            watch.Stop();
            Console.WriteLine("fib(" + n + ")=" + fib);
            Console.WriteLine("mix=" + mixed.ToString("X16"));
            Console.WriteLine("calls=" + (FibCalls(n) + mixCalls));
            Console.WriteLine("section_us=" + (watch.ElapsedTicks * 1000000L / Stopwatch.Frequency));
            return 46;
        }
    }
}
