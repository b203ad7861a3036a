// ThreadChurn: threads created and ending every few milliseconds, with
// garbage and exceptions, for the signal sampler's robustness test
// (tests/e2e_sampler.rs): for SECONDS (argument 1, default 20),
//
// - a spawner keeps about 8 short-lived threads alive, each doing a
//   little work (allocations, a thrown and caught exception) for MS to
//   MS + 3 milliseconds (argument 2, default 1) and ending;
// - "Sleeper" checks that Thread.Sleep(50) never returns early (it is
//   interrupted by signals and must resume the rest);
// - "Waiter" checks that Monitor.Wait(lock, 40) waits its timeout when
//   nobody pulses (a futex wait with a timeout);
// - "Reader" reads a pipe whose writer writes a line every 20 ms, and
//   checks every line arrives whole and in order (a blocked read());
// - the main thread allocates and collects.
//
// Prints fixed lines and exits with 41; a broken expectation prints what
// broke and exits with 1.
using System;
using System.Diagnostics;
using System.IO;
using System.IO.Pipes;
using System.Threading;

namespace E2E.ThreadChurn
{
    public static class Program
    {
        public const int ExitCode = 41;
        static volatile bool stop;
        static int failures;
        static long created;
        static object sink;
        static int lifetime = 1;

        static void Fail(string what)
        {
            Console.WriteLine("FAILED: " + what);
            Interlocked.Increment(ref failures);
        }

        static void ShortLived(object state)
        {
            int ms = (int)state;
            var clock = Stopwatch.StartNew();
            int n = 0;
            while (clock.ElapsedMilliseconds < ms)
            {
                sink = new byte[256 + (n++ & 1023)];
                try
                {
                    if ((n & 7) == 0) throw new InvalidOperationException("churn");
                }
                catch (InvalidOperationException)
                {
                }
            }
        }

        static void Spawner()
        {
            var rng = new Random(7);
            var live = new Thread[8];
            while (!stop)
            {
                for (int i = 0; i < live.Length; i++)
                {
                    if (live[i] != null && live[i].IsAlive) continue;
                    if (live[i] != null) live[i].Join();
                    live[i] = new Thread(ShortLived);
                    live[i].Start(lifetime + rng.Next(4));
                    Interlocked.Increment(ref created);
                }
                Thread.Sleep(1);
            }
            foreach (var t in live) if (t != null) t.Join();
        }

        static void Sleeper()
        {
            while (!stop)
            {
                var clock = Stopwatch.StartNew();
                Thread.Sleep(50);
                if (clock.Elapsed.TotalMilliseconds < 49.0)
                {
                    Fail("Thread.Sleep(50) returned after " + clock.Elapsed.TotalMilliseconds + " ms");
                }
            }
        }

        static void Waiter()
        {
            var gate = new object();
            while (!stop)
            {
                var clock = Stopwatch.StartNew();
                bool pulsed;
                lock (gate) pulsed = Monitor.Wait(gate, 40);
                if (pulsed) Fail("Monitor.Wait was pulsed by nobody");
                if (clock.Elapsed.TotalMilliseconds < 39.0)
                {
                    Fail("Monitor.Wait(40) returned after " + clock.Elapsed.TotalMilliseconds + " ms");
                }
            }
        }

        static void Pipes(double seconds)
        {
            using (var server = new AnonymousPipeServerStream(PipeDirection.Out))
            using (var client = new AnonymousPipeClientStream(PipeDirection.In, server.ClientSafePipeHandle))
            {
                var reader = new Thread(() =>
                {
                    using (var lines = new StreamReader(client))
                    {
                        int expected = 0;
                        string line;
                        while ((line = lines.ReadLine()) != null)
                        {
                            if (line != "line " + expected) Fail("pipe read '" + line + "', expected 'line " + expected + "'");
                            expected++;
                        }
                        if (expected < 10) Fail("pipe: only " + expected + " lines");
                    }
                }) { Name = "Reader" };
                reader.Start();
                using (var writer = new StreamWriter(server))
                {
                    writer.AutoFlush = true;
                    var clock = Stopwatch.StartNew();
                    for (int i = 0; clock.Elapsed.TotalSeconds < seconds; i++)
                    {
                        writer.WriteLine("line " + i);
                        Thread.Sleep(20);
                    }
                }
                reader.Join();
            }
        }

        public static int Main(string[] args)
        {
            double seconds = args.Length > 0 ? double.Parse(args[0]) : 20.0;
            if (args.Length > 1) lifetime = int.Parse(args[1]);
            var threads = new[]
            {
                new Thread(Spawner) { Name = "Spawner" },
                new Thread(Sleeper) { Name = "Sleeper" },
                new Thread(Waiter) { Name = "Waiter" },
            };
            foreach (var t in threads) t.Start();
            var pipes = new Thread(() => Pipes(seconds)) { Name = "Writer" };
            pipes.Start();
            var clock = Stopwatch.StartNew();
            while (clock.Elapsed.TotalSeconds < seconds)
            {
                for (int i = 0; i < 1000; i++) sink = new int[64];
                GC.Collect(0);
                Thread.Sleep(5);
            }
            stop = true;
            foreach (var t in threads) t.Join();
            pipes.Join();
            Console.WriteLine(created > 100 ? "threads churned" : "FAILED: only " + created + " threads");
            Console.WriteLine("done");
            return failures == 0 && created > 100 ? ExitCode : 1;
        }
    }
}
