// Runtime-async targets of the call_target example (tests/e2e_calltarget.rs):
// Task<int>, ValueTask<string>, Task, a Task<int> that throws after an
// await, a generic Task<T> and a ValueTask, each awaiting something that really suspends (Task.Yield,
// Task.Delay), each called N times (the first argument, default 3). First
// prints each method's MethodImplAttributes (runtime async sets Async,
// 0x2000), then what the calls return; exits 0.
//
// `RuntimeAsync --sync-dir DIR` instead calls each method once in each of
// three phases (printing "phase P sum=N" after the calls' lines); after
// phase P it prints "phase P done" on stderr, creates DIR/ready-P and
// waits (up to 30 s) for DIR/go-(P+1): the ReJIT handshake of the
// call_target example.
using System;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace E2E.RuntimeAsync
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Twice(int x)
        {
            await Task.Yield();
            return x * 2;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async ValueTask<string> Shout(string s)
        {
            await Task.Delay(1);
            return s + "!";
        }

        static int paused;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task Pause(int ms)
        {
            await Task.Delay(ms);
            paused++;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Fail(string message)
        {
            await Task.Yield();
            throw new InvalidOperationException(message);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<T> Echo<T>(T value)
        {
            await Task.Yield();
            return value;
        }

        static int ticks;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async ValueTask Tick(int by)
        {
            await Task.Yield();
            ticks += by;
        }

        static async Task<int> Run(int n)
        {
            int sum = 0;
            for (int i = 0; i < n; i++)
            {
                sum += await Twice(i + 20);
                Console.WriteLine("shout=" + await Shout("hi" + i));
                await Pause(1);
                try
                {
                    await Fail("bad" + i);
                    Console.WriteLine("fail returned");
                }
                catch (InvalidOperationException e)
                {
                    Console.WriteLine("fail=" + e.Message);
                }
                Console.WriteLine("echo=" + await Echo("e" + i));
                await Tick(2);
            }
            return sum;
        }

        static int Phases(string dir)
        {
            for (int phase = 1; phase <= 3; phase++)
            {
                int sum = Run(1).GetAwaiter().GetResult();
                Console.WriteLine("phase " + phase + " sum=" + sum);
                Console.Error.WriteLine("phase " + phase + " done");
                if (phase == 3)
                    break;
                File.WriteAllText(Path.Combine(dir, "ready-" + phase), "");
                string go = Path.Combine(dir, "go-" + (phase + 1));
                DateTime start = DateTime.UtcNow;
                while (!File.Exists(go))
                {
                    if ((DateTime.UtcNow - start).TotalMilliseconds > 30000)
                    {
                        Console.WriteLine("timed out waiting for " + go);
                        return 3;
                    }
                    Thread.Sleep(2);
                }
            }
            return 0;
        }

        public static int Main(string[] args)
        {
            bool phases = args.Length == 2 && args[0] == "--sync-dir";
            int n = args.Length > 0 && !phases ? int.Parse(args[0]) : 3;
            foreach (string name in new[] { "Twice", "Shout", "Pause", "Fail", "Echo", "Tick" })
            {
                MethodInfo m = typeof(Program).GetMethod(name);
                Console.WriteLine("impl " + name + " 0x" + ((int)m.MethodImplementationFlags).ToString("x"));
            }
            if (phases)
                return Phases(args[1]);
            int sum = Run(n).GetAwaiter().GetResult();
            Console.WriteLine("sum=" + sum + " paused=" + paused + " ticks=" + ticks);
            return 0;
        }
    }
}
