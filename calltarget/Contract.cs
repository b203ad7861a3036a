// The CallTarget integration contract (docs/instrumentation.md, "The
// contract"). The call_target profiler wraps a target method so that it
// calls an integration's generic static methods, instantiated for the
// target (its `this` type, argument types and return type): nothing is
// boxed and nothing is allocated by the wrapping itself.
//
// An integration is a static class with any of these public static methods
// (each optional: a missing one is not called, and costs nothing):
//
//   CallTargetState OnMethodBegin<TTarget, TArg1, ..., TArgN>(
//       TTarget instance, ref TArg1 arg1, ..., ref TArgN argN [, string method])
//   CallTargetReturn<TReturn> OnMethodEnd<TTarget, TReturn>(
//       TTarget instance, TReturn returnValue, Exception exception, in CallTargetState state)
//   CallTargetReturn OnMethodEnd<TTarget>(
//       TTarget instance, Exception exception, in CallTargetState state)
//
// `instance` is `this` (a copy for a value type; `null` of type object for
// a static method). The arguments are passed by reference: an integration
// may change them before the method runs. The optional trailing `string
// method` receives the target's name, `Namespace.Type::Method` (a literal:
// no allocation). `exception` is the exception leaving the method, or null;
// it is rethrown unchanged after OnMethodEnd. The value in the returned
// CallTargetReturn<TReturn> is what the method returns. An exception thrown
// by an integration is caught and ignored: it never changes what the
// application sees.
using System;

// Run by the host before Main when this assembly is in DOTNET_STARTUP_HOOKS,
// which is how the runtime finds the helper: no application references it.
internal static class StartupHook
{
    public static void Initialize()
    {
    }
}

namespace CorProf.CallTarget
{
    /// <summary>An integration's per-call state, from OnMethodBegin to OnMethodEnd.</summary>
    public struct CallTargetState
    {
        /// <summary>The target's name when OnMethodBegin asked for it, else null.</summary>
        public readonly string Method;
        /// <summary>Any object the integration keeps for the call (a span, a scope).</summary>
        public readonly object State;
        /// <summary>Any number the integration keeps for the call (a timestamp).</summary>
        public readonly long Value;

        public CallTargetState(string method, object state, long value)
        {
            Method = method;
            State = state;
            Value = value;
        }

        public static CallTargetState GetDefault()
        {
            return default(CallTargetState);
        }
    }

    /// <summary>The value a non-void target returns, possibly replaced by the integration.</summary>
    public struct CallTargetReturn<T>
    {
        private readonly T _returnValue;

        public CallTargetReturn(T returnValue)
        {
            _returnValue = returnValue;
        }

        /// <summary>The value the wrapped method returns (called by the wrapper).</summary>
        public T GetReturnValue()
        {
            return _returnValue;
        }
    }

    /// <summary>The result of OnMethodEnd for a void target.</summary>
    public struct CallTargetReturn
    {
        public static CallTargetReturn GetDefault()
        {
            return default(CallTargetReturn);
        }

        /// <summary>"void": the result of a void method, a Task or a ValueTask.</summary>
        public override string ToString()
        {
            return "void";
        }
    }
}
