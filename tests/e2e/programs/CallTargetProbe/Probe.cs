// CallTargetProbe: the managed helper the call_target example's wrapped
// methods call (see docs/instrumentation.md). No test program references
// it: the host loads it before Main through DOTNET_STARTUP_HOOKS (the
// StartupHook class below), and the AssemblyRef the profiler adds to the
// instrumented module then binds to this already-loaded assembly.
//
// Each event is one line on stderr:
//   calltarget begin Namespace.Type::Method(arg1, arg2)
//   calltarget end Namespace.Type::Method -> value      (or -> void)
//   calltarget exception Namespace.Type::Method System.InvalidOperationException
// With CORPROF_CALLTARGET_SHOW_THIS=1, `begin` is followed by
//   calltarget this Namespace.Type::Method <this.ToString(), or null>
using System;
using System.Text;

// Run by the host before Main when this assembly is in DOTNET_STARTUP_HOOKS.
internal static class StartupHook
{
    public static void Initialize()
    {
    }
}

namespace CallTarget
{
    public static class Probe
    {
        sealed class State
        {
            public string Name;
            public bool Failed;
        }

        static readonly bool ShowThis =
            Environment.GetEnvironmentVariable("CORPROF_CALLTARGET_SHOW_THIS") == "1";

        static string Text(object value)
        {
            return value == null ? "null" : value.ToString();
        }

        public static object Begin(string name, object self, object[] args)
        {
            var line = new StringBuilder("calltarget begin ");
            line.Append(name).Append('(');
            for (int i = 0; i < args.Length; i++)
            {
                if (i > 0)
                    line.Append(", ");
                line.Append(Text(args[i]));
            }
            line.Append(')');
            Console.Error.WriteLine(line.ToString());
            if (ShowThis)
                Console.Error.WriteLine("calltarget this " + name + " " + Text(self));
            return new State { Name = name };
        }

        public static void End(object state, object result)
        {
            var s = (State)state;
            if (!s.Failed)
                Console.Error.WriteLine("calltarget end " + s.Name + " -> " + Text(result));
        }

        public static void EndVoid(object state)
        {
            var s = (State)state;
            if (!s.Failed)
                Console.Error.WriteLine("calltarget end " + s.Name + " -> void");
        }

        public static void OnException(Exception e, object state)
        {
            var s = (State)state;
            s.Failed = true;
            Console.Error.WriteLine("calltarget exception " + s.Name + " " + e.GetType().FullName);
        }
    }
}
