// Exception handlers (issue 37): tests/e2e_coverage.rs checks every line's
// count. Main calls each method 6 times on one thread; Fail throws on the
// odd calls (1, 3, 5), so every handler runs a known number of times.
using System;

namespace E2E.CoverageHandlers
{
    public static class Program
    {
        static int finallies;

        public static int Main()
        {
            int a = 0, b = 0, c = 0, d = 0;
            for (int i = 0; i < 6; i++)
            {
                a += WithVariable(i);
                b += WithoutVariable(i);
                c += Filtered(i);
                d += WithFinally(i);
            }
            Console.WriteLine("variable=" + a + " none=" + b);
            Console.WriteLine("filtered=" + c + " finally=" + d + "/" + finallies);
            Console.WriteLine("loop=" + InLoop(2000));
            Console.WriteLine("same line=" + SameLine(500));
            return 0;
        }

        static void Fail(int i)
        {
            if (i % 2 == 1)
            {
                throw new InvalidOperationException("odd " + i);
            }
        }

        // catch (E e): the handler stores the exception in a local.
        static int WithVariable(int i)
        {
            try
            {
                Fail(i);
                return 0;
            }
            catch (InvalidOperationException e)
            {
                return e.Message.Length;
            }
        }

        // catch (E) and catch: the handler pops the exception.
        static int WithoutVariable(int i)
        {
            int r = 0;
            try
            {
                Fail(i);
            }
            catch (InvalidOperationException)
            {
                r = 1;
            }
            try
            {
                Fail(i);
            }
            catch
            {
                r += 10;
            }
            return r;
        }

        // A filter: true for i = 3 only; 1 and 5 go to the next clause.
        static int Filtered(int i)
        {
            try
            {
                Fail(i);
                return 0;
            }
            catch (InvalidOperationException e)
                when (e.Message.EndsWith("3", StringComparison.Ordinal))
            {
                return 100;
            }
            catch (Exception)
            {
                return 1;
            }
        }

        // A finally, on the normal path and after a catch.
        static int WithFinally(int i)
        {
            int r = 0;
            try
            {
                Fail(i);
                r = 1;
            }
            catch (InvalidOperationException)
            {
                r = 2;
            }
            finally
            {
                finallies++;
            }
            return r;
        }

        // Handlers in a loop's body, 2000 times each: the method is optimized
        // at once (3.1) or moved to optimized code by on-stack replacement
        // (8.0 and later) while they run. Fail always throws here.
        static int InLoop(int n)
        {
            int r = 0;
            for (int i = 0; i < n; i++)
            {
                try
                {
                    Fail(2 * i + 1);
                }
                catch (InvalidOperationException e)
                {
                    r += e.Message.Length;
                }
                try
                {
                    Fail(2 * i + 1);
                }
                catch (InvalidOperationException)
                {
                    r++;
                }
            }
            return r;
        }

        // A try's `}` and `catch (E e) {` on one line (issue 37's report):
        // the Release build has no point for `catch (E e)` when `e` stays on
        // the stack, so the line's only point is the try's `leave`.
        static int SameLine(int n)
        {
            int r = 0;
            for (int i = 0; i < n; i++)
            {
                try {
                    Fail(2 * i + 1);
                } catch (InvalidOperationException e) {
                    r = e.Message.Length + r;
                }
            }
            return r;
        }
    }
}
