// The CallTarget cost benchmark (scripts/bench-calltarget.sh) and the
// allocation guard (tests/e2e_calltarget.rs): N calls of a NoInlining
// `int Add(int, int)`, timed with a Stopwatch, and the bytes the thread
// allocated meanwhile (GC.GetAllocatedBytesForCurrentThread, exact).
// Prints one line:
//   calls=N ns_per_call=X allocated=BYTES bytes_per_call=Y sum=S
//
//   CallTargetBench [N] [--box]
// --box: the loop also boxes an int per call (the guard's proof that the
// meter sees an allocation per call).
using System;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;

namespace E2E.CallTargetBench
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Add(int a, int b)
        {
            return a + b;
        }

        // Named as the target of the unwrapped runs: never called.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Unused(int a)
        {
            return a;
        }

        static object sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Loop(int n, bool box)
        {
            int sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += Add(i, 1);
                if (box)
                    sink = i;
            }
            return sum;
        }

        public static int Main(string[] args)
        {
            int n = 10000000;
            bool box = false;
            foreach (var a in args)
            {
                if (a == "--box")
                    box = true;
                else
                    n = int.Parse(a, CultureInfo.InvariantCulture);
            }
            // Warm-up: every method JIT-compiled, every static constructor
            // (the integration's) run before the measured section.
            Loop(1000, box);
            long before = GC.GetAllocatedBytesForCurrentThread();
            var watch = Stopwatch.StartNew();
            int sum = Loop(n, box);
            watch.Stop();
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            double ns = watch.Elapsed.TotalMilliseconds * 1e6 / n;
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "calls={0} ns_per_call={1:F3} allocated={2} bytes_per_call={3:F3} sum={4}",
                n, ns, allocated, (double)allocated / n, sum));
            return 0;
        }
    }
}
