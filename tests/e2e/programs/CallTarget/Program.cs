// CallTarget: the target of the call_target example's tests
// (tests/e2e_calltarget.rs). Every line on stdout is fixed, with or without
// a profiler: wrapping a method must not change what the program does.
// Each method covers one case of the wrapper (docs/instrumentation.md).
//
// `CallTarget --rejit --sync-dir DIR [--timeout-ms N]` instead runs three
// phases of `Add(2, 3)` calls; after phase P it prints "phase P done" on
// stderr, creates DIR/ready-P and waits (up to --timeout-ms, default 30000)
// for DIR/go-(P+1).
// `CallTarget --threads` calls eight methods W0..W7 for the first time from
// eight threads at once and prints "threads=0,2,4,6,8,10,12,14".
// Exit codes: 44 = finished normally, 2 = bad arguments, 3 = timed out.
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.CallTarget
{
    public struct Point
    {
        public int X;
        public int Y;

        public Point(int x, int y)
        {
            X = x;
            Y = y;
        }

        // Instance method of a value type: `this` is a managed pointer.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public int Sum(int k)
        {
            return X + Y + k;
        }

        public override string ToString()
        {
            return "(" + X + "," + Y + ")";
        }
    }

    public class Greeter
    {
        public string Name;

        public Greeter(string name)
        {
            Name = name;
        }

        // Instance void method of a reference type.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public void Greet(string who)
        {
            Console.WriteLine("hello " + who + " from " + Name);
        }

        public override string ToString()
        {
            return "Greeter(" + Name + ")";
        }
    }

    // An instance method of a generic value type: `this` is boxed through a
    // TypeSpec of Pair<!0>.
    public struct Pair<T>
    {
        public T A;
        public T B;

        public Pair(T a, T b)
        {
            A = a;
            B = b;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public string Show(string sep)
        {
            return A + sep + B;
        }

        public override string ToString()
        {
            return "(" + A + "|" + B + ")";
        }
    }

    // A method of a generic type.
    public class Holder<T>
    {
        T value;

        public Holder(T value)
        {
            this.value = value;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public T Get()
        {
            return value;
        }

        // A static method of a generic type: `box !0` in shared code takes
        // the type from the generic context argument.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Holder<T> Make(T value)
        {
            return new Holder<T>(value);
        }

        public override string ToString()
        {
            return "Holder(" + value + ")";
        }
    }

    public static class Program
    {
        public const int ExitCode = 44;

        // Static, value-type return.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Add(int a, int b)
        {
            return a + b;
        }

        // Body ends in `throw`; no `ret`.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Fail(string why)
        {
            throw new InvalidOperationException(why);
        }

        // A generic method.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Echo<T>(T x)
        {
            return x;
        }

        // ref and out parameters.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static bool Divide(int a, int b, ref int calls, out int quotient)
        {
            calls++;
            if (b == 0)
            {
                quotient = 0;
                return false;
            }
            quotient = a / b;
            return true;
        }

        // Recursion.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Fib(int n)
        {
            return n < 2 ? n : Fib(n - 1) + Fib(n - 2);
        }

        // Existing try/catch/finally and a filter, nested.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Guarded(int x)
        {
            int r = 0;
            try
            {
                try
                {
                    if (x < 0)
                        throw new ArgumentException("negative");
                    r = 100 / x;
                }
                catch (DivideByZeroException)
                {
                    r = -1;
                }
                finally
                {
                    r += 1000;
                }
            }
            catch (ArgumentException e) when (e.Message == "negative")
            {
                r = -2;
            }
            return r;
        }

        // Returns on one path, throws on the other.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Thrower(int x)
        {
            if (x > 0)
                return x;
            throw new ArgumentOutOfRangeException("x");
        }

        // Reference-type argument and return, null included.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Describe(object o)
        {
            return o == null ? "nothing" : "<" + o + ">";
        }

        // An exception caught inside and another one thrown out.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static void Rethrows()
        {
            try
            {
                throw new IOException("inner");
            }
            catch (IOException e)
            {
                throw new InvalidOperationException("outer after " + e.Message);
            }
        }

        // A struct argument and a struct result.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Point Mirror(Point p)
        {
            return new Point(p.Y, p.X);
        }

        // An `out` parameter of a reference type.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static bool TryName(int n, out string name)
        {
            name = "n" + n;
            return n > 0;
        }

        // A Nullable<int> argument (a generic value type from the core library).
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Maybe(int? x)
        {
            return x.HasValue ? "some " + x.Value : "none";
        }

        // tests/e2e_calltarget.rs patches a copy of this body from
        //   ldarg.0; ldc.i4.s 100; ldarg.1; add; call Plus; ret
        // into
        //   ldarg.0; ldarg.1; nop; tail. call Plus; ret
        // (no C# compiler writes `tail.`), so the patched copy prints "tail=3".
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int TailCaller(int x, int y)
        {
            return Plus(x, 100 + y);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Plus(int a, int b)
        {
            return a + b;
        }

        // A by-ref-like (ref struct) argument and result: they cannot be
        // boxed, so the probes see null.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int SpanLength(Span<int> s)
        {
            return s.Length;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Span<int> Tail(int[] a)
        {
            return new Span<int>(a, 1, a.Length - 1);
        }

        static int Run()
        {
            Console.WriteLine("add=" + Add(2, 3));
            new Greeter("corprof").Greet("world");
            try
            {
                Fail("boom");
                Console.WriteLine("Fail returned");
            }
            catch (InvalidOperationException e)
            {
                Console.WriteLine("caught " + e.GetType().FullName + ": " + e.Message);
            }
            var p = new Point(1, 2);
            Console.WriteLine("sum=" + p.Sum(3));
            Console.WriteLine("echo=" + Echo(7) + "," + Echo("seven"));
            Console.WriteLine("get=" + new Holder<int>(42).Get() + "," + new Holder<string>("forty-two").Get());
            int calls = 0;
            int q;
            bool ok = Divide(7, 2, ref calls, out q);
            Console.WriteLine("divide=" + ok + "," + q + "," + calls);
            ok = Divide(1, 0, ref calls, out q);
            Console.WriteLine("divide=" + ok + "," + q + "," + calls);
            Console.WriteLine("fib=" + Fib(5));
            Console.WriteLine("guarded=" + Guarded(5) + "," + Guarded(0) + "," + Guarded(-1));
            Console.WriteLine("thrower=" + Thrower(4));
            try
            {
                Thrower(-1);
            }
            catch (ArgumentOutOfRangeException e)
            {
                Console.WriteLine("caught " + e.GetType().FullName + " " + e.ParamName);
            }
            Console.WriteLine("describe=" + Describe(null) + "," + Describe(p));
            Console.WriteLine("pair=" + new Pair<int>(1, 2).Show("-"));
            try
            {
                Rethrows();
            }
            catch (InvalidOperationException e)
            {
                Console.WriteLine("caught " + e.GetType().FullName + ": " + e.Message);
            }
            Console.WriteLine("mirror=" + Mirror(p));
            string name;
            bool named = TryName(3, out name);
            Console.WriteLine("name=" + named + "," + name);
            Console.WriteLine("maybe=" + Maybe(5) + "," + Maybe(null));
            Console.WriteLine("tail=" + TailCaller(1, 2));
            Console.WriteLine("span=" + SpanLength(new Span<int>(new int[3])) + "," + Tail(new int[] { 1, 2, 3, 4 }).Length);
            Console.WriteLine("make=" + Holder<int>.Make(8) + "," + Holder<string>.Make("eight"));
            return ExitCode;
        }

        [MethodImpl(MethodImplOptions.NoInlining)] public static int W0(int x) { return x + 0; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W1(int x) { return x + 1; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W2(int x) { return x + 2; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W3(int x) { return x + 3; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W4(int x) { return x + 4; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W5(int x) { return x + 5; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W6(int x) { return x + 6; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int W7(int x) { return x + 7; }

        // `--threads`: eight threads released together, each calling (and so
        // JIT-compiling) its own W method first; prints "threads=0,2,...,14".
        static int Threads()
        {
            Func<int, int>[] ws = { W0, W1, W2, W3, W4, W5, W6, W7 };
            var results = new int[ws.Length];
            var threads = new Thread[ws.Length];
            var start = new Barrier(ws.Length);
            for (int i = 0; i < ws.Length; i++)
            {
                int k = i;
                threads[k] = new Thread(() => { start.SignalAndWait(); results[k] = ws[k](k); });
                threads[k].Start();
            }
            foreach (var t in threads)
                t.Join();
            Console.WriteLine("threads=" + string.Join(",", results));
            return ExitCode;
        }

        static int Rejit(string dir, int timeoutMs)
        {
            for (int phase = 1; phase <= 3; phase++)
            {
                int sum = 0;
                for (int i = 0; i < 3; i++)
                    sum += Add(2, 3);
                Console.WriteLine("rejit: phase " + phase + " sum=" + sum);
                Console.Error.WriteLine("phase " + phase + " done");
                if (phase == 3)
                    break;
                File.WriteAllText(Path.Combine(dir, "ready-" + phase), "");
                string go = Path.Combine(dir, "go-" + (phase + 1));
                var start = DateTime.UtcNow;
                while (!File.Exists(go))
                {
                    if ((DateTime.UtcNow - start).TotalMilliseconds > timeoutMs)
                    {
                        Console.WriteLine("timed out waiting for " + go);
                        return 3;
                    }
                    Thread.Sleep(2);
                }
            }
            Console.WriteLine("done");
            return ExitCode;
        }

        public static int Main(string[] args)
        {
            if (args.Length == 0)
                return Run();
            if (args.Length == 1 && args[0] == "--threads")
                return Threads();
            string dir = null;
            int timeoutMs = 30000;
            bool rejit = false;
            for (int i = 0; i < args.Length; i++)
            {
                if (args[i] == "--rejit")
                    rejit = true;
                else if (args[i] == "--sync-dir" && i + 1 < args.Length)
                    dir = args[++i];
                else if (args[i] == "--timeout-ms" && i + 1 < args.Length)
                    timeoutMs = int.Parse(args[++i]);
                else
                {
                    Console.WriteLine("bad argument " + args[i]);
                    return 2;
                }
            }
            if (!rejit || dir == null)
            {
                Console.WriteLine("usage: CallTarget [--rejit --sync-dir DIR [--timeout-ms N]]");
                return 2;
            }
            return Rejit(dir, timeoutMs);
        }
    }
}
