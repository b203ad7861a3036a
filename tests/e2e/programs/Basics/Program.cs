// Basics: exercises the runtime events a profiler most often cares about.
// Every line printed to stdout is deterministic; tests/e2e_runtime.rs checks
// them exactly. Exit code 42 means Main ran to the end; 2 means bad arguments.
// `Basics --unhandled` dies of an unhandled InvalidOperationException instead.
using System;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.Basics
{
    public class MyException : Exception
    {
        public int Code { get; private set; }

        public MyException(string message, int code) : base(message)
        {
            Code = code;
        }
    }

    public class Box<T>
    {
        private readonly T value;

        public Box(T value)
        {
            this.value = value;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public T Get()
        {
            return value;
        }
    }

    public static class Program
    {
        public const int ExitCode = 42;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Fib(int n)
        {
            return n < 2 ? n : Fib(n - 1) + Fib(n - 2);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Identity<T>(T value)
        {
            return value;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowInvalid(int depth)
        {
            if (depth > 0)
            {
                ThrowInvalid(depth - 1);
                return;
            }
            throw new InvalidOperationException("state is invalid");
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void ThrowCustom()
        {
            throw new MyException("custom failure", 7);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Exceptions()
        {
            try
            {
                ThrowInvalid(3);
                Console.WriteLine("not reached");
            }
            catch (InvalidOperationException e)
            {
                Console.WriteLine("caught InvalidOperationException: " + e.Message);
            }

            try
            {
                try
                {
                    ThrowCustom();
                }
                finally
                {
                    Console.WriteLine("finally ran");
                }
            }
            catch (MyException e)
            {
                Console.WriteLine("caught MyException: " + e.Message + " (code=" + e.Code + ")");
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Collect()
        {
            int before = GC.CollectionCount(0);
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect(2, GCCollectionMode.Forced, true);
            int induced = GC.CollectionCount(0) - before;
            Console.WriteLine("gc: induced collections >= 2: " + (induced >= 2));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Threads()
        {
            const int count = 3;
            var results = new string[count];
            var threads = new Thread[count];
            for (int i = 0; i < count; i++)
            {
                int index = i;
                threads[i] = new Thread(() =>
                {
                    int sum = 0;
                    for (int k = 1; k <= 100 * (index + 1); k++)
                    {
                        sum += k;
                    }
                    results[index] = Thread.CurrentThread.Name + " sum=" + sum;
                });
                threads[i].Name = "worker-" + (i + 1);
            }
            foreach (var t in threads)
            {
                t.Start();
            }
            foreach (var t in threads)
            {
                t.Join();
            }
            foreach (var r in results)
            {
                Console.WriteLine("thread " + r);
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void LoadPlugin()
        {
            string dir = Path.GetDirectoryName(typeof(Program).Assembly.Location);
            string path = Path.Combine(dir, "Plugin.dll");
            Assembly plugin = Assembly.LoadFrom(path);
            Type greeter = plugin.GetType("E2E.Plugin.Greeter", true);
            MethodInfo greet = greeter.GetMethod("Greet");
            object said = greet.Invoke(null, new object[] { "Basics" });
            Console.WriteLine("plugin says: " + said);
        }

        public static int Main(string[] args)
        {
            if (args.Length == 1 && args[0] == "--unhandled")
            {
                // Lets tests check how a crash is reported: CoreCLR prints the
                // exception to stderr and aborts (SIGABRT).
                Console.WriteLine("throwing an unhandled exception");
                Console.Out.Flush();
                ThrowInvalid(0);
            }
            if (args.Length != 0)
            {
                Console.Error.WriteLine("usage: Basics [--unhandled]");
                return 2;
            }
            Console.WriteLine("fib(20)=" + Fib(20));
            Console.WriteLine("identity<int>=" + Identity<int>(7));
            Console.WriteLine("identity<string>=" + Identity<string>("seven"));
            Console.WriteLine("box<int>=" + new Box<int>(42).Get());
            Console.WriteLine("box<string>=" + new Box<string>("boxed").Get());
            Exceptions();
            Collect();
            Threads();
            LoadPlugin();
            Console.WriteLine("done");
            return ExitCode;
        }
    }
}
