// Target of the GC heap walk test (tests/e2e_heap_walk.rs): exactly
// Program.Count objects of E2E.HeapWalk.Marker are alive, and no others ever
// exist, when Walk is JIT-compiled (the profiler walks the heap then); the
// program then collects once (the profiler tries a walk from inside that
// collection). Exit code 44 means Main ran to the end.
using System;
using System.Runtime.CompilerServices;

namespace E2E.HeapWalk
{
    public sealed class Marker
    {
        public readonly int Index;

        public Marker(int index) { Index = index; }
    }

    public static class Program
    {
        public const int Count = 1000;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Walk(Marker[] markers)
        {
            int sum = 0;
            foreach (Marker marker in markers)
            {
                sum += marker.Index;
            }
            return sum;
        }

        static int Main()
        {
            var markers = new Marker[Count];
            for (int i = 0; i < Count; i++)
            {
                markers[i] = new Marker(i);
            }
            int sum = Walk(markers);
            GC.KeepAlive(markers);
            GC.Collect();
            Console.WriteLine("markers=" + markers.Length + " sum=" + sum);
            return 44;
        }
    }
}
