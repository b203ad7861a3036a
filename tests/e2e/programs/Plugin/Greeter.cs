// A library loaded at run time by Basics through Assembly.LoadFrom.
// Built as Plugin.dll (see build.txt) and copied next to Basics.dll.
using System.Runtime.CompilerServices;

namespace E2E.Plugin
{
    public static class Greeter
    {
        // Invoked by Basics through reflection.
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Greet(string caller)
        {
            return "hello, " + caller + ", from " + Describe();
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static string Describe()
        {
            return typeof(Greeter).Assembly.GetName().Name + " v1";
        }
    }
}
