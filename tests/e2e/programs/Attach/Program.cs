// A long-running target for attaching profilers (tests/e2e_attach.rs).
//
//   Attach --sync-dir DIR [--seconds N]
//
// Prints "ready", then calls Value() about every 10 ms and prints
// "value=V" each time the value it returns changes (41 unless a profiler
// changes the method). It watches DIR:
//   DIR/gc    -> runs an induced GC and calls Late() (never called before),
//                prints "late=13", deletes DIR/gc and creates DIR/gc-done;
//   DIR/stop  -> prints "done" and exits 45.
// After N seconds (default 60) without DIR/stop it prints
// "timed out waiting for stop" and exits 3. Bad arguments: usage, exit 2.
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.Attach
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Value()
        {
            return 41;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Late(int x)
        {
            return x * 3 + 1;
        }

        static int Usage()
        {
            Console.Error.WriteLine("usage: Attach --sync-dir DIR [--seconds N]");
            return 2;
        }

        public static int Main(string[] args)
        {
            string dir = null;
            int seconds = 60;
            for (int i = 0; i < args.Length; i++)
            {
                if (args[i] == "--sync-dir" && i + 1 < args.Length)
                {
                    dir = args[++i];
                }
                else if (args[i] == "--seconds" && i + 1 < args.Length)
                {
                    if (!int.TryParse(args[++i], out seconds) || seconds <= 0)
                        return Usage();
                }
                else
                {
                    return Usage();
                }
            }
            if (dir == null)
                return Usage();

            string gc = Path.Combine(dir, "gc");
            string gcDone = Path.Combine(dir, "gc-done");
            string stop = Path.Combine(dir, "stop");
            // The pid as the runtime knows it (under Wine, a Windows pid,
            // not the Linux one the test started).
            File.WriteAllText(Path.Combine(dir, "pid"), Process.GetCurrentProcess().Id.ToString());
            Console.WriteLine("ready");
            Stopwatch clock = Stopwatch.StartNew();
            int last = int.MinValue;
            while (true)
            {
                int v = Value();
                if (v != last)
                {
                    Console.WriteLine("value=" + v);
                    last = v;
                }
                if (File.Exists(gc))
                {
                    GC.Collect();
                    Console.WriteLine("late=" + Late(4));
                    File.Delete(gc);
                    File.WriteAllText(gcDone, "");
                }
                if (File.Exists(stop))
                {
                    Console.WriteLine("done");
                    return 45;
                }
                if (clock.Elapsed.TotalSeconds > seconds)
                {
                    Console.WriteLine("timed out waiting for stop");
                    return 3;
                }
                Thread.Sleep(10);
            }
        }
    }
}
