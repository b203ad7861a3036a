//! Coverage end to end: the `coverage` example on the Roslyn-built program
//! tests/e2e/roslyn/Coverage/Program.cs (a Debug build with a portable PDB
//! beside it, and CoverageEmbedded: the same source with the PDB embedded),
//! on the chosen runtime (`CORPROF_RUNTIME`, tests/e2e/runtimes.props).
//!
//! Every line's hit count and every branch arm's count is written below by
//! hand from the program's source; the run must give exactly those, leave
//! the program's output and exit code unchanged, and write reports that
//! Debian's lcov (`lcov --summary`, `genhtml`) and ReportGenerator read.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::dotnet::{self, run_with_timeout, runtime, Profiler, RunOutput, Runtime};
use common::web::sdk;

const CLSID: &str = "2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60";

/// What the program prints, and its exit code.
const STDOUT: &[&str] = &[
    "total=3",
    "switch=onemany",
    "guarded=03",
    "async=8",
    "evens=6",
    "lambda=25",
    "generic=7s",
    "excluded=1",
];
const EXIT: i32 = 3;

/// `DA` lines: (line, hits), every line with a sequence point, by hand
/// from Program.cs. A line's count is its most-run sequence point's.
const EXPECTED_DA: &[(u32, u64)] = &[
    // Main
    (13, 1), // {
    (14, 1), // int total = 0;
    (15, 4), // for: init 1, condition 4 (i = 0..3), increment 3
    (16, 3), // {
    (17, 3), // total += Classify(i);
    (18, 3), // }
    (19, 1),
    (20, 1),
    (21, 1),
    (22, 1),
    (23, 1), // int sum = 0;
    (24, 4), // foreach: Evens(3) 1, MoveNext ("in") 4, "int n" 3
    (25, 3), // {
    (26, 3), // sum += n;
    (27, 3), // }
    (28, 1),
    (29, 1), // the statement once, and the lambda's body x * x once
    (30, 1),
    (31, 1),
    (32, 1), // the call of the excluded method is Main's line
    (33, 1), // return 3;
    (34, 1), // }
    // Classify(0), (1), (2)
    (37, 3),
    (38, 3), // if (i > 5)
    (39, 0), // {
    (40, 0), // return 100;  (its "}" is unreachable: no sequence point)
    (42, 3), // return i;
    (43, 3), // }
    // Pick(1), Pick(7)
    (46, 2),
    (47, 2), // switch (k)
    (50, 0), // "zero"
    (52, 1), // "one"
    (54, 0), // "two"
    (56, 1), // "many"
    (58, 2), // }
    // Guarded(0) throws DivideByZeroException, Guarded(5) does not
    (61, 2),
    (62, 2), // int r = 0;
    (64, 2), // try {
    (65, 2), // r = 10 / d;  (entered twice, completed once)
    (66, 1), // } of try: only the normal path
    (67, 1), // catch (DivideByZeroException)
    (68, 1),
    (69, 1), // r = -1;
    (70, 1),
    (72, 2), // finally {
    (73, 2), // r += 1;
    (74, 2),
    (75, 2), // return r;
    (76, 2),
    // TwiceAsync(4): MoveNext runs twice (Task.Delay suspends), each line once
    (79, 1),
    (80, 1),
    (81, 1),
    (82, 1),
    // Evens(3): the iterator's MoveNext, 4 calls
    (85, 1),
    (86, 4), // for: init 1, condition 4, increment 3
    (87, 3),
    (88, 3), // yield return i * 2;
    (89, 3),
    (90, 1), // } (the fourth MoveNext ends the loop)
    // Echo<int>(7) and Echo<string>("s"): one IL, two instantiations
    (93, 2),
    (94, 2),
    (95, 2),
    // NeverCalled: never JIT-compiled, its lines reported not hit
    (98, 0),
    (99, 0),
    (100, 0),
    // Excluded() ([ExcludeFromCodeCoverage], lines 103-106): no lines
];

/// `BRDA` arms: (line, arm, count). Arm 0 is the fall-through (the
/// condition did not jump; a switch's default), arm k the k-th target.
/// Roslyn's Debug code: `for` tests its condition at the bottom and jumps
/// back while true; `if (c)` jumps over the block when `c` is false;
/// `switch` over 0, 1, 2 is one IL `switch` with three targets.
const EXPECTED_BRDA: &[(u32, u32, u64)] = &[
    (15, 0, 1), // i < 3 false once
    (15, 1, 3), // true 3 times
    (24, 0, 1), // MoveNext false once
    (24, 1, 3), // true 3 times
    (38, 0, 0), // i > 5 never true
    (38, 1, 3), // false 3 times: jumps over the block
    (47, 0, 1), // default (7)
    (47, 1, 0), // case 0
    (47, 2, 1), // case 1
    (47, 3, 0), // case 2
    (86, 0, 1), // the iterator's i < count false once
    (86, 1, 3),
];

/// `FNDA`: (function, count of its first sequence point).
const EXPECTED_FN: &[(&str, u32, u64)] = &[
    ("E2E.Coverage.Program::Main", 13, 1),
    ("E2E.Coverage.Program+<>c::<Main>b__0_0", 29, 1),
    ("E2E.Coverage.Program::Classify", 37, 3),
    ("E2E.Coverage.Program::Pick", 46, 2),
    ("E2E.Coverage.Program::Guarded", 61, 2),
    ("E2E.Coverage.Program::TwiceAsync", 79, 1),
    ("E2E.Coverage.Program::Evens", 85, 1),
    ("E2E.Coverage.Program::Echo", 93, 2),
    ("E2E.Coverage.Program::NeverCalled", 98, 0),
];

fn coverage_profiler() -> Profiler {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    let lib = LIB.get_or_init(|| dotnet::build_example("coverage").unwrap());
    Profiler::new(lib.clone(), CLSID)
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = dotnet::target_dir()
        .join("e2e-coverage")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `dll` (with its runtimeconfig) under `profiler`, if given.
fn run(rt: &Runtime, dll: &Path, config: &Path, profiler: Option<&Profiler>) -> RunOutput {
    let cmd = rt.command_for(dll, config, &[], profiler);
    run_with_timeout(cmd, dotnet::default_timeout()).unwrap()
}

/// Runs the Coverage program under the profiler, its reports going to a
/// fresh directory named after `name` and `settings` (variable, value) set
/// besides; checks the program's own output. The output and the directory.
fn run_filtered(name: &str, settings: &[(&str, &str)]) -> (RunOutput, PathBuf) {
    let sdk = sdk();
    let dir = fresh_dir(name);
    let mut profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    for &(variable, value) in settings {
        profiler = profiler.with_env(variable, value);
    }
    let out = run(
        &runtime(),
        &sdk.program_dll("Coverage"),
        &sdk.runtimeconfig("Coverage"),
        Some(&profiler),
    );
    check_output(&out);
    (out, dir)
}

fn check_output(out: &RunOutput) {
    assert!(!out.timed_out, "{}", out.describe());
    assert_eq!(out.code(), Some(EXIT), "{}", out.describe());
    assert_eq!(out.lines(), STDOUT, "{}", out.describe());
}

/// One lcov record: DA, BRDA (line, arm, count; `-` is 0) and FN/FNDA.
#[derive(Debug, Default)]
struct Lcov {
    files: Vec<String>,
    da: BTreeMap<u32, u64>,
    brda: Vec<(u32, u32, u64)>,
    functions: Vec<(String, u32, u64)>,
}

/// Asserts every `DA`, `BRDA` and `FN`/`FNDA` record of `lcov`: exactly the
/// expected ones (`what` names the program and runtime in the messages).
fn assert_records(
    lcov: &Lcov,
    da: &[(u32, u64)],
    brda: &[(u32, u32, u64)],
    functions: &[(&str, u32, u64)],
    what: &str,
) {
    let expected: BTreeMap<u32, u64> = da.iter().copied().collect();
    assert_eq!(lcov.da, expected, "DA of {what}");
    let mut brda = brda.to_vec();
    brda.sort();
    assert_eq!(lcov.brda, brda, "BRDA of {what}");
    let mut found = lcov.functions.clone();
    found.sort();
    let mut expected_fn: Vec<(String, u32, u64)> = functions
        .iter()
        .map(|&(n, l, h)| (n.to_string(), l, h))
        .collect();
    expected_fn.sort();
    assert_eq!(found, expected_fn, "FN/FNDA of {what}");
}

fn parse_lcov(text: &str) -> Lcov {
    let mut out = Lcov::default();
    let mut fn_lines = BTreeMap::new();
    for line in text.lines() {
        let (key, value) = line.split_once(':').unwrap_or((line, ""));
        let fields: Vec<&str> = value.split(',').collect();
        match key {
            "SF" => out.files.push(value.to_string()),
            "DA" => {
                let previous = out
                    .da
                    .insert(fields[0].parse().unwrap(), fields[1].parse().unwrap());
                assert_eq!(previous, None, "DA twice for a line: {line}");
            }
            "BRDA" => out.brda.push((
                fields[0].parse().unwrap(),
                fields[2].parse().unwrap(),
                fields[3].parse().unwrap_or(0),
            )),
            "FN" => {
                fn_lines.insert(fields[1].to_string(), fields[0].parse::<u32>().unwrap());
            }
            "FNDA" => {
                let name = fields[1].to_string();
                let line = fn_lines[&name];
                out.functions.push((name, line, fields[0].parse().unwrap()));
            }
            _ => {}
        }
    }
    out.brda.sort();
    out
}

/// The report files of one run: (lcov text, Cobertura path).
fn reports(dir: &Path) -> (String, PathBuf) {
    let mut info = None;
    let mut xml = None;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("coverage-") && name.ends_with(".info") {
            assert!(
                info.replace(path).is_none(),
                "two lcov files in {}",
                dir.display()
            );
        } else if name.starts_with("coverage-") && name.ends_with(".xml") {
            assert!(
                xml.replace(path).is_none(),
                "two XML files in {}",
                dir.display()
            );
        }
    }
    let info = info.unwrap_or_else(|| panic!("no coverage-<pid>.info in {}", dir.display()));
    (
        std::fs::read_to_string(info).unwrap(),
        xml.expect("no coverage-<pid>.xml"),
    )
}

fn check_program(program: &str) {
    let rt = runtime();
    let sdk = sdk();
    let dll = sdk.program_dll(program);
    let config = sdk.runtimeconfig(program);
    check_output(&run(&rt, &dll, &config, None));
    let dir = fresh_dir(program);
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let out = run(&rt, &dll, &config, Some(&profiler));
    check_output(&out);
    assert!(
        out.stderr.contains("coverage: 8 methods instrumented"),
        "{}",
        out.describe()
    );
    let (text, xml) = reports(&dir);
    let lcov = parse_lcov(&text);
    let source = format!("tests/e2e/roslyn/{program}/Program.cs");
    assert_eq!(lcov.files.len(), 1, "{text}");
    assert!(lcov.files[0].ends_with(&source), "{text}");
    assert_records(&lcov, EXPECTED_DA, EXPECTED_BRDA, EXPECTED_FN, program);
    let expected: BTreeMap<u32, u64> = EXPECTED_DA.iter().copied().collect();
    let lh = EXPECTED_DA.iter().filter(|d| d.1 > 0).count();
    assert!(
        text.contains(&format!("LF:{}\nLH:{lh}\n", EXPECTED_DA.len())),
        "{text}"
    );
    let brh = EXPECTED_BRDA.iter().filter(|b| b.2 > 0).count();
    assert!(
        text.contains(&format!("BRF:{}\nBRH:{brh}\n", EXPECTED_BRDA.len())),
        "{text}"
    );

    // The readers: lcov's summary, genhtml without warnings, ReportGenerator.
    let tools = common::readers::coverage_readers();
    let info = dir.join(
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .find(|n| n.to_string_lossy().ends_with(".info"))
            .unwrap(),
    );
    let summary = Command::new(&tools["LCOV"])
        .args(["--rc", "lcov_branch_coverage=1", "--summary"])
        .arg(&info)
        .output()
        .unwrap();
    let summary_text = String::from_utf8_lossy(&summary.stdout).into_owned()
        + &String::from_utf8_lossy(&summary.stderr);
    assert!(summary.status.success(), "{summary_text}");
    let percent =
        |covered: usize, all: usize| format!("{:.1}%", covered as f64 * 100.0 / all as f64);
    let lines_line = format!(
        "lines......: {} ({lh} of {} lines)",
        percent(lh, EXPECTED_DA.len()),
        EXPECTED_DA.len()
    );
    assert!(
        summary_text.contains(&lines_line),
        "{summary_text}\nwanted {lines_line}"
    );
    let branches_line = format!(
        "branches...: {} ({brh} of {} branches)",
        percent(brh, EXPECTED_BRDA.len()),
        EXPECTED_BRDA.len()
    );
    assert!(
        summary_text.contains(&branches_line),
        "{summary_text}\nwanted {branches_line}"
    );
    common::readers::genhtml_clean(&info, &dir.join("html"));

    // ReportGenerator reads the Cobertura file and writes it again as lcov
    // and as a JSON summary: the lines it saw, their hits, the branches.
    let converted = dir.join("reportgenerator");
    let read_back = common::readers::report_generator_lcov(&xml, &converted, "lcov;JsonSummary");
    let read_back = parse_lcov(&read_back);
    assert!(
        read_back.files.iter().any(|f| f.ends_with(&source)),
        "{:?}",
        read_back.files
    );
    // Every line with its hits, as corprof wrote them.
    assert_eq!(read_back.da, expected, "the lines ReportGenerator read");
    let missed: Vec<u32> = read_back
        .da
        .iter()
        .filter(|(_, &hits)| hits == 0)
        .map(|(&line, _)| line)
        .collect();
    assert_eq!(missed, [39, 40, 50, 54, 98, 99, 100]);
    let summary = std::fs::read_to_string(converted.join("Summary.json")).unwrap();
    let number = |key: &str| -> usize {
        let at = summary
            .find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("no {key} in {summary}"));
        summary[at + key.len() + 3..]
            .trim_start()
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(number("coverablelines"), EXPECTED_DA.len(), "{summary}");
    assert_eq!(number("coveredlines"), lh, "{summary}");
    assert_eq!(number("totalbranches"), EXPECTED_BRDA.len(), "{summary}");
    assert_eq!(number("coveredbranches"), brh, "{summary}");
}

#[test]
fn line_and_branch_coverage_with_the_pdb_beside_the_assembly() {
    check_program("Coverage");
}

#[test]
fn line_and_branch_coverage_with_the_pdb_embedded() {
    check_program("CoverageEmbedded");
}

/// A bad filter is one message and a run without the profiler.
#[test]
fn a_bad_filter_leaves_the_program_unprofiled() {
    let (out, dir) = run_filtered("bad-filter", &[("CORPROF_COVERAGE_INCLUDE", "E2E.*")]);
    assert!(
        out.stderr.contains(
            "coverage: CORPROF_COVERAGE_INCLUDE: filter `E2E.*` does not start with `[assembly]`"
        ),
        "{}",
        out.describe()
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

/// A truncated PDB, and Mono symbols: one message each, and the program
/// runs as it would without coverage.
#[test]
fn a_truncated_pdb_or_mono_symbols_leave_the_module_uninstrumented() {
    let rt = runtime();
    let sdk = sdk();
    let work = fresh_dir("broken-pdb");
    let program = work.join("Coverage.dll");
    std::fs::copy(sdk.program_dll("Coverage"), &program).unwrap();
    let config = work.join("Coverage.runtimeconfig.json");
    std::fs::copy(sdk.runtimeconfig("Coverage"), &config).unwrap();
    let pdb = std::fs::read(sdk.program_dll("Coverage").with_extension("pdb")).unwrap();
    std::fs::write(work.join("Coverage.pdb"), &pdb[..pdb.len() / 2]).unwrap();
    let out_dir = work.join("out");
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", out_dir.to_str().unwrap());
    let out = run(&rt, &program, &config, Some(&profiler));
    check_output(&out);
    let messages: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("Coverage.pdb") && l.contains("runs uninstrumented"))
        .collect();
    assert_eq!(messages.len(), 1, "{}", out.describe());
    // Nothing instrumented, so no report (an empty one trips genhtml).
    assert!(
        out.stderr.contains("coverage: 0 methods instrumented")
            && out.stderr.contains("; no report written"),
        "{}",
        out.describe()
    );
    let written = std::fs::read_dir(&out_dir).map_or(0, |d| d.count());
    assert_eq!(written, 0, "{}", out.describe());

    // Basics (built without symbols: no debug directory) with a Mono .mdb
    // beside it, and the plugin it loads.
    let work = fresh_dir("mdb");
    let basics = work.join("Basics.dll");
    std::fs::copy(rt.program_dll("Basics"), &basics).unwrap();
    std::fs::copy(
        rt.programs_dir.join("Basics/Plugin.dll"),
        work.join("Plugin.dll"),
    )
    .unwrap();
    let config = work.join("Basics.runtimeconfig.json");
    std::fs::copy(rt.runtimeconfig("Basics"), &config).unwrap();
    // The .mdb's content does not matter: its presence is what is reported.
    std::fs::write(
        work.join("Basics.dll.mdb"),
        b"\x45\xe8\x2a\x45\x3c\xd4\x5a\x47",
    )
    .unwrap();
    let plain = run(&rt, &basics, &config, None);
    assert_eq!(plain.code(), Some(42), "{}", plain.describe());
    let profiler =
        coverage_profiler().with_env("CORPROF_COVERAGE_DIR", work.join("out").to_str().unwrap());
    let out = run(&rt, &basics, &config, Some(&profiler));
    assert_eq!(out.code(), plain.code(), "{}", out.describe());
    assert_eq!(out.stdout, plain.stdout);
    assert!(
        out.stderr.contains(
            "Basics.dll.mdb: Mono .mdb symbols are not supported; compile with -debug:portable"
        ),
        "{}",
        out.describe()
    );
}

/// Code the runtime would not JIT-compile: a ReadyToRun assembly beside the
/// program (tests/e2e/roslyn/CoverageR2R calls two methods of
/// Microsoft.Extensions.Primitives.dll from the runtime's shared frameworks,
/// precompiled), with a Portable PDB that tests/e2e/synth_pdb.py
/// writes for it (one sequence point at IL offset 0 per method, on the line
/// of its MethodDef row). The methods the program calls are counted, which
/// their precompiled code (without probes) would not be: coverage sets that
/// code aside; methods it never calls are not.
#[test]
fn precompiled_methods_are_compiled_again_and_covered() {
    let rt = runtime();
    let sdk = sdk();
    let work = fresh_dir("r2r");
    let program = work.join("CoverageR2R.dll");
    std::fs::copy(sdk.program_dll("CoverageR2R"), &program).unwrap();
    let config = work.join("CoverageR2R.runtimeconfig.json");
    std::fs::copy(sdk.runtimeconfig("CoverageR2R"), &config).unwrap();
    // Where the program loads the library from. Up to 10.0 it is ASP.NET
    // Core's, not part of Microsoft.NETCore.App: the copy beside the
    // program. 11.0's Microsoft.NETCore.App carries its own: the program
    // (which has no .deps.json) loads the framework's copy, and the same
    // file beside it is ignored (measured with strace on 11.0.0).
    // There the program runs on a private copy of the framework, every file
    // a symbolic link but the library, copied, with its PDB beside it.
    let in_framework = sdk.r2r_library.parent() == Some(rt.runtime_dir.as_path());
    assert_eq!(
        in_framework,
        rt.major() >= 11,
        "Microsoft.NETCore.App {} carries Microsoft.Extensions.Primitives: {in_framework}",
        rt.version
    );
    let host = in_framework.then(|| private_framework(&rt.runtime_dir, &rt.host, &work));
    let primitives = match &host {
        Some(host) => host
            .parent()
            .unwrap()
            .join("shared/Microsoft.NETCore.App")
            .join(rt.runtime_dir.file_name().unwrap())
            .join("Microsoft.Extensions.Primitives.dll"),
        None => work.join("Microsoft.Extensions.Primitives.dll"),
    };
    let _ = std::fs::remove_file(&primitives);
    std::fs::copy(&sdk.r2r_library, &primitives).unwrap();
    // The precondition: the assembly is precompiled (its CLI header's
    // ManagedNativeHeader, ECMA-335 II.25.3.3, names a ReadyToRun header).
    assert!(is_ready_to_run(&std::fs::read(&primitives).unwrap()));
    let status = Command::new("python3")
        .arg(dotnet::repo_root().join("tests/e2e/synth_pdb.py"))
        .arg(&primitives)
        .arg(primitives.with_extension("pdb"))
        .status()
        .unwrap();
    assert!(status.success(), "synth_pdb.py: {status}");

    let run = |rt: &Runtime, program: &Path, config: &Path, profiler: Option<&Profiler>| {
        let cmd = rt.command_for(program, config, &[], profiler);
        let cmd = match &host {
            Some(host) => on_host(&cmd, host),
            None => cmd,
        };
        run_with_timeout(cmd, dotnet::default_timeout()).unwrap()
    };
    let plain = run(&rt, &program, &config, None);
    assert_eq!(plain.code(), Some(45), "{}", plain.describe());
    assert_eq!(plain.lines(), ["world", "4"], "{}", plain.describe());
    let out_dir = work.join("out");
    let profiler = coverage_profiler()
        .with_env("CORPROF_COVERAGE_DIR", out_dir.to_str().unwrap())
        .with_env(
            "CORPROF_COVERAGE_INCLUDE",
            "[Microsoft.Extensions.Primitives]*",
        );
    let out = run(&rt, &program, &config, Some(&profiler));
    assert_eq!(out.code(), Some(45), "{}", out.describe());
    assert_eq!(out.lines(), ["world", "4"], "{}", out.describe());
    let (text, _) = reports(&out_dir);
    // (name, hits) of every FN/FNDA pair, overloads included.
    let mut functions: Vec<(String, u64)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("FNDA:") {
            let (hits, name) = rest.split_once(',').unwrap();
            functions.push((name.to_string(), hits.parse().unwrap()));
        }
    }
    let hits = |name: &str| -> Vec<u64> {
        let full = format!("Microsoft.Extensions.Primitives.StringSegment::{name}");
        functions
            .iter()
            .filter(|(n, _)| *n == full)
            .map(|&(_, h)| h)
            .collect()
    };
    for called in ["Subsegment", "IndexOf", "get_Value"] {
        let h = hits(called);
        assert!(h.iter().any(|&h| h >= 1), "{called}: {h:?}\n{text}");
    }
    for never in ["LastIndexOf", "TrimStart"] {
        let h = hits(never);
        assert!(!h.is_empty() && h.iter().all(|&h| h == 0), "{never}: {h:?}");
    }
    // The library is the runtime's own framework's, precompiled for it: the
    // runtime would run its precompiled code unless coverage set it aside.
    // (An image compiled for another major version may be ignored instead:
    // one of 3.1's is of ReadyToRun major version 3 or 4, below what 8.0
    // reads, dotnet/runtime src/coreclr/inc/readytorun.h,
    // MINIMUM_READYTORUN_MAJOR_VERSION.)
    let set_aside = out.stderr.lines().any(|l| {
        l.starts_with("coverage: ")
            && l.contains("methods instrumented (")
            && !l.contains("(0 of them precompiled")
    });
    assert!(set_aside, "{}", out.describe());
}

/// A private `DOTNET_ROOT` under `work` holding `runtime_dir`'s framework:
/// a copy of the `dotnet` host (which finds the frameworks beside its own
/// path), a link to its `host/` directory, and the framework's directory of
/// links to each file. Returns the host.
fn private_framework(runtime_dir: &Path, host: &Path, work: &Path) -> PathBuf {
    let root = work.join("dotnet");
    let _ = std::fs::remove_dir_all(&root);
    let framework = root
        .join("shared/Microsoft.NETCore.App")
        .join(runtime_dir.file_name().unwrap());
    std::fs::create_dir_all(&framework).unwrap();
    let private_host = root.join("dotnet");
    std::fs::copy(host, &private_host).unwrap();
    std::os::unix::fs::symlink(host.parent().unwrap().join("host"), root.join("host")).unwrap();
    for entry in std::fs::read_dir(runtime_dir).unwrap() {
        let path = entry.unwrap().path();
        std::os::unix::fs::symlink(&path, framework.join(path.file_name().unwrap())).unwrap();
    }
    private_host
}

/// `cmd` (a program run by the provisioned host) run by `host` instead,
/// with the same arguments, environment and directory.
fn on_host(cmd: &Command, host: &Path) -> Command {
    let mut moved = Command::new(host);
    moved.args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => moved.env(key, value),
            None => moved.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        moved.current_dir(dir);
    }
    moved
}

/// Whether a PE image is ReadyToRun: its CLI header's ManagedNativeHeader
/// directory (offset 64 of the header, ECMA-335 II.25.3.3) is not empty.
fn is_ready_to_run(image: &[u8]) -> bool {
    let u16_at = |at: usize| u16::from_le_bytes(image[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(image[at..at + 4].try_into().unwrap());
    let pe = u32_at(0x3C) as usize;
    let sections = u16_at(pe + 6) as usize;
    let optional = pe + 24;
    let directories = optional + if u16_at(optional) == 0x10B { 96 } else { 112 };
    let cli_rva = u32_at(directories + 14 * 8);
    let table = optional + u16_at(pe + 20) as usize;
    for s in 0..sections {
        let h = table + s * 40;
        let (va, raw_size, raw) = (u32_at(h + 12), u32_at(h + 16), u32_at(h + 20));
        if cli_rva >= va && cli_rva - va < raw_size {
            let cli = (raw + cli_rva - va) as usize;
            return u32_at(cli + 64) != 0;
        }
    }
    false
}

/// The web app (tests/e2e/roslyn/WebApp, a Release build): its own code is
/// covered, ASP.NET Core's (no PDB) is not; the reports are written when it
/// stops on SIGTERM. One /json and two /throw requests: expected counts of
/// the handlers' lines, by hand from WebApp/Program.cs.
#[test]
fn the_web_app_is_covered_and_reported_on_sigterm() {
    use common::web::WebServer;
    let rt = runtime();
    let dir = fresh_dir("web");
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let server = WebServer::start(&rt, Some(&profiler));
    assert!(server.get("/json").starts_with("{\"Id\":1,"));
    assert_eq!(server.get("/throw"), "1");
    assert_eq!(server.get("/throw"), "1");
    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{stopped:?}");
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    assert_eq!(
        lcov.files.len(),
        1,
        "only the app's own source: {:?}",
        lcov.files
    );
    assert!(lcov.files[0].ends_with("tests/e2e/roslyn/WebApp/Program.cs"));
    for (line, hits) in [
        (40, 1), // Json: Interlocked.Increment(ref json);
        (47, 0), // Cpu: never requested
        (60, 2), // Throw: Interlocked.Increment(ref thrown);
        (63, 2), // Fail(id);
        (64, 0), // return 0;  (Fail always throws)
        (68, 2), // return 1;  in the catch
        (75, 2), // Fail: throw new DemoException(...)
        (83, 0), // Contend: locked++;
    ] {
        assert_eq!(lcov.da.get(&line), Some(&hits), "line {line}:\n{text}");
    }
}

/// `scripts/samples/coverage-sample.sh` runs the Coverage program under the
/// example (release build) and says where the reports are; given a
/// program (here CoverageEmbedded, as a user would pass theirs), it covers
/// that one.
#[test]
fn the_sample_script_writes_the_reports() {
    let embedded = sdk().program_dll("CoverageEmbedded");
    for program in [None, Some(&embedded)] {
        let dir = fresh_dir("sample-script");
        let mut cmd = Command::new("bash");
        cmd.arg("scripts/samples/coverage-sample.sh")
            .args(program)
            .current_dir(dotnet::repo_root())
            .env("CORPROF_COVERAGE_DIR", &dir);
        let out = run_with_timeout(cmd, std::time::Duration::from_secs(600)).unwrap();
        assert_eq!(out.code(), Some(EXIT), "{}", out.describe());
        assert_eq!(out.lines(), STDOUT, "{}", out.describe());
        assert!(
            out.stderr.contains(&format!(
                "coverage-sample: wrote {}/coverage-<pid>",
                dir.display()
            )),
            "{}",
            out.describe()
        );
        let (text, _) = reports(&dir);
        let lcov = parse_lcov(&text);
        let name = if program.is_some() {
            "CoverageEmbedded"
        } else {
            "Coverage"
        };
        assert!(
            lcov.files[0].ends_with(&format!("roslyn/{name}/Program.cs")),
            "{text}"
        );
        let expected: BTreeMap<u32, u64> = EXPECTED_DA.iter().copied().collect();
        assert_eq!(lcov.da, expected);
    }
}

/// A BRDA arm: (line, arm, count).
type Arm = (u32, u32, u64);

/// The hot loop of tests/e2e/roslyn/CoverageBench (a Release build) on
/// `threads` threads of `n` calls each: its lcov DA lines 40-61, and the
/// program's own count of calls.
fn bench_run(threads: u32, n: u64) -> (BTreeMap<u32, u64>, Vec<Arm>) {
    let rt = runtime();
    let sdk = sdk();
    let dir = fresh_dir(&format!("bench-{threads}"));
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let cmd = rt.command_for(
        &sdk.program_dll("CoverageBench"),
        &sdk.runtimeconfig("CoverageBench"),
        &[&threads.to_string(), &n.to_string()],
        Some(&profiler),
    );
    let out = run_with_timeout(cmd, dotnet::default_timeout()).unwrap();
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.stdout
            .contains(&format!("calls={}", u64::from(threads) * n)),
        "{}",
        out.describe()
    );
    // The JIT asked to inline an instrumented method: 8.0's tier 1 inlines
    // Step and Mix into Work (their probes go with them, or the counts
    // below would fall short); on 3.1 Work is optimized at its first
    // compilation, which meets Step first, so that inline is refused
    // (issue 37), and the run is over before tier 1 compiles Step.
    let (inlined, refused): (u64, u64) = out
        .stderr
        .split("; ")
        .find_map(|part| part.split_once(" inlinings of instrumented methods, "))
        .and_then(|(n, rest)| {
            Some((
                n.parse().ok()?,
                rest.strip_suffix(" refused)")?.parse().ok()?,
            ))
        })
        .unwrap_or_else(|| panic!("no inlining count: {}", out.describe()));
    assert!(inlined + refused >= 1, "{}", out.describe());
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    let work = lcov.da.range(40..=61).map(|(&l, &h)| (l, h)).collect();
    let brda = lcov.brda.into_iter().filter(|b| b.0 >= 40).collect();
    (work, brda)
}

/// Expected DA of Work, Step and Mix for `calls` calls of Step in total
/// over `threads` threads, by hand from CoverageBench/Program.cs (Release:
/// the `for` is one point on its line, evaluated once more than the body).
fn bench_expected(threads: u64, calls: u64) -> BTreeMap<u32, u64> {
    [
        (40, threads),         // long acc = 0;
        (41, calls + threads), // i < n, n + 1 times per thread
        (43, calls),           // acc += Step(i);
        (45, threads),         // return acc;
        (50, calls),           // if ((i & 1) == 0)
        (52, calls / 2),       // return i >> 1;  (even i)
        (54, calls / 2),       // return Mix(i);  (odd i)
        (59, calls / 2),       // Mix
        (60, calls / 2),
        (61, calls / 2),
    ]
    .into_iter()
    .collect()
}

/// One thread, at the runtime's defaults: tier 1 compiles the loop and
/// inlines `Step` and `Mix` into it (coverage lets the JIT inline a method
/// once its IL carries its probes); every count is exact.
#[test]
fn hot_inlined_code_counts_exactly_on_one_thread() {
    let n = 2_000_000;
    let (da, brda) = bench_run(1, n);
    assert_eq!(da, bench_expected(1, n));
    assert_eq!(
        brda,
        [(41, 0, 1), (41, 1, n), (50, 0, n / 2), (50, 1, n / 2)],
        "the loop's test (back n times, out once) and the parity test (even: falls through)"
    );
}

/// Eight threads: the increments are not atomic, so counts may come out
/// low, never high, and a line that ran is never reported as not hit.
/// The measured shortfall is printed (docs/coverage.md quotes it).
#[test]
fn hot_code_on_eight_threads_counts_approximately() {
    // Long enough for the threads to overlap (each runs for some 100 ms).
    let (threads, n) = (8u64, 10_000_000u64);
    let (da, _) = bench_run(threads as u32, n);
    let expected = bench_expected(threads, threads * n);
    assert_eq!(
        da.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (line, &want) in &expected {
        let got = da[line];
        assert!(got > 0 && got <= want, "line {line}: {got} of {want}");
    }
    let shortfall = 1.0 - da[&43] as f64 / expected[&43] as f64;
    eprintln!(
        "8 threads x {n} calls: line 43 counted {} of {} ({:.2}% short)",
        da[&43],
        expected[&43],
        shortfall * 100.0
    );
}

/// Filters end to end: including the program's assembly keeps everything;
/// excluding the lambdas' compiler-generated type (`Program+<>c`) removes
/// the lambda's function and leaves line 29 to Main's statement.
#[test]
fn include_and_exclude_filters() {
    let (_, dir) = run_filtered(
        "filters",
        &[
            ("CORPROF_COVERAGE_INCLUDE", "[Cover*]E2E.Coverage.*"),
            ("CORPROF_COVERAGE_EXCLUDE", "[*]*+<>c"),
        ],
    );
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    let mut expected_fn: Vec<String> = EXPECTED_FN
        .iter()
        .filter(|f| !f.0.contains("<>c"))
        .map(|f| f.0.to_string())
        .collect();
    expected_fn.sort();
    let mut functions: Vec<String> = lcov.functions.iter().map(|f| f.0.clone()).collect();
    functions.sort();
    assert_eq!(functions, expected_fn);
    assert_eq!(lcov.da.get(&29), Some(&1));
    assert_eq!(lcov.da.len(), EXPECTED_DA.len());

    // Including another assembly only: nothing of the program is
    // instrumented, so nothing is written (a process that covered nothing
    // writes no report) and the summary says so.
    let (out, dir) = run_filtered("filters-none", &[("CORPROF_COVERAGE_INCLUDE", "[Other]*")]);
    assert!(
        out.stderr.contains("; no report written"),
        "{}",
        out.describe()
    );
    let written = std::fs::read_dir(&dir).map_or(0, |d| d.count());
    assert_eq!(written, 0, "no file is covered: {}", out.describe());
}

/// `DA` of tests/e2e/roslyn/CoverageInlining/Program.cs (Release: no
/// sequence points on braces; a `for` line counts its condition), by hand.
const INLINING_DA: &[(u32, u64)] = &[
    // Main, once
    (15, 1),
    (16, 1),
    (17, 1),
    (18, 1),
    (19, 1),
    (20, 1),
    (21, 1),
    // Eager(5): Sign(5) and Sign(-5)
    (29, 1),
    (34, 2), // if (x > 0)
    (36, 1), // return 1;  (x = 5)
    (38, 1), // return -1;  (x = -5)
    // Looping(3): Clamp(0), Clamp(1), Clamp(2)
    (45, 1),
    (46, 4), // i < n: 3 times true, once false
    (48, 3),
    (50, 1),
    (55, 3), // if (x > 1)
    (57, 1), // return 1;  (x = 2)
    (59, 2), // return x;  (x = 0, 1)
    // Warmed: 5 rounds of 50 Warm(false), then Warm(true) twice
    (66, 1),
    (67, 6),   // round < 5: 6 tests
    (69, 255), // i < 50: 51 tests a round
    (71, 250),
    (73, 5),
    (75, 1),
    (76, 1),
    (77, 1),
    (83, 252), // Warm: if (last)
    (85, 2),   // return Late(7);
    (87, 250), // return 0;
    (92, 2),   // Late: return x + 1;
];

/// `BRDA` of CoverageInlining (Release: `if (c)` jumps over the block when
/// `c` is false; a `for` tests at the bottom and jumps back while true).
const INLINING_BRDA: &[(u32, u32, u64)] = &[
    (34, 0, 1), // x > 0: Sign(5)
    (34, 1, 1), // not: Sign(-5)
    (46, 0, 1), // the loop ends once
    (46, 1, 3), // and goes round 3 times
    (55, 0, 1), // x > 1: Clamp(2)
    (55, 1, 2), // not: Clamp(0), Clamp(1)
    (67, 0, 1),
    (67, 1, 5),
    (69, 0, 5),
    (69, 1, 250),
    (83, 0, 2),   // last
    (83, 1, 250), // not last
];

/// `FNDA` of CoverageInlining: (function, first line, calls).
const INLINING_FN: &[(&str, u32, u64)] = &[
    ("E2E.CoverageInlining.Program::Main", 15, 1),
    ("E2E.CoverageInlining.Program::Eager", 29, 1),
    ("E2E.CoverageInlining.Program::Sign", 34, 2),
    ("E2E.CoverageInlining.Program::Looping", 45, 1),
    ("E2E.CoverageInlining.Program::Clamp", 55, 3),
    ("E2E.CoverageInlining.Program::Warmed", 66, 1),
    ("E2E.CoverageInlining.Program::Warm", 83, 252),
    ("E2E.CoverageInlining.Program::Late", 92, 2),
];

/// Issue 37: small methods first met by a caller the JIT optimizes at once
/// (`AggressiveOptimization`; a loop on 3.1, where quick JIT leaves such
/// methods alone; a caller recompiled at tier 1 before it first calls its
/// callee) are inlined only when the IL the JIT read carries their probes,
/// so every call is counted, at the runtime's defaults.
#[test]
fn callees_first_met_by_optimized_callers_are_counted() {
    let rt = runtime();
    let sdk = sdk();
    let dll = sdk.program_dll("CoverageInlining");
    let config = sdk.runtimeconfig("CoverageInlining");
    let dir = fresh_dir("inlining");
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let out = run(&rt, &dll, &config, Some(&profiler));
    assert!(!out.timed_out, "{}", out.describe());
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert_eq!(
        out.lines(),
        ["eager=9", "looping=2", "warmed=16"],
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("coverage: 8 methods instrumented"),
        "{}",
        out.describe()
    );
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    assert_eq!(lcov.files.len(), 1, "{text}");
    // The summary line: inlinings let through and refused.
    eprintln!("{}", out.stderr.trim_end());
    assert_records(
        &lcov,
        INLINING_DA,
        INLINING_BRDA,
        INLINING_FN,
        &format!("inlining on {}\n{}", rt.version, out.stderr),
    );
}

/// `DA` of tests/e2e/roslyn/CoverageOsr/Program.cs (Release), by hand.
const OSR_DA: &[(u32, u64)] = &[
    // Main, once
    (20, 1),
    (21, 1),
    (22, 1),
    (23, 1),
    (24, 1),
    // Hot(200000)
    (29, 1),
    (30, 200_001), // i < n
    (32, 200_000),
    (33, 200_000),
    (35, 5), // i = 150000, 160000, ..., 190000
    (38, 1),
    // Rare: 5 calls, 2 of them above 170000
    (43, 5),
    (45, 2),
    (47, 3),
    // FromFramework, once; Visit(1..5) from List<int>.ForEach
    (52, 1),
    (53, 1),
    (54, 1),
    (59, 5),
    (61, 2),
    (65, 3),
    // `}`: the return of the `else` path only; Roslyn's Release code
    // ends the `then` block with a `ret` of its own (IL_0012 on this
    // build), which belongs to no point: 3, not 5.
    (67, 3),
];

/// `BRDA` of CoverageOsr: `if (a && b)` is two branches on one line, each
/// jumping over the block when its test fails.
const OSR_BRDA: &[(u32, u32, u64)] = &[
    (30, 0, 1),       // the loop ends once
    (30, 1, 200_000), // and goes round
    (33, 0, 50_000),  // i >= 150000
    (33, 1, 150_000), // not
    (33, 0, 5),       // and i % 10000 == 0
    (33, 1, 49_995),  // not
    (43, 0, 2),       // x > 170000
    (43, 1, 3),
    (59, 0, 2), // x even: 2, 4
    (59, 1, 3),
];

/// `FNDA` of CoverageOsr.
const OSR_FN: &[(&str, u32, u64)] = &[
    ("E2E.CoverageOsr.Program::Main", 20, 1),
    ("E2E.CoverageOsr.Program::Hot", 29, 1),
    ("E2E.CoverageOsr.Program::Rare", 43, 5),
    ("E2E.CoverageOsr.Program::FromFramework", 52, 1),
    ("E2E.CoverageOsr.Program::Visit", 59, 5),
];

/// Methods first reached from code compiled after they were instrumented:
/// `Rare` from a loop that went on-stack replacement (the optimized OSR
/// code, compiled from the instrumented IL, may inline it), `Visit` from
/// precompiled `List<int>.ForEach`. Every line and branch arm exact. The
/// precondition, from the JIT's own summary (`DOTNET_JitStdOutFile`,
/// `DOTNET_JitDisasmSummary`, .NET 8+): `Hot` was compiled at tier 0 and
/// then as OSR code (`Tier1-OSR @0xd4` on 10.0.15). On 3.1 (no OSR, no summary) `Hot`
/// has a loop and is optimized at once: the same counts.
#[test]
fn callees_first_met_from_osr_code_and_precompiled_framework_code_are_counted() {
    let rt = runtime();
    let sdk = sdk();
    let dll = sdk.program_dll("CoverageOsr");
    let config = sdk.runtimeconfig("CoverageOsr");
    let dir = fresh_dir("osr");
    let summary = dir.join("jit-summary.txt");
    let profiler = coverage_profiler()
        .with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap())
        .with_env("DOTNET_JitDisasmSummary", "1")
        .with_env("DOTNET_JitStdOutFile", summary.to_str().unwrap());
    let out = run(&rt, &dll, &config, Some(&profiler));
    assert!(!out.timed_out, "{}", out.describe());
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // 200000 * 3.5 (i & 7 averages 3.5) + 3 * 1 + 2 * 2; 2 * 10 + 3 * 1.
    assert_eq!(
        out.lines(),
        ["hot=700007", "framework=23"],
        "{}",
        out.describe()
    );
    if rt.major() >= 8 {
        let text = std::fs::read_to_string(&summary)
            .unwrap_or_else(|e| panic!("no JIT summary at {} ({e})", summary.display()));
        let hot: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("CoverageOsr.Program:Hot("))
            .collect();
        assert!(
            hot.iter().any(|l| l.contains("Tier0")) && hot.iter().any(|l| l.contains("-OSR")),
            "Hot went OSR:\n{text}"
        );
    }
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    assert_eq!(lcov.files.len(), 1, "{text}");
    assert_records(
        &lcov,
        OSR_DA,
        OSR_BRDA,
        OSR_FN,
        &format!("OSR on {}\n{}", rt.version, out.stderr),
    );
}

/// `DA` of tests/e2e/roslyn/CoverageHandlers/Program.cs (Release), by hand.
/// Main calls each method with i = 0..5; Fail throws for odd i, so each
/// `catch` of Main's methods runs 3 times. Fail is called 6 + 12 + 6 + 6
/// times from those and 2 * 2000 times from InLoop, where it always throws.
const HANDLERS_DA: &[(u32, u64)] = &[
    // Main, once
    (14, 1),
    (15, 7), // i < 6: 7 tests
    (17, 6),
    (18, 6),
    (19, 6),
    (20, 6),
    (22, 1),
    (23, 1),
    (24, 1),
    (25, 1),
    (26, 1),
    // Fail: 4530 calls, 15 + 4000 + 500 throws
    (31, 4530),
    (33, 4515),
    (35, 15), // `}`: the return when it does not throw
    // WithVariable: no point on `catch (E e)` (45): Release keeps `e` on
    // the stack, and the handler begins with line 47's `e.Message`.
    (42, 6),
    (43, 3),
    (47, 3),
    (49, 6),
    // WithoutVariable: each `catch` line is the handler's first
    // instruction, the `pop` of the exception.
    (54, 6),
    (57, 6),
    (58, 3), // `}` of the try: its `leave`, when Fail returned
    (59, 3), // catch (InvalidOperationException)
    (61, 3),
    (62, 3), // `}` of the catch: its `leave`
    (65, 6),
    (66, 3),
    (67, 3), // catch
    (69, 3),
    (70, 3),
    (71, 6),
    // Filtered: no point on `catch (E e)` (81); the filter's `when` line
    // runs for every odd i and is true for i = 3 only.
    (79, 6),
    (80, 3),
    (83, 3), // when (...)
    (85, 1), // i = 3
    (87, 2), // catch (Exception): i = 1 and 5
    (89, 2),
    (91, 6),
    // WithFinally: the finally block runs on every call.
    (96, 6),
    (99, 6),
    (100, 3),
    (101, 3), // `}` of the try
    (102, 3), // catch (InvalidOperationException)
    (104, 3),
    (105, 3),
    (108, 6), // finallies++;
    (109, 6), // `}` of the finally: its `endfinally`
    (110, 6),
    // InLoop(2000): Fail always throws, so the `}` of each try (its
    // `leave`) never runs; each handler runs 2000 times.
    (118, 1),
    (119, 2001),
    (123, 2000),
    (124, 0),
    (125, 2000), // catch (E e): `stloc` of `e` (line 127 loads `r` first)
    (127, 2000),
    (128, 2000),
    (131, 2000),
    (132, 0),
    (133, 2000), // catch (E): `pop`
    (135, 2000),
    (136, 2000),
    (138, 1),
    // SameLine(500)
    (146, 1),
    (147, 501),
    (150, 500),
    (151, 0), // `} catch (E e) {`: only the try's `leave` has a point here
    (152, 500),
    (153, 500),
    (155, 1),
];

/// `BRDA` of CoverageHandlers.
const HANDLERS_BRDA: &[(u32, u32, u64)] = &[
    (15, 0, 1),
    (15, 1, 6),
    (31, 0, 4515), // odd: falls through to the throw
    (31, 1, 15),   // even: jumps to the return
    (119, 0, 1),
    (119, 1, 2000),
    (147, 0, 1),
    (147, 1, 500),
];

/// `FNDA` of CoverageHandlers: (function, first line, calls).
const HANDLERS_FN: &[(&str, u32, u64)] = &[
    ("E2E.CoverageHandlers.Program::Main", 14, 1),
    ("E2E.CoverageHandlers.Program::Fail", 31, 4530),
    ("E2E.CoverageHandlers.Program::WithVariable", 42, 6),
    ("E2E.CoverageHandlers.Program::WithoutVariable", 54, 6),
    ("E2E.CoverageHandlers.Program::Filtered", 79, 6),
    ("E2E.CoverageHandlers.Program::WithFinally", 96, 6),
    ("E2E.CoverageHandlers.Program::InLoop", 118, 1),
    ("E2E.CoverageHandlers.Program::SameLine", 146, 1),
];

/// Issue 37: the lines of `catch`, filter and `finally` handlers are
/// counted like any other (a probe at a handler's first instruction stands
/// above the exception object, which a catch or filter handler begins
/// with), in methods run at tier 0 and in a loop the JIT optimizes.
#[test]
fn exception_handler_lines_are_counted() {
    let rt = runtime();
    let sdk = sdk();
    let dll = sdk.program_dll("CoverageHandlers");
    let config = sdk.runtimeconfig("CoverageHandlers");
    let dir = fresh_dir("handlers");
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let out = run(&rt, &dll, &config, Some(&profiler));
    eprintln!("{}: {}", rt.version, out.stderr.trim_end());
    assert!(!out.timed_out, "{}", out.describe());
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert_eq!(
        out.lines(),
        [
            "variable=15 none=33",
            "filtered=102 finally=9/6",
            "loop=17445",
            "same line=3445"
        ],
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("coverage: 8 methods instrumented (0 of them precompiled, compiled again; 0 without debug info, 0 excluded, 0 failed;"),
        "{}",
        out.describe()
    );
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    assert_eq!(lcov.files.len(), 1, "{text}");
    assert_records(
        &lcov,
        HANDLERS_DA,
        HANDLERS_BRDA,
        HANDLERS_FN,
        &format!("handlers on {}\n{}", rt.version, out.stderr),
    );
}

/// Runtime-async methods (.NET 11: tests/e2e/roslyn/RuntimeAsync, compiled
/// with `runtime-async=on`; no state machine, the method's own IL runs
/// across its awaits): their lines counted once per call, the lines after
/// an await included, under the method's own name. The program prints each
/// method's flags (`impl Twice 0x2008`: Async | NoInlining), the
/// precondition. Runtimes before 11 refuse the assembly (with or without
/// the profiler: SIGABRT on an unhandled load exception;
/// tests/e2e_calltarget.rs names each runtime's exception).
#[test]
fn runtime_async_methods_are_covered_line_by_line() {
    let rt = runtime();
    let dir = fresh_dir("runtime-async");
    let profiler = coverage_profiler().with_env("CORPROF_COVERAGE_DIR", dir.to_str().unwrap());
    let out = rt.run("RuntimeAsync", &["3"], Some(&profiler));
    if rt.major() < 11 {
        assert_eq!(out.signal(), Some(6), "{}", out.describe());
        assert!(
            out.stderr.contains("Unhandled exception."),
            "{}",
            out.describe()
        );
        return;
    }
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.lines().contains(&"impl Twice 0x2008"),
        "{}",
        out.describe()
    );
    assert!(
        out.lines().contains(&"sum=126 paused=3 ticks=6"),
        "{}",
        out.describe()
    );
    let (text, _) = reports(&dir);
    let lcov = parse_lcov(&text);
    // Lines of Program.cs, by hand: each method called 3 times, each
    // awaiting once (Task.Yield or Task.Delay: a real suspension) before
    // the line after it.
    for (line, hits, what) in [
        (27, 3, "Twice: await Task.Yield();"),
        (28, 3, "Twice: return x * 2;"),
        (34, 3, "Shout: await Task.Delay(1);"),
        (35, 3, "Shout: return s + \"!\";"),
        (43, 3, "Pause: await Task.Delay(ms);"),
        (44, 3, "Pause: paused++;"),
        (50, 3, "Fail: await Task.Yield();"),
        (51, 3, "Fail: throw ..."),
        (57, 3, "Echo<T>: await Task.Yield();"),
        (58, 3, "Echo<T>: return value;"),
    ] {
        assert_eq!(lcov.da.get(&line), Some(&hits), "{what}\n{text}");
    }
    for name in ["Twice", "Shout", "Pause", "Fail", "Echo"] {
        let name = format!("E2E.RuntimeAsync.Program::{name}");
        assert!(
            lcov.functions.iter().any(|f| f.0 == name && f.2 == 3),
            "{name} called 3 times: {:?}",
            lcov.functions
        );
    }
}
