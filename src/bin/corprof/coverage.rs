//! `corprof coverage -o DIR -- COMMAND [ARGS...]`: line and branch
//! coverage of every .NET process COMMAND starts (`dotnet test`, the test
//! host it starts, ...), as one lcov and one Cobertura report.
//!
//! The route: the coverage profiler (the `coverage` example's library) is
//! set for COMMAND's process tree through the `CORECLR_*` variables, with
//! `CORPROF_COVERAGE_COUNTS=1` and `CORPROF_COVERAGE_DIR` a private
//! directory made for this run; each process that instrumented a method
//! writes its counts there at its end (`corprof::coverage::merge`'s
//! `.counts` format, with its summary line), a process that instrumented
//! nothing writes nothing. When COMMAND ends, the counts of that directory
//! only are added up and written as `DIR/coverage.info` and
//! `DIR/coverage.cobertura.xml`, the directory is removed, and the exit
//! code is COMMAND's. Ctrl-C (`SIGINT`, which the terminal sends COMMAND
//! too) does not end this process at once: it waits for COMMAND, removes
//! the directory, writes no report and exits 130.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use corprof::coverage::filter::Filter;
use corprof::coverage::merge::{read_counts, Merge};
use corprof::coverage::report;

use crate::interrupt;

/// The exit code after Ctrl-C: 128 + `SIGINT` (2), as a shell reports a
/// command the signal ended.
const INTERRUPTED: u8 = 130;

/// The `coverage` example's CLSID (examples/coverage.rs).
const COVERAGE_CLSID: &str = "{2B8C6E57-9E0D-4F1A-8C3B-5D7A1E9F4C60}";

pub(crate) const USAGE: &str = "usage:
  corprof coverage [--include PATTERN]... [--exclude PATTERN]... [--no-branches]
                   [--profiler PATH] -o DIR -- COMMAND [ARGS...]

Runs COMMAND with the coverage profiler loaded into every .NET process it starts
(`dotnet test` and its test host), adds up the counts of the processes that
instrumented something, writes DIR/coverage.info (lcov) and
DIR/coverage.cobertura.xml, and exits with COMMAND's exit code.

  --include, --exclude  [assembly-glob]type-glob (coverlet's syntax), repeatable;
                        default: every type of every assembly with a PDB
  --branches            count branch arms too (the default)
  --no-branches         count lines only
  --profiler PATH       the coverage profiler library (default: libcoverage beside
                        corprof, as `cargo build --example coverage` puts it)
  SOURCE_DATE_EPOCH     (environment) the Cobertura timestamp; default: now";

/// The settings before `--`.
#[derive(Debug)]
struct Settings {
    include: Vec<String>,
    exclude: Vec<String>,
    branches: bool,
    profiler: Option<PathBuf>,
    out: PathBuf,
}

enum Parsed<'a> {
    Help,
    Run(Settings, &'a [&'a str]),
}

fn parse<'a>(args: &'a [&'a str]) -> Result<Parsed<'a>, String> {
    let mut s = Settings {
        include: Vec::new(),
        exclude: Vec::new(),
        branches: true,
        profiler: None,
        out: PathBuf::new(),
    };
    let mut out = None;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        let mut value = || {
            i += 1;
            args.get(i)
                .copied()
                .ok_or_else(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--" => {
                let command = &args[i + 1..];
                if command.is_empty() {
                    return Err(format!("no COMMAND after --\n{USAGE}"));
                }
                s.out = out.ok_or_else(|| format!("coverage needs -o DIR\n{USAGE}"))?;
                return Ok(Parsed::Run(s, command));
            }
            "--include" | "--exclude" => {
                let pattern = value()?;
                if pattern.contains([',', ';']) {
                    return Err(format!(
                        "{arg} takes one pattern (repeat it for more): {pattern}"
                    ));
                }
                Filter::parse(pattern).map_err(|e| format!("{arg} {pattern}: {e}"))?;
                let list = if arg == "--include" {
                    &mut s.include
                } else {
                    &mut s.exclude
                };
                list.push(pattern.to_string());
            }
            "--branches" => s.branches = true,
            "--no-branches" => s.branches = false,
            "--profiler" => s.profiler = Some(PathBuf::from(value()?)),
            "-o" => out = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown option {other} (COMMAND goes after --)\n{USAGE}"
                ))
            }
        }
        i += 1;
    }
    Err(format!("no -- COMMAND\n{USAGE}"))
}

/// The profiler library: `--profiler`, or `libcoverage` beside this
/// executable (`target/<profile>/examples/`, where Cargo builds it, or the
/// same directory).
fn profiler(given: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = given {
        return match path.canonicalize() {
            Ok(path) if path.is_file() => Ok(path),
            _ => Err(format!("--profiler {}: no such file", path.display())),
        };
    }
    let name = format!(
        "{}coverage{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let exe = std::env::current_exe().map_err(|e| format!("finding corprof itself: {e}"))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join("examples").join(&name), dir.join(&name)];
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    Err(format!(
        "no coverage profiler library: looked for {} and {}; build it with \
         `cargo build --example coverage` (with --release for a release corprof) \
         or name it with --profiler PATH",
        candidates[0].display(),
        candidates[1].display()
    ))
}

/// A private directory for this run's counts, made new (never one that
/// holds another run's files).
fn private_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    let base = base.canonicalize().unwrap_or(base);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "corprof-coverage-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("creating {}: {e}", dir.display())),
        }
    }
    Err(format!(
        "no new directory could be made in {}",
        base.display()
    ))
}

/// COMMAND's exit code as this process's (a signal: 128 + its number).
fn exit_code(status: std::process::ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return code as u8;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return (128 + signal) as u8;
        }
    }
    1
}

/// `corprof coverage`.
pub(crate) fn coverage(args: &[&str]) -> ExitCode {
    let (settings, command) = match parse(args) {
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Run(settings, command)) => (settings, command),
        Err(message) => return fail(&message),
    };
    let library = match profiler(settings.profiler.clone()) {
        Ok(library) => library,
        Err(message) => return fail(&message),
    };
    let counts_dir = match private_dir() {
        Ok(dir) => dir,
        Err(message) => return fail(&message),
    };
    // Before COMMAND starts, so that no Ctrl-C can end this process
    // between the two and leave the directory behind.
    interrupt::catch();
    let status = Command::new(command[0])
        .args(&command[1..])
        .env("CORECLR_ENABLE_PROFILING", "1")
        .env("CORECLR_PROFILER", COVERAGE_CLSID)
        .env("CORECLR_PROFILER_PATH", &library)
        // The architecture's own variable wins over CORECLR_PROFILER_PATH:
        // one left in the environment would load another library.
        .env_remove("CORECLR_PROFILER_PATH_32")
        .env_remove("CORECLR_PROFILER_PATH_64")
        .env_remove("CORECLR_PROFILER_PATH_ARM32")
        .env_remove("CORECLR_PROFILER_PATH_ARM64")
        .env("CORPROF_COVERAGE_DIR", &counts_dir)
        .env("CORPROF_COVERAGE_COUNTS", "1")
        .env("CORPROF_COVERAGE_INCLUDE", settings.include.join(";"))
        .env("CORPROF_COVERAGE_EXCLUDE", settings.exclude.join(";"))
        .env(
            "CORPROF_COVERAGE_BRANCHES",
            if settings.branches { "1" } else { "0" },
        )
        .status();
    let code = match status {
        Ok(status) => exit_code(status),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&counts_dir);
            return fail(&format!("cannot run {}: {e}", command[0]));
        }
    };
    if interrupt::interrupted() {
        // Ctrl-C: COMMAND (interrupted too) has ended; its processes'
        // counts are partial, and the user asked to stop.
        let _ = std::fs::remove_dir_all(&counts_dir);
        eprintln!("corprof coverage: interrupted, no report written");
        return ExitCode::from(INTERRUPTED);
    }
    let written = write_report(&counts_dir, &settings.out);
    let _ = std::fs::remove_dir_all(&counts_dir);
    if interrupt::interrupted() {
        eprintln!("corprof coverage: interrupted");
        return ExitCode::from(INTERRUPTED);
    }
    match written {
        Ok(()) => ExitCode::from(code),
        // COMMAND's failure first; else the report's.
        Err(message) => {
            eprintln!("corprof coverage: {message}");
            ExitCode::from(if code != 0 { code } else { 1 })
        }
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("corprof coverage: {message}");
    ExitCode::from(2)
}

/// Adds up the `.counts` files of `counts_dir` and writes the reports into
/// `out`, printing each process's summary, the totals and the files.
fn write_report(counts_dir: &Path, out: &Path) -> Result<(), String> {
    let read = |e: std::io::Error| format!("reading {}: {e}", counts_dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(counts_dir)
        .map_err(read)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "counts"))
        .collect();
    files.sort();
    let lcov_path = out.join("coverage.info");
    let xml_path = out.join("coverage.cobertura.xml");
    if files.is_empty() {
        // No stale report of an earlier run may pass for this one's.
        let _ = std::fs::remove_file(&lcov_path);
        let _ = std::fs::remove_file(&xml_path);
        return Err(
            "no process instrumented anything, no report written (is COMMAND a .NET \
                    program, do the assemblies have PDBs, do the filters match?)"
                .into(),
        );
    }
    let mut merge = Merge::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let counts = read_counts(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let pid = file
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.strip_prefix("coverage-"))
            .unwrap_or("?");
        println!("corprof coverage: process {pid}: {}", counts.summary);
        merge.add(counts.methods);
    }
    let methods = merge.into_methods();
    let timestamp = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| format!("SOURCE_DATE_EPOCH={text:?} is not a number of seconds"))?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let lcov = report::lcov(&methods);
    let xml = report::cobertura(&methods, timestamp);
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    for (path, text) in [(&lcov_path, &lcov), (&xml_path, &xml)] {
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    let total = |key: &str| -> u64 {
        lcov.lines()
            .filter_map(|l| l.strip_prefix(key))
            .filter_map(|n| n.parse::<u64>().ok())
            .sum()
    };
    let percent = |hit: u64, found: u64| {
        if found == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", hit as f64 * 100.0 / found as f64)
        }
    };
    let (lh, lf, bh, bf, fh, ff) = (
        total("LH:"),
        total("LF:"),
        total("BRH:"),
        total("BRF:"),
        total("FNH:"),
        total("FNF:"),
    );
    println!(
        "corprof coverage: lines {lh}/{lf} ({}), branches {bh}/{bf} ({}), functions {fh}/{ff} ({}) \
         from {} process(es)\ncorprof coverage: wrote {} and {}",
        percent(lh, lf),
        percent(bh, bf),
        percent(fh, ff),
        files.len(),
        lcov_path.display(),
        xml_path.display()
    );
    Ok(())
}
