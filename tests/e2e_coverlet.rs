//! corprof's coverage against coverlet, the tool .NET users compare with,
//! on one real xunit run: tests/e2e/xunit/Shapes (a library: branches,
//! loops, `async`, generics, exceptions, a `switch` expression, lambdas, an
//! iterator, auto-properties, a static constructor, a method never called,
//! overloads, a branch on an awaited value, a `throw x ?? new ...`) and
//! tests/e2e/xunit/Shapes.Tests (xunit 2.9.3, Microsoft.NET.Test.Sdk
//! 18.11.0, coverlet.collector 10.0.1, from NuGet).
//!
//! One build, then the same `dotnet test` several times: three times under
//! `corprof coverage --include [Shapes]* -o DIR --` (one lcov and one
//! Cobertura file each, byte for byte the same with `SOURCE_DATE_EPOCH`
//! fixed, read by genhtml and ReportGenerator); once with the `coverage`
//! example loaded into the test host only (docs/coverage.md's runsettings
//! recipe), which must give the same lcov; once with `--collect "XPlat
//! Code Coverage"` (coverlet rewrites Shapes.dll on disk before the run
//! and puts it back after); once with neither, for the cost; and once with
//! a failing test, whose exit code `corprof coverage` passes on, its report
//! still written. The lines of Shapes.cs each reports, and which of them
//! ran, must be the same sets; so must the branch lines, with the same
//! number of arms on each and the same arms taken (a never-called
//! method's and an awaited value's included). Hit counts differ by rule
//! and are not compared: coverlet adds up the points that start on a line
//! (a `for` header: 1 + 5 + 4), corprof takes the largest
//! (docs/coverage.md, "What is counted").
//!
//! The projects are built for the runtime `CORPROF_RUNTIME` names
//! (`net8.0`, `net9.0`, `net10.0`; 11.0 runs the `net10.0` build with
//! `DOTNET_ROLL_FORWARD=LatestMajor`, the SDK here having no `net11.0`;
//! 3.1, which xunit no longer supports, runs 10.0's), and the test host
//! runs on that runtime's layout; the test checks which one ran.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::dotnet;

const COVERAGE_CLSID: &str = "{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}";

/// The runtime the test host runs on: (expected `Environment.Version`
/// prefix, the projects' target framework, roll forward to the latest
/// major).
fn host_runtime() -> (&'static str, &'static str, bool) {
    match dotnet::runtime().major() {
        8 => ("8.0.", "net8.0", false),
        9 => ("9.0.", "net9.0", false),
        11 => ("11.0.", "net10.0", true),
        _ => ("10.0.", "net10.0", false),
    }
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("e2e_coverlet")
        .join(format!(
            "{}-{}",
            dotnet::runtime().major(),
            std::process::id()
        ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn project() -> PathBuf {
    dotnet::repo_root().join("tests/e2e/xunit/Shapes.Tests/Shapes.Tests.csproj")
}

/// `dotnet` with the SDK's output quiet and no telemetry.
fn dotnet_cmd() -> Command {
    let mut cmd = Command::new("dotnet");
    cmd.env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1");
    cmd
}

/// Builds the two projects (Release, for `tfm`) into `build`.
fn build(build: &Path, tfm: &str) {
    let out = dotnet_cmd()
        .args(["build", "-c", "Release", "-v", "q", "-nologo"])
        .arg(project())
        .arg(format!("-p:E2EOut={}/", build.display()))
        .arg(format!("-p:E2ETargetFramework={tfm}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dotnet build of the xunit projects failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A runsettings file: the test host started by the provisioned runtime's
/// `dotnet` (`.cache/dotnet`, which holds 10.0.15 and 11.0.0), with `env`.
fn runsettings(path: &Path, env: &[(&str, String)]) {
    let rt = dotnet::runtime();
    let mut vars = String::new();
    for (key, value) in env {
        vars.push_str(&format!("<{key}>{value}</{key}>\n"));
    }
    let text = format!(
        "<RunSettings><RunConfiguration>\n<DotNetHostPath>{}</DotNetHostPath>\n\
         <EnvironmentVariables>\n{vars}</EnvironmentVariables>\n\
         </RunConfiguration></RunSettings>\n",
        rt.host.display()
    );
    std::fs::write(path, text).unwrap();
}

/// The arguments of `dotnet test --no-build` of the `tfm` build in
/// `build`, with `settings`.
fn test_args(build: &Path, tfm: &str, settings: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["test", "--no-build", "-c", "Release", "-v", "q", "--nologo"]
        .map(String::from)
        .to_vec();
    args.push(project().display().to_string());
    args.push(format!("-p:E2EOut={}/", build.display()));
    args.push(format!("-p:E2ETargetFramework={tfm}"));
    args.push("--settings".into());
    args.push(settings.display().to_string());
    args
}

/// `dotnet test --no-build` with `settings` and `extra` arguments; the
/// time it took.
fn run_tests(build: &Path, tfm: &str, settings: &Path, extra: &[&str]) -> Duration {
    let started = Instant::now();
    let out = dotnet_cmd()
        .args(test_args(build, tfm, settings))
        .args(extra)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Passed!") && stdout.contains("Failed:     0"),
        "dotnet test failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// Line -> hits of `source` in an lcov report.
fn lcov_lines(text: &str, source: &str) -> BTreeMap<u32, u64> {
    let mut lines = BTreeMap::new();
    let mut current = false;
    for line in text.lines() {
        if let Some(file) = line.strip_prefix("SF:") {
            current = file.ends_with(source);
        } else if let Some(rest) = line.strip_prefix("DA:").filter(|_| current) {
            let mut parts = rest.split(',');
            let n: u32 = parts.next().unwrap().parse().unwrap();
            let hits: u64 = parts.next().unwrap().parse().unwrap();
            lines.insert(n, hits);
        }
    }
    lines
}

/// Line -> hits of `source` in a Cobertura report (coverlet's): the
/// `<line>` elements of the `<class>`es whose `filename` is `source`.
fn cobertura_lines(xml: &str, source: &str) -> BTreeMap<u32, u64> {
    let mut lines = BTreeMap::new();
    let mut current = false;
    for tag in xml.split('<').skip(1) {
        if let Some(class) = tag.strip_prefix("class ") {
            current = attribute(class, "filename").is_some_and(|f| f.ends_with(source));
        } else if let Some(line) = tag.strip_prefix("line ").filter(|_| current) {
            let n: u32 = attribute(line, "number").unwrap().parse().unwrap();
            let hits: u64 = attribute(line, "hits").unwrap().parse().unwrap();
            let entry = lines.entry(n).or_insert(0);
            *entry = (*entry).max(hits);
        }
    }
    lines
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

/// The one file under `dir` (recursively) whose name ends with `suffix`.
fn find_one(dir: &Path, suffix: &str) -> PathBuf {
    fn walk(dir: &Path, suffix: &str, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, suffix, found);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, suffix, &mut found);
    assert_eq!(
        found.len(),
        1,
        "one {suffix} under {}: {found:?}",
        dir.display()
    );
    found.remove(0)
}

/// The line of Shapes.cs that contains `needle`.
fn line_of(needle: &str) -> u32 {
    let source = dotnet::repo_root().join("tests/e2e/xunit/Shapes/Shapes.cs");
    let text = std::fs::read_to_string(source).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}")) as u32
        + 1
}

/// `corprof coverage [ARGS] -o out -- dotnet test ...` with `env`: its
/// exit code and output (stdout, then stderr).
fn corprof_coverage(
    library: &Path,
    out: &Path,
    test: &[String],
    env: &[(&str, &str)],
) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_corprof"));
    cmd.args(["coverage", "--include", "[Shapes]*", "--profiler"])
        .arg(library)
        .arg("-o")
        .arg(out)
        .arg("--")
        .arg("dotnet")
        .args(test)
        .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
        .env("DOTNET_NOLOGO", "1")
        .env("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code(), text)
}

/// The file names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The lines of Shapes.cs in lcov `text` whose `BRDA` arms are listed:
/// line -> the arms' counts as written (`-`: the branch never ran), in
/// order.
fn brda(text: &str) -> BTreeMap<u32, Vec<String>> {
    let mut arms: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut current = false;
    for line in text.lines() {
        if let Some(file) = line.strip_prefix("SF:") {
            current = file.ends_with("Shapes/Shapes.cs");
        } else if let Some(rest) = line.strip_prefix("BRDA:").filter(|_| current) {
            let parts: Vec<&str> = rest.split(',').collect();
            arms.entry(parts[0].parse().unwrap())
                .or_default()
                .push(parts[3].to_string());
        }
    }
    arms
}

/// corprof's branch lines of Shapes.cs as Cobertura counts them: line ->
/// (arms taken at least once, arms).
fn brda_coverage(arms: &BTreeMap<u32, Vec<String>>) -> BTreeMap<u32, (usize, usize)> {
    arms.iter()
        .map(|(&line, arms)| {
            let taken = arms.iter().filter(|a| !matches!(a.as_str(), "-" | "0"));
            (line, (taken.count(), arms.len()))
        })
        .collect()
}

/// The lines of `source` in a Cobertura report with a `condition-coverage`
/// (`"50% (1/2)"`): line -> (arms covered, arms).
fn cobertura_conditions(xml: &str, source: &str) -> BTreeMap<u32, (usize, usize)> {
    let mut lines = BTreeMap::new();
    let mut current = false;
    for tag in xml.split('<').skip(1) {
        if let Some(class) = tag.strip_prefix("class ") {
            current = attribute(class, "filename").is_some_and(|f| f.ends_with(source));
        } else if let Some(line) = tag.strip_prefix("line ").filter(|_| current) {
            let Some(coverage) = attribute(line, "condition-coverage") else {
                continue;
            };
            let n: u32 = attribute(line, "number").unwrap().parse().unwrap();
            let (_, fraction) = coverage.split_once('(').unwrap();
            let (covered, arms) = fraction.trim_end_matches(')').split_once('/').unwrap();
            // A class's lines appear under each method and again under the
            // class: the same figures.
            lines.insert(n, (covered.parse().unwrap(), arms.parse().unwrap()));
        }
    }
    lines
}

#[test]
fn corprof_and_coverlet_agree_on_an_xunit_run() {
    let dir = out_dir();
    let (version, tfm, latest_major) = host_runtime();
    let build_dir = dotnet::target_dir().join("e2e-coverlet-build");
    build(&build_dir, tfm);
    let library = dotnet::build_example("coverage").unwrap();
    let mut common = vec![];
    if latest_major {
        common.push(("DOTNET_ROLL_FORWARD", "LatestMajor".to_string()));
    }
    let version_file = dir.join("runtime-corprof.txt");
    let mut plain_env = common.clone();
    plain_env.push(("SHAPES_RUNTIME_FILE", version_file.display().to_string()));
    let plain_settings = dir.join("plain.runsettings");
    runsettings(&plain_settings, &plain_env);
    let test = test_args(&build_dir, tfm, &plain_settings);

    // corprof coverage, three times on the default runtime (10.0): the same
    // bytes each time; once on the others (CI runs this test on each, and
    // a `dotnet test` run is 10-25 s on 2 cores).
    let runs = if dotnet::runtime().major() == 10 {
        3
    } else {
        1
    };
    let mut reports = Vec::new();
    let mut corprof_time = Duration::ZERO;
    for run in 0..runs {
        let out = dir.join(format!("corprof-{run}"));
        let started = Instant::now();
        let (code, text) = corprof_coverage(
            &library,
            &out,
            &test,
            &[("SOURCE_DATE_EPOCH", "1700000000")],
        );
        corprof_time = started.elapsed();
        assert_eq!(code, Some(0), "{text}");
        assert!(
            text.contains("Passed!") && text.contains("Failed:     0"),
            "{text}"
        );
        // The test host's summary, the only process that covered anything.
        let summaries: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("corprof coverage: process "))
            .collect();
        assert_eq!(summaries.len(), 1, "{text}");
        assert!(summaries[0].contains(" methods instrumented ("), "{text}");
        assert!(summaries[0].contains(" 0 failed;"), "{text}");
        assert!(text.contains("from 1 process(es)"), "{text}");
        assert_eq!(names(&out), ["coverage.cobertura.xml", "coverage.info"]);
        reports.push((
            std::fs::read_to_string(out.join("coverage.info")).unwrap(),
            std::fs::read_to_string(out.join("coverage.cobertura.xml")).unwrap(),
        ));
    }
    for report in &reports[1..] {
        assert_eq!(*report, reports[0], "two runs, two reports");
    }
    let ran_on = std::fs::read_to_string(&version_file).unwrap();
    assert!(ran_on.starts_with(version), "the tests ran on {ran_on}");
    let (lcov, cobertura) = reports.remove(0);

    // The runsettings recipe: the example in the test host only; the same
    // lcov, byte for byte.
    let recipe = dir.join("recipe");
    std::fs::create_dir_all(&recipe).unwrap();
    let mut env = common.clone();
    env.extend([
        ("CORECLR_ENABLE_PROFILING", "1".to_string()),
        ("CORECLR_PROFILER", COVERAGE_CLSID.to_string()),
        ("CORECLR_PROFILER_PATH", library.display().to_string()),
        ("CORPROF_COVERAGE_DIR", recipe.display().to_string()),
        ("CORPROF_COVERAGE_INCLUDE", "[Shapes]*".to_string()),
    ]);
    let recipe_settings = dir.join("corprof.runsettings");
    runsettings(&recipe_settings, &env);
    run_tests(&build_dir, tfm, &recipe_settings, &[]);
    let recipe_lcov = std::fs::read_to_string(find_one(&recipe, ".info")).unwrap();
    assert_eq!(recipe_lcov, lcov, "the runsettings recipe's report");

    // coverlet: the collector, with the same host.
    let theirs = dir.join("coverlet");
    let mut env = common.clone();
    let coverlet_version = dir.join("runtime-coverlet.txt");
    env.push((
        "SHAPES_RUNTIME_FILE",
        coverlet_version.display().to_string(),
    ));
    let coverlet_settings = dir.join("coverlet.runsettings");
    runsettings(&coverlet_settings, &env);
    let coverlet_time = run_tests(
        &build_dir,
        tfm,
        &coverlet_settings,
        &[
            "--collect",
            "XPlat Code Coverage",
            "--results-directory",
            theirs.to_str().unwrap(),
        ],
    );
    assert!(std::fs::read_to_string(&coverlet_version)
        .unwrap()
        .starts_with(version));

    // And once with neither, for the cost of each.
    let plain_time = run_tests(&build_dir, tfm, &plain_settings, &[]);
    eprintln!(
        "dotnet test on {ran_on}: without coverage {:.2} s, corprof coverage {:.2} s, coverlet {:.2} s",
        plain_time.as_secs_f64(),
        corprof_time.as_secs_f64(),
        coverlet_time.as_secs_f64()
    );

    // A failing test: its exit code, and the report all the same.
    let failing = dir.join("failing");
    let (code, text) = corprof_coverage(&library, &failing, &test, &[("SHAPES_FAIL", "1")]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("Failed!") && text.contains("Failed:     1"),
        "{text}"
    );
    assert_eq!(names(&failing), ["coverage.cobertura.xml", "coverage.info"]);
    let failing_lcov = std::fs::read_to_string(failing.join("coverage.info")).unwrap();
    assert_eq!(
        lcov_lines(&failing_lcov, "tests/e2e/xunit/Shapes/Shapes.cs"),
        lcov_lines(&lcov, "tests/e2e/xunit/Shapes/Shapes.cs"),
        "the failing test touches no line of Shapes"
    );

    let xml = std::fs::read_to_string(find_one(&theirs, "coverage.cobertura.xml")).unwrap();
    let corprof = lcov_lines(&lcov, "tests/e2e/xunit/Shapes/Shapes.cs");
    let coverlet = cobertura_lines(&xml, "Shapes.cs");
    // Both saw the library: more than 70 lines each (78 on 8.0.34).
    assert!(corprof.len() > 70, "{lcov}");
    assert!(coverlet.len() > 70, "{xml}");
    // The same lines, and the same of them run.
    let lines = |map: &BTreeMap<u32, u64>| map.keys().copied().collect::<Vec<_>>();
    assert_eq!(lines(&corprof), lines(&coverlet), "the lines reported");
    let run = |map: &BTreeMap<u32, u64>| {
        map.iter()
            .filter(|(_, &hits)| hits > 0)
            .map(|(&line, _)| line)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(&corprof), run(&coverlet), "the lines run");
    // What the source says, by hand (so that the agreement is not that of
    // two wrong reports): lines not run ...
    for needle in [
        "int y = x * 2;",                                 // NeverCalled
        "_ => \"unknown\",",                              // the arm no test reaches
        "throw new InvalidOperationException(\"empty\")", // Box.Max of an empty box
        "if (!predicate(input))",                         // Guards.Satisfies
    ] {
        assert_eq!(corprof.get(&line_of(needle)), Some(&0), "{needle}");
    }
    // ... and lines run, with their counts where a line has one point.
    for needle in [
        "public double Radius { get; }",        // an auto-property
        "yield return i * i;",                  // an iterator
        "return fallback;",                     // a catch
        "Parsed++;",                            // a finally
        "throw new ArgumentNullException",      // after an await
        "Rect r when r.IsSquare => \"square\"", // a switch arm
        "best = item;",                         // generic code
    ] {
        assert!(
            corprof.get(&line_of(needle)).is_some_and(|&h| h > 0),
            "{needle}: {corprof:?}"
        );
    }
    for (needle, hits) in [
        ("if (!await predicate(input))", 3),
        ("throw exception ?? new ArgumentNullException", 2),
    ] {
        assert_eq!(corprof.get(&line_of(needle)), Some(&hits), "{needle}");
    }
    // Overloads named in token order (the order of the source), whatever
    // order the JIT compiled them in: Negative(int) called twice,
    // Negative(double) once.
    let fnda: Vec<&str> = lcov
        .lines()
        .filter(|l| l.starts_with("FNDA:") && l.contains("Guards::Negative"))
        .collect();
    assert_eq!(
        fnda,
        [
            "FNDA:2,Shapes.Guards::Negative",
            "FNDA:1,Shapes.Guards::Negative#2"
        ],
        "{lcov}"
    );
    // The branches, by hand: the arms' counts follow from the tests'
    // calls (Shapes.Tests/ShapesTests.cs). The branch of the `?? new`
    // (taken: the exception given, once of 2), and of the null test
    // before it (3 calls, 2 with null).
    let arms = brda(&lcov);
    let expect = |needle: &str, expected: [&str; 2]| {
        assert_eq!(
            arms.get(&line_of(needle)).map(Vec::as_slice),
            Some(&expected.map(String::from)[..]),
            "{needle}: {lcov}"
        );
    };
    expect("if (input is null)", ["2", "1"]);
    expect("throw exception ?? new ArgumentNullException", ["1", "1"]);
    // The branch on an awaited value, behind the await's hidden resume
    // point: the predicate true twice (the jump over the throw), false
    // once (3 calls of SatisfiesAsync).
    expect("if (!await predicate(input))", ["1", "2"]);
    // The branches of methods no test calls (never JIT-compiled: their IL
    // read from the module at the report): both arms of each, their block
    // never run (`-`, not 0). NeverCalled, and Satisfies<T>, a generic
    // method (its IL read all the same).
    expect("if (y > 10) y -= 3;", ["-", "-"]);
    expect("if (!predicate(input))", ["-", "-"]);
    // And the branch lines of the whole file as coverlet's branch report of
    // this run counts them: the same lines, the same number of arms on
    // each (the denominators), the same arms taken. (Where arms share a
    // target, coverlet credits both and corprof one, docs/coverage.md;
    // Shapes has no such line.)
    assert_eq!(
        brda_coverage(&arms),
        cobertura_conditions(&xml, "Shapes.cs"),
        "corprof's branches (left) and coverlet's (right) of Shapes.cs"
    );

    // The readers: genhtml without warnings, ReportGenerator reads the
    // Cobertura file (its file names relative to <source>) and gives back
    // the same lines and hits.
    common::readers::genhtml_clean(&dir.join("corprof-0/coverage.info"), &dir.join("html"));
    assert!(
        cobertura.contains(&format!(
            "<source>{}/</source>",
            dotnet::repo_root().join("tests/e2e/xunit/Shapes").display()
        )),
        "{cobertura}"
    );
    let converted = dir.join("reportgenerator");
    let read_back = common::readers::report_generator_lcov(
        &dir.join("corprof-0/coverage.cobertura.xml"),
        &converted,
        "lcov",
    );
    assert_eq!(
        lcov_lines(&read_back, "tests/e2e/xunit/Shapes/Shapes.cs"),
        corprof,
        "the lines ReportGenerator read:\n{read_back}"
    );
}
