// CPU-bound work for scripts/bench/bench-coverage.sh and the threaded count test of
// tests/e2e_coverage.rs: THREADS threads each call Step ITERATIONS times.
//   CoverageBench [THREADS [ITERATIONS]]   (defaults 1 and 20000000)
// Prints the checksum, the calls made and the elapsed milliseconds.
using System;
using System.Diagnostics;
using System.Threading;

namespace E2E.CoverageBench
{
    public static class Program
    {
        public static int Main(string[] args)
        {
            int threads = args.Length > 0 ? int.Parse(args[0]) : 1;
            int iterations = args.Length > 1 ? int.Parse(args[1]) : 20000000;
            var watch = Stopwatch.StartNew();
            var results = new long[threads];
            var workers = new Thread[threads];
            for (int t = 0; t < threads; t++)
            {
                int id = t;
                workers[t] = new Thread(() => results[id] = Work(iterations));
                workers[t].Start();
            }
            long total = 0;
            for (int t = 0; t < threads; t++)
            {
                workers[t].Join();
                total += results[t];
            }
            Console.WriteLine("checksum=" + total);
            Console.WriteLine("calls=" + (long)threads * iterations);
            Console.WriteLine("elapsed_ms=" + watch.ElapsedMilliseconds);
            return 0;
        }

        static long Work(int n)
        {
            long acc = 0;
            for (int i = 0; i < n; i++)
            {
                acc += Step(i);
            }
            return acc;
        }

        static long Step(int i)
        {
            if ((i & 1) == 0)
            {
                return i >> 1;
            }
            return Mix(i);
        }

        static long Mix(long h)
        {
            h ^= h << 13;
            h ^= h >> 7;
            return h & 0xFFFF;
        }
    }
}
