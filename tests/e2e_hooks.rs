//! Enter/leave/tailcall hooks on a real CoreCLR: the fixture
//! `tests/fixtures/call_tree_modes.rs` (`examples/call_tree.rs` with a
//! `summary.txt`, argument and exception logs, and the WithInfo, `nothing`
//! and `late` modes; fast-path trampolines by default) loaded into the
//! `CallTree` program, whose calls are known exactly. See docs/hooks.md.
//! The example itself is run by `calltree-sample.sh`
//! (tests/e2e_sample_scripts.rs).

// The real-runtime harness (tests/common/dotnet.rs) is Unix only.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::browser;
use common::dotnet::{self, Profiler};
use common::readers::{self, go_pprof};
use common::runtime_async::run_runtime_async;

const CALL_TREE: &str = "3C1F5E2A-7B9D-4E61-A8C4-5D2E9F0B1A73";
const NS: &str = "E2E.CallTree.";

/// What one profiled run left behind.
struct Run {
    dir: PathBuf,
    stdout: String,
    summary: BTreeMap<String, String>,
    /// path -> calls, from calls.folded.
    calls: BTreeMap<String, u64>,
}

impl Run {
    fn file(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", self.dir.join(name).display()))
    }

    /// Sum of the counts of paths whose innermost frame is `frame`.
    fn total(&self, frame: &str) -> u64 {
        let frame = format!("{NS}{frame}");
        self.calls
            .iter()
            .filter(|(path, _)| path.rsplit(';').next() == Some(frame.as_str()))
            .map(|(_, count)| count)
            .sum()
    }

    /// The count of one path given with short names (`Program.Main;...`).
    fn path(&self, short: &[&str]) -> Option<u64> {
        let key: Vec<String> = short.iter().map(|f| format!("{NS}{f}")).collect();
        self.calls.get(&key.join(";")).copied()
    }
}

fn parse_folded(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .map(|line| {
            let (path, count) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("bad line {line:?}"));
            let count = count
                .parse()
                .unwrap_or_else(|_| panic!("bad count in {line:?}"));
            (path.to_string(), count)
        })
        .collect()
}

/// The program's output without a profiler (the baseline the profiled runs
/// must reproduce).
fn baseline() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| {
        let out = dotnet::runtime().run("CallTree", &[], None);
        out.assert_exit(45);
        assert!(out.stdout.contains("fib(15)=610"), "{}", out.describe());
        assert!(
            out.stdout.contains("pair=7,0.25 half=2.5"),
            "{}",
            out.describe()
        );
        // Three finally blocks ran for FinallyCatcher, two more (one of
        // them throwing) for FinallyThrower, whose caller frame caught.
        assert!(
            out.stdout.contains("cleaned=3\nfinally=10,5\n"),
            "{}",
            out.describe()
        );
        out.stdout
    })
}

/// The fixture, writing to a fresh directory of its own (returned).
fn fixture(label: &str) -> (PathBuf, Profiler) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_hooks")
        .join(format!("{label}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let library = dotnet::build_example("call_tree_modes")
        .unwrap_or_else(|error| panic!("building fixture call_tree_modes: {error}"));
    let profiler =
        Profiler::new(library, CALL_TREE).with_env("CORPROF_CALLTREE_DIR", dir.to_str().unwrap());
    (dir, profiler)
}

fn run(label: &str, env: &[(&str, &str)]) -> Run {
    let runtime = dotnet::runtime();
    let (dir, profiler) = fixture(label);
    let mut profiler = profiler.with_env("COMPlus_TieredCompilation", "0");
    for (key, value) in env {
        profiler = profiler.with_env(*key, *value);
    }
    let out = runtime.run("CallTree", &[], Some(&profiler));
    out.assert_exit(45);
    assert_eq!(
        out.stdout,
        baseline(),
        "the profiler changed the output\n{}",
        out.describe()
    );
    let summary = readers::summary(&dir.join("summary.txt"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", out.describe()));
    let calls = fs::read_to_string(dir.join("calls.folded"))
        .map(|t| parse_folded(&t))
        .unwrap_or_default();
    Run {
        dir,
        stdout: out.stdout,
        summary,
        calls,
    }
}

fn fast() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| run("fast", &[("CORPROF_CALLTREE_FILTER", "E2E.CallTree")]))
}

fn with_info() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        run(
            "with-info",
            &[
                ("CORPROF_CALLTREE_FILTER", "E2E.CallTree"),
                ("CORPROF_CALLTREE_MODE", "with-info"),
            ],
        )
    })
}

/// The preconditions every count depends on, checked from the profiler's
/// own report: inlining off (read back from the runtime's event mask), and
/// every shadow stack balanced with nothing left open.
fn assert_sound(run: &Run) {
    let s = &run.summary;
    assert_eq!(
        s.get("inlining_disabled").map(String::as_str),
        Some("true"),
        "{s:?}"
    );
    let mask = u32::from_str_radix(s["event_mask"].trim_start_matches("0x"), 16).unwrap();
    assert_ne!(
        mask & 0x0020_0000,
        0,
        "COR_PRF_DISABLE_INLINING in {mask:#x}"
    );
    assert_ne!(
        mask & 0x0000_1000,
        0,
        "COR_PRF_MONITOR_ENTERLEAVE in {mask:#x}"
    );
    assert_eq!(s["unbalanced"], "0", "{s:?}");
    assert_eq!(s["open_frames"], "0", "{s:?}");
    // Synchronous code: every frame closes by its leave (or its unwind).
    assert_eq!(s["closed_without_leave"], "0", "{s:?}");
}

/// The exact calls of `CallTree`, as its source makes them.
fn assert_exact_counts(run: &Run) {
    assert_sound(run);
    // Main's thread and the three workers have shadow stacks.
    let threads: u32 = run.summary["threads"].parse().unwrap();
    assert!(threads >= 4, "{:?}", run.summary);
    assert_eq!(run.path(&["Program.Main"]), Some(1), "{:#?}", run.calls);
    // Fib(15): 2 * Fib(16) - 1 calls in all, one at each depth's first level.
    assert_eq!(run.total("Program.Fib"), 1973);
    // P/Invokes (compiled from transient IL on 11, called through IL stubs
    // before) are never offered to the hooks: no hook pairs around native
    // calls on any runtime (the program calls them: Console.Write).
    assert_eq!(run.summary["pinvokes_offered"], "0", "{:?}", run.summary);
    assert_eq!(run.path(&["Program.Main", "Program.Fib"]), Some(1));
    // Fib at depth d (d = 1..=15 below Main) is called 2^(d-1) times while
    // every call one level up recursed (n >= 2 there): true down to d = 8.
    for depth in 1..=8u32 {
        let mut path = vec!["Program.Main"];
        path.extend(std::iter::repeat_n("Program.Fib", depth as usize));
        assert_eq!(run.path(&path), Some(1 << (depth - 1)), "depth {depth}");
    }
    // Mutual recursion: IsEven(10) -> IsOdd(9) -> ... -> IsEven(0).
    assert_eq!(run.total("Program.IsEven"), 6);
    assert_eq!(run.total("Program.IsOdd"), 5);
    let mut chain = vec!["Program.Main"];
    for i in 0..11 {
        chain.push(if i % 2 == 0 {
            "Program.IsEven"
        } else {
            "Program.IsOdd"
        });
    }
    assert_eq!(run.path(&chain), Some(1), "the 11-deep alternation");
    // Exceptions: Catcher twice, each Thrower(3) .. Thrower(0) unwound by
    // the exception thrown four frames down.
    assert_eq!(run.total("Program.Catcher"), 2);
    assert_eq!(run.total("Program.Thrower"), 8);
    assert_eq!(
        run.path(&[
            "Program.Main",
            "Program.Catcher",
            "Program.Thrower",
            "Program.Thrower",
            "Program.Thrower",
            "Program.Thrower"
        ]),
        Some(2)
    );
    // An exception leaving three frames through their finally blocks, each
    // frame closed once.
    assert_eq!(run.total("Program.Cleaner"), 3);
    assert_eq!(
        run.path(&[
            "Program.Main",
            "Program.FinallyCatcher",
            "Program.Cleaner",
            "Program.Cleaner",
            "Program.Cleaner"
        ]),
        Some(1)
    );
    // An exception thrown from a finally block run by the unwind of another,
    // caught by the caller, a frame of the same method: the thrower closes
    // once, and the catcher stays open until it returns (10 and 11 give the
    // thrower no unwind-leave; `CallTree::catcher_enter` closes it).
    assert_eq!(run.total("Program.FinallyThrower"), 2);
    assert_eq!(
        run.path(&["Program.Main", "Program.FinallyThrower"]),
        Some(1)
    );
    assert_eq!(
        run.path(&[
            "Program.Main",
            "Program.FinallyThrower",
            "Program.FinallyThrower"
        ]),
        Some(1)
    );
    // Threads: each worker is the root of its own thread's stack.
    assert_eq!(run.path(&["Program.Worker"]), Some(3));
    assert_eq!(run.path(&["Program.Worker", "Program.Square"]), Some(300));
    // Generic methods over a value type (own code) and a reference type
    // (shared canonical code, named without a frame).
    assert_eq!(
        run.path(&["Program.Main", "Util.Echo<System.Int32>"]),
        Some(1)
    );
    assert_eq!(
        run.path(&["Program.Main", "Util.Echo<System.__Canon>"]),
        Some(1)
    );
    assert_eq!(
        run.path(&["Program.Main", "Holder<System.Int32>.Get"]),
        Some(1)
    );
    assert_eq!(
        run.path(&["Program.Main", "Holder<System.__Canon>.Get"]),
        Some(1)
    );
    assert_eq!(run.path(&["Program.Main", "Program.Args"]), Some(1));
    assert_eq!(run.path(&["Program.Main", "Program.MakePair"]), Some(1));
    assert_eq!(run.path(&["Program.Main", "Program.Half"]), Some(1));
    assert_eq!(run.path(&["Program.Main", "Program.Many"]), Some(1));
    // Nothing outside the filter was hooked: every root is Main or Worker.
    for path in run.calls.keys() {
        let root = path.split(';').next().unwrap();
        assert!(
            root == "E2E.CallTree.Program.Main" || root == "E2E.CallTree.Program.Worker",
            "unexpected root in {path}"
        );
        assert!(
            path.split(';').all(|f| f.starts_with(NS)),
            "unfiltered frame in {path}"
        );
    }
}

#[test]
fn fast_path_hooks_count_every_call_exactly() {
    assert_exact_counts(fast());
    assert_eq!(fast().summary["mode"], "Fast");
}

#[test]
fn with_info_hooks_count_the_same_calls() {
    assert_exact_counts(with_info());
    assert_eq!(with_info().summary["mode"], "WithInfo");
    assert_eq!(with_info().calls, fast().calls);
    assert_eq!(with_info().stdout, fast().stdout);
}

#[test]
fn with_info_hooks_read_int_and_string_arguments_and_the_return_value() {
    let args = with_info().file("args.txt");
    assert!(
        args.lines().any(|l| l
            == "enter E2E.CallTree.Program.Args ranges=2 number=Some(42) text=Some(Ok(\"hello\"))"),
        "{args}"
    );
    assert!(
        args.lines()
            .any(|l| l == "leave E2E.CallTree.Program.Args bytes=4 value=Some(47)"),
        "{args}"
    );
}

/// `DoStackSnapshot` of the hooked thread from inside its enter hook: the
/// walk 3.1, 8 and 9 give, and the `E_FAIL` of 10 and 11
/// (dotnet/runtime#130220), asserted per runtime.
#[test]
fn a_stack_walk_inside_an_enter_hook_works_up_to_9_and_fails_from_10() {
    let args = with_info().file("args.txt");
    let rt = dotnet::runtime();
    let expected = if rt.major() >= 10 {
        "walk in enter: err E_FAIL (0x80004005): Unspecified failure."
    } else {
        "walk in enter: E2E.CallTree.Program.Args <- E2E.CallTree.Program.Main"
    };
    assert!(
        args.lines().any(|l| l == expected),
        "runtime {}: {expected}\nin\n{args}",
        rt.version
    );
}

#[test]
fn a_frame_names_the_exact_instantiation_of_shared_generic_code() {
    let args = with_info().file("args.txt");
    for line in [
        "exact E2E.CallTree.Util.Echo<System.__Canon> => Ok(\"E2E.CallTree.Util.Echo<System.String>\")",
        "exact E2E.CallTree.Holder<System.__Canon>.Get => Ok(\"E2E.CallTree.Holder<System.String>.Get\")",
    ] {
        assert!(args.lines().any(|l| l == line), "{line}\nin\n{args}");
    }
}

#[test]
fn stack_walk_in_exception_thrown_names_the_thrower_first() {
    let text = fast().file("exceptions.txt");
    let walks: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    let thrower = "Thrower";
    let finally_thrower = ["FinallyThrower", "FinallyThrower", "Main"];
    // One walk per throw, in order: Catcher's two, Cleaner's, then
    // FinallyThrower's first exception and the one its finally block threw.
    let expected: [&[&str]; 5] = [
        &[thrower, thrower, thrower, thrower, "Catcher", "Main"],
        &[thrower, thrower, thrower, thrower, "Catcher", "Main"],
        &["Cleaner", "Cleaner", "Cleaner", "FinallyCatcher", "Main"],
        &finally_thrower,
        &finally_thrower,
    ];
    assert_eq!(walks.len(), expected.len(), "one walk per throw:\n{text}");
    // The runtime's own managed frames, left out of the walk: 11 calls Main
    // from System.Environment.CallEntryPoint, 3.1 to 10 from native code;
    // the managed exception dispatch of 9 and later is not on the stack yet
    // when `exception_thrown` walks it.
    let rt = dotnet::runtime();
    let machinery = if rt.major() >= 11 { 1 } else { 0 };
    for (walk, expected) in walks.iter().zip(expected) {
        let (head, frames) = walk.split_once(": ").unwrap();
        let frames: Vec<&str> = frames.split(" <- ").collect();
        let expected: Vec<String> = expected
            .iter()
            .map(|f| format!("{NS}Program.{f}"))
            .collect();
        assert_eq!(frames, expected, "{walk}");
        assert!(
            head.ends_with(&format!(" machinery={machinery}")),
            "runtime {}: {walk}",
            rt.version
        );
    }
}

/// profile.pb.gz, read by Go's pprof: calls per function as calls.folded
/// counts them, and self time that pprof sums back to the inclusive time
/// time.folded gives Main.
#[test]
fn the_pprof_profile_agrees_with_the_folded_files() {
    let run = fast();
    let profile = run.dir.join("profile.pb.gz");
    let profile = profile.to_str().unwrap();
    // `-top`: flat (leaf) and cum per function; calls are counts.
    let top = |index: &str, unit: &str| -> BTreeMap<String, (f64, f64)> {
        let text = go_pprof(&[
            "-top",
            "-nodecount=1000",
            unit,
            &format!("-sample_index={index}"),
            profile,
        ]);
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .skip(1)
            .filter_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let n = |s: &str| {
                    s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                        .parse::<f64>()
                        .ok()
                };
                if f.len() < 6 {
                    return None;
                }
                Some((f[5..].join(" "), (n(f[0])?, n(f[3])?)))
            })
            .collect()
    };
    let calls = top("calls", "-unit=count");
    assert_eq!(
        calls.get(&format!("{NS}Program.Fib")).map(|c| c.0),
        Some(run.total("Program.Fib") as f64),
        "{calls:?}"
    );
    let time = top("time", "-unit=us");
    let main_cum = time[&format!("{NS}Program.Main")].1;
    let main_inclusive =
        parse_folded(&run.file("time.folded"))[&format!("{NS}Program.Main")] as f64;
    assert!(
        (main_cum - main_inclusive).abs() <= 0.01 * main_inclusive + 2.0,
        "pprof's cum of Main {main_cum} us, time.folded {main_inclusive} us"
    );
}

#[test]
fn time_folded_has_the_same_paths_with_inclusive_times() {
    let run = fast();
    let time = parse_folded(&run.file("time.folded"));
    // The paths of calls.folded, but those under a microsecond (a folded
    // file leaves out zeros).
    assert!(
        time.keys().all(|path| run.calls.contains_key(path)),
        "{time:?}"
    );
    assert!(time.len() * 2 > run.calls.len(), "{time:?}");
    let main = time[&format!("{NS}Program.Main")];
    let fib = time[&format!("{NS}Program.Main;{NS}Program.Fib")];
    assert!(main >= fib, "inclusive: Main {main} us >= Fib {fib} us");
    assert!(fib > 0, "1,973 calls take more than a microsecond");
}

#[test]
fn the_filter_decides_through_the_mapper_which_functions_are_hooked() {
    let run = run(
        "filter",
        &[("CORPROF_CALLTREE_FILTER", "E2E.CallTree.Util")],
    );
    assert_sound(&run);
    let expected: BTreeMap<String, u64> = [
        ("E2E.CallTree.Util.Echo<System.Int32>".to_string(), 1),
        ("E2E.CallTree.Util.Echo<System.__Canon>".to_string(), 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(run.calls, expected);
}

/// Rectangles of the flame graph: (title, x, y, width).
fn rectangles(svg: &str) -> Vec<(String, f64, f64, f64)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let start = tag
            .find(&format!(" {name}=\""))
            .unwrap_or_else(|| panic!("{name} in {tag}"))
            + name.len()
            + 3;
        let end = start + tag[start..].find('"').unwrap();
        tag[start..end].parse().unwrap()
    };
    svg.split("<g class=\"frame\">")
        .skip(1)
        .map(|group| {
            let title = group
                .split("<title>")
                .nth(1)
                .unwrap()
                .split("</title>")
                .next()
                .unwrap()
                .to_string();
            let rect = group
                .split("<rect")
                .nth(1)
                .unwrap()
                .split("/>")
                .next()
                .unwrap();
            (title, attr(rect, "x"), attr(rect, "y"), attr(rect, "width"))
        })
        .collect()
}

#[test]
fn flame_svg_has_one_titled_rectangle_per_path() {
    let run = fast();
    let svg = run.file("flame.svg");
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    assert!(
        !svg.contains("href"),
        "self-contained: no external references"
    );
    let rects = rectangles(&svg);
    // Every path once, plus the "all" root, but the paths narrower than
    // 0.1 px, which the summary counts.
    let paths: usize = run.summary["paths"].parse().unwrap();
    let omitted: usize = run.summary["flame_frames_omitted"].parse().unwrap();
    assert_eq!(paths, run.calls.len());
    assert_eq!(rects.len() + omitted, paths + 1);
    assert_eq!(run.summary["flame_frames_drawn"], rects.len().to_string());
    let all = &rects[0];
    assert!(all.0.starts_with("all ("), "{}", all.0);
    assert_eq!((all.1, all.3), (0.0, 1200.0));
    for (title, x, _y, width) in &rects {
        assert!(
            *x >= 0.0 && x + width <= 1200.001,
            "{title} inside the picture"
        );
    }
    let main = rects
        .iter()
        .find(|r| r.0.starts_with("E2E.CallTree.Program.Main ("))
        .unwrap();
    let fib = rects
        .iter()
        .find(|r| r.0.starts_with("E2E.CallTree.Program.Fib ("))
        .unwrap();
    assert!(
        main.3 >= fib.3 && fib.2 < main.2,
        "Fib sits on Main, no wider: {main:?} {fib:?}"
    );
}

/// Renders flame.svg in headless Chromium and checks the screenshot shows
/// flame-coloured frames. CI installs Debian's `chromium` (scripts/test.sh);
/// a missing browser fails the test.
#[test]
fn flame_svg_renders_in_headless_chromium() {
    let run = fast();
    let svg = run.dir.join("flame.svg");
    let png = run.dir.join("flame.png");
    browser::screenshot(
        &format!("file://{}", svg.display()),
        &png,
        &run.dir.join("chromium-profile"),
        &[],
    );
    // Pixels in the flame palette (red 205..255, green 80..200, blue
    // 40..80).
    let (width, height, rgb) = browser::pixels(&png);
    let flame = rgb
        .iter()
        .filter(|[r, g, b]| *r >= 205 && (80..200).contains(g) && (40..80).contains(b))
        .count();
    assert_eq!((width, height), (1200, 700));
    // The "all" row alone is 1200 x 17 pixels of flame colour.
    assert!(
        flame > 1200 * 17,
        "only {flame} flame-coloured pixels: blank picture?"
    );
}

/// Every function hooked (framework included: value types, doubles and
/// structs returned in register pairs, exceptions inside the framework):
/// the trampolines must leave the program's behaviour unchanged.
#[test]
fn hooking_every_function_leaves_the_program_unchanged() {
    let run = run("everything", &[("CORPROF_CALLTREE_FILTER", "")]);
    assert_sound(&run);
    assert!(
        run.calls.keys().any(|path| path.starts_with("System.")),
        "framework functions were hooked"
    );
    assert_eq!(run.total("Program.Fib"), 1973);
    // The runtime's own machinery is never hooked: the managed exception
    // dispatch of 9 and later (whose frames a `catch` drops without a leave,
    // so hooking it left 9's shadow stacks open) and 11's entry-point
    // caller, so Main's thread starts at Main on every runtime.
    let machinery = [
        "System.Runtime.EH.",
        "System.Runtime.EH+",
        "System.Runtime.StackFrameIterator.",
        "System.Runtime.ExceptionServices.InternalCalls.",
        "System.Environment.CallEntryPoint",
    ];
    for path in run.calls.keys() {
        assert!(
            !path
                .split(';')
                .any(|frame| machinery.iter().any(|m| frame.starts_with(m))),
            "the runtime's machinery was hooked: {path}"
        );
    }
    assert_eq!(
        run.path(&["Program.Main", "Program.Catcher"]),
        Some(2),
        "Main is a root"
    );
}

/// Outside `initialize` the runtime refuses hooks, and the facade returns
/// its error as is (and leaves the event mask as it was).
#[test]
fn installing_hooks_after_initialize_returns_the_runtimes_error() {
    let run = run(
        "late",
        &[
            ("CORPROF_CALLTREE_FILTER", "E2E.CallTree"),
            ("CORPROF_CALLTREE_MODE", "late"),
        ],
    );
    let expected = format!("err {}", corprof::profiling::CORPROF_E_CALL_ONLY_FROM_INIT);
    assert_eq!(
        run.summary.get("late_install"),
        Some(&expected),
        "{:?}",
        run.summary
    );
    let mask = u32::from_str_radix(run.summary["event_mask"].trim_start_matches("0x"), 16).unwrap();
    assert_eq!(
        mask & 0x0000_1000,
        0,
        "no COR_PRF_MONITOR_ENTERLEAVE left in {mask:#x}"
    );
    assert!(run.calls.is_empty(), "nothing was hooked: {:?}", run.calls);
}

/// Runtime async on 11: a method that suspends at an `await` gets no leave
/// hook, and its resumption enters it again on a thread-pool thread. With
/// every function hooked (so a thread's next work item enters at or above
/// a suspended frame's depth), the call tree closes the suspended frames
/// without a leave and stays balanced, and no method nests under one it
/// never called. Older runtimes refuse the program (asserted).
#[test]
fn runtime_async_frames_close_when_they_suspend() {
    let runtime = dotnet::runtime();
    let (dir, profiler) = fixture("runtime-async");
    let profiler = profiler.with_env("CORPROF_CALLTREE_FILTER", "");
    let Some(out) = run_runtime_async(&runtime, &profiler, 2) else {
        return; // refused, as asserted
    };
    let summary = readers::summary(&dir.join("summary.txt"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", out.describe()));
    assert_eq!(summary["unbalanced"], "0", "{summary:?}");
    // The suspensions happened (each method awaits something that
    // suspends), and their frames were closed without a leave.
    let closed: u64 = summary["closed_without_leave"].parse().unwrap();
    assert!(closed >= 12, "{summary:?}");
    // The program's own frames, per path (framework frames left out).
    let calls = parse_folded(&fs::read_to_string(dir.join("calls.folded")).unwrap());
    let program = "E2E.RuntimeAsync.Program.";
    let mut paths: BTreeMap<Vec<&str>, u64> = BTreeMap::new();
    for (path, n) in &calls {
        let own: Vec<&str> = path
            .split(';')
            .filter_map(|frame| frame.strip_prefix(program))
            .collect();
        if !own.is_empty() {
            *paths.entry(own).or_default() += n;
        }
    }
    // Main calls Run, whose Task-returning thunk calls its async variant
    // (two FunctionIDs, one name); Run awaits the six methods.
    let callees = [
        "Twice",
        "Shout",
        "Pause",
        "Fail",
        "Echo<System.__Canon>",
        "Tick",
    ];
    for path in paths.keys() {
        for pair in path.windows(2) {
            let allowed = matches!(pair, ["Main", "Run"] | ["Run", "Run"])
                || (pair[0] == "Run" && callees.contains(&pair[1]));
            assert!(allowed, "{} under {} in {path:?}", pair[1], pair[0]);
        }
    }
    for callee in callees {
        assert!(
            paths.keys().any(|p| p.ends_with(&["Run", callee])),
            "no Run;{callee} in {paths:?}"
        );
    }
    assert!(paths.contains_key(&vec!["Main", "Run", "Run"]), "{paths:?}");
}
