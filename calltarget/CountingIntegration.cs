// CorProf.CallTarget.CountingIntegration: counts begins, ends (every
// OnMethodEnd, normal or not) and exceptions (ends with an exception), and
// at process exit writes exactly one stderr line:
//   calltarget counts begin N end M exception K
//
// On .NET 5 and later each thread counts in counters of its own with plain
// increments: two interlocked adds on shared counters cost more than the
// rest of a wrapped call (docs/performance.md). A synchronous end counts in
// the counters its begin found and handed over in the call's state (the
// same thread), so a call looks its thread's counters up once; an
// asynchronous end, on any thread, in its own thread's. The exit handler
// adds every thread's counters up; a thread's counters stay registered
// after it ends (three longs per thread that ever called a target). On
// .NET Core 3.1, where a thread-static look-up costs more than two
// interlocked adds (measured), the counters are shared and interlocked.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace CorProf.CallTarget
{
    public static class CountingIntegration
    {
        sealed class Counts
        {
            public long Begins, Ends, Exceptions;
        }

        [ThreadStatic]
        static Counts mine;
        static readonly List<Counts> all = new List<Counts>();
        // A constant to optimized code: the branches on it are compiled out.
        static readonly bool perThread = Environment.Version.Major >= 5;
        static long sharedBegins, sharedEnds, sharedExceptions;

        static CountingIntegration()
        {
            AppDomain.CurrentDomain.ProcessExit += (sender, e) =>
            {
                long begins = Interlocked.Read(ref sharedBegins);
                long ends = Interlocked.Read(ref sharedEnds);
                long exceptions = Interlocked.Read(ref sharedExceptions);
                lock (all)
                {
                    foreach (Counts c in all)
                    {
                        begins += Volatile.Read(ref c.Begins);
                        ends += Volatile.Read(ref c.Ends);
                        exceptions += Volatile.Read(ref c.Exceptions);
                    }
                }
                Console.Error.WriteLine(
                    "calltarget counts begin " + begins + " end " + ends + " exception " + exceptions);
            };
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static Counts Mine()
        {
            return mine ?? Register();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Counts Register()
        {
            Counts c = new Counts();
            lock (all)
                all.Add(c);
            mine = c;
            return c;
        }

        // OnMethodBegin's counters travel in the call's state to a
        // synchronous end, which runs on the same thread; an asynchronous
        // end may run on another thread and counts in that thread's own.
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static CallTargetState Begin()
        {
            if (!perThread)
            {
                Interlocked.Increment(ref sharedBegins);
                return default(CallTargetState);
            }
            Counts c = Mine();
            c.Begins++;
            return new CallTargetState(null, c, 0);
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        static void End(Exception exception, in CallTargetState state)
        {
            if (!perThread)
            {
                Interlocked.Increment(ref sharedEnds);
                if (exception != null)
                    Interlocked.Increment(ref sharedExceptions);
                return;
            }
            Counts c = state.State as Counts ?? Mine();
            c.Ends++;
            if (exception != null)
                c.Exceptions++;
        }

        static void AsyncEnd(Exception exception)
        {
            End(exception, default(CallTargetState));
        }

        public static CallTargetState OnMethodBegin<TTarget>(TTarget instance)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, ref TArg1 arg1)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7)
        {
            return Begin();
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7, TArg8>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7, ref TArg8 arg8)
        {
            return Begin();
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            End(exception, state);
            return new CallTargetReturn<TReturn>(returnValue);
        }

        public static TResult OnAsyncMethodEnd<TTarget, TResult>(TTarget instance, TResult result, Exception exception, in CallTargetState state)
        {
            AsyncEnd(exception);
            return result;
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            End(exception, state);
            return default(CallTargetReturn);
        }
    }
}
