// Calls a ReadyToRun assembly: Microsoft.Extensions.Primitives.dll, of the
// ASP.NET Core shared framework up to 10.0, precompiled, which
// tests/e2e_coverage.rs copies beside this program with a Portable PDB it
// writes for it (tests/e2e/synth_pdb.py); 11.0's Microsoft.NETCore.App
// carries its own, which the program loads: the test runs it on a private
// copy of that framework, the PDB beside the library there.
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
