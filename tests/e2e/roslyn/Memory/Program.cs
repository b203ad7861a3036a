// The memory profiles' test program (tests/e2e_memory.rs):
//   Memory gc N      GC.Collect(2) N times, 250 ms apart; prints
//                    "collected N gen2 M" (M: GC.CollectionCount(2) grew by
//                    M meanwhile, N when no other gen-2 GC ran).
//   Memory heap L DIR  L levels: each keeps 300,000 more Kept objects in a
//                    list and allocates and drops 300,000 Dropped objects,
//                    collects (GC.Collect()), waits for the sampler's first
//                    period file in DIR that started a whole second later,
//                    and prints "level I kept K bytes B file NAME": K
//                    objects kept so far, B their bytes (K times the size
//                    of one Kept, measured by GC.GetAllocatedBytesForCurrentThread
//                    around one allocation), NAME that file ("none" after
//                    30 s without it).
//   Memory snapshot N DIR  keeps N Kept objects in the list, allocates
//                    and drops N Dropped ones, collects, then waits (up to
//                    30 s) for the first heap snapshot in DIR started a
//                    whole second later, and prints "snapshot kept N file
//                    NAME" (NAME: heap-....txt, or "none").
// Then "done", exit 0.
using System;
using System.Collections.Generic;
using System.IO;
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
                Heap(n, args[2]);
            }
            else if (mode == "snapshot")
            {
                Snapshot(n, args[2]);
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

        // The newest period file of dir whose period started at or after
        // `after` (names: profile-yyyyMMddTHHmmssZ-seq.pb.gz, the start
        // truncated to the second), waiting up to 30 s; "none" if none came.
        static string PeriodAfter(string dir, DateTime after)
        {
            DateTime limit = DateTime.UtcNow.AddSeconds(30);
            string second = after.AddSeconds(1).ToString("yyyyMMdd'T'HHmmss'Z'");
            while (DateTime.UtcNow < limit)
            {
                string found = null;
                foreach (string path in Directory.GetFiles(dir, "profile-*.pb.gz"))
                {
                    string name = Path.GetFileName(path);
                    string start = name.Substring(8, 16);
                    if (string.CompareOrdinal(start, second) >= 0 &&
                        (found == null || string.CompareOrdinal(name, found) < 0))
                    {
                        found = name;
                    }
                }
                if (found != null)
                {
                    return found;
                }
                Thread.Sleep(50);
            }
            return "none";
        }

        static void Snapshot(int n, string dir)
        {
            KeepMore(n);
            DropMany(n);
            GC.Collect();
            DateTime done = DateTime.UtcNow;
            string second = done.AddSeconds(1).ToString("yyyyMMdd'T'HHmmss'Z'");
            DateTime limit = DateTime.UtcNow.AddSeconds(30);
            string found = "none";
            while (DateTime.UtcNow < limit && found == "none")
            {
                foreach (string path in Directory.GetFiles(dir, "heap-*.txt"))
                {
                    string name = Path.GetFileName(path);
                    if (string.CompareOrdinal(name.Substring(5, 16), second) >= 0)
                    {
                        found = name;
                    }
                }
                Thread.Sleep(50);
            }
            Console.WriteLine("snapshot kept " + kept.Count + " file " + found);
            GC.KeepAlive(kept);
        }

        // Each level keeps 300,000 more Kept objects and drops 300,000
        // Dropped ones, collects, then waits for the first period that
        // started after that (a whole second later: its end sees this
        // level, and the next level starts after its file is written).
        static void Heap(int levels, string dir)
        {
            long size = SizeOfKept();
            for (int level = 1; level <= levels; level++)
            {
                KeepMore(300000);
                DropMany(300000);
                GC.Collect();
                DateTime done = DateTime.UtcNow;
                string file = PeriodAfter(dir, done);
                Console.WriteLine("level " + level + " kept " + kept.Count + " bytes " + kept.Count * size + " file " + file);
            }
            GC.KeepAlive(kept);
        }
    }
}
