// corprof's span helper (docs/sampling.md, "Samples tied to spans"): a
// startup hook that makes each CPU and wall sample of the signal-mode
// sampler carry the trace and span ids of the Activity current on the
// sampled thread. Built by scripts/gen/build-span-helper.sh (net8.0: the
// ActivityListener API is in System.Diagnostics.DiagnosticSource 5.0 and
// later); loaded with DOTNET_STARTUP_HOOKS=<path>/CorprofSpans.dll next to
// CORPROF_SAMPLER_SPANS=1.
//
// How: an ActivityListener on every ActivitySource (Sample answers
// PropagationData: the activity is created, never made to record), and an
// AsyncLocal<Activity> of ours set at each Activity.CurrentChanged (every
// set of Activity.Current: Start, Stop, user code's). That AsyncLocal is
// created with a value-changed handler, which the runtime calls on the
// thread where the value changes: at a set, and at every execution-context
// switch where it differs (an await's continuation on another thread
// included; ThreadContextChanged says which). The handler writes the
// current ids into the thread's span block, a native block of the
// profiler's (corprof_span_block, exported by the profiler's library, found
// through CORECLR_PROFILER_PATH), under the block's sequence counter; the
// thread's SIGPROF handler copies them with the sample and discards a pair
// it interrupted half-written.
//
// The block's layout (src/sampling/slots.rs, SpanBlock): uint seq at 0
// (odd while written), int tid at 4 (the profiler's), the trace id's 16
// bytes at 8, the span id's 8 bytes at 24.
using System;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Threading;

// The runtime calls StartupHook.Initialize() of each assembly in
// DOTNET_STARTUP_HOOKS (a class of that name, outside any namespace).
internal static class StartupHook
{
    public static void Initialize() => Corprof.Spans.SpanTracker.Start();
}

namespace Corprof.Spans
{
    public static unsafe class SpanTracker
    {
        static delegate* unmanaged<IntPtr> s_block;
        static AsyncLocal<Activity> s_current;
        static ActivityListener s_listener;

        [ThreadStatic] static IntPtr t_block;
        // Changes left before a thread without a block asks again.
        [ThreadStatic] static int t_wait;

        /// Whether the profiler tracks spans (its exports found, and on).
        public static bool Started { get; private set; }

        public static void Start()
        {
            if (Started)
                return;
            string path = Environment.GetEnvironmentVariable("CORECLR_PROFILER_PATH_64");
            if (string.IsNullOrEmpty(path))
                path = Environment.GetEnvironmentVariable("CORECLR_PROFILER_PATH");
            if (string.IsNullOrEmpty(path) || !NativeLibrary.TryLoad(path, out IntPtr library))
                return;
            if (!NativeLibrary.TryGetExport(library, "corprof_spans_enabled", out IntPtr enabled)
                || !NativeLibrary.TryGetExport(library, "corprof_span_block", out IntPtr block))
                return;
            if (((delegate* unmanaged<uint>)enabled)() == 0)
                return;
            s_block = (delegate* unmanaged<IntPtr>)block;
            s_current = new AsyncLocal<Activity>(Changed);
            s_listener = new ActivityListener
            {
                ShouldListenTo = _ => true,
                Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.PropagationData,
                SampleUsingParentId = (ref ActivityCreationOptions<string> _) => ActivitySamplingResult.PropagationData,
            };
            // Every change of Activity.Current made by a set (Start makes the
            // activity current, Stop the one that was current at its Start,
            // and user code's own sets): dotnet/runtime's Activity.SetCurrent
            // raises CurrentChanged after it sets its AsyncLocal, on the
            // setting thread. Ours is set in the same execution context, so
            // it flows where Activity.Current flows.
            Activity.CurrentChanged += (_, e) => s_current.Value = e.Current;
            ActivitySource.AddActivityListener(s_listener);
            Started = true;
        }

        static void Changed(AsyncLocalValueChangedArgs<Activity> args)
        {
            IntPtr block = t_block;
            if (block == IntPtr.Zero)
            {
                if (t_wait > 0)
                {
                    t_wait--;
                    return;
                }
                block = s_block();
                if (block == IntPtr.Zero)
                {
                    t_wait = 64;
                    return;
                }
                t_block = block;
            }
            Write((byte*)block, args.CurrentValue);
        }

        static void Write(byte* block, Activity activity)
        {
            uint* seq = (uint*)block;
            // Odd: a sample taken from here on takes no span. Interlocked
            // (a full fence) so that no store below moves above it.
            Interlocked.Increment(ref *seq);
            if (activity != null && activity.IdFormat == ActivityIdFormat.W3C)
            {
                activity.TraceId.CopyTo(new Span<byte>(block + 8, 16));
                activity.SpanId.CopyTo(new Span<byte>(block + 24, 8));
            }
            else
            {
                new Span<byte>(block + 8, 24).Clear();
            }
            // Even: the ids are whole (a release store after them).
            Volatile.Write(ref *seq, *seq + 1);
        }
    }
}
