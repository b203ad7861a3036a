#![allow(dead_code)]
//! The web server of the end-to-end tests: the ASP.NET Core app of
//! `tests/e2e/roslyn/WebApp/` (built for the chosen runtime by
//! `scripts/provision/provision-dotnet.sh`, on that runtime's ASP.NET Core), started on
//! a free port of 127.0.0.1, loaded with `wrk`.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::dotnet::{run_with_timeout, runtime, Profiler, Runtime};

/// How long the server may take to print its ready line.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The programs of `tests/e2e/roslyn/` and the tools beside them, as
/// `scripts/provision/provision-dotnet.sh` set them up for the chosen runtime.
#[derive(Debug, Clone)]
pub(crate) struct Sdk {
    /// `.cache/e2e/<runtime>/bin`: one directory per program.
    pub(crate) programs_dir: PathBuf,
    /// Debian's `wrk`.
    pub(crate) wrk: PathBuf,
    /// The runtime's ASP.NET Core shared framework (ReadyToRun assemblies).
    pub(crate) aspnetcore_dir: PathBuf,
    /// The ReadyToRun library `CoverageR2R` calls.
    pub(crate) r2r_library: PathBuf,
}

impl Sdk {
    /// `.cache/e2e/<runtime>/bin/<name>/<name>.dll`.
    pub(crate) fn program_dll(&self, name: &str) -> PathBuf {
        self.programs_dir.join(name).join(format!("{name}.dll"))
    }

    /// The program's `.runtimeconfig.json`.
    pub(crate) fn runtimeconfig(&self, name: &str) -> PathBuf {
        self.programs_dir
            .join(name)
            .join(format!("{name}.runtimeconfig.json"))
    }
}

/// The runtime's programs and tools (provisioned once per test process;
/// panics with the reason when provisioning failed, never skips).
#[track_caller]
pub(crate) fn sdk() -> Sdk {
    let rt = runtime();
    Sdk {
        programs_dir: rt.programs_dir,
        wrk: rt.wrk,
        aspnetcore_dir: rt.aspnetcore_dir,
        r2r_library: rt.r2r_library,
    }
}

/// A running web server: the `WebApp` program, listening on
/// `127.0.0.1:port`. Dropping it kills it (`SIGKILL`); [`stop`](Self::stop)
/// ends it the way an orchestrator does (`SIGTERM`).
pub(crate) struct WebServer {
    child: Option<Child>,
    /// The port it listens on.
    pub(crate) port: u16,
    stdout: Arc<Mutex<String>>,
    stderr: thread::JoinHandle<Vec<u8>>,
    stdout_reader: thread::JoinHandle<()>,
}

/// How a server ended.
#[derive(Debug)]
pub(crate) struct Stopped {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl WebServer {
    /// Starts `WebApp` on `rt`, with `profiler` loaded if given, and waits
    /// for its ready line.
    #[track_caller]
    pub(crate) fn start(rt: &Runtime, profiler: Option<&Profiler>) -> WebServer {
        let sdk = sdk();
        let dll = sdk.program_dll("WebApp");
        let mut cmd = rt.command_for(&dll, &sdk.runtimeconfig("WebApp"), &["0"], profiler);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("e2e: cannot start WebApp: {e}"));
        let stdout = Arc::new(Mutex::new(String::new()));
        let (ready_tx, ready_rx) = mpsc::channel();
        let pipe = child.stdout.take().expect("stdout is piped");
        let sink = Arc::clone(&stdout);
        let stdout_reader = thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(address) = line.strip_prefix("ready ") {
                    let _ = ready_tx.send(address.trim().to_string());
                }
                let mut all = sink.lock().unwrap_or_else(|e| e.into_inner());
                all.push_str(&line);
                all.push('\n');
            }
        });
        let mut err_pipe = child.stderr.take().expect("stderr is piped");
        let stderr = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err_pipe.read_to_end(&mut buf);
            buf
        });
        let mut server = WebServer {
            child: Some(child),
            port: 0,
            stdout,
            stderr,
            stdout_reader,
        };
        let address = match ready_rx.recv_timeout(READY_TIMEOUT) {
            Ok(address) => address,
            Err(_) => {
                let stopped = server.kill();
                panic!(
                    "e2e: WebApp printed no ready line within {}s ({:?})\nstdout:\n{}\nstderr:\n{}",
                    READY_TIMEOUT.as_secs(),
                    stopped.status,
                    stopped.stdout,
                    stopped.stderr
                );
            }
        };
        server.port = address
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("e2e: WebApp's ready line has no port: {address}"));
        server
    }

    /// `http://127.0.0.1:PORT/path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends one GET and returns the body (through `wrk`'s sibling, a raw
    /// HTTP/1.1 request over std's TcpStream).
    pub(crate) fn get(&self, path: &str) -> String {
        http_get(self.port, path).unwrap_or_else(|e| panic!("e2e: GET {path}: {e}"))
    }

    /// Ends the server with `SIGTERM` and waits (at most 30 s, then
    /// `SIGKILL`: a server that does not stop is a failure the caller sees in
    /// the status).
    pub(crate) fn stop(mut self) -> Stopped {
        self.signal("TERM");
        self.wait(Duration::from_secs(30))
    }

    /// Ends the server with `SIGKILL`, as the OOM killer does.
    pub(crate) fn kill(&mut self) -> Stopped {
        self.signal("KILL");
        self.wait(Duration::from_secs(30))
    }

    fn signal(&self, name: &str) {
        if let Some(child) = &self.child {
            let _ = Command::new("kill")
                .args([&format!("-{name}"), "--", &child.id().to_string()])
                .status();
        }
    }

    fn wait(&mut self, timeout: Duration) -> Stopped {
        let mut child = self.child.take().expect("the server runs");
        let start = Instant::now();
        let status = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break status;
            }
            if start.elapsed() >= timeout {
                let _ = child.kill();
                break child.wait().expect("wait for the killed server");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let stdout_reader = std::mem::replace(&mut self.stdout_reader, thread::spawn(|| {}));
        let _ = stdout_reader.join();
        let stderr = std::mem::replace(&mut self.stderr, thread::spawn(Vec::new));
        let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
        let stdout = self
            .stdout
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Stopped {
            status,
            stdout,
            stderr,
        }
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One GET over HTTP/1.1 with `Connection: close`; the body of a 200.
pub(crate) fn http_get(port: u16, path: &str) -> Result<String, String> {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut response = String::new();
    s.read_to_string(&mut response).map_err(|e| e.to_string())?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no header end in {response:?}"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!("not a 200: {head}"));
    }
    // Kestrel answers a small body with a Content-Length or chunked.
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            out.push_str(tail.get(..n).ok_or("a short chunk")?);
            rest = tail.get(n + 2..).ok_or("a short chunk")?;
        }
        return Ok(out);
    }
    Ok(body.to_string())
}

/// What one `wrk` run measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WrkResult {
    pub(crate) requests: u64,
    pub(crate) requests_per_sec: f64,
    /// The 99th percentile latency, in microseconds.
    pub(crate) p99_us: f64,
    /// Responses that were not 2xx or 3xx.
    pub(crate) non_2xx: u64,
    /// Socket errors of all kinds (connect, read, write, timeout).
    pub(crate) socket_errors: u64,
}

/// Runs `wrk -tT -cC -dS --latency URL` (bounded by its own duration, and
/// killed after twice that plus 30 s) and parses what it printed.
pub(crate) fn wrk(url: &str, threads: u32, connections: u32, seconds: u32) -> WrkResult {
    let sdk = sdk();
    let mut cmd = Command::new(&sdk.wrk);
    cmd.args([
        &format!("-t{threads}"),
        &format!("-c{connections}"),
        &format!("-d{seconds}s"),
        "--latency",
        url,
    ]);
    let out = run_with_timeout(cmd, Duration::from_secs(2 * seconds as u64 + 30))
        .unwrap_or_else(|e| panic!("e2e: wrk: {e}"));
    assert_eq!(out.code(), Some(0), "e2e: wrk failed: {}", out.describe());
    parse_wrk(&out.stdout).unwrap_or_else(|e| panic!("e2e: {e} in wrk's output:\n{}", out.stdout))
}

/// Parses `wrk --latency`'s report.
pub(crate) fn parse_wrk(text: &str) -> Result<WrkResult, String> {
    let mut requests = None;
    let mut rps = None;
    let mut p99 = None;
    let mut non_2xx = 0;
    let mut socket_errors = 0;
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("Requests/sec:") {
            rps = v.trim().parse::<f64>().ok();
        } else if let Some(v) = line.strip_prefix("99%") {
            p99 = Some(duration_us(v.trim())?);
        } else if let Some(v) = line.strip_prefix("Non-2xx or 3xx responses:") {
            non_2xx = v
                .trim()
                .parse()
                .map_err(|_| format!("a bad count: {line}"))?;
        } else if let Some(v) = line.strip_prefix("Socket errors:") {
            // "connect 0, read 0, write 0, timeout 0"
            for part in v.split(',') {
                let n = part.split_whitespace().last().unwrap_or("x");
                socket_errors += n
                    .parse::<u64>()
                    .map_err(|_| format!("a bad count: {line}"))?;
            }
        } else if line.contains(" requests in ") {
            requests = line.split_whitespace().next().and_then(|n| n.parse().ok());
        }
    }
    Ok(WrkResult {
        requests: requests.ok_or("no request count")?,
        requests_per_sec: rps.ok_or("no Requests/sec")?,
        p99_us: p99.ok_or("no 99% latency")?,
        non_2xx,
        socket_errors,
    })
}

/// `wrk`'s durations: `512.00us`, `1.23ms`, `2.00s`.
fn duration_us(text: &str) -> Result<f64, String> {
    let split = text
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("a duration without a unit: {text}"))?;
    let (n, unit) = text.split_at(split);
    let n: f64 = n.parse().map_err(|_| format!("a bad duration: {text}"))?;
    match unit {
        "us" => Ok(n),
        "ms" => Ok(n * 1e3),
        "s" => Ok(n * 1e6),
        "m" => Ok(n * 60e6),
        _ => Err(format!("an unknown unit in {text}")),
    }
}

/// One HTTP/1.1 `POST` as a test's receiver reads it off the socket: the
/// request target, the headers (names in lower case) and the body, read
/// whole by its `Content-Length`. What is not a `POST` of that shape is an
/// `Err` saying what was seen.
pub(crate) struct Post {
    pub(crate) target: String,
    pub(crate) headers: std::collections::BTreeMap<String, String>,
    pub(crate) body: Vec<u8>,
}

/// Reads one [`Post`] from `stream`.
pub(crate) fn read_post(stream: &mut impl Read) -> Result<Post, String> {
    let mut data = Vec::new();
    let mut buffer = [0u8; 65536];
    let head_end = loop {
        let n = stream.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(String::from("closed before the head ended"));
        }
        data.extend_from_slice(&buffer[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8(data[..head_end].to_vec()).map_err(|e| e.to_string())?;
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or("");
    let target = line
        .strip_prefix("POST ")
        .and_then(|r| r.strip_suffix(" HTTP/1.1"))
        .ok_or_else(|| format!("request line {line:?}"))?;
    let mut headers = std::collections::BTreeMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or(format!("header {line:?}"))?;
        headers.insert(name.trim().to_ascii_lowercase(), String::from(value.trim()));
    }
    let length: usize = headers
        .get("content-length")
        .ok_or("no Content-Length")?
        .parse()
        .map_err(|_| "a bad Content-Length")?;
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(String::from("closed before the body ended"));
        }
        body.extend_from_slice(&buffer[..n]);
    }
    body.truncate(length);
    Ok(Post {
        target: String::from(target),
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // wrk 4.1.0's report, as Debian's wrk printed it against WebApp.
    const REPORT: &str = "Running 3s test @ http://127.0.0.1:36753/json
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   498.76us    0.93ms  15.29ms   92.97%
    Req/Sec    23.58k     8.18k   42.51k    66.67%
  Latency Distribution
     50%  256.00us
     75%  431.00us
     90%    0.89ms
     99%    4.54ms
  140702 requests in 3.00s, 25.82MB read
  Socket errors: connect 0, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  46860.55
Transfer/sec:      8.60MB
";

    #[test]
    fn parses_wrk_reports() {
        let r = parse_wrk(REPORT).unwrap();
        assert_eq!(r.requests, 140702);
        assert_eq!(r.requests_per_sec, 46860.55);
        assert_eq!(r.p99_us, 4540.0);
        assert_eq!(r.non_2xx, 7);
        assert_eq!(r.socket_errors, 5);
        assert!(parse_wrk("nothing").is_err());
    }
}
