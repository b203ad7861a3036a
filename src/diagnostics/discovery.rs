//! Finding runtimes: the diagnostics endpoint of a process, and the
//! processes that have one.
//!
//! * **Linux, macOS**: the runtime listens on the Unix domain socket
//!   `dotnet-diagnostic-{pid}-{key}-socket` in its temporary directory
//!   (`$TMPDIR`, or `/tmp` when that is unset or empty). `key` tells apart
//!   processes that reused a pid: on Linux the process start time in clock
//!   ticks since boot (field 22 of `/proc/{pid}/stat`), on macOS in seconds
//!   since the epoch. A runtime that exits uncleanly leaves its socket
//!   behind; on Linux the key rules out such leftovers.
//! * **Windows**: the named pipe `\\.\pipe\dotnet-diagnostic-{pid}`.
//!
//! A client must look in the *target's* temporary directory: a process
//! started with another `TMPDIR` is found only with
//! [`endpoint_in`]/[`list_in`] and that directory.

use alloc::string::String;
use alloc::vec::Vec;
use std::path::{Path, PathBuf};

use super::error::Error;

/// The file-name prefix of every endpoint.
pub const PREFIX: &str = "dotnet-diagnostic-";

/// A process with a diagnostics endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotnetProcess {
    /// Its process id.
    pub pid: u32,
    /// Its endpoint: a socket path, or the pipe path on Windows.
    pub endpoint: PathBuf,
}

/// Where runtimes of this user put their endpoints: `$TMPDIR` (or `/tmp`)
/// on Unix, `\\.\pipe\` on Windows.
pub fn default_dir() -> PathBuf {
    #[cfg(windows)]
    {
        PathBuf::from(r"\\.\pipe\")
    }
    #[cfg(not(windows))]
    {
        match std::env::var_os("TMPDIR") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => PathBuf::from("/tmp"),
        }
    }
}

/// Splits an endpoint file name into its pid and (on Unix) disambiguation
/// key: `dotnet-diagnostic-4242-123456-socket` is `(4242, Some(123456))`,
/// `dotnet-diagnostic-4242` (a Windows pipe) is `(4242, None)`.
pub fn parse_name(name: &str) -> Option<(u32, Option<u64>)> {
    let rest = name.strip_prefix(PREFIX)?;
    if let Some(middle) = rest.strip_suffix("-socket") {
        let (pid, key) = middle.split_once('-')?;
        return Some((pid.parse().ok()?, Some(key.parse().ok()?)));
    }
    if rest.bytes().all(|b| b.is_ascii_digit()) {
        return Some((rest.parse().ok()?, None));
    }
    None
}

/// Whether a process with this id exists, when the system can tell
/// (Linux: `/proc`; Windows: a Toolhelp snapshot; `None` elsewhere).
pub fn process_exists(pid: u32) -> Option<bool> {
    #[cfg(windows)]
    {
        super::toolhelp::processes()
            .ok()
            .map(|all| all.iter().any(|&(p, _)| p == pid))
    }
    #[cfg(not(windows))]
    if cfg!(target_os = "linux") {
        Some(Path::new(&alloc::format!("/proc/{pid}")).exists())
    } else {
        None
    }
}

/// The disambiguation key the runtime of `pid` puts in its socket name, when
/// the system can tell: on Linux, field 22 (`starttime`) of
/// `/proc/{pid}/stat`.
pub fn start_key(pid: u32) -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string(alloc::format!("/proc/{pid}/stat")).ok()?;
    // Field 2, the command name, is in parentheses and may hold spaces:
    // count fields after its closing parenthesis (field 3 is first there).
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// The command line of a process as the system reports it (on Linux,
/// `/proc/{pid}/cmdline` with its arguments joined by spaces); `None` where
/// the system does not offer it. Runtimes before .NET 5 do not answer
/// `ProcessInfo`, so this is how to name them.
pub fn os_command_line(pid: u32) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let raw = std::fs::read(alloc::format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|arg| !arg.is_empty())
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    Some(args.join(" "))
}

/// The endpoints found in `dir`, newest first among those of one pid,
/// without leftovers of exited processes where the system can tell.
pub fn list_in(dir: &Path) -> std::io::Result<Vec<DotnetProcess>> {
    let mut found: Vec<(u32, Option<u64>, Option<std::time::SystemTime>, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name();
        let Some((pid, key)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        if process_exists(pid) == Some(false) {
            continue;
        }
        if let (Some(key), Some(actual)) = (key, start_key(pid)) {
            if key != actual {
                continue; // a leftover of an earlier process with this pid
            }
        }
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        found.push((pid, key, modified, entry.path()));
    }
    // One endpoint per pid: the newest.
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)));
    found.dedup_by_key(|entry| entry.0);
    Ok(found
        .into_iter()
        .map(|(pid, _, _, endpoint)| DotnetProcess { pid, endpoint })
        .collect())
}

/// The .NET processes of this user: [`list_in`] the [`default_dir`]. On
/// Windows, where listing `\\.\pipe\` fails (Wine answers it with "Bad
/// device type"), every process of the system (Toolhelp) whose
/// `\\.\pipe\dotnet-diagnostic-{pid}` exists, probed without connecting.
pub fn list() -> std::io::Result<Vec<DotnetProcess>> {
    #[cfg(windows)]
    {
        list_in(&default_dir()).or_else(|_| list_by_processes())
    }
    #[cfg(not(windows))]
    {
        list_in(&default_dir())
    }
}

/// Windows: the processes with a diagnostics pipe, found by enumerating
/// processes (Toolhelp) and probing each one's pipe name.
#[cfg(windows)]
pub(crate) fn list_by_processes() -> std::io::Result<Vec<DotnetProcess>> {
    let mut found = Vec::new();
    for (pid, _exe) in super::toolhelp::processes()? {
        if pid == 0 {
            continue; // the idle process
        }
        let endpoint = alloc::format!(r"\\.\pipe\{PREFIX}{pid}");
        if super::toolhelp::pipe_exists(&endpoint) {
            found.push(DotnetProcess {
                pid,
                endpoint: PathBuf::from(endpoint),
            });
        }
    }
    found.sort_by_key(|process| process.pid);
    found.dedup_by_key(|process| process.pid);
    Ok(found)
}

/// The endpoint of process `pid` in `dir`: [`Error::NoSuchProcess`] when
/// the system knows there is no such process, [`Error::NoRuntime`] when it
/// has no endpoint there.
pub fn endpoint_in(dir: &Path, pid: u32) -> Result<PathBuf, Error> {
    if process_exists(pid) == Some(false) {
        return Err(Error::NoSuchProcess(pid));
    }
    let no_runtime = || Error::NoRuntime {
        pid,
        looked_in: dir.to_path_buf(),
    };
    let listed = list_in(dir).map_err(|_| no_runtime())?;
    listed
        .into_iter()
        .find(|process| process.pid == pid)
        .map(|process| process.endpoint)
        .ok_or_else(no_runtime)
}

/// The endpoint of process `pid` in the [`default_dir`]. On Windows this is
/// the pipe name, whether or not the pipe exists (opening it tells), or
/// [`Error::NoSuchProcess`] when no process has that id.
pub fn endpoint(pid: u32) -> Result<PathBuf, Error> {
    #[cfg(windows)]
    {
        if process_exists(pid) == Some(false) {
            return Err(Error::NoSuchProcess(pid));
        }
        Ok(PathBuf::from(alloc::format!(r"\\.\pipe\{PREFIX}{pid}")))
    }
    #[cfg(not(windows))]
    {
        endpoint_in(&default_dir(), pid)
    }
}
