// Target of the call-tree (ELT hooks) tests: calls whose counts are known
// exactly. Every counted method is [MethodImpl(NoInlining)] (an inlined
// method gets no hooks); the profiler also disables inlining, and the tests
// check that it did.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.CallTree
{
    public static class Util
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static T Echo<T>(T value) { return value; }
    }

    public class Holder<T>
    {
        private readonly T _value;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public Holder(T value) { _value = value; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public T Get() { return _value; }
    }

    public struct Pair
    {
        public long Number;
        public double Fraction;
    }

    public static class Program
    {
        private static readonly int[] Results = new int[3];

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Fib(int n) { return n < 2 ? n : Fib(n - 1) + Fib(n - 2); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static bool IsEven(int n) { return n == 0 ? true : IsOdd(n - 1); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static bool IsOdd(int n) { return n == 0 ? false : IsEven(n - 1); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Thrower(int depth)
        {
            if (depth == 0)
            {
                throw new InvalidOperationException("thrown " + depth);
            }
            Thrower(depth - 1);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Catcher()
        {
            try
            {
                Thrower(3);
                return 0;
            }
            catch (InvalidOperationException)
            {
                return 1;
            }
        }

        private static int _cleaned;

        // An exception leaving three nested `finally` blocks of one
        // recursive method (dotnet/runtime #123351: 9 and 10 report the
        // unwind of such a frame twice).
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Cleaner(int depth)
        {
            try
            {
                if (depth == 0)
                {
                    throw new InvalidOperationException("cleaned " + depth);
                }
                Cleaner(depth - 1);
            }
            finally
            {
                _cleaned++;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int FinallyCatcher()
        {
            try
            {
                Cleaner(2);
                return 0;
            }
            catch (InvalidOperationException)
            {
                return _cleaned;
            }
        }

        // An exception thrown inside a `finally` block, caught by the same
        // method one call up (dotnet/runtime #123351: 9 and 10 report the
        // unwind of the thrower twice; the second must not close the
        // catcher, another frame of the same method).
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int FinallyThrower(int depth)
        {
            try
            {
                try
                {
                    if (depth > 0)
                    {
                        return FinallyThrower(depth - 1);
                    }
                    throw new InvalidOperationException("first");
                }
                finally
                {
                    _cleaned++;
                    if (depth == 0)
                    {
                        throw new InvalidOperationException("from finally");
                    }
                }
            }
            catch (InvalidOperationException) when (depth == 1)
            {
                return 10;
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Square(int x) { return x * x; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Worker(object index)
        {
            int i = (int)index;
            int sum = 0;
            for (int k = 1; k <= 100; k++)
            {
                sum += Square(k);
            }
            Results[i] = sum + i;
        }

        // Returned in rax and xmm0 (x86-64 SysV): the leave hook must keep both.
        [MethodImpl(MethodImplOptions.NoInlining)]
        static Pair MakePair(long number, double fraction)
        {
            return new Pair { Number = number, Fraction = fraction };
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static double Half(double x) { return x / 2; }

        // Every integer and floating-point argument register in use when the
        // enter hook runs (x86-64 SysV: rdi rsi rdx rcx r8 r9, xmm0-xmm7).
        [MethodImpl(MethodImplOptions.NoInlining)]
        static double Many(int a, int b, int c, int d, int e, int f,
            double x0, double x1, double x2, double x3, double x4, double x5, double x6, double x7)
        {
            return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f
                + x0 + 2 * x1 + 3 * x2 + 4 * x3 + 5 * x4 + 6 * x5 + 7 * x6 + 8 * x7;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Args(int number, string text) { return number + text.Length; }

        static int Main(string[] args)
        {
            Console.WriteLine("fib(15)=" + Fib(15));
            Console.WriteLine("even(10)=" + IsEven(10));
            int caught = Catcher() + Catcher();
            Console.WriteLine("caught=" + caught);
            Console.WriteLine("cleaned=" + FinallyCatcher());
            Console.WriteLine("finally=" + FinallyThrower(1) + "," + _cleaned);
            var threads = new Thread[3];
            for (int i = 0; i < threads.Length; i++)
            {
                threads[i] = new Thread(Worker);
                threads[i].Start(i);
            }
            foreach (var thread in threads)
            {
                thread.Join();
            }
            Console.WriteLine("workers=" + Results[0] + "," + Results[1] + "," + Results[2]);
            Console.WriteLine("echo<int>=" + Util.Echo(5) + " echo<string>=" + Util.Echo("five"));
            Console.WriteLine("holder<int>=" + new Holder<int>(6).Get()
                + " holder<string>=" + new Holder<string>("six").Get());
            Console.WriteLine("args=" + Args(42, "hello"));
            Pair pair = MakePair(7, 0.25);
            Console.WriteLine("many=" + Many(1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5).ToString("R"));
            Console.WriteLine("pair=" + pair.Number + "," + pair.Fraction.ToString("R") + " half=" + Half(5.0).ToString("R"));
            Console.WriteLine("done");
            return 45;
        }
    }
}
