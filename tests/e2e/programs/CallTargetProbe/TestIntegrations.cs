// Integrations the e2e tests (tests/e2e_calltarget.rs) add to the shipped
// ones: one that changes arguments and the return value, one that throws
// from every method, one with a method of a shape the contract does not
// know, and one with only the synchronous ends.
using System;
using CorProf.CallTarget;

namespace E2E.CallTargetTest
{
    // For `int Add(int a, int b)`: a += 100 before the call, and the result
    // replaced by result + 1000 (so Add(2, 3) returns 1105).
    public static class ChangeIntegration
    {
        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2>(TTarget instance, ref TArg1 a, ref TArg2 b)
        {
            if (a is int)
                a = (TArg1)(object)((int)(object)a + 100);
            return new CallTargetState(null, null, 7);
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            if (returnValue is int && state.Value == 7)
                return new CallTargetReturn<TReturn>((TReturn)(object)((int)(object)returnValue + 1000));
            return new CallTargetReturn<TReturn>(returnValue);
        }
    }

    // Every method throws: the application must not notice.
    public static class ThrowingIntegration
    {
        public static CallTargetState OnMethodBegin<TTarget>(TTarget instance)
        {
            throw new InvalidOperationException("integration begin");
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, ref TArg1 a)
        {
            throw new InvalidOperationException("integration begin");
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2>(TTarget instance, ref TArg1 a, ref TArg2 b)
        {
            throw new InvalidOperationException("integration begin");
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            throw new InvalidOperationException("integration end");
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            throw new InvalidOperationException("integration end");
        }
    }

    // Only OnMethodEnd for void methods, and an OnMethodBegin of a shape
    // the contract does not know (by-value arguments): a non-void target
    // gets nothing and stays unwrapped; the odd method is reported.
    public static class EndOnlyIntegration
    {
        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, TArg1 a)
        {
            return default(CallTargetState);
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            Console.Error.WriteLine("calltarget endonly " + (exception == null ? "ok" : exception.GetType().FullName));
            return default(CallTargetReturn);
        }
    }

    // Only OnMethodBegin for one argument and the synchronous OnMethodEnd
    // (no OnAsyncMethodEnd): prints what each end gets, as
    // "calltarget syncend <TReturn> <value or exception type>".
    public static class SyncEndIntegration
    {
        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, ref TArg1 a)
        {
            return default(CallTargetState);
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            Console.Error.WriteLine("calltarget syncend " + typeof(TReturn).FullName + " "
                + (exception != null ? exception.GetType().FullName : (object)returnValue));
            return new CallTargetReturn<TReturn>(returnValue);
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            Console.Error.WriteLine("calltarget syncend void "
                + (exception != null ? exception.GetType().FullName : "-"));
            return default(CallTargetReturn);
        }
    }
}
