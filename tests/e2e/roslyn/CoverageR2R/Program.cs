// Calls a ReadyToRun assembly that is not part of the framework it runs on:
// Microsoft.Extensions.Primitives.dll of the ASP.NET Core 3.1.2 shared
// framework, precompiled, which tests/e2e_coverage.rs copies beside this
// program with a Portable PDB it writes for it (tests/e2e/synth_pdb.py).
// The runtime would run the precompiled code of its methods, which has no
// probes; coverage sets it aside, so the called methods show their hits.
using System;
using Microsoft.Extensions.Primitives;

namespace E2E.CoverageR2R
{
    public static class Program
    {
        public static int Main()
        {
            var greeting = new StringSegment("hello world");
            Console.WriteLine(greeting.Subsegment(6).Value);
            Console.WriteLine(greeting.IndexOf('o'));
            return 45;
        }
    }
}
