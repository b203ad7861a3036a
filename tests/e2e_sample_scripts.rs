//! The one-command scripts of README.md's "What can I do", run the way a
//! newcomer runs them: on a program of their own, compiled with
//! `scripts/samples/compile-csharp.sh` outside the repository's test programs.
//! Each script provisions, builds its example and runs the program; the
//! tests check what the docs promise it prints and that the program's own
//! output and exit code come through.

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use common::dotnet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// A small shop: a generic repository, an exception caught in a loop, and a
/// `NoInlining` method returning a constant (10) that `live_patch` can
/// change. `Shop N` loops for N seconds (once for 0) and exits 7.
const SHOP: &str = r#"using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Shop
{
    public class Repository<T> where T : class
    {
        readonly Dictionary<string, T> items = new Dictionary<string, T>();
        public void Add(string key, T item) { items[key] = item; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public T Find(string key)
        {
            T item;
            if (!items.TryGetValue(key, out item)) throw new KeyNotFoundException(key);
            return item;
        }
    }

    public static class Pricing
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int DiscountPercent() { return 10; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Checkout(int total) { return total - total * DiscountPercent() / 100; }
    }

    public static class Program
    {
        public static int Main(string[] args)
        {
            int seconds = args.Length > 0 ? int.Parse(args[0]) : 0;
            var catalog = new Repository<string>();
            catalog.Add("book", "Book");
            var deadline = DateTime.UtcNow.AddSeconds(seconds);
            int failed = 0, last = -1;
            do
            {
                foreach (var key in new[] { "book", "lamp", "book" })
                {
                    try { catalog.Find(key); Pricing.Checkout(200); }
                    catch (KeyNotFoundException) { failed++; }
                }
                int d = Pricing.DiscountPercent();
                if (d != last) { Console.WriteLine("discount=" + d); last = d; }
                if (seconds > 0) Thread.Sleep(20);
            } while (DateTime.UtcNow < deadline);
            Console.WriteLine("failed>0=" + (failed > 0));
            return 7;
        }
    }
}
"#;

/// `Shop.dll`, compiled once per test process into a directory of its own.
fn shop() -> &'static Path {
    static DLL: OnceLock<PathBuf> = OnceLock::new();
    DLL.get_or_init(|| {
        dotnet::runtime(); // provisioned once, with the harness's limits
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("e2e_sample_scripts")
            .join(std::process::id().to_string());
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let source = dir.join("Shop.cs");
        fs::write(&source, SHOP).unwrap();
        let built = script("compile-csharp.sh", &[&source, &dir.join("out")], &[]);
        assert!(built.status.success(), "{built:?}");
        dir.join("out/Shop.dll")
    })
}

/// `bash scripts/NAME ARGS...` from the repository, with `env` added and the
/// profiler variables of the caller removed; killed after 180 s.
fn script(name: &str, args: &[&Path], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("timeout");
    cmd.arg("180")
        .arg("bash")
        .arg(dotnet::repo_root().join("scripts/samples").join(name))
        .args(args);
    for var in [
        "CORECLR_ENABLE_PROFILING",
        "CORECLR_PROFILER",
        "CORECLR_PROFILER_PATH",
        "CORPROF_CALLTREE_FILTER",
        "CORPROF_CALLTREE_DIR",
        "CORPROF_CALLTARGET_HELPER",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run bash")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The program's own stdout for one pass, and its exit code: what every
/// script must leave unchanged.
const SHOP_ONCE: &str = "discount=10\nfailed>0=True\n";

#[test]
fn the_program_runs_alone_as_the_scripts_expect() {
    // Precondition of the other tests: without a profiler, one pass prints
    // SHOP_ONCE and exits 7.
    let rt = dotnet::runtime();
    let run = Command::new(&rt.host)
        .arg(shop())
        .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
        .env_remove("CORECLR_ENABLE_PROFILING")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(7), "{run:?}");
    assert_eq!(text(&run.stdout), SHOP_ONCE);
}

#[test]
fn trace_sample_traces_your_own_program() {
    let run = script("trace-sample.sh", &[shop()], &[]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(7), "{stderr}");
    assert_eq!(text(&run.stdout), SHOP_ONCE);
    for name in [
        "jit: Shop.Program.Main",
        "jit: Shop.Repository`1.Find",
        "jit: Shop.Pricing.Checkout",
        "jit: Shop.Pricing.DiscountPercent",
    ] {
        assert!(stderr.lines().any(|l| l == name), "{name}: {stderr}");
    }
}

#[test]
fn calltarget_sample_wraps_your_own_methods() {
    let targets = Path::new("Shop!Shop.Pricing::Checkout;Shop!Shop.Repository`1::Find");
    let run = script("calltarget-sample.sh", &[shop(), targets], &[]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(7), "{stderr}");
    assert_eq!(text(&run.stdout), SHOP_ONCE);
    let count = |line: &str| stderr.lines().filter(|l| *l == line).count();
    // One pass: Find(book) twice, Find(lamp) once (throws), Checkout twice.
    assert_eq!(
        count("calltarget begin Shop.Repository`1::Find(book)"),
        2,
        "{stderr}"
    );
    assert_eq!(
        count("calltarget end Shop.Repository`1::Find -> Book"),
        2,
        "{stderr}"
    );
    assert_eq!(
        count("calltarget begin Shop.Repository`1::Find(lamp)"),
        1,
        "{stderr}"
    );
    assert_eq!(
        count("calltarget exception Shop.Repository`1::Find System.Collections.Generic.KeyNotFoundException"),
        1,
        "{stderr}"
    );
    assert_eq!(
        count("calltarget begin Shop.Pricing::Checkout(200)"),
        2,
        "{stderr}"
    );
    assert_eq!(
        count("calltarget end Shop.Pricing::Checkout -> 180"),
        2,
        "{stderr}"
    );

    // A usage error names what is missing.
    let run = script("calltarget-sample.sh", &[shop()], &[]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("name the methods to wrap"));
}

#[test]
fn calltree_sample_writes_folded_stacks_and_a_flame_graph_of_your_program() {
    let out = shop().parent().unwrap().join("calltree");
    let run = script(
        "calltree-sample.sh",
        &[shop()],
        &[
            ("CORPROF_CALLTREE_FILTER", "Shop."),
            ("CORPROF_CALLTREE_DIR", out.to_str().unwrap()),
        ],
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(7), "{stderr}");
    assert_eq!(text(&run.stdout), SHOP_ONCE);
    assert!(
        stderr.contains(&format!("calltree-sample: wrote {}", out.display())),
        "{stderr}"
    );
    let folded = fs::read_to_string(out.join("calls.folded")).unwrap();
    let lines: Vec<&str> = folded.lines().collect();
    for line in [
        "Shop.Program.Main 1",
        "Shop.Program.Main;Shop.Pricing.Checkout 2",
        "Shop.Program.Main;Shop.Pricing.Checkout;Shop.Pricing.DiscountPercent 2",
        "Shop.Program.Main;Shop.Pricing.DiscountPercent 1",
        // Three calls: two returned, one unwound by the exception.
        "Shop.Program.Main;Shop.Repository<System.__Canon>.Find 3",
    ] {
        assert!(lines.contains(&line), "{line}: {folded}");
    }
    // The profiler's last line: every shadow stack balanced.
    let last = stderr.lines().find(|l| l.starts_with("call_tree: wrote "));
    let last = last.unwrap_or_else(|| panic!("no `call_tree: wrote` in {stderr}"));
    assert!(
        last.ends_with(" unbalanced=0 closed_without_leave=0 open_frames=0"),
        "{last}"
    );
    let svg = fs::read_to_string(out.join("flame.svg")).unwrap();
    assert!(svg.starts_with("<?xml") || svg.starts_with("<svg"), "{svg}");
    // Main, the widest frame: `Checkout` takes microseconds of a run whose
    // `Main` takes 0.4-1.3 s on a loaded machine, under the 0.1 px the
    // graph draws (measured with the example before and after issue 29:
    // 12-21 us of 405-1331 ms), so it is checked in calls.folded above.
    assert!(svg.contains("<title>Shop.Program.Main"), "{svg}");
}

#[test]
fn sampler_sample_profiles_your_program_in_pprof() {
    let out = shop().parent().unwrap().join("sampler");
    let run = script(
        "sampler-sample.sh",
        &[shop()],
        &[("CORPROF_SAMPLER_DIR", out.to_str().unwrap())],
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(7), "{stderr}");
    assert_eq!(text(&run.stdout), SHOP_ONCE);
    assert!(
        stderr.contains(&format!("sampler-sample: wrote {}", out.display())),
        "{stderr}"
    );
    // A short program: few samples, but every file, and a gzip pprof.
    for file in [
        "profile.pb.gz",
        "speedscope.json",
        "cpu.folded",
        "wall.folded",
        "alloc.folded",
        "flame.svg",
    ] {
        assert!(out.join(file).is_file(), "{file}: {stderr}");
    }
    let pprof = fs::read(out.join("profile.pb.gz")).unwrap();
    assert_eq!(&pprof[..2], &[0x1f, 0x8b], "gzip");
    let summary = fs::read_to_string(out.join("summary.txt")).unwrap();
    assert!(summary.contains("threads="), "{summary}");
}

#[test]
fn attach_sample_patches_a_constant_of_your_running_program_and_reverts() {
    // Ten seconds of loop (the attach comes about a second in, later on a
    // loaded machine: a CI run once took more than three); the patch lasts
    // two.
    let seconds = Path::new("10");
    let patch = Path::new("Shop!Shop.Pricing::DiscountPercent 10 50 2");
    let run = script("attach-sample.sh", &[shop(), patch, seconds], &[]);
    let stdout = text(&run.stdout);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(7), "{stdout}\n{stderr}");
    assert_eq!(
        stdout, "discount=10\ndiscount=50\ndiscount=10\nfailed>0=True\n",
        "{stderr}"
    );
    assert!(stderr.contains("--- attach list"), "{stderr}");
    assert!(stderr.contains("attached: profiler"), "{stderr}");
    assert!(
        stderr.contains("live_patch: reverted: Shop!Shop.Pricing::DiscountPercent"),
        "{stderr}"
    );

    // A usage error names what is missing.
    let run = script("attach-sample.sh", &[shop()], &[]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("say what to patch"));
}
