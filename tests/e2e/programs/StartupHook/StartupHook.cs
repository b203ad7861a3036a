// A startup hook: the runtime calls StartupHook.Initialize() (a class with
// that name, in no namespace) before Main, when the assembly is named in
// DOTNET_STARTUP_HOOKS or applied with the diagnostics command
// ApplyStartupHook (.NET 8).
using System;

internal class StartupHook
{
    public static void Initialize()
    {
        Console.WriteLine("startup hook ran");
    }
}
