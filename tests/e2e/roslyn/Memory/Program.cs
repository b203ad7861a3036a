// The memory profiles' test program (tests/e2e_memory.rs):
//   Memory gc N      GC.Collect(2) N times, 250 ms apart; prints
//                    "collected N gen2 M" (M: GC.CollectionCount(2) grew by
//                    M meanwhile, N when no other gen-2 GC ran).
//   Memory heap S    S seconds: each second keeps 20,000 more Kept objects
//                    in a list and allocates and drops 200,000 Dropped
//                    objects, then collects (GC.Collect()), and prints
//                    "second I kept K bytes B": K objects kept so far, B
//                    their bytes (K times the size of one Kept, measured by
//                    GC.GetAllocatedBytesForCurrentThread around one
//                    allocation).
// Then "done", exit 0.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

namespace E2E.Memory
{
    // 12 longs: 96 bytes of fields, 112 bytes an object on 64-bit.
    sealed class Kept
    {
        public long A, B, C, D, E, F, G, H, I, J, K, L;
    }

    sealed class Dropped
    {
        public long A, B, C, D, E, F, G, H, I, J, K, L;
    }

    static class Program
    {
        static int Main(string[] args)
        {
            string mode = args.Length > 0 ? args[0] : "gc";
            int n = args.Length > 1 ? int.Parse(args[1]) : 10;
            if (mode == "gc")
            {
                Collect(n);
            }
            else if (mode == "heap")
            {
                Heap(n);
            }
            else
            {
                Console.WriteLine("unknown mode " + mode);
                return 2;
            }
            Console.WriteLine("done");
            return 0;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Collect(int n)
        {
            int before = GC.CollectionCount(2);
            for (int i = 0; i < n; i++)
            {
                GC.Collect(2);
                Thread.Sleep(250);
            }
            int after = GC.CollectionCount(2);
            Console.WriteLine("collected " + n + " gen2 " + (after - before));
        }

        static List<Kept> kept = new List<Kept>();
        static Dropped last;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void KeepMore(int count)
        {
            for (int i = 0; i < count; i++)
            {
                kept.Add(new Kept());
            }
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void DropMany(int count)
        {
            for (int i = 0; i < count; i++)
            {
                last = new Dropped();
            }
            last = null;
        }

        static long SizeOfKept()
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            var one = new Kept();
            long size = GC.GetAllocatedBytesForCurrentThread() - before;
            GC.KeepAlive(one);
            return size;
        }

        static void Heap(int seconds)
        {
            long size = SizeOfKept();
            var clock = Stopwatch.StartNew();
            for (int second = 1; second <= seconds; second++)
            {
                KeepMore(20000);
                DropMany(200000);
                GC.Collect();
                Console.WriteLine("second " + second + " kept " + kept.Count + " bytes " + kept.Count * size);
                long wait = second * 1000 - clock.ElapsedMilliseconds;
                if (wait > 0)
                {
                    Thread.Sleep((int)wait);
                }
            }
            GC.KeepAlive(kept);
        }
    }
}
