// Known EventSource events, counted: read by two EventPipe sessions at once
// (one in process, one over the diagnostics channel), which must agree.
//
// Prints "ready" once both sources exist, then waits for a line on stdin;
// emits the window (below), prints "emitted", waits for a second line and
// exits with 44. Nothing is written to the two sources outside the window.
//
// The window, all on the main thread except the workers' events (started
// after Begin, joined before End):
//   CorProf-Agree-A  1 Begin   once
//                    2 Tick    100
//                    3 Detail  30 (Verbose)
//   CorProf-Agree-B  7 Work    worker w (1..3) 50 * w times: 300
//                    9 Done    once per worker: 3
//   runtime          5 exceptions thrown and caught
//   CorProf-Agree-A  4 End     once
using System;
using System.Diagnostics.Tracing;
using System.Threading;

namespace E2E.EventAgree;

[EventSource(Name = "CorProf-Agree-A")]
sealed class SourceA : EventSource
{
    public static readonly SourceA Log = new SourceA();

    [Event(1, Level = EventLevel.Informational)]
    public void Begin(int round) => WriteEvent(1, round);

    [Event(2, Level = EventLevel.Informational)]
    public void Tick(int value) => WriteEvent(2, value);

    [Event(3, Level = EventLevel.Verbose)]
    public void Detail(string text, long n) => WriteEvent(3, text, n);

    [Event(4, Level = EventLevel.Informational)]
    public void End(int round) => WriteEvent(4, round);
}

[EventSource(Name = "CorProf-Agree-B")]
sealed class SourceB : EventSource
{
    public static readonly SourceB Log = new SourceB();

    [Event(7, Level = EventLevel.Informational)]
    public void Work(int worker, int i) => WriteEvent(7, worker, i);

    [Event(9, Level = EventLevel.Informational)]
    public void Done(int worker) => WriteEvent(9, worker);
}

static class Program
{
    static int Main()
    {
        // Both sources exist (and are enabled by any session naming them)
        // before "ready".
        GC.KeepAlive(SourceA.Log);
        GC.KeepAlive(SourceB.Log);
        Console.WriteLine("ready");
        Console.Out.Flush();
        if (Console.ReadLine() == null)
            return 3;

        SourceA.Log.Begin(1);
        for (int i = 0; i < 100; i++)
            SourceA.Log.Tick(i);
        for (int i = 0; i < 30; i++)
            SourceA.Log.Detail("detail", i);
        var workers = new Thread[3];
        for (int w = 1; w <= 3; w++)
        {
            int worker = w;
            workers[w - 1] = new Thread(() =>
            {
                for (int i = 0; i < 50 * worker; i++)
                    SourceB.Log.Work(worker, i);
                SourceB.Log.Done(worker);
            });
            workers[w - 1].Start();
        }
        foreach (var t in workers)
            t.Join();
        int caught = 0;
        for (int i = 0; i < 5; i++)
        {
            try
            {
                throw new InvalidOperationException("agree " + i);
            }
            catch (InvalidOperationException)
            {
                caught++;
            }
        }
        SourceA.Log.End(1);
        Console.WriteLine("emitted " + caught);
        Console.Out.Flush();
        if (Console.ReadLine() == null)
            return 3;
        return 44;
    }
}
