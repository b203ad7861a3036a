// The CallTarget cost benchmark (scripts/bench/bench-calltarget.sh) and the
// allocation guard (tests/e2e_calltarget.rs): N calls of a NoInlining
// `int Add(int, int)`, timed with a Stopwatch, and the bytes the thread
// allocated meanwhile (GC.GetAllocatedBytesForCurrentThread, exact).
//
// Before them, a warm-up as an application gets it under tiered
// compilation: ROUNDS rounds of 10,000 calls (default 100), 20 ms apart
// (about 2 s), each round timed; a fixed number, so that two runs differ
// only by N (the callgrind guard subtracts them). The time to the final
// tier is the first round from which every round runs within 1.5x (+1 ns)
// of the measured calls' time per call: the calls made before it and the
// milliseconds from the first call. Prints one line:
//   calls=N ns_per_call=X allocated=BYTES bytes_per_call=Y sum=S
//     warmup_calls=W final_tier_calls=C final_tier_ms=T
//
//   CallTargetBench [N] [--box] [--hand-counted] [--warmup-rounds ROUNDS]
// --box: the loop also boxes an int per call (the guard's proof that the
// meter sees an allocation per call).
// --hand-counted: the loop calls AddCounted instead of Add: the same
// addition with CountingIntegration's work written into the method by hand
// (the thread's own counters incremented before and after), the baseline that says
// what the wrapping adds to a counting integration beyond its own work.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.CallTargetBench
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Add(int a, int b)
        {
            return a + b;
        }

        // CountingIntegration's counters, written in by hand: per thread on
        // .NET 5 and later (a thread's own, found through a thread-static
        // field once per call), shared and interlocked before.
        sealed class HandCounts
        {
            public long Begins, Ends;
        }

        [ThreadStatic]
        static HandCounts handMine;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static HandCounts HandRegister()
        {
            handMine = new HandCounts();
            return handMine;
        }

        static readonly bool perThread = Environment.Version.Major >= 5;
        static long sharedBegins, sharedEnds;

        // Add with CountingIntegration's two increments written in by hand
        // (its OnMethodBegin, then its OnMethodEnd for a normal return, to
        // which the begin hands its counters).
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int AddCounted(int a, int b)
        {
            if (!perThread)
            {
                Interlocked.Increment(ref sharedBegins);
                int total = a + b;
                Interlocked.Increment(ref sharedEnds);
                return total;
            }
            HandCounts counts = handMine ?? HandRegister();
            counts.Begins++;
            int sum = a + b;
            counts.Ends++;
            return sum;
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

        // Loop over AddCounted, the same shape.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int LoopCounted(int n, bool box)
        {
            int sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += AddCounted(i, 1);
                if (box)
                    sink = i;
            }
            return sum;
        }

        const int Round = 10000;
        const int PauseMs = 20;

        public static int Main(string[] args)
        {
            int n = 10000000;
            int warmupRounds = 100;
            bool box = false;
            bool counted = false;
            for (int a = 0; a < args.Length; a++)
            {
                if (args[a] == "--box")
                    box = true;
                else if (args[a] == "--hand-counted")
                    counted = true;
                else if (args[a] == "--warmup-rounds" && a + 1 < args.Length)
                    warmupRounds = Math.Max(1, int.Parse(args[++a], CultureInfo.InvariantCulture));
                else
                    n = int.Parse(args[a], CultureInfo.InvariantCulture);
            }
            // Warm-up: every method JIT-compiled (and tiered up), every
            // static constructor (the integration's) run before the
            // measured section.
            var roundNs = new double[warmupRounds];
            var roundMs = new double[warmupRounds];
            int rounds = 0;
            double tick = 1e9 / Stopwatch.Frequency;
            long first = Stopwatch.GetTimestamp();
            while (rounds < warmupRounds)
            {
                long t0 = Stopwatch.GetTimestamp();
                if (counted)
                    LoopCounted(Round, box);
                else
                    Loop(Round, box);
                long t1 = Stopwatch.GetTimestamp();
                roundNs[rounds] = (t1 - t0) * tick / Round;
                roundMs[rounds] = (t0 - first) * tick / 1e6;
                rounds++;
                Thread.Sleep(PauseMs);
            }

            long before = GC.GetAllocatedBytesForCurrentThread();
            var watch = Stopwatch.StartNew();
            int sum = counted ? LoopCounted(n, box) : Loop(n, box);
            watch.Stop();
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            double ns = watch.Elapsed.TotalMilliseconds * 1e6 / n;

            int settled = rounds;
            while (settled > 0 && roundNs[settled - 1] <= ns * 1.5 + 1)
                settled--;
            string tier = settled < rounds
                ? string.Format(CultureInfo.InvariantCulture, "final_tier_calls={0} final_tier_ms={1:F0}",
                    (long)settled * Round, roundMs[settled])
                : "final_tier_calls=never final_tier_ms=never";
            Console.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "calls={0} ns_per_call={1:F3} allocated={2} bytes_per_call={3:F3} sum={4} warmup_calls={5} {6}",
                n, ns, allocated, (double)allocated / n, sum, (long)rounds * Round, tier));
            return 0;
        }
    }
}
