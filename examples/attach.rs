//! Lists the .NET processes of this user, and attaches a profiler to one of
//! them while it runs, through the runtime's diagnostics IPC channel
//! ([`corprof::diagnostics`]).
//!
//! ```text
//! attach list
//! attach PID PROFILER CLSID [CLIENT-DATA]
//! ```
//!
//! `attach list` prints one line per process: its pid and command line
//! (from `ProcessInfo` on .NET 5 and later; from the system, `/proc`, for
//! .NET Core 3.x, whose runtime does not know that command).
//!
//! `attach PID PROFILER CLSID [CLIENT-DATA]` asks the runtime of `PID` to
//! load the profiler library `PROFILER` (made absolute) with class `CLSID`,
//! and passes `CLIENT-DATA` (UTF-8 text, may be empty) to its
//! `InitializeForAttach`. It prints the runtime's answer in words and exits
//! 0 when the profiler was loaded, 1 when the attach failed, 2 on bad usage.
//! The first word of a failure says which kind it is:
//!
//! | message starts with | meaning |
//! | --- | --- |
//! | `no such process` | nothing runs with that pid |
//! | `no runtime listening` | the process has no diagnostics endpoint, or nothing answers on it |
//! | `profiler already loaded` | the process already has a profiler (one per process) |
//! | `load failed` | the runtime could not load the profiler, or its `InitializeForAttach` refused (then the profiler usually says why on the target's stderr) |
//! | `timed out` | no answer within the limit (`ATTACH_TIMEOUT_MS`, default 10000) |
//! | `connection closed` | the process exited (or dropped the connection) during the attach |
//! | `error` | anything else |
//!
//! ```sh
//! cargo build --example attach --example sampler_attach
//! target/debug/examples/attach list
//! target/debug/examples/attach 4242 target/debug/examples/libsampler_attach.so \
//!     3C9E5A17-6B2D-4E81-9F40-A7D2C8B5E163 'seconds=10;dir=/tmp/profiles'
//! ```

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use corprof::diagnostics::{
    describe_hresult, discovery, AttachProfiler, DiagnosticsClient, Error, DS_IPC_E_UNKNOWN_COMMAND,
};
use corprof::profiling::CORPROF_E_PROFILER_ALREADY_ACTIVE;
use corprof::GUID;

const USAGE: &str = "usage: attach list\n       attach PID PROFILER CLSID [CLIENT-DATA]";

/// `ATTACH_TIMEOUT_MS`, the one setting (a bad value is the default).
fn timeout() -> Duration {
    let millis = std::env::var("ATTACH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok());
    Duration::from_millis(millis.unwrap_or(10_000))
}

/// The command line of a listed process: `ProcessInfo` when the runtime
/// knows it, the system's record otherwise.
fn command_line(process: &discovery::DotnetProcess) -> String {
    let client = DiagnosticsClient::at(&process.endpoint).with_timeout(timeout());
    match client.process_info() {
        Ok(info) => info.command_line,
        Err(Error::Runtime(DS_IPC_E_UNKNOWN_COMMAND)) => discovery::os_command_line(process.pid)
            .unwrap_or_else(|| "(command line unknown: runtime before .NET 5)".into()),
        Err(error) => format!("(no answer: {error})"),
    }
}

fn list() -> ExitCode {
    let dir = discovery::default_dir();
    let processes = match discovery::list() {
        Ok(processes) => processes,
        Err(error) => {
            eprintln!("attach: cannot read {}: {error}", dir.display());
            return ExitCode::FAILURE;
        }
    };
    if processes.is_empty() {
        // Nothing on stdout (a script reads it), a hint on stderr.
        eprintln!(
            "attach: no .NET process of this user has a diagnostics endpoint in {} (a process \
             started with another TMPDIR, or with COMPlus_EnableDiagnostics=0, is not listed)",
            dir.display()
        );
    }
    for process in processes {
        println!("{} {}", process.pid, command_line(&process));
    }
    ExitCode::SUCCESS
}

/// The kind of failure, in the words the table above lists.
fn kind(error: &Error) -> &'static str {
    match error {
        Error::NoSuchProcess(_) => "no such process",
        Error::NoRuntime { .. } | Error::Connect { .. } => "no runtime listening",
        Error::Runtime(CORPROF_E_PROFILER_ALREADY_ACTIVE) => "profiler already loaded",
        Error::Runtime(_) => "load failed",
        Error::TimedOut { .. } => "timed out",
        Error::Closed { .. } => "connection closed",
        _ => "error",
    }
}

/// A usage error: exit code 2.
fn usage(what: &str) -> ExitCode {
    eprintln!("attach: {what}\n{USAGE}");
    ExitCode::from(2)
}

fn attach(pid: &str, profiler: &str, clsid: &str, client_data: &str) -> ExitCode {
    let Ok(pid) = pid.parse::<u32>() else {
        return usage(&format!("not a process id: {pid:?}"));
    };
    let clsid = match GUID::try_parse(clsid) {
        Ok(clsid) => clsid,
        Err(e) => return usage(&format!("not a CLSID: {clsid:?} ({})", e.as_str())),
    };
    // The runtime resolves the path in its own working directory.
    let path = Path::new(profiler);
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let Some(profiler_path) = absolute.to_str() else {
        return usage("the profiler path is not valid UTF-8");
    };
    let result = DiagnosticsClient::for_process(pid).and_then(|client| {
        client
            .with_timeout(timeout())
            .attach_profiler(&AttachProfiler {
                attach_timeout: Duration::from_secs(5),
                clsid,
                profiler_path,
                client_data: client_data.as_bytes(),
            })
    });
    let Err(error) = result else {
        println!("attached: profiler {clsid} loaded into process {pid}");
        return ExitCode::SUCCESS;
    };
    // The kind first, once ("no such process: 12", not "no such
    // process: no such process: 12").
    let text = error.to_string();
    let mut message = match kind(&error) {
        kind if text.starts_with(kind) => text,
        kind => format!("{kind}: {text}"),
    };
    if let Error::Runtime(hr) = error {
        if !absolute.exists() {
            message.push_str(&format!(" ({profiler_path} does not exist)"));
        } else if describe_hresult(hr).is_none() {
            // Not one of the loader's or the server's answers: the
            // profiler's own InitializeForAttach returned it.
            message.push_str(
                "; the profiler's InitializeForAttach refused the attach \
                 (a profiler usually says why on the target process's stderr)",
            );
        }
    }
    eprintln!("attach: {message}");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd] if cmd == "list" => list(),
        [pid, profiler, clsid, data @ ..] if data.len() <= 1 => {
            attach(pid, profiler, clsid, data.first().map_or("", |d| d))
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
