//! corprof's coverage against coverlet, the tool .NET users compare with,
//! on one real xunit run: tests/e2e/xunit/Shapes (a library: branches,
//! loops, `async`, generics, exceptions, a `switch` expression, lambdas, an
//! iterator, auto-properties, a static constructor, a method never called)
//! and tests/e2e/xunit/Shapes.Tests (xunit 2.9.3, Microsoft.NET.Test.Sdk
//! 18.11.0, coverlet.collector 10.0.1, from NuGet).
//!
//! The same `dotnet test` runs twice: once with the `coverage` example
//! loaded into the test host (a runsettings file's environment variables;
//! `CORPROF_COVERAGE_INCLUDE=[Shapes]*`, as coverlet covers the assembly
//! under test only), once with `--collect "XPlat Code Coverage"` (coverlet
//! rewrites Shapes.dll on disk before the run and puts it back after). The
//! lines of Shapes.cs each reports, and which of them ran, must be the same
//! sets. Hit counts differ by rule and are not compared: coverlet adds up
//! the points that start on a line (a `for` header: 1 + 5 + 4), corprof
//! takes the largest (docs/coverage.md, "What is counted").
//!
//! The test host runs on the runtime `CORPROF_RUNTIME` names when it is
//! 10.0 or later (11.0: `DOTNET_ROLL_FORWARD=LatestMajor` from the net10.0
//! build), on 10.0.15 otherwise (the projects need .NET 8+; the xunit run
//! is the same); the test checks which one ran.
#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::dotnet;

const COVERAGE_CLSID: &str = "{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}";

/// The runtime the test host runs on: (expected `Environment.Version`
/// prefix, roll forward to the latest major).
fn host_runtime() -> (&'static str, bool) {
    match dotnet::runtime().major() {
        11 => ("11.0.", true),
        _ => ("10.0.", false),
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

/// Builds the two projects (Release) into `build`.
fn build(build: &Path) {
    let out = dotnet_cmd()
        .args(["build", "-c", "Release", "-v", "q", "-nologo"])
        .arg(project())
        .arg(format!("-p:E2EOut={}/", build.display()))
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

/// `dotnet test --no-build` with `settings` and `extra` arguments; the
/// time it took.
fn run_tests(build: &Path, settings: &Path, extra: &[&str]) -> Duration {
    let started = Instant::now();
    let out = dotnet_cmd()
        .args(["test", "--no-build", "-c", "Release", "-v", "q", "--nologo"])
        .arg(project())
        .arg(format!("-p:E2EOut={}/", build.display()))
        .arg("--settings")
        .arg(settings)
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

#[test]
fn corprof_and_coverlet_agree_on_an_xunit_run() {
    let dir = out_dir();
    let build_dir = dotnet::target_dir().join("e2e-coverlet-build");
    build(&build_dir);
    let library = dotnet::build_example("coverage").unwrap();
    let (version, latest_major) = host_runtime();
    let mut common = vec![];
    if latest_major {
        common.push(("DOTNET_ROLL_FORWARD", "LatestMajor".to_string()));
    }

    // corprof: the coverage example in the test host.
    let ours = dir.join("corprof");
    std::fs::create_dir_all(&ours).unwrap();
    let version_file = dir.join("runtime-corprof.txt");
    let mut env = common.clone();
    env.extend([
        ("CORECLR_ENABLE_PROFILING", "1".to_string()),
        ("CORECLR_PROFILER", COVERAGE_CLSID.to_string()),
        ("CORECLR_PROFILER_PATH", library.display().to_string()),
        ("CORPROF_COVERAGE_DIR", ours.display().to_string()),
        ("CORPROF_COVERAGE_INCLUDE", "[Shapes]*".to_string()),
        ("SHAPES_RUNTIME_FILE", version_file.display().to_string()),
    ]);
    let corprof_settings = dir.join("corprof.runsettings");
    runsettings(&corprof_settings, &env);
    let corprof_time = run_tests(&build_dir, &corprof_settings, &[]);
    let ran_on = std::fs::read_to_string(&version_file).unwrap();
    assert!(ran_on.starts_with(version), "the tests ran on {ran_on}");

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
    let plain_settings = dir.join("plain.runsettings");
    runsettings(&plain_settings, &common);
    let plain_time = run_tests(&build_dir, &plain_settings, &[]);
    eprintln!(
        "dotnet test on {ran_on}: without coverage {:.2} s, corprof {:.2} s, coverlet {:.2} s",
        plain_time.as_secs_f64(),
        corprof_time.as_secs_f64(),
        coverlet_time.as_secs_f64()
    );

    let lcov = std::fs::read_to_string(find_one(&ours, ".info")).unwrap();
    let xml = std::fs::read_to_string(find_one(&theirs, "coverage.cobertura.xml")).unwrap();
    let corprof = lcov_lines(&lcov, "tests/e2e/xunit/Shapes/Shapes.cs");
    let coverlet = cobertura_lines(&xml, "Shapes.cs");
    // Both saw the library: more than 50 lines each.
    assert!(corprof.len() > 50, "{lcov}");
    assert!(coverlet.len() > 50, "{xml}");
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
    ] {
        assert_eq!(corprof.get(&line_of(needle)), Some(&0), "{needle}");
    }
    // ... and lines run.
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
}
