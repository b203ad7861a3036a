//! Harness for end-to-end tests on a real CoreCLR (see `docs/e2e.md`).
//!
//! ```ignore
//! mod common;
//! use common::dotnet::{self, Profiler};
//!
//! let rt = dotnet::runtime(); // provisions once per test process, or panics
//! let lib = dotnet::build_example("my_profiler").unwrap();
//! let profiler = Profiler::new(lib, "{01234567-89AB-CDEF-0123-456789ABCDEF}");
//! let out = rt.run("Basics", &[], Some(&profiler));
//! out.assert_exit(42);
//! ```
//!
//! Std only. Everything here is `pub(crate)` because the module is compiled
//! into each integration test crate that says `mod common;`, and not every
//! test crate uses every item.
#![allow(dead_code)]

use std::collections::HashMap;
use std::env;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long one program may run before it is killed; override with the
/// environment variable `CORPROF_E2E_TIMEOUT_SECS`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The Rust target of the Windows runner's profilers.
pub(crate) const WINDOWS_TARGET: &str = "x86_64-pc-windows-gnu";

/// The Rust target of the AArch64 runner's profilers.
pub(crate) const ARM64_TARGET: &str = "aarch64-unknown-linux-gnu";

/// How long provisioning may take (a cold run installs packages).
const PROVISION_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Variables that select a profiler; removed from every run without one so
/// that the caller's environment cannot leak a profiler in.
const PROFILER_VARS: &[&str] = &[
    "CORECLR_ENABLE_PROFILING",
    "CORECLR_PROFILER",
    "CORECLR_PROFILER_PATH",
    "CORECLR_PROFILER_PATH_32",
    "CORECLR_PROFILER_PATH_64",
    "CORECLR_PROFILER_PATH_ARM32",
    "CORECLR_PROFILER_PATH_ARM64",
];

/// The repository root (where `Cargo.toml` is).
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// True when running under CI (`CI=true`, or any non-empty value but
/// `false`/`0`).
pub(crate) fn in_ci() -> bool {
    matches!(env::var("CI"), Ok(v) if !v.is_empty() && v != "false" && v != "0")
}

/// A provisioned .NET: the `dotnet` host and the built test programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Runtime {
    /// Where the runtime came from: `packs` (Microsoft's runtime packs from
    /// NuGet, laid out under `.cache/dotnet/`).
    pub(crate) mode: String,
    /// The `dotnet` host executable (the SDK's, copied into the
    /// `DOTNET_ROOT` that holds the provisioned runtimes).
    pub(crate) host: PathBuf,
    /// Version of the `Microsoft.NETCore.App` runtime the programs run on.
    pub(crate) version: String,
    /// That runtime's directory (holds `libcoreclr.so`).
    pub(crate) runtime_dir: PathBuf,
    /// Which runtime `CORPROF_RUNTIME` chose: `3.1`, `8.0`, `9.0`, `10.0`
    /// (the default) or `11.0` (`tests/e2e/runtimes.props`).
    pub(crate) choice: String,
    /// The target framework the programs were built for (`net10.0` on 11.0).
    pub(crate) target_framework: String,
    /// Which C# compiler built the programs (the SDK's Roslyn).
    pub(crate) compiler: String,
    /// The ASP.NET Core shared framework of this runtime (ReadyToRun
    /// assemblies), and its version.
    pub(crate) aspnetcore_dir: PathBuf,
    pub(crate) aspnetcore_version: String,
    /// A ReadyToRun library of the shared frameworks
    /// (`Microsoft.Extensions.Primitives.dll`) that the `CoverageR2R`
    /// program calls.
    pub(crate) r2r_library: PathBuf,
    /// Debian's `wrk`, the web tests' load generator.
    pub(crate) wrk: PathBuf,
    /// `.cache/e2e/<runtime>/bin`: one directory per program.
    pub(crate) programs_dir: PathBuf,
    /// Names of the runnable programs (`Basics`, `JitHeavy`, `Rewrite`, ...).
    pub(crate) programs: Vec<String>,
    /// The Windows runner (`scripts/ci/test-windows.sh`): the programs run on
    /// the Windows x64 CoreCLR under Wine, with profilers built for
    /// `x86_64-pc-windows-gnu`. `None`: the host above, natively.
    pub(crate) windows: Option<WindowsRunner>,
    /// The AArch64 runner (`scripts/ci/test-aarch64.sh`): the programs run on
    /// the linux-arm64 CoreCLR under qemu-user, with profilers built for
    /// `aarch64-unknown-linux-gnu`. `None`: natively.
    pub(crate) arm64: Option<Arm64Runner>,
}

/// How the AArch64 leg runs a program: `qemu-aarch64 -L SYSROOT dotnet exec
/// ...`, the `dotnet` being the leg's muxer (tests/arm64/dotnet-muxer.c) in
/// a DOTNET_ROOT of Microsoft's linux-arm64 runtime packs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arm64Runner {
    /// Debian's `qemu-aarch64` (qemu-user).
    pub(crate) qemu: PathBuf,
    /// The AArch64 libraries' root given to `-L` (`/usr/aarch64-linux-gnu`).
    pub(crate) sysroot: PathBuf,
    /// The arm64 `dotnet` muxer.
    pub(crate) dotnet: PathBuf,
}

impl Arm64Runner {
    /// The runner `scripts/ci/test-aarch64.sh` describes in the environment
    /// (`CORPROF_E2E_ARM64=1` and the paths), or `None` when it is not set.
    fn from_env() -> Result<Option<Arm64Runner>, String> {
        if env::var("CORPROF_E2E_ARM64").map_or(true, |v| v != "1") {
            return Ok(None);
        }
        let path = |key: &str| -> Result<PathBuf, String> {
            let p = PathBuf::from(env::var_os(key).ok_or_else(|| {
                format!("CORPROF_E2E_ARM64=1 needs {key} (scripts/ci/test-aarch64.sh sets it)")
            })?);
            if p.exists() {
                Ok(p)
            } else {
                Err(format!("{key}={} does not exist", p.display()))
            }
        };
        Ok(Some(Arm64Runner {
            qemu: path("CORPROF_E2E_QEMU")?,
            sysroot: path("CORPROF_E2E_ARM64_SYSROOT")?,
            dotnet: path("CORPROF_E2E_ARM64_DOTNET")?,
        }))
    }
}

/// How the Windows leg runs a program: `wine64 dotnet.exe exec ...`, paths
/// given to Windows as `Z:\...` (Wine's drive for `/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WindowsRunner {
    /// Wine's loader (`/usr/lib/wine/wine64`).
    pub(crate) wine: PathBuf,
    /// The Windows `dotnet.exe`: the test muxer (tests/windows/dotnet-muxer.c)
    /// over NuGet's win-x64 runtime pack, laid out by scripts/ci/test-windows.sh.
    pub(crate) dotnet_exe: PathBuf,
    /// The `bcryptprimitives.dll` shim Wine 8 needs next to every Rust DLL
    /// (tests/windows/processprng-shim.c; for the tests only).
    pub(crate) shim: PathBuf,
}

impl WindowsRunner {
    /// Puts the test-only ProcessPrng shim (Wine 8 has no
    /// bcryptprimitives.dll, which Rust's std imports) into `dir`, next to
    /// the executables and DLLs built there. Tests run in parallel and start
    /// Windows processes from `dir` while another test installs the shim:
    /// rewriting the file in place could hand a starting process a truncated
    /// DLL (attach.exe died with an access violation in a CI run), so a
    /// shim already in place with the same bytes is left alone, and a new
    /// one is written beside it and renamed over it in one step.
    pub(crate) fn install_shim(&self, dir: &Path) -> Result<(), String> {
        let dest = dir.join("bcryptprimitives.dll");
        let bytes = std::fs::read(&self.shim)
            .map_err(|e| format!("reading the ProcessPrng shim {}: {e}", self.shim.display()))?;
        if std::fs::read(&dest).is_ok_and(|there| there == bytes) {
            return Ok(());
        }
        let tmp = dir.join(format!("bcryptprimitives.dll.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &bytes)
            .and_then(|()| std::fs::rename(&tmp, &dest))
            .map_err(|e| {
                format!(
                    "installing the ProcessPrng shim into {}: {e}",
                    dir.display()
                )
            })
    }

    /// The runner `scripts/ci/test-windows.sh` describes in the environment
    /// (`CORPROF_E2E_WINDOWS=1` and the paths), or `None` when it is not set.
    fn from_env() -> Result<Option<WindowsRunner>, String> {
        if env::var("CORPROF_E2E_WINDOWS").map_or(true, |v| v != "1") {
            return Ok(None);
        }
        let path = |key: &str| -> Result<PathBuf, String> {
            let p = PathBuf::from(env::var_os(key).ok_or_else(|| {
                format!("CORPROF_E2E_WINDOWS=1 needs {key} (scripts/ci/test-windows.sh sets it)")
            })?);
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!("{key}={} does not exist", p.display()))
            }
        };
        Ok(Some(WindowsRunner {
            wine: path("CORPROF_E2E_WINE")?,
            dotnet_exe: path("CORPROF_E2E_WINDOWS_DOTNET")?,
            shim: path("CORPROF_E2E_WINDOWS_SHIM")?,
        }))
    }
}

/// `path` as Windows programs under Wine see it: `Z:\` and backslashes.
pub(crate) fn windows_path(path: &Path) -> String {
    format!("Z:{}", absolute(path).display()).replace('/', "\\")
}

/// A profiler to load into a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profiler {
    /// The profiler's shared library (made absolute before use).
    pub(crate) path: PathBuf,
    /// Its CLSID, with or without braces.
    pub(crate) clsid: String,
    /// More environment variables for the run (e.g. settings the profiler
    /// reads, or `COMPlus_TieredCompilation=0`: see `with_runtime_setting`).
    pub(crate) extra_env: Vec<(String, String)>,
}

impl Profiler {
    pub(crate) fn new(path: impl Into<PathBuf>, clsid: impl Into<String>) -> Self {
        Profiler {
            path: path.into(),
            clsid: clsid.into(),
            extra_env: Vec::new(),
        }
    }

    /// Adds an environment variable to runs with this profiler.
    pub(crate) fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_env.push((key.into(), value.into()));
        self
    }

    /// Sets a runtime configuration knob (`TieredCompilation`, `ReadyToRun`,
    /// ...) under both prefixes: `COMPlus_` is the only one .NET Core 3.1
    /// reads, `DOTNET_` the one .NET 5 and later prefer.
    pub(crate) fn with_runtime_setting(self, name: &str, value: &str) -> Self {
        self.with_env(format!("COMPlus_{name}"), value)
            .with_env(format!("DOTNET_{name}"), value)
    }

    /// The CLSID in the `{...}` form CoreCLR expects.
    pub(crate) fn braced_clsid(&self) -> String {
        let c = self.clsid.trim();
        if c.starts_with('{') {
            c.to_string()
        } else {
            format!("{{{c}}}")
        }
    }
}

/// What a run of a program did.
#[derive(Debug)]
pub(crate) struct RunOutput {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) status: ExitStatus,
    /// The harness killed it because it ran longer than its timeout.
    pub(crate) timed_out: bool,
    pub(crate) elapsed: Duration,
    /// The command line, for messages.
    pub(crate) command: String,
}

impl RunOutput {
    /// The exit code, if the process exited (rather than died of a signal).
    pub(crate) fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal that ended the process, if one did.
    pub(crate) fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    /// The process died of a signal the harness did not send: a crash
    /// (SIGSEGV in a profiler, SIGABRT after an unhandled exception or a
    /// runtime assertion, ...). Under Wine (the Windows leg) a crash is no
    /// signal: Wine says `wine: Unhandled exception` (or `page fault`) on
    /// stderr and starts winedbg, and the process may then exit with 0.
    pub(crate) fn crashed(&self) -> bool {
        !self.timed_out && (self.signal().is_some() || self.stderr.contains("wine: Unhandled "))
    }

    /// Stdout split into lines (without line terminators).
    pub(crate) fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    /// One paragraph saying how the run ended, with its output; for panics.
    pub(crate) fn describe(&self) -> String {
        let how = if self.timed_out {
            format!(
                "timed out: killed by the harness after {:.1}s",
                self.elapsed.as_secs_f64()
            )
        } else if let Some(sig) = self.signal() {
            format!(
                "CRASHED: killed by signal {sig} ({}){} after {:.1}s",
                signal_name(sig),
                if self.status.core_dumped() {
                    ", core dumped"
                } else {
                    ""
                },
                self.elapsed.as_secs_f64()
            )
        } else {
            format!(
                "exited with code {} after {:.1}s",
                self.code().unwrap_or(-1),
                self.elapsed.as_secs_f64()
            )
        };
        let mut s = format!("`{}` {how}", self.command);
        let _ = write!(s, "\n--- stdout ---\n{}", tail(&self.stdout, 80));
        let _ = write!(s, "\n--- stderr ---\n{}", tail(&self.stderr, 80));
        s
    }

    /// Panics (with [`describe`](Self::describe)) unless the process exited
    /// with `code`.
    #[track_caller]
    pub(crate) fn assert_exit(&self, code: i32) -> &Self {
        if self.code() != Some(code) {
            panic!("expected exit code {code}: {}", self.describe());
        }
        self
    }

    /// Panics unless stdout is exactly `expected`, line by line.
    #[track_caller]
    pub(crate) fn assert_stdout(&self, expected: &[&str]) -> &Self {
        if self.lines() != expected {
            panic!(
                "unexpected stdout\n--- expected ---\n{}\n{}",
                expected.join("\n"),
                self.describe()
            );
        }
        self
    }
}

/// The usual name of a Linux signal number.
pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        31 => "SIGSYS",
        _ => "unknown signal",
    }
}

fn tail(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines {
        return text.trim_end().to_string();
    }
    format!(
        "[... {} lines omitted ...]\n{}",
        lines.len() - max_lines,
        lines[lines.len() - max_lines..].join("\n")
    )
}

/// The timeout for one program run: `CORPROF_E2E_TIMEOUT_SECS` or 60 s.
pub(crate) fn default_timeout() -> Duration {
    env::var("CORPROF_E2E_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT)
}

fn spawn_reader(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

fn describe_command(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `cmd` with stdin closed and stdout/stderr captured, killing it (and
/// its process group) once `timeout` has passed.
pub(crate) fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Result<RunOutput, String> {
    let command = describe_command(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout kills whatever it started too.
        .process_group(0);
    let start = Instant::now();
    let mut child: Child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let out = spawn_reader(child.stdout.take().expect("stdout is piped"));
    let err = spawn_reader(child.stderr.take().expect("stderr is piped"));
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(format!("cannot wait for `{command}`: {e}")),
        }
        if start.elapsed() >= timeout {
            timed_out = true;
            kill_group(&mut child);
            break child
                .wait()
                .map_err(|e| format!("cannot wait for `{command}`: {e}"))?;
        }
        thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    Ok(RunOutput {
        stdout,
        stderr,
        status,
        timed_out,
        elapsed,
        command,
    })
}

fn kill_group(child: &mut Child) {
    // std cannot signal a process group; kill(1) can. The child leads its
    // group (process_group(0)), so the group id is its pid.
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
}

/// Runs `scripts/provision/provision-dotnet.sh` (once per test process) and returns
/// the runtime it set up. The error is one sentence, ready to show.
pub(crate) fn ensure_provisioned() -> Result<Runtime, String> {
    static PROVISIONED: OnceLock<Result<Runtime, String>> = OnceLock::new();
    PROVISIONED.get_or_init(provision).clone()
}

/// Like [`ensure_provisioned`], but panics when provisioning failed: under
/// `CI=true` with the reason, elsewhere with one sentence saying what to run.
#[track_caller]
pub(crate) fn runtime() -> Runtime {
    match ensure_provisioned() {
        Ok(rt) => rt,
        Err(reason) if in_ci() => {
            panic!("e2e: provisioning .NET failed under CI: {reason}")
        }
        Err(reason) => panic!(
            "e2e: no .NET runtime for the end-to-end tests: {reason}. \
             Run `bash scripts/provision/provision-dotnet.sh` to see why and fix it."
        ),
    }
}

fn provision() -> Result<Runtime, String> {
    let script = repo_root().join("scripts/provision/provision-dotnet.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(&script).current_dir(repo_root());
    let out = run_with_timeout(cmd, PROVISION_TIMEOUT)?;
    if out.code() != Some(0) {
        // The script's last stderr line is its one-line reason.
        let reason = out
            .stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().trim_start_matches("provision-dotnet: error: "))
            .unwrap_or("no message")
            .to_string();
        let how = if out.timed_out {
            format!("timed out after {}s", PROVISION_TIMEOUT.as_secs())
        } else if let Some(sig) = out.signal() {
            format!("killed by {}", signal_name(sig))
        } else {
            format!("exit code {}", out.code().unwrap_or(-1))
        };
        return Err(format!(
            "scripts/provision/provision-dotnet.sh failed ({how}): {reason}"
        ));
    }
    let mut rt = parse_summary(&out.stdout)?;
    rt.windows = WindowsRunner::from_env()?;
    rt.arm64 = Arm64Runner::from_env()?;
    Ok(rt)
}

/// Parses the `KEY=VALUE` lines the provisioning script prints.
pub(crate) fn parse_summary(text: &str) -> Result<Runtime, String> {
    let map: HashMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let get = |k: &str| {
        map.get(k)
            .map(|v| v.to_string())
            .ok_or_else(|| format!("the provisioning script printed no {k}"))
    };
    let rt = Runtime {
        mode: get("CORPROF_DOTNET_MODE")?,
        host: get("DOTNET_HOST")?.into(),
        version: get("DOTNET_RUNTIME_VERSION")?,
        runtime_dir: get("DOTNET_RUNTIME_DIR")?.into(),
        choice: get("CORPROF_RUNTIME")?,
        target_framework: get("TARGET_FRAMEWORK")?,
        compiler: get("CSHARP_COMPILER")?,
        aspnetcore_dir: get("ASPNETCORE_DIR")?.into(),
        aspnetcore_version: get("ASPNETCORE_VERSION")?,
        r2r_library: get("R2R_LIBRARY")?.into(),
        wrk: get("WRK")?.into(),
        programs_dir: get("E2E_PROGRAMS_DIR")?.into(),
        programs: get("E2E_PROGRAMS")?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        windows: None,
        arm64: None,
    };
    if !rt.host.is_file() {
        return Err(format!(
            "the dotnet host {} does not exist",
            rt.host.display()
        ));
    }
    Ok(rt)
}

impl Runtime {
    /// The runtime's major version: 3 for .NET Core 3.1, 10 for .NET 10.
    pub(crate) fn major(&self) -> u32 {
        self.version
            .split('.')
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or_else(|| panic!("e2e: a runtime version without a major: {}", self.version))
    }

    /// `path` as the program and its profiler see it: the path itself, or
    /// `Z:\...` on the Windows runner (for settings such as
    /// `DOTNET_STARTUP_HOOKS` that Windows parses as Windows paths).
    pub(crate) fn program_path(&self, path: &Path) -> String {
        match &self.windows {
            Some(_) => windows_path(path),
            None => path.to_str().expect("a UTF-8 path").to_string(),
        }
    }

    /// `.cache/e2e/<runtime>/bin/<program>/<program>.dll`.
    pub(crate) fn program_dll(&self, program: &str) -> PathBuf {
        self.programs_dir
            .join(program)
            .join(format!("{program}.dll"))
    }

    /// The program's `.runtimeconfig.json`.
    pub(crate) fn runtimeconfig(&self, program: &str) -> PathBuf {
        self.programs_dir
            .join(program)
            .join(format!("{program}.runtimeconfig.json"))
    }

    /// The command that runs `program`, with its environment set (see
    /// [`run`](Self::run)); for tests that need to drive the process
    /// themselves. Panics when the program was not built.
    #[track_caller]
    pub(crate) fn command(
        &self,
        program: &str,
        args: &[&str],
        profiler: Option<&Profiler>,
    ) -> Command {
        let dll = self.program_dll(program);
        assert!(
            dll.is_file(),
            "e2e: no program {program} at {} (known: {})",
            dll.display(),
            self.programs.join(", ")
        );
        self.command_for(&dll, &self.runtimeconfig(program), args, profiler)
    }

    /// [`command`](Self::command) for a program given by its `.dll` and
    /// `.runtimeconfig.json` (one not under `programs_dir`, such as a copy
    /// a test made).
    pub(crate) fn command_for(
        &self,
        dll: &Path,
        runtimeconfig: &Path,
        args: &[&str],
        profiler: Option<&Profiler>,
    ) -> Command {
        let mut cmd = match (&self.windows, &self.arm64) {
            (None, Some(a)) => {
                let mut cmd = Command::new(&a.qemu);
                cmd.arg("-L")
                    .arg(&a.sysroot)
                    .arg(&a.dotnet)
                    .arg("exec")
                    .arg("--runtimeconfig")
                    .arg(runtimeconfig)
                    .arg(dll);
                cmd
            }
            (Some(w), _) => {
                let mut cmd = Command::new(&w.wine);
                cmd.arg(&w.dotnet_exe)
                    .arg("exec")
                    .arg("--runtimeconfig")
                    .arg(windows_path(runtimeconfig))
                    .arg(windows_path(dll));
                cmd
            }
            (None, None) => {
                let mut cmd = Command::new(&self.host);
                cmd.arg("exec")
                    .arg("--runtimeconfig")
                    .arg(runtimeconfig)
                    .arg(dll);
                cmd
            }
        };
        cmd.args(args)
            .current_dir(dll.parent().expect("a dll has a directory"))
            .env("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "1")
            .env("DOTNET_CLI_TELEMETRY_OPTOUT", "1")
            .env("DOTNET_NOLOGO", "1");
        for var in PROFILER_VARS {
            cmd.env_remove(var);
        }
        if let Some(p) = profiler {
            let path = match &self.windows {
                Some(_) => windows_path(&p.path).into(),
                None => absolute(&p.path).into_os_string(),
            };
            cmd.env("CORECLR_ENABLE_PROFILING", "1")
                .env("CORECLR_PROFILER", p.braced_clsid())
                .env("CORECLR_PROFILER_PATH", &path);
            for (k, v) in &p.extra_env {
                cmd.env(k, v);
            }
        }
        cmd
    }

    /// Runs `program` (one of [`programs`](Self::programs)) with `args`, and
    /// `profiler` loaded if given, killing it after [`default_timeout`].
    /// Sets `DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1`, and the `CORECLR_*`
    /// profiler variables only when a profiler is given.
    #[track_caller]
    pub(crate) fn run(
        &self,
        program: &str,
        args: &[&str],
        profiler: Option<&Profiler>,
    ) -> RunOutput {
        self.run_with_timeout(program, args, profiler, default_timeout())
    }

    /// [`run`](Self::run) with an explicit timeout.
    #[track_caller]
    pub(crate) fn run_with_timeout(
        &self,
        program: &str,
        args: &[&str],
        profiler: Option<&Profiler>,
        timeout: Duration,
    ) -> RunOutput {
        let cmd = self.command(program, args, profiler);
        let mut out = run_with_timeout(cmd, timeout).unwrap_or_else(|e| panic!("e2e: {e}"));
        if self.windows.is_some() {
            // .NET on Windows ends lines with CRLF; the assertions are the
            // same on every platform.
            out.stdout = out.stdout.replace("\r\n", "\n");
            out.stderr = out.stderr.replace("\r\n", "\n");
        }
        out
    }
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// A fresh, empty directory for one run of an end-to-end test:
/// `SUITE/NAME-MAJOR-PID` under cargo's temporary directory for
/// integration tests, the runtime's major version and the test process's
/// ID in the name so that runs on different runtimes, or of two test
/// binaries at once, never share one.
pub(crate) fn fresh_run_dir(suite: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(format!(
            "{name}-{}-{}",
            runtime().major(),
            std::process::id()
        ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The directory cargo builds into: `CARGO_TARGET_DIR` (relative to the
/// repository root when relative), else `<repo>/target`.
pub(crate) fn target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                repo_root().join(d)
            }
        }
        _ => repo_root().join("target"),
    }
}

/// Builds the example `name` of this crate (`cargo build --example NAME`, a
/// `crate-type = ["cdylib"]` example that is a profiler) and returns the path
/// of `target/debug/examples/lib<name>.so`. Each example is built once per
/// test process; the error is one sentence with cargo's last error line.
pub(crate) fn build_example(name: &str) -> Result<PathBuf, String> {
    static BUILT: OnceLock<Mutex<HashMap<String, Result<PathBuf, String>>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    built
        .entry(name.to_string())
        .or_insert_with(|| build_example_uncached(name))
        .clone()
}

fn build_example_uncached(name: &str) -> Result<PathBuf, String> {
    let windows = WindowsRunner::from_env()?;
    // The Windows leg builds with the cargo command line
    // scripts/provision/rust-target.sh gave it (rustup's target, or Debian's
    // rustc-web with -Zbuild-std), written to a wrapper it names here.
    let cargo = match (&windows, env::var_os("CORPROF_E2E_WINDOWS_CARGO")) {
        (Some(_), Some(wrapper)) => wrapper,
        _ => env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")),
    };
    let mut cmd = Command::new(cargo);
    let arm64 = Arm64Runner::from_env()?;
    // The AArch64 leg's cargo for the target (scripts/provision/rust-target.sh):
    // its environment (`NAME=VALUE ...`: say, Debian's RUSTC and
    // RUSTC_BOOTSTRAP=1, on this cargo only) and its arguments before the
    // subcommand (-Zbuild-std and the offline source).
    if let Ok(vars) = env::var("CORPROF_E2E_CARGO_ENV") {
        for pair in vars.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("CORPROF_E2E_CARGO_ENV: {pair:?} is not NAME=VALUE"))?;
            cmd.env(key, value);
        }
    }
    if let Ok(extra) = env::var("CORPROF_E2E_CARGO_ARGS") {
        cmd.args(extra.split_whitespace());
    }
    cmd.args(["build", "--quiet", "--example", name, "--manifest-path"])
        .arg(repo_root().join("Cargo.toml"))
        .current_dir(repo_root());
    if windows.is_some() {
        cmd.args(["--target", WINDOWS_TARGET]);
    } else if arm64.is_some() {
        cmd.args(["--target", ARM64_TARGET]);
    }
    let out = run_with_timeout(cmd, Duration::from_secs(15 * 60))?;
    if out.code() != Some(0) {
        let reason = out
            .stderr
            .lines()
            .find(|l| l.starts_with("error"))
            .or_else(|| out.stderr.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(format!("`cargo build --example {name}` failed: {reason}"));
    }
    let lib = match &windows {
        Some(w) => {
            let dir = target_dir().join(WINDOWS_TARGET).join("debug/examples");
            // Wine 8 has no bcryptprimitives.dll, which Rust's std imports:
            // the test-only shim goes next to the profiler DLL.
            w.install_shim(&dir)?;
            dir.join(format!("{}.dll", name.replace('-', "_")))
        }
        None if arm64.is_some() => target_dir()
            .join(ARM64_TARGET)
            .join("debug/examples")
            .join(format!("lib{}.so", name.replace('-', "_"))),
        None => target_dir()
            .join("debug/examples")
            .join(format!("lib{}.so", name.replace('-', "_"))),
    };
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(format!(
            "`cargo build --example {name}` made no {} (is the example a cdylib?)",
            lib.display()
        ))
    }
}
