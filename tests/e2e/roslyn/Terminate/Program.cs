// A console service stopped by SIGTERM (tests/e2e_termination.rs). It
// prints "ready", then works until the signal comes:
//   Terminate none     no handler of its own: on .NET 10+ the signal's
//                      default disposition ends it at once.
//   Terminate cancel   a PosixSignalRegistration that cancels the signal
//                      and ends Main (a graceful stop, as hosts do): exit 0.
//   Terminate observe  a registration that only prints "observed" and lets
//                      the signal's default action happen.
// The registrations need .NET 6; on netcoreapp3.1 those modes exit 3.
using System;
using System.Runtime.CompilerServices;
using System.Threading;
#if NET6_0_OR_GREATER
using System.Runtime.InteropServices;
#endif

static class Program
{
    static volatile bool stop;

    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "none";
        object registration = null;
        if (mode != "none")
        {
#if NET6_0_OR_GREATER
            registration = PosixSignalRegistration.Create(PosixSignal.SIGTERM, context =>
            {
                Console.WriteLine("observed");
                Console.Out.Flush();
                if (mode == "cancel")
                {
                    context.Cancel = true;
                    stop = true;
                }
            });
#else
            Console.WriteLine("no PosixSignalRegistration before .NET 6");
            return 3;
#endif
        }
        Console.WriteLine("ready");
        Console.Out.Flush();
        long total = 0;
        for (long i = 0; !stop; i++)
        {
            total += Work.Step(i);
            if (i % 20000 == 0)
            {
                Thread.Sleep(1);
            }
        }
        Console.WriteLine("stopped " + (total > 0));
        GC.KeepAlive(registration);
        return 0;
    }
}

static class Work
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static long Step(long i)
    {
        long sum = 0;
        for (int k = 0; k < 50; k++)
        {
            sum += (i + k) % 7;
        }
        return sum;
    }
}
