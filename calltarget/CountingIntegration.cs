// CorProf.CallTarget.CountingIntegration: counts begins, ends (every
// OnMethodEnd, normal or not) and exceptions (ends with an exception), and
// at process exit writes exactly one stderr line:
//   calltarget counts begin N end M exception K
using System;
using System.Threading;

namespace CorProf.CallTarget
{
    public static class CountingIntegration
    {
        static long begins, ends, exceptions;

        static CountingIntegration()
        {
            AppDomain.CurrentDomain.ProcessExit += (sender, e) =>
                Console.Error.WriteLine(
                    "calltarget counts begin " + Interlocked.Read(ref begins) + " end " + Interlocked.Read(ref ends)
                    + " exception " + Interlocked.Read(ref exceptions));
        }

        static void Count(Exception exception)
        {
            Interlocked.Increment(ref ends);
            if (exception != null)
                Interlocked.Increment(ref exceptions);
        }

        public static CallTargetState OnMethodBegin<TTarget>(TTarget instance)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, ref TArg1 arg1)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7, TArg8>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7, ref TArg8 arg8)
        {
            Interlocked.Increment(ref begins);
            return default(CallTargetState);
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            Count(exception);
            return new CallTargetReturn<TReturn>(returnValue);
        }

        public static TResult OnAsyncMethodEnd<TTarget, TResult>(TTarget instance, TResult result, Exception exception, in CallTargetState state)
        {
            Count(exception);
            return result;
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            Count(exception);
            return default(CallTargetReturn);
        }
    }
}
