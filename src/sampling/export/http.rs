//! The little HTTP/1.1 the push exporter needs (RFC 9112), over
//! `std::net`: a URL parser for `http://host:port[/prefix]`, a request
//! writer, and a response reader that is a pure function over bytes
//! ([`parse_response`]), so that it can be fuzzed (tests/services_fuzz.rs).
//!
//! Every exchange has one deadline ([`Timeouts::exchange`], or an earlier
//! one the caller gives) that covers all of it: the name lookup, each
//! address's connection, the request (a peer that drains it a byte at a
//! time included) and the response; and every buffer a bound: a server
//! that is down, slow, or answers garbage costs the push thread at most
//! that deadline and [`MAX_RESPONSE`] bytes, and nothing else.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::time::Duration;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Instant;

use super::url::Url;
use super::FailureCause;

/// Most bytes of a response read (status line, headers and body).
pub const MAX_RESPONSE: usize = 64 << 10;
/// Most bytes of the status line and headers.
pub const MAX_HEAD: usize = 16 << 10;
/// Most bytes of the body kept as text in [`Response::body`].
pub const BODY_PREVIEW: usize = 256;
/// Most bytes of the body kept as they are in [`Response::raw`] (an OTLP
/// response's protobuf).
pub const BODY_KEPT: usize = 4 << 10;

/// A response as far as the client cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code (100 to 999, as the grammar allows three digits
    /// with a non-zero first).
    pub status: u16,
    /// The start of the body, as text (at most [`BODY_PREVIEW`] bytes,
    /// invalid UTF-8 replaced).
    pub body: String,
    /// The start of the body as received (at most [`BODY_KEPT`] bytes).
    pub raw: Vec<u8>,
    /// Whether the body was longer than the client reads
    /// ([`MAX_RESPONSE`]): the status stands, the rest is not read.
    pub truncated: bool,
    /// The `Retry-After` header in its delay-seconds form (RFC 9110
    /// 10.2.3: `1*DIGIT`), which OTLP/HTTP asks a client to honour on 429
    /// and 503; the HTTP-date form and anything else are ignored (`None`).
    pub retry_after: Option<core::time::Duration>,
}

/// Why bytes are not an HTTP/1.x response.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseError {
    /// The connection ended before the response did.
    Truncated,
    /// The status line is not `HTTP/1.x NNN ...`.
    BadStatusLine,
    /// A header line is not `name: value`.
    BadHeader,
    /// `Content-Length` is not a number, or given twice differently.
    BadContentLength,
    /// A chunk of a chunked body is malformed.
    BadChunk,
    /// The status line and headers exceed [`MAX_HEAD`].
    HeadTooLarge,
}

impl fmt::Display for ResponseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ResponseError::Truncated => "the response ended early",
            ResponseError::BadStatusLine => "not an HTTP/1.x status line",
            ResponseError::BadHeader => "a malformed header line",
            ResponseError::BadContentLength => "a bad Content-Length",
            ResponseError::BadChunk => "a malformed chunk",
            ResponseError::HeadTooLarge => "headers over 16 KiB",
        })
    }
}

/// Reads a response from the bytes received so far. `eof`: the server
/// closed the connection after them. `Ok(None)`: more bytes are needed.
///
/// Accepts `HTTP/1.0` and `HTTP/1.1` responses whose lines end in CRLF
/// (a bare LF too, as RFC 9112 §2.2 allows a recipient to), a body
/// delimited by `Content-Length`, by `Transfer-Encoding: chunked`, or by
/// the end of the connection; no body for 1xx, 204 and 304. A body longer
/// than [`MAX_RESPONSE`] allows is not waited for
/// ([`Response::truncated`]). Pure and linear in the input's length.
pub fn parse_response(bytes: &[u8], eof: bool) -> Result<Option<Response>, ResponseError> {
    let Some((head_len, body_start)) = head_end(bytes) else {
        if bytes.len() > MAX_HEAD {
            return Err(ResponseError::HeadTooLarge);
        }
        return if eof {
            Err(ResponseError::Truncated)
        } else {
            Ok(None)
        };
    };
    if head_len > MAX_HEAD {
        return Err(ResponseError::HeadTooLarge);
    }
    let mut lines = bytes[..head_len]
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status = status_line(lines.next().unwrap_or(b""))?;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut retry_after = None;
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or(ResponseError::BadHeader)?;
        let (name, value) = (&line[..colon], trim(&line[colon + 1..]));
        if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
            return Err(ResponseError::BadHeader);
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_decimal(value).ok_or(ResponseError::BadContentLength)?;
            if length.is_some_and(|l| l != n) {
                return Err(ResponseError::BadContentLength);
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"retry-after") {
            retry_after = parse_decimal(value).map(core::time::Duration::from_secs);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // chunked is the last coding when present (RFC 9112 §6.1).
            chunked = value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| trim(last).eq_ignore_ascii_case(b"chunked"));
        }
    }
    let body = &bytes[body_start..];
    let room = MAX_RESPONSE.saturating_sub(body_start);
    let done = |body: &[u8], truncated: bool| {
        let preview = &body[..body.len().min(BODY_PREVIEW)];
        Ok(Some(Response {
            status,
            body: String::from_utf8_lossy(preview).into_owned(),
            raw: body[..body.len().min(BODY_KEPT)].to_vec(),
            truncated,
            retry_after,
        }))
    };
    if status < 200 || status == 204 || status == 304 {
        return done(b"", false);
    }
    if chunked {
        return match dechunk(body, room)? {
            Chunked::Done(text) => done(&text, false),
            Chunked::TooLong(text) => done(&text, true),
            Chunked::More if eof => Err(ResponseError::Truncated),
            Chunked::More => Ok(None),
        };
    }
    match length {
        Some(n) if n as usize <= body.len() && n <= body.len() as u64 => {
            done(&body[..n as usize], false)
        }
        Some(n) if n > room as u64 && body.len() >= room => done(body, true),
        Some(_) if eof => Err(ResponseError::Truncated),
        Some(_) => Ok(None),
        None if eof => done(body, false),
        None if body.len() >= room => done(body, true),
        None => Ok(None),
    }
}

/// Where the head ends: (its length without the blank line, where the
/// body starts).
fn head_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while let Some(at) = bytes[i..].iter().position(|&b| b == b'\n') {
        let nl = i + at;
        let rest = &bytes[nl + 1..];
        if rest.starts_with(b"\r\n") {
            return Some((nl + 1, nl + 3));
        }
        if rest.starts_with(b"\n") {
            return Some((nl + 1, nl + 2));
        }
        i = nl + 1;
        if i > MAX_HEAD + 4 {
            return None;
        }
    }
    None
}

fn status_line(line: &[u8]) -> Result<u16, ResponseError> {
    let rest = line
        .strip_prefix(b"HTTP/1.")
        .ok_or(ResponseError::BadStatusLine)?;
    match rest {
        [minor, b' ', a, b, c, tail @ ..]
            if minor.is_ascii_digit()
                && (b'1'..=b'9').contains(a)
                && b.is_ascii_digit()
                && c.is_ascii_digit()
                && (tail.is_empty() || tail[0] == b' ') =>
        {
            Ok(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => Err(ResponseError::BadStatusLine),
    }
}

/// RFC 9110's `tchar`.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// A decimal of 1 to 15 digits (lengths beyond a petabyte are garbage).
fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 15 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

enum Chunked {
    Done(Vec<u8>),
    TooLong(Vec<u8>),
    More,
}

/// Decodes a chunked body (RFC 9112 §7.1), keeping at most
/// [`BODY_KEPT`] bytes of it; `room` bounds how far it reads.
fn dechunk(mut body: &[u8], room: usize) -> Result<Chunked, ResponseError> {
    let mut kept = Vec::new();
    let mut consumed = 0usize;
    loop {
        if consumed >= room {
            return Ok(Chunked::TooLong(kept));
        }
        let Some(nl) = body.iter().position(|&b| b == b'\n') else {
            return if body.len() > 1024 {
                Err(ResponseError::BadChunk)
            } else {
                Ok(Chunked::More)
            };
        };
        let line = body[..nl].strip_suffix(b"\r").unwrap_or(&body[..nl]);
        let size_text = trim(line.split(|&b| b == b';').next().unwrap_or(b""));
        if size_text.is_empty()
            || size_text.len() > 12
            || !size_text.iter().all(u8::is_ascii_hexdigit)
        {
            return Err(ResponseError::BadChunk);
        }
        let size = size_text.iter().fold(0usize, |n, &d| {
            n * 16 + (d as char).to_digit(16).unwrap_or(0) as usize
        });
        body = &body[nl + 1..];
        consumed += nl + 1;
        if size == 0 {
            // Trailer fields, then an empty line.
            loop {
                let Some(nl) = body.iter().position(|&b| b == b'\n') else {
                    return Ok(Chunked::More);
                };
                let line = body[..nl].strip_suffix(b"\r").unwrap_or(&body[..nl]);
                body = &body[nl + 1..];
                if line.is_empty() {
                    return Ok(Chunked::Done(kept));
                }
            }
        }
        if size > room {
            kept.extend_from_slice(&body[..body.len().min(BODY_KEPT - kept.len())]);
            return Ok(Chunked::TooLong(kept));
        }
        if body.len() < size + 1 {
            return Ok(Chunked::More);
        }
        let take = size.min(BODY_KEPT - kept.len());
        kept.extend_from_slice(&body[..take]);
        let after = &body[size..];
        let rest = match after {
            [b'\r', b'\n', rest @ ..] | [b'\n', rest @ ..] => rest,
            [b'\r'] => return Ok(Chunked::More),
            _ => return Err(ResponseError::BadChunk),
        };
        consumed += body.len() - rest.len();
        body = rest;
    }
}

/// The head of a `POST` of `body_len` bytes to `target` (the path and
/// query) on `url`'s host: the request line, `Host`, `User-Agent`,
/// `headers` as given, `Content-Length` and `Connection: close`, and the
/// blank line. Every exporter's request starts so.
pub(crate) fn post_head(
    url: &Url,
    target: &str,
    headers: &[(&str, &str)],
    body_len: usize,
) -> Vec<u8> {
    let mut head = alloc::format!(
        "POST {target} HTTP/1.1\r\nHost: {}\r\nUser-Agent: corprof/{}\r\n",
        url.authority(),
        env!("CARGO_PKG_VERSION"),
    );
    for (name, value) in headers {
        head.push_str(&alloc::format!("{name}: {value}\r\n"));
    }
    head.push_str(&alloc::format!(
        "Content-Length: {body_len}\r\nConnection: close\r\n\r\n"
    ));
    head.into_bytes()
}

/// How long the client waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// For the TCP connection (per address tried).
    pub connect: Duration,
    /// For the request to make progress (no byte taken by the peer for
    /// that long: given up).
    pub write: Duration,
    /// For the response to make progress, and for the whole response.
    pub read: Duration,
    /// For the whole exchange: name lookup, connections, request and
    /// response. The others only ever shorten it.
    pub exchange: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(2),
            write: Duration::from_secs(5),
            read: Duration::from_secs(5),
            exchange: Duration::from_secs(10),
        }
    }
}

impl Timeouts {
    /// These timeouts with `exchange` for the whole exchange.
    pub fn with_exchange(mut self, exchange: Duration) -> Timeouts {
        self.exchange = exchange;
        self
    }

    /// These timeouts with `write` for the request's progress.
    pub fn with_write(mut self, write: Duration) -> Timeouts {
        self.write = write;
        self
    }
}

/// Why a request failed, by cause.
#[derive(Debug)]
#[non_exhaustive]
pub enum HttpError {
    /// No connection (refused, unreachable, name not resolved).
    Connect(std::io::Error),
    /// A timeout while connecting, writing or reading.
    Timeout,
    /// Another I/O error after connecting.
    Io(std::io::Error),
    /// The response was not HTTP.
    BadResponse(ResponseError),
}

impl HttpError {
    /// The cause the exporter stats count it under.
    pub fn cause(&self) -> FailureCause {
        match self {
            HttpError::Connect(_) => FailureCause::Connect,
            HttpError::Timeout => FailureCause::Timeout,
            HttpError::Io(_) => FailureCause::Io,
            HttpError::BadResponse(_) => FailureCause::BadResponse,
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HttpError::Connect(e) => write!(f, "cannot connect: {e}"),
            HttpError::Timeout => f.write_str("timed out"),
            HttpError::Io(e) => write!(f, "{e}"),
            HttpError::BadResponse(e) => write!(f, "bad response: {e}"),
        }
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

fn io_error(error: std::io::Error) -> HttpError {
    if is_timeout(&error) {
        HttpError::Timeout
    } else {
        HttpError::Io(error)
    }
}

/// The longest a single blocking call waits before the deadline is asked
/// again (a deadline moved earlier meanwhile, the shutdown's, is kept
/// within this).
const SLICE: Duration = Duration::from_millis(100);

/// Name lookups running on a thread of their own ([`resolve`]): one given
/// up at its deadline still runs until `getaddrinfo` returns.
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// Name lookups still running, given up or not: code of this library that
/// a thread still runs (the push exporter reports itself running while
/// any is).
pub(crate) fn lookups_running() -> usize {
    LOOKUPS.load(Ordering::Acquire)
}

/// The addresses of `host` (an IP address as is; a name looked up on a
/// thread of its own, waited for until `deadline`).
fn resolve(host: &str, port: u16, deadline: Instant) -> Result<Vec<SocketAddr>, HttpError> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(alloc::vec![SocketAddr::new(ip, port)]);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let name = (String::from(host), port);
    LOOKUPS.fetch_add(1, Ordering::AcqRel);
    let spawned = std::thread::Builder::new()
        .name(String::from("corprof-lookup"))
        .spawn(move || {
            let found = (name.0.as_str(), name.1)
                .to_socket_addrs()
                .map(|a| a.collect::<Vec<_>>());
            let _ = tx.send(found);
            LOOKUPS.fetch_sub(1, Ordering::AcqRel);
        });
    if let Err(error) = spawned {
        LOOKUPS.fetch_sub(1, Ordering::AcqRel);
        return Err(HttpError::Connect(error));
    }
    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(addresses)) => Ok(addresses),
        Ok(Err(error)) => Err(HttpError::Connect(error)),
        Err(_) => Err(HttpError::Timeout),
    }
}

/// The wait for one blocking call: at most [`SLICE`], `step` (what is left
/// of a step's own timeout) and what is left until `deadline`; `None` when
/// nothing is left.
fn slice(step: Duration, deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now()).min(step);
    // A zero timeout is refused by `set_*_timeout`.
    (left >= Duration::from_millis(1)).then(|| left.min(SLICE))
}

/// Sends `head` (the request line and headers, ending in the blank line)
/// and `body` to `url`'s host with `Connection: close` semantics, and reads
/// the response: all of it within [`Timeouts::exchange`], each step within
/// its own timeout ([`exchange_until`]).
pub fn exchange(
    url: &Url,
    head: &[u8],
    body: &[u8],
    timeouts: Timeouts,
) -> Result<Response, HttpError> {
    let deadline = Instant::now() + timeouts.exchange;
    exchange_until(url, head, body, timeouts, &|| deadline)
}

/// [`exchange`] that ends by `deadline()` as well, asked again at least
/// every 100 ms of a blocking step (so that a deadline moved earlier
/// meanwhile is kept: the push exporter's shutdown), and by
/// [`Timeouts::exchange`] from its start: the name lookup, each address's
/// connection, the request and the response all count against it.
pub fn exchange_until(
    url: &Url,
    head: &[u8],
    body: &[u8],
    timeouts: Timeouts,
    deadline: &dyn Fn() -> Instant,
) -> Result<Response, HttpError> {
    let own = Instant::now() + timeouts.exchange;
    let until = || deadline().min(own);
    let host = url.host.trim_matches(|c| c == '[' || c == ']');
    let addresses = resolve(host, url.port, until())?;
    let mut last = None;
    let mut stream = None;
    for address in addresses {
        // A connection is not sliced: it waits its timeout, or what is
        // left of the exchange, whichever is less.
        let Some(wait) = slice(timeouts.connect, until()).map(|_| {
            timeouts
                .connect
                .min(until().saturating_duration_since(Instant::now()))
        }) else {
            return Err(HttpError::Timeout);
        };
        match TcpStream::connect_timeout(&address, wait) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut stream) = stream else {
        return Err(match last {
            Some(e) if is_timeout(&e) => HttpError::Timeout,
            Some(e) => HttpError::Connect(e),
            None => HttpError::Connect(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the host has no address",
            )),
        });
    };
    let _ = stream.set_nodelay(true);
    for part in [head, body] {
        let mut sent = 0;
        let mut progress = Instant::now();
        while sent < part.len() {
            let step = timeouts.write.saturating_sub(progress.elapsed());
            let wait = slice(step, until()).ok_or(HttpError::Timeout)?;
            stream
                .set_write_timeout(Some(wait))
                .map_err(HttpError::Io)?;
            match stream.write(&part[sent..]) {
                Ok(0) => {
                    return Err(HttpError::Io(std::io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => {
                    sent += n;
                    progress = Instant::now();
                }
                Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(HttpError::Io(e)),
            }
        }
    }
    let response_by = Instant::now() + timeouts.read;
    let mut received = Vec::with_capacity(1024);
    let mut buffer = [0u8; 4096];
    let mut progress = Instant::now();
    loop {
        let step = timeouts.read.saturating_sub(progress.elapsed());
        let wait = slice(step, until().min(response_by)).ok_or(HttpError::Timeout)?;
        stream.set_read_timeout(Some(wait)).map_err(HttpError::Io)?;
        let n = match stream.read(&mut buffer) {
            Ok(n) => n,
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => continue,
            // A server that answers and resets without reading the rest
            // of the request: what it answered stands.
            Err(_) if !received.is_empty() => 0,
            Err(e) => return Err(io_error(e)),
        };
        progress = Instant::now();
        let take = n.min(MAX_RESPONSE - received.len());
        received.extend_from_slice(&buffer[..take]);
        let eof = n == 0 || received.len() >= MAX_RESPONSE;
        match parse_response(&received, eof) {
            Ok(Some(response)) => return Ok(response),
            Ok(None) if !eof => {}
            Ok(None) => return Err(HttpError::Timeout),
            Err(error) => return Err(HttpError::BadResponse(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_in_seconds_is_read_and_a_date_ignored() {
        let r = ok("HTTP/1.1 503 Busy\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(r.retry_after, Some(core::time::Duration::from_secs(7)));
        let r = ok("HTTP/1.1 429 Slow\r\nretry-after:  120 \r\nContent-Length: 0\r\n\r\n");
        assert_eq!(r.retry_after, Some(core::time::Duration::from_secs(120)));
        for value in ["Fri, 31 Dec 1999 23:59:59 GMT", "-1", "1.5", ""] {
            let text = alloc::format!(
                "HTTP/1.1 503 Busy\r\nRetry-After: {value}\r\nContent-Length: 0\r\n\r\n"
            );
            assert_eq!(ok(&text).retry_after, None, "{value:?}");
        }
    }

    fn ok(text: &str) -> Response {
        parse_response(text.as_bytes(), false)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .unwrap_or_else(|| panic!("{text:?}: incomplete"))
    }

    #[test]
    fn responses() {
        let r = ok("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
        assert_eq!((r.status, r.body.as_str(), r.truncated), (200, "hi", false));
        // No length: the body runs to the end of the connection.
        assert_eq!(parse_response(b"HTTP/1.0 500\r\n\r\n", false), Ok(None));
        let r = parse_response(b"HTTP/1.0 500\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!((r.status, r.body.as_str()), (500, ""));
        assert_eq!(ok("HTTP/1.1 204 No Content\r\n\r\n").status, 204);
        let chunked = "HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n";
        assert_eq!(ok(chunked).body, "abcde");
        assert_eq!(ok("HTTP/1.1 200 OK\nContent-Length: 0\n\n").status, 200);
        // Incomplete, then complete at the end of the connection.
        let partial = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";
        assert_eq!(parse_response(partial, false), Ok(None));
        assert_eq!(parse_response(partial, true), Err(ResponseError::Truncated));
        let close = b"HTTP/1.1 503 Busy\r\n\r\ntry later";
        assert_eq!(parse_response(close, false), Ok(None));
        assert_eq!(
            parse_response(close, true).unwrap().unwrap().body,
            "try later"
        );
        for (bad, error) in [
            ("HTTP/2 200 OK\r\n\r\n", ResponseError::BadStatusLine),
            ("HTTP/1.1 099 x\r\n\r\n", ResponseError::BadStatusLine),
            ("HTTP/1.1 2000\r\n\r\n", ResponseError::BadStatusLine),
            ("SSH-2.0-OpenSSH\r\n\r\n", ResponseError::BadStatusLine),
            (
                "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                ResponseError::BadHeader,
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                ResponseError::BadContentLength,
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                ResponseError::BadContentLength,
            ),
            (
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                ResponseError::BadChunk,
            ),
        ] {
            assert_eq!(parse_response(bad.as_bytes(), true), Err(error), "{bad:?}");
        }
        // A huge head is refused without waiting for its end.
        let mut huge = b"HTTP/1.1 200 OK\r\n".to_vec();
        huge.resize(huge.len() + MAX_HEAD + 10, b'a');
        assert_eq!(
            parse_response(&huge, false),
            Err(ResponseError::HeadTooLarge)
        );
        // A body longer than the client reads: the status stands.
        let mut long = b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n".to_vec();
        long.resize(MAX_RESPONSE, b'x');
        let r = parse_response(&long, false).unwrap().unwrap();
        assert!(r.truncated);
        assert_eq!(r.body.len(), BODY_PREVIEW);
    }
}
