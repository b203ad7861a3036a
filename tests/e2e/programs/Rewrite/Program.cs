// Rewrite: the target of IL-rewriting and ReJIT tests.
//
// Without a profiler every line printed is fixed (tests/e2e_runtime.rs checks
// them exactly); a profiler that rewrites a method changes exactly the line
// that method feeds:
//   Answer()      -> "answer=41"       (rewrite it to return 42)
//   Work(int)     -> "hits=0"          (inject a call to Counter.Hit() into it)
//   Guarded(int)  -> try/catch/finally lines (rewrite a method with EH clauses)
//
// `Rewrite --rejit [--phases N] [--iterations N] [--pause-ms N]
//                  [--sync-dir DIR] [--timeout-ms N] [--target inlined]`
// calls Answer() (with `--target inlined`: CallsInlined(), which returns
// InlinedAnswer(), inlined into it) in phases of N iterations (default 3 phases of 1000 calls)
// and prints "rejit: phase P answer=V" after each, V being the value the last
// call returned. Between phases it keeps calling Answer() once a millisecond:
//   - without --sync-dir for --pause-ms (default 200) milliseconds;
//   - with --sync-dir DIR it creates DIR/ready-P after phase P and then waits
//     (up to --timeout-ms, default 30000) until DIR/go-(P+1) exists before
//     starting phase P+1. A profiler or a test creates the go file once it has
//     done what it wants between the two phases (e.g. RequestReJIT).
// Exit codes: 43 = finished normally, 2 = bad arguments, 3 = timed out
// waiting for a go file.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.Rewrite
{
    public static class Counter
    {
        public static int Hits;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Hit()
        {
            Hits++;
        }
    }

    public static class Program
    {
        public const int ExitCode = 43;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Answer()
        {
            return 41;
        }

        // Small enough that the JIT inlines it into CallsInlined (when the
        // profiler leaves inlining on): the target of ReJIT with inliners.
        public static int InlinedAnswer()
        {
            return 41;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int CallsInlined()
        {
            return InlinedAnswer();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Work(int n)
        {
            return n * 2;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Guarded(int x)
        {
            int result;
            try
            {
                Console.WriteLine("guarded(" + x + "): try");
                if (x < 0)
                {
                    throw new ArgumentException("negative");
                }
                result = x * 10;
            }
            catch (ArgumentException e)
            {
                Console.WriteLine("guarded(" + x + "): catch ArgumentException: " + e.Message);
                result = -1;
            }
            finally
            {
                Console.WriteLine("guarded(" + x + "): finally");
            }
            return result;
        }

        // A method with a hot loop: on .NET 7 and later, tier 0 with a
        // patchpoint, then compiled again mid-loop by on-stack replacement.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long HotLoop(int n)
        {
            long total = 0;
            for (int i = 0; i < n; i++)
            {
                total += i % 7;
            }
            return total;
        }

        private static int HotLoopMode(string[] args)
        {
            int n;
            if (args.Length != 2 || !int.TryParse(args[1], out n) || n < 0)
            {
                return Usage("--hot-loop needs one non-negative number");
            }
            Console.WriteLine("hot loop total=" + HotLoop(n));
            Console.WriteLine("hot loop again total=" + HotLoop(n));
            Console.WriteLine("hits=" + Counter.Hits);
            Console.WriteLine("done");
            return ExitCode;
        }

        private static int Normal()
        {
            Console.WriteLine("answer=" + Answer());
            int total = 0;
            for (int i = 0; i < 5; i++)
            {
                total += Work(i);
            }
            Console.WriteLine("work total=" + total);
            Console.WriteLine("hits=" + Counter.Hits);
            Console.WriteLine("guarded(1)=" + Guarded(1));
            Console.WriteLine("guarded(-1)=" + Guarded(-1));
            Console.WriteLine("done");
            return ExitCode;
        }

        private static int Usage(string message)
        {
            Console.Error.WriteLine("Rewrite: " + message);
            Console.Error.WriteLine("usage: Rewrite [--rejit [--phases N] [--iterations N] [--pause-ms N] [--sync-dir DIR] [--timeout-ms N] [--target inlined] | --hot-loop N]");
            return 2;
        }

        private static int ReJit(string[] args)
        {
            int phases = 3;
            int iterations = 1000;
            int pauseMs = 200;
            int timeoutMs = 30000;
            string syncDir = null;
            bool inlined = false;
            for (int i = 1; i < args.Length; i++)
            {
                string flag = args[i];
                if (i + 1 >= args.Length)
                {
                    return Usage("missing value for " + flag);
                }
                string value = args[++i];
                int number;
                bool isNumber = int.TryParse(value, out number) && number >= 0;
                switch (flag)
                {
                    case "--sync-dir":
                        syncDir = value;
                        continue;
                    case "--target":
                        if (value != "inlined")
                        {
                            return Usage("unknown target " + value);
                        }
                        inlined = true;
                        continue;
                    case "--phases":
                        phases = number;
                        break;
                    case "--iterations":
                        iterations = number;
                        break;
                    case "--pause-ms":
                        pauseMs = number;
                        break;
                    case "--timeout-ms":
                        timeoutMs = number;
                        break;
                    default:
                        return Usage("unknown option " + flag);
                }
                if (!isNumber)
                {
                    return Usage("not a non-negative number: " + flag + " " + value);
                }
            }

            for (int phase = 1; phase <= phases; phase++)
            {
                int last = 0;
                for (int i = 0; i < iterations; i++)
                {
                    last = inlined ? CallsInlined() : Answer();
                    if (i % 100 == 99)
                    {
                        Thread.Sleep(1);
                    }
                }
                Console.WriteLine("rejit: phase " + phase + " answer=" + last);
                if (phase == phases)
                {
                    break;
                }
                if (syncDir == null)
                {
                    Spin(pauseMs, null, inlined);
                }
                else
                {
                    File.WriteAllText(Path.Combine(syncDir, "ready-" + phase), "");
                    if (!Spin(timeoutMs, Path.Combine(syncDir, "go-" + (phase + 1)), inlined))
                    {
                        Console.WriteLine("rejit: timed out waiting for go-" + (phase + 1));
                        return 3;
                    }
                }
            }
            Console.WriteLine("done");
            return ExitCode;
        }

        // Keeps Answer() (or CallsInlined()) hot for up to `ms` milliseconds.
        // With a `goFile`, returns true as soon as it exists (false on
        // timeout).
        private static bool Spin(int ms, string goFile, bool inlined)
        {
            DateTime end = DateTime.UtcNow.AddMilliseconds(ms);
            while (DateTime.UtcNow < end)
            {
                if (goFile != null && File.Exists(goFile))
                {
                    return true;
                }
                if (inlined) CallsInlined(); else Answer();
                Thread.Sleep(1);
            }
            return goFile == null || File.Exists(goFile);
        }

        public static int Main(string[] args)
        {
            if (args.Length == 0)
            {
                return Normal();
            }
            if (args[0] == "--rejit")
            {
                return ReJit(args);
            }
            if (args[0] == "--hot-loop")
            {
                return HotLoopMode(args);
            }
            return Usage("unknown argument " + args[0]);
        }
    }
}
