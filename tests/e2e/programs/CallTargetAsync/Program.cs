// Async targets of the call_target example (tests/e2e_calltarget.rs):
// Task<int>, Task, a faulting Task<int>, a ValueTask<int> completed at
// once, a ValueTask<string> completed later, a Task<int> method that throws
// before returning a task, and a cancelled Task. Prints what an unprofiled
// run prints; exits 45.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace E2E.CallTargetAsync
{
    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Compute(int x)
        {
            await Task.Yield();
            return x * 2;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task Pause(int ms)
        {
            await Task.Delay(ms);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static async Task<int> Fault(string message)
        {
            await Task.Yield();
            throw new InvalidOperationException(message);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static ValueTask<int> Quick(int x)
        {
            return new ValueTask<int>(x + 1);
        }

        static async Task<string> LaterCore(string s)
        {
            await Task.Yield();
            return s + "!";
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static ValueTask<string> Later(string s)
        {
            return new ValueTask<string>(LaterCore(s));
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Task<int> Eager(int x)
        {
            if (x < 0)
                throw new ArgumentException("negative");
            return Task.FromResult(x);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static Task Cancelled()
        {
            return Task.FromCanceled(new CancellationToken(true));
        }

        public static int Main()
        {
            Console.WriteLine("compute=" + Compute(21).Result);
            try
            {
                Fault("bad").GetAwaiter().GetResult();
            }
            catch (InvalidOperationException e)
            {
                Console.WriteLine("fault=" + e.Message);
            }
            var faulted = Fault("again");
            try
            {
                faulted.Wait();
            }
            catch (AggregateException e)
            {
                Console.WriteLine("faulted=" + faulted.IsFaulted + "," + e.InnerExceptions.Count + "," + e.InnerException.GetType().Name);
            }
            Pause(5).Wait();
            Console.WriteLine("paused");
            Console.WriteLine("quick=" + Quick(1).Result);
            Console.WriteLine("later=" + Later("x").AsTask().Result);
            try
            {
                Eager(-1);
            }
            catch (ArgumentException e)
            {
                Console.WriteLine("eager=" + e.Message);
            }
            var cancelled = Cancelled();
            try
            {
                cancelled.Wait();
            }
            catch (AggregateException)
            {
                Console.WriteLine("cancelled=" + cancelled.IsCanceled);
            }
            return 45;
        }
    }
}
