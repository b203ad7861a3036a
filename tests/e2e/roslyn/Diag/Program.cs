// The target of `corprof counters`, `corprof stack` and `corprof gcdump`
// (tests/e2e_cli.rs). `Diag SECONDS COUNT` runs for SECONDS with:
// * (.NET 6 and later) a Meter `Corprof.Diag` with a counter
//   `diag.requests` (incremented by 7 every 100 ms) and an observable gauge
//   `diag.queue` (always 42);
// * a thread named `blocker` waiting in `Blocker.WaitHere` on an event that
//   is never set;
// * a static list keeping exactly COUNT `DiagKept` objects alive;
// * a static 8 MB array, so the GC heap is at least that (.NET Core 3.1's
//   `gc-heap-size` counts whole MB).
// It prints `ready` when all of it is set up.
using System;
using System.Collections.Generic;
using System.Threading;
#if NET6_0_OR_GREATER
using System.Diagnostics.Metrics;
#endif

public sealed class DiagKept
{
    public long Id;
    public long Payload;
}

public static class Blocker
{
    public static readonly ManualResetEvent Never = new ManualResetEvent(false);

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public static void WaitHere()
    {
        Never.WaitOne();
    }
}

public static class Program
{
    public static readonly List<DiagKept> Kept = new List<DiagKept>();
    public static readonly byte[] Ballast = new byte[8_000_000];

    public static int Main(string[] args)
    {
        int seconds = args.Length > 0 ? int.Parse(args[0]) : 30;
        int count = args.Length > 1 ? int.Parse(args[1]) : 1234;
        for (int i = 0; i < count; i++)
        {
            Kept.Add(new DiagKept { Id = i });
        }
        var blocker = new Thread(Blocker.WaitHere) { IsBackground = true, Name = "blocker" };
        blocker.Start();
#if NET6_0_OR_GREATER
        var meter = new Meter("Corprof.Diag", "1.0");
        var requests = meter.CreateCounter<long>("diag.requests", "{request}");
        meter.CreateObservableGauge<int>("diag.queue", () => 42, "{item}");
#endif
        Console.WriteLine("ready");
        Console.Out.Flush();
        var end = DateTime.UtcNow.AddSeconds(seconds);
        while (DateTime.UtcNow < end)
        {
#if NET6_0_OR_GREATER
            requests.Add(7);
#endif
            // Some garbage, so the GC heap and CPU counters move.
            var garbage = new byte[1000];
            GC.KeepAlive(garbage);
            Thread.Sleep(100);
        }
        GC.KeepAlive(Kept);
        GC.KeepAlive(Ballast);
        return 0;
    }
}
