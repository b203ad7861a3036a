// CorProf.CallTarget.LogIntegration: one stderr line per event (the
// default integration; docs/instrumentation.md):
//   calltarget begin Namespace.Type::Method(arg1, arg2)
//   calltarget end Namespace.Type::Method -> value      (or -> void)
//   calltarget exception Namespace.Type::Method System.InvalidOperationException
// For an async method (Task, Task<T>, ValueTask, ValueTask<T>) the end or
// exception line comes when the task completes, with the awaited value
// (`-> void` for Task and ValueTask) or the fault.
// With CORPROF_CALLTARGET_SHOW_THIS=1, `begin` is followed by
//   calltarget this Namespace.Type::Method <this.ToString(), or null>
// Methods of more than 8 parameters find no OnMethodBegin here (add one).
using System;

namespace CorProf.CallTarget
{
    public static class LogIntegration
    {
        static readonly bool ShowThis =
            Environment.GetEnvironmentVariable("CORPROF_CALLTARGET_SHOW_THIS") == "1";

        static string Text<T>(T value)
        {
            return value == null ? "null" : value.ToString();
        }

        static CallTargetState Begin(string method, string self, string args)
        {
            Console.Error.WriteLine("calltarget begin " + method + "(" + args + ")");
            if (ShowThis)
                Console.Error.WriteLine("calltarget this " + method + " " + self);
            return new CallTargetState(method, null, 0);
        }

        public static CallTargetState OnMethodBegin<TTarget>(TTarget instance, string method)
        {
            return Begin(method, Text(instance), "");
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1>(TTarget instance, ref TArg1 arg1, string method)
        {
            return Begin(method, Text(instance), Text(arg1));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3) + ", " + Text(arg4));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3) + ", " + Text(arg4) + ", " + Text(arg5));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3) + ", " + Text(arg4) + ", " + Text(arg5) + ", " + Text(arg6));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3) + ", " + Text(arg4) + ", " + Text(arg5) + ", " + Text(arg6) + ", " + Text(arg7));
        }

        public static CallTargetState OnMethodBegin<TTarget, TArg1, TArg2, TArg3, TArg4, TArg5, TArg6, TArg7, TArg8>(TTarget instance, ref TArg1 arg1, ref TArg2 arg2, ref TArg3 arg3, ref TArg4 arg4, ref TArg5 arg5, ref TArg6 arg6, ref TArg7 arg7, ref TArg8 arg8, string method)
        {
            return Begin(method, Text(instance), Text(arg1) + ", " + Text(arg2) + ", " + Text(arg3) + ", " + Text(arg4) + ", " + Text(arg5) + ", " + Text(arg6) + ", " + Text(arg7) + ", " + Text(arg8));
        }

        public static CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
        {
            End(state.Method, exception, Text(returnValue));
            return new CallTargetReturn<TReturn>(returnValue);
        }

        public static CallTargetReturn OnMethodEnd<TTarget>(TTarget instance, Exception exception, in CallTargetState state)
        {
            End(state.Method, exception, "void");
            return default(CallTargetReturn);
        }

        // Async targets: the awaited value (void for Task and ValueTask) or
        // the fault, when the task completes.
        public static TResult OnAsyncMethodEnd<TTarget, TResult>(TTarget instance, TResult result, Exception exception, in CallTargetState state)
        {
            End(state.Method, exception, Text(result));
            return result;
        }

        static void End(string method, Exception exception, string value)
        {
            if (exception != null)
                Console.Error.WriteLine("calltarget exception " + method + " " + exception.GetType().FullName);
            else
                Console.Error.WriteLine("calltarget end " + method + " -> " + value);
        }
    }
}
