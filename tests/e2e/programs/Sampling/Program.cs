// Sampling: a known split of CPU, wall time and allocations, for the
// sampler's end-to-end test (tests/e2e_sampler.rs).
//
// - two threads "Spinner 1" and "Spinner 2" alternate Hot and Warm for
//   SECONDS (argument 1, default 3), and on until the process has had 1.5 x
//   SECONDS of CPU time (on a loaded machine): Hot runs three times Warm's
//   loop, so Hot has 0.75 of their CPU time;
// - "Sleeper" sleeps for SLEEP milliseconds (argument 2, default 2000);
// - "Blocked" waits on an event until the spinners are done (SECONDS, or
//   more on a loaded machine);
// - the main thread allocates 3:1 in bytes from two call sites:
//   AllocateMore (300 MB in 3,000-byte arrays) and AllocateLess (100 MB in
//   1,000-byte arrays), interleaved.
// Prints fixed lines; exit code 37.
//
// `Sampling bench THREADS ROUNDS` is the benchmark of scripts/bench/bench.sh
// sampler instead: THREADS threads share ROUNDS rounds of Hot and Warm (a
// fixed amount of CPU work however many threads; each waits for the others
// at the end), and the program prints "bench done".
//
// `Sampling allocmix ROUNDS` allocates, ROUNDS times, 100 small objects
// (long[10]: 104 bytes on 64-bit) and one large one (int[2600]: 10,424
// bytes), kept in rings so that they are not optimized away: the same bytes
// (to 0.2%) in objects 100 times apart in size, two distinct types. It
// prints "allocmix small=N large=N" with the object counts.
//
// `Sampling bursty SECONDS`: one thread "Burster" alternates 4 ms of CPU
// in Burst (calling Hot) with Thread.Sleep(8), for SECONDS and on until the
// process has had a third of SECONDS of CPU time (what a third of one core
// gives; on a loaded machine it bursts longer), then prints "bursty done":
// its CPU time is all in Burst, none in Thread.Sleep.
//
// `Sampling incident STEADY` (tests/e2e_incident.rs): STEADY seconds in
// Steady (light work, a 10 ms sleep, an ArgumentException thrown and caught
// each 100 ms), then three incidents, each followed by a second of Steady:
// ThrowBurst throws and catches 200 System.TimeoutException (2 ms apart);
// InduceGcPause builds a graph of 3 million small objects and collects it
// with a blocking compacting gen-2 GC; BurnCpu spins one thread per core
// ("Burner N") for 5 s, and on (up to 30 s) until an `incident-*-cpu`
// folder appears in CORPROF_SAMPLER_DIR when that is set. Prints
// "incident done" and exits with 37.
//
// `Sampling heapgrow STEADY` (tests/e2e_incident.rs): STEADY seconds in
// Churn (short-lived 4,000-byte arrays, 512 KB each 10 ms: gen-0 GCs every
// few hundred ms, the heap steady), then Grow adds 100 arrays of 1 MiB to a
// static List<byte[]> (`Program.grown`), one each 20 ms with the same
// churn, then churns for a second and on (up to 30 s) until an
// `incident-*-gc-heap` and an `incident-*-heap-growth` folder appear in
// CORPROF_SAMPLER_DIR when that is set. Then a blocking gen-2 GC, and
// "heapgrow: heap_size_bytes=N" on stderr (GC.GetGCMemoryInfo's
// HeapSizeBytes after it); prints "heapgrow done kept=100" and exits
// with 37.
//
// `Sampling allocbench COUNT` allocates COUNT small objects (a node of two
// fields, each kept until the next) on the main thread and prints
// "allocbench done": allocation-bound work, for the cost per allocation of
// each allocation source.
//
// `Sampling waits MILLISECONDS` (the `wait` profile, tests/e2e_sampler.rs):
// four threads each wait once, at a method of their own, for MILLISECONDS
// and on until the main thread releases them: "Waiter MRE" in
// ManualResetEvent.WaitOne (WaitForEvent), "Waiter MRES" in
// ManualResetEventSlim.Wait (WaitForSlimEvent), "Waiter Monitor" in
// Monitor.Wait on a WaitLock object (WaitForPulse), "Sleeper" in
// Thread.Sleep (SleepOnce, a sleep of MILLISECONDS). Each waiter says it is
// about to wait (a flag set just before the call; for the monitor, the main
// thread takes the lock only once the waiter has let it go in Monitor.Wait),
// and the main thread releases them MILLISECONDS after the last one said so:
// each wait lasts at least MILLISECONDS less the few instructions between
// the flag and the wait. Prints "waits done".
//
// `Sampling gcthreads SECONDS` (run with server GC, tests/e2e_sampler.rs):
// two threads "Allocator 0/1" allocate small object graphs for SECONDS,
// keeping a rotating set of 4,096 survivors, while "Idle" waits on an event
// the whole time; then prints "gc threads N cpu S s" on stderr, the number of threads
// named as the runtime names its GC threads (".NET Server GC", ".NET BGC")
// and their CPU time from /proc/self/task/TID/stat, then "idle threads N
// cpu S s" for "Idle" (N is 0 where the runtime does not give the OS
// thread the managed thread's name), and "gcthreads done".
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.Sampling
{
    public static class Program
    {
        public const int ExitCode = 37;
        const int Units = 100000;
        static int sink;
        static readonly byte[][] keep = new byte[64][];

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Hot(int seed)
        {
            int x = seed;
            for (int i = 0; i < 3 * Units; i++)
            {
                x = x * 1103515245 + 12345 + i;
            }
            return x;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Warm(int seed)
        {
            int x = seed;
            for (int i = 0; i < Units; i++)
            {
                x = x * 1103515245 + 12345 + i;
            }
            return x;
        }

        // Spins for `seconds`, and on past them until the process has had
        // 1.5 x `seconds` of CPU time (what the two spinners get in
        // `seconds` on 2 cores, less what the machine's load takes): on a
        // machine whose other work takes most of the CPU, the spinners
        // still do enough work for the profile's shares to be measured
        // (tests/e2e_sampler.rs reads the spinners' time from the profile,
        // not from `seconds`).
        static void Spin(double seconds)
        {
            var clock = Stopwatch.StartNew();
            int x = 1;
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                x = Hot(x);
                x = Warm(x);
            }
            double minCpu = 1.5 * seconds;
            while (ProcessCpuSeconds() < minCpu)
            {
                for (int i = 0; i < 64; i++)
                {
                    x = Hot(x);
                    x = Warm(x);
                }
            }
            Interlocked.Add(ref sink, x);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Burst(int x, double milliseconds)
        {
            var clock = Stopwatch.StartNew();
            while (clock.Elapsed.TotalMilliseconds < milliseconds)
            {
                x = Hot(x);
            }
            return x;
        }

        static int Bursty(double seconds)
        {
            var burster = new Thread(() =>
            {
                var clock = Stopwatch.StartNew();
                int x = 1;
                while (clock.Elapsed.TotalSeconds < seconds || ProcessCpuSeconds() < seconds / 3)
                {
                    x = Burst(x, 4);
                    Thread.Sleep(8);
                }
                Interlocked.Add(ref sink, x);
            }) { Name = "Burster" };
            burster.Start();
            burster.Join();
            Console.WriteLine("bursty done");
            return ExitCode;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Steady(double seconds)
        {
            var clock = Stopwatch.StartNew();
            var last = TimeSpan.Zero;
            int x = 1;
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                x = Warm(x);
                keep[x & 63] = new byte[1000];
                if (clock.Elapsed - last > TimeSpan.FromMilliseconds(100))
                {
                    last = clock.Elapsed;
                    try { throw new ArgumentException("steady"); }
                    catch (ArgumentException) { x++; }
                }
                Thread.Sleep(10);
            }
            Interlocked.Add(ref sink, x);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void ThrowBurst()
        {
            for (int i = 0; i < 200; i++)
            {
                try { throw new TimeoutException("burst " + i); }
                catch (TimeoutException) { sink++; }
                Thread.Sleep(2);
            }
        }

        class Link { public Link Next; public long Value; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void InduceGcPause()
        {
            Link head = null;
            for (int i = 0; i < 3000000; i++)
            {
                head = new Link { Next = head, Value = i };
            }
            GC.Collect(2, GCCollectionMode.Forced, true, true);
            GC.KeepAlive(head);
            head = null;
            GC.Collect(2, GCCollectionMode.Forced, true, true);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void BurnCpu()
        {
            string dir = Environment.GetEnvironmentVariable("CORPROF_SAMPLER_DIR");
            var clock = Stopwatch.StartNew();
            bool done = false;
            var burners = new Thread[Environment.ProcessorCount];
            for (int t = 0; t < burners.Length; t++)
            {
                burners[t] = new Thread(() =>
                {
                    int x = 1;
                    while (!Volatile.Read(ref done)) x = Hot(x);
                    Interlocked.Add(ref sink, x);
                }) { Name = "Burner " + (t + 1) };
                burners[t].Start();
            }
            while (clock.Elapsed.TotalSeconds < 30)
            {
                Thread.Sleep(100);
                if (clock.Elapsed.TotalSeconds < 5) continue;
                if (dir == null) break;
                if (System.IO.Directory.Exists(dir)
                    && System.IO.Directory.GetDirectories(dir, "incident-*-cpu").Length > 0) break;
            }
            Volatile.Write(ref done, true);
            foreach (var b in burners) b.Join();
        }

        static readonly System.Collections.Generic.List<byte[]> grown =
            new System.Collections.Generic.List<byte[]>();
        static readonly byte[][] churnRing = new byte[16][];

        // 512 KB of short-lived arrays.
        static void ChurnStep()
        {
            for (int k = 0; k < 128; k++) churnRing[k & 15] = new byte[4000];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Churn(double seconds)
        {
            var clock = Stopwatch.StartNew();
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                ChurnStep();
                Thread.Sleep(10);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Grow()
        {
            for (int i = 0; i < 100; i++)
            {
                grown.Add(new byte[1 << 20]);
                ChurnStep();
                Thread.Sleep(20);
            }
        }

        static bool Incidents(string dir, string[] kinds)
        {
            if (!System.IO.Directory.Exists(dir)) return false;
            foreach (var kind in kinds)
            {
                if (System.IO.Directory.GetDirectories(dir, "incident-*-" + kind).Length == 0) return false;
            }
            return true;
        }

        static int HeapGrow(double steady)
        {
            string dir = Environment.GetEnvironmentVariable("CORPROF_SAMPLER_DIR");
            Churn(steady);
            Grow();
            var clock = Stopwatch.StartNew();
            while (clock.Elapsed.TotalSeconds < 30)
            {
                Churn(0.1);
                if (clock.Elapsed.TotalSeconds < 1) continue;
                if (dir == null || Incidents(dir, new[] { "gc-heap", "heap-growth" })) break;
            }
            GC.Collect(2, GCCollectionMode.Forced, true);
            Console.Error.WriteLine("heapgrow: heap_size_bytes=" + GC.GetGCMemoryInfo().HeapSizeBytes);
            Console.WriteLine("heapgrow done kept=" + grown.Count);
            return ExitCode;
        }

        static int Incident(double steady)
        {
            Steady(steady);
            ThrowBurst();
            Steady(1);
            InduceGcPause();
            Steady(1);
            BurnCpu();
            Steady(1);
            Console.WriteLine("incident done");
            return ExitCode;
        }

        static double ProcessCpuSeconds()
        {
            using (var self = Process.GetCurrentProcess())
            {
                return self.TotalProcessorTime.TotalSeconds;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateMore(int i)
        {
            keep[i & 63] = new byte[3000];
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateLess(int i)
        {
            keep[(i + 32) & 63] = new byte[1000];
        }

        sealed class Node
        {
            public int Value;
            public Node Next;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Node MakeNode(int i, Node previous)
        {
            var node = new Node();
            node.Value = i;
            node.Next = (i & 63) == 0 ? null : previous;
            return node;
        }

        static int AllocBench(int count)
        {
            Node last = null;
            for (int i = 0; i < count; i++) last = MakeNode(i, last);
            Interlocked.Add(ref sink, last == null ? 0 : last.Value);
            Console.WriteLine("allocbench done");
            return ExitCode;
        }

        sealed class WaitLock { public bool Released; }

        static volatile int aboutToWait;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WaitForEvent(ManualResetEvent e)
        {
            Interlocked.Increment(ref aboutToWait);
            e.WaitOne();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WaitForSlimEvent(ManualResetEventSlim e)
        {
            Interlocked.Increment(ref aboutToWait);
            e.Wait();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void WaitForPulse(WaitLock gate)
        {
            lock (gate)
            {
                Interlocked.Increment(ref aboutToWait);
                while (!gate.Released) Monitor.Wait(gate);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void SleepOnce(int milliseconds)
        {
            Interlocked.Increment(ref aboutToWait);
            Thread.Sleep(milliseconds);
        }

        static int Waits(int milliseconds)
        {
            var mre = new ManualResetEvent(false);
            var mres = new ManualResetEventSlim(false);
            var gate = new WaitLock();
            var threads = new[]
            {
                new Thread(() => WaitForEvent(mre)) { Name = "Waiter MRE" },
                new Thread(() => WaitForSlimEvent(mres)) { Name = "Waiter MRES" },
                new Thread(() => WaitForPulse(gate)) { Name = "Waiter Monitor" },
                new Thread(() => SleepOnce(milliseconds)) { Name = "Sleeper" },
            };
            foreach (var t in threads) t.Start();
            while (aboutToWait < threads.Length) Thread.Sleep(1);
            // The monitor's waiter has let the lock go only inside Monitor.Wait.
            lock (gate) { }
            Thread.Sleep(milliseconds);
            mre.Set();
            mres.Set();
            lock (gate)
            {
                gate.Released = true;
                Monitor.PulseAll(gate);
            }
            foreach (var t in threads) t.Join();
            Console.WriteLine("waits done");
            return ExitCode;
        }

        static readonly long[][] smallRing = new long[256][];
        static readonly int[][] largeRing = new int[4][];

        static int AllocMix(int rounds)
        {
            long small = 0, large = 0;
            for (int r = 0; r < rounds; r++)
            {
                for (int i = 0; i < 100; i++)
                {
                    smallRing[(int)(small & 255)] = new long[10];
                    small++;
                }
                largeRing[r & 3] = new int[2600];
                large++;
            }
            Console.WriteLine("allocmix small=" + small + " large=" + large);
            return ExitCode;
        }

        // The CPU the runtime's GC threads used so far, as /proc says:
        // utime + stime (fields 14 and 15 of /proc/self/task/TID/stat, in
        // clock ticks of 10 ms) of the threads named ".NET Server GC" or
        // ".NET BGC"; and how many there are.
        static (double Seconds, int Threads) GcThreadsCpu() => ThreadsCpu(".NET Server GC", ".NET BGC");

        // The CPU time (s) of the threads of this process whose kernel name
        // is one of NAMES, and how many there are.
        static (double Seconds, int Threads) ThreadsCpu(params string[] names)
        {
            double ticks = 0;
            int threads = 0;
            foreach (var task in System.IO.Directory.GetDirectories("/proc/self/task"))
            {
                string comm;
                string stat;
                try
                {
                    comm = System.IO.File.ReadAllText(task + "/comm").TrimEnd('\n');
                    stat = System.IO.File.ReadAllText(task + "/stat");
                }
                catch (System.IO.IOException)
                {
                    continue; // ended meanwhile
                }
                if (Array.IndexOf(names, comm) < 0) continue;
                var fields = stat.Substring(stat.LastIndexOf(')') + 2).Split(' ');
                ticks += double.Parse(fields[11]) + double.Parse(fields[12]);
                threads++;
            }
            return (ticks / 100.0, threads);
        }

        static object[] survivors = new object[4096];

        // Allocates on two threads for SECONDS (keeping a rotating set of
        // survivors, so that each GC has work), with an idle thread waiting
        // the whole time; then prints the GC threads' CPU from /proc.
        static int GcThreads(double seconds)
        {
            var done = new ManualResetEvent(false);
            var idle = new Thread(() => done.WaitOne()) { Name = "Idle" };
            idle.Start();
            var workers = new Thread[2];
            for (int t = 0; t < workers.Length; t++)
            {
                int seed = t;
                workers[t] = new Thread(() =>
                {
                    var clock = Stopwatch.StartNew();
                    int i = seed;
                    while (clock.Elapsed.TotalSeconds < seconds)
                    {
                        var node = new object[16];
                        node[0] = new byte[64 + (i & 255)];
                        survivors[(i * 7919) & 4095] = node;
                        i++;
                    }
                }) { Name = "Allocator " + t };
            }
            foreach (var w in workers) w.Start();
            foreach (var w in workers) w.Join();
            var (cpu, threads) = GcThreadsCpu();
            var (idleCpu, idles) = ThreadsCpu("Idle");
            done.Set();
            idle.Join();
            Console.Error.WriteLine(FormattableString.Invariant($"gc threads {threads} cpu {cpu:F2} s"));
            Console.Error.WriteLine(FormattableString.Invariant($"idle threads {idles} cpu {idleCpu:F2} s"));
            Console.WriteLine("gcthreads done");
            return ExitCode;
        }

        static int Bench(int threads, int rounds)
        {
            var workers = new Thread[threads];
            // Every worker stays alive (waiting) until the last is done, so
            // that each sample walks THREADS threads.
            int remaining = threads;
            var allDone = new ManualResetEvent(false);
            for (int t = 0; t < threads; t++)
            {
                int share = rounds / threads + (t < rounds % threads ? 1 : 0);
                workers[t] = new Thread(() =>
                {
                    int x = 1;
                    for (int r = 0; r < share; r++)
                    {
                        x = Hot(x);
                        x = Warm(x);
                    }
                    Interlocked.Add(ref sink, x);
                    if (Interlocked.Decrement(ref remaining) == 0) allDone.Set();
                    allDone.WaitOne();
                }) { Name = "Worker " + t };
            }
            foreach (var w in workers) w.Start();
            foreach (var w in workers) w.Join();
            Console.WriteLine("bench done");
            return ExitCode;
        }

        public static int Main(string[] args)
        {
            if (args.Length == 3 && args[0] == "bench")
            {
                return Bench(int.Parse(args[1]), int.Parse(args[2]));
            }
            if (args.Length == 2 && args[0] == "allocmix")
            {
                return AllocMix(int.Parse(args[1]));
            }
            if (args.Length == 2 && args[0] == "bursty")
            {
                return Bursty(double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture));
            }
            if (args.Length == 2 && args[0] == "incident")
            {
                return Incident(double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture));
            }
            if (args.Length == 2 && args[0] == "heapgrow")
            {
                return HeapGrow(double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture));
            }
            if (args.Length == 2 && args[0] == "allocbench")
            {
                return AllocBench(int.Parse(args[1]));
            }
            if (args.Length == 2 && args[0] == "gcthreads")
            {
                return GcThreads(double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture));
            }
            if (args.Length == 2 && args[0] == "waits")
            {
                return Waits(int.Parse(args[1]));
            }
            double seconds = args.Length > 0 ? double.Parse(args[0]) : 3.0;
            int sleep = args.Length > 1 ? int.Parse(args[1]) : 2000;
            var release = new ManualResetEvent(false);
            var spinners = new Thread[2];
            for (int t = 0; t < spinners.Length; t++)
            {
                spinners[t] = new Thread(() => Spin(seconds)) { Name = "Spinner " + (t + 1) };
            }
            var sleeper = new Thread(() => Thread.Sleep(sleep)) { Name = "Sleeper" };
            var blocked = new Thread(() => release.WaitOne()) { Name = "Blocked" };
            sleeper.Start();
            blocked.Start();
            foreach (var s in spinners) s.Start();
            for (int i = 0; i < 100000; i++)
            {
                AllocateMore(i);
                AllocateLess(i);
            }
            Console.WriteLine("allocated more=" + 100000L * 3000 + " less=" + 100000L * 1000);
            foreach (var s in spinners) s.Join();
            Console.WriteLine("spinners done");
            release.Set();
            blocked.Join();
            sleeper.Join();
            Console.WriteLine("sleeper and blocked done");
            Console.WriteLine("done");
            return ExitCode;
        }
    }
}
