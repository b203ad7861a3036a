//! The push exporter: each period to a Grafana Pyroscope–compatible
//! server's ingest endpoint.
//!
//! The request is Pyroscope's HTTP ingest API for pprof, as documented in
//! grafana/pyroscope `docs/sources/configure-server/about-server-api.md`
//! (commit 06fe547f86aa18fccf8cad1f929d92f3a29c3404, "Ingestion" and
//! "pprof format"): `POST /ingest` with the query parameters `name` (the
//! application name, a prefix to which the server appends each profile
//! type, with labels in braces: `app{k=v}`), `from` and `until` (Unix
//! seconds), `format=pprof` and `spyName`; the body `multipart/form-data`
//! with the profile in a form file field named `profile`. Grafana Alloy's
//! `pyroscope.receive_http` accepts the same (its reference page: "The
//! request format must match the format of the Pyroscope ingest API").

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use std::time::{Instant, UNIX_EPOCH};

use super::http::{post_head, Response};
use super::sender::{judge_by_status, Outcome, Protocol, Sender};
use super::url::{percent_encode, Url};
use super::{Exporter, ExporterStats, PeriodProfile, PushOptions};

/// Where to push: the server's URL (`http://host:port[/prefix]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushTarget {
    /// The server.
    pub url: Url,
}

impl PushTarget {
    /// Parses the server's URL; `https://` is refused with a message that
    /// says to push to a local agent instead ([`Url::parse`]).
    pub fn parse(url: &str) -> Result<PushTarget, String> {
        Ok(PushTarget {
            url: Url::parse(url)?,
        })
    }
}

/// Which of Pyroscope's APIs the push exporter speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushApi {
    /// `POST /ingest`, multipart (every Pyroscope version, Grafana Alloy's
    /// `pyroscope.receive_http`): the default.
    #[default]
    Ingest,
    /// `POST /push.v1.PusherService/Push`, Connect unary with
    /// `application/proto` (Pyroscope 1.x, what its own .NET agent sends).
    Push,
}

impl PushApi {
    /// From `ingest` or `push` (`CORPROF_SAMPLER_PUSH_API`).
    pub fn from_name(name: &str) -> Option<PushApi> {
        match name {
            "ingest" => Some(PushApi::Ingest),
            "push" => Some(PushApi::Push),
            _ => None,
        }
    }
}

/// The series of a push request: each `__name__` Pyroscope's .NET agent
/// gives a profile type (grafana/pyroscope-dotnet `PyroscopePprofSink.cpp`,
/// `ProfileTypeName`), with the sample types of corprof's that it holds.
pub const PUSH_SERIES: [(&str, &[&str]); 6] = [
    ("process_cpu", &["cpu"]),
    ("wall", &["wall"]),
    (
        "memory",
        &[
            "alloc_objects",
            "alloc_space",
            "inuse_objects",
            "inuse_space",
        ],
    ),
    ("exception", &["exception"]),
    ("lock", &["lock-count", "lock-time"]),
    ("gc", &["gc-pause"]),
];

/// The request of `push.v1.PusherService/Push` for `period`: one series
/// per [`PUSH_SERIES`] entry that has samples, labelled `service_name`
/// `app` and `spy_name` `corprof`, its pprof gzipped; the tenant (when
/// given) in `X-Scope-OrgID`.
pub(crate) fn push_api_request(
    url: &Url,
    app: &str,
    tenant: Option<&str>,
    period: &PeriodProfile,
) -> (Vec<u8>, Vec<u8>) {
    let series: Vec<(&str, Vec<u8>)> = PUSH_SERIES
        .iter()
        .filter_map(|(name, kinds)| {
            let pprof = period.pprof.select(kinds)?;
            Some((*name, pprof.encode_gzip()))
        })
        .collect();
    let body =
        crate::profile::push_request(&series, &[("service_name", app), ("spy_name", "corprof")]);
    let mut headers = alloc::vec![
        ("Content-Type", "application/proto"),
        ("Connect-Protocol-Version", "1"),
    ];
    if let Some(tenant) = tenant {
        headers.push(("X-Scope-OrgID", tenant));
    }
    let target = format!("{}/push.v1.PusherService/Push", url.prefix);
    (post_head(url, &target, &headers, body.len()), body)
}

/// Pushes each period to a Pyroscope-compatible server from a thread of its
/// own (`corprof-push`) and a bounded queue (the oldest period dropped
/// when full, counted): a server that is down, slow or answers garbage
/// only costs that thread time. A failed push (no connection, a timeout,
/// a 5xx, a response that is not HTTP) is retried after a back-off that
/// doubles, [`PushOptions::attempts`] times in all; a 4xx is not retried
/// (the server refuses the request itself).
pub struct PushExporter {
    target: PushTarget,
    sender: Sender,
}

impl core::fmt::Debug for PushExporter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PushExporter")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// Pyroscope's `/ingest` or push API, for the sender.
struct Ingest {
    target: PushTarget,
    app: String,
    api: PushApi,
    tenant: Option<String>,
}

impl Protocol for Ingest {
    fn url(&self) -> &Url {
        &self.target.url
    }

    fn request(&self, period: &PeriodProfile) -> (Vec<u8>, Vec<u8>) {
        if self.api == PushApi::Push {
            let tenant = self.tenant.as_deref();
            return push_api_request(&self.target.url, &self.app, tenant, period);
        }
        let seed = period.seq.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ period
                .start
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
        let boundary = boundary_for(&period.pprof_gz, seed | 1);
        ingest_request(&self.target.url, &self.app, period, &boundary)
    }

    fn judge(&self, response: &Response) -> Outcome {
        judge_by_status(response)
    }
}

impl PushExporter {
    /// Starts the push thread for `target`, as application `app`, over
    /// `/ingest`.
    pub fn start(
        target: PushTarget,
        app: &str,
        options: PushOptions,
    ) -> std::io::Result<PushExporter> {
        PushExporter::start_api(target, app, PushApi::Ingest, None, options)
    }

    /// Starts the push thread for `target`, as application `app`, over
    /// `api`, with `tenant` (when given) in `X-Scope-OrgID`.
    pub fn start_api(
        target: PushTarget,
        app: &str,
        api: PushApi,
        tenant: Option<&str>,
        options: PushOptions,
    ) -> std::io::Result<PushExporter> {
        let ingest = Ingest {
            target: target.clone(),
            app: String::from(app),
            api,
            tenant: tenant.map(String::from),
        };
        let sender = Sender::start("push", "corprof-push", Box::new(ingest), options)?;
        Ok(PushExporter { target, sender })
    }
}

/// The request line and headers of a push, and its body (reached by
/// tests through `corprof::sampling::__test`).
pub fn ingest_request(
    url: &Url,
    app: &str,
    period: &PeriodProfile,
    boundary: &str,
) -> (Vec<u8>, Vec<u8>) {
    let seconds =
        |t: std::time::SystemTime| t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (from, until) = (seconds(period.start), seconds(period.end()));
    // `until` after `from`: a server takes an empty range as no data.
    let until = until.max(from + 1);
    let mut body = Vec::with_capacity(period.pprof_gz.len() + 256);
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pb.gz\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(&period.pprof_gz);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let target = format!(
        "{}/ingest?name={}&from={from}&until={until}&format=pprof&spyName=corprof",
        url.prefix,
        percent_encode(&format!("{app}{{}}")),
    );
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let head = post_head(url, &target, &[("Content-Type", &content_type)], body.len());
    (head, body)
}

/// A multipart boundary that does not occur in `content`.
fn boundary_for(content: &[u8], mut seed: u64) -> String {
    loop {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let boundary = format!("corprof-{seed:016x}");
        if !content
            .windows(boundary.len())
            .any(|w| w == boundary.as_bytes())
        {
            return boundary;
        }
    }
}

impl Exporter for PushExporter {
    fn export(&mut self, period: &PeriodProfile) {
        self.sender.export(period);
    }

    fn finish(&mut self, deadline: Instant) {
        self.sender.finish(deadline);
    }

    fn stats(&self) -> ExporterStats {
        self.sender.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::export::http::{HttpError, Timeouts};
    use crate::sampling::export::sender::testing::{one_period, server as test_server};
    use crate::sampling::export::{lock, FailureCause};
    use alloc::sync::Arc;
    use core::time::Duration;
    use std::sync::Mutex;
    use std::time::SystemTime;

    #[test]
    fn the_request_is_pyroscopes_ingest() {
        let url = Url::parse("http://127.0.0.1:4040/pyro").unwrap();
        let period = PeriodProfile {
            seq: 3,
            start: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            duration: Duration::from_millis(1500),
            pprof_gz: alloc::vec![0x1f, 0x8b, 1, 2, 3],
            samples: 1,
            pprof: Arc::new(crate::profile::Pprof::new(&[])),
        };
        let (head, body) = ingest_request(&url, "shop", &period, "BOUNDARY");
        let head = String::from_utf8(head).unwrap();
        assert!(head.starts_with(
            "POST /pyro/ingest?name=shop%7B%7D&from=1700000000&until=1700000001&format=pprof&spyName=corprof HTTP/1.1\r\n"
        ), "{head}");
        assert!(head.contains("\r\nHost: 127.0.0.1:4040\r\n"));
        assert!(head.contains("\r\nContent-Type: multipart/form-data; boundary=BOUNDARY\r\n"));
        assert!(head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())));
        assert!(head.ends_with("\r\n\r\n"));
        let mut expected = b"--BOUNDARY\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pb.gz\"\r\nContent-Type: application/octet-stream\r\n\r\n".to_vec();
        expected.extend_from_slice(&[0x1f, 0x8b, 1, 2, 3]);
        expected.extend_from_slice(b"\r\n--BOUNDARY--\r\n");
        assert_eq!(body, expected);
        let _ = SystemTime::now();
    }

    /// [`server`]'s, as a push target.
    fn server(answers: &'static [&'static str]) -> (PushTarget, Arc<Mutex<usize>>) {
        let (url, count) = test_server(answers);
        (PushTarget::parse(&url).unwrap(), count)
    }

    fn push_to(target: PushTarget) -> ExporterStats {
        let options = PushOptions {
            backoff: Duration::from_millis(10),
            ..PushOptions::default()
        };
        let mut exporter = PushExporter::start(target, "app", options).unwrap();
        exporter.export(&one_period());
        exporter.finish(Instant::now() + Duration::from_secs(20));
        exporter.stats()
    }

    #[test]
    fn a_5xx_and_garbage_are_retried_until_accepted() {
        let (target, requests) = server(&[
            "HTTP/1.1 503 Busy\r\nContent-Length: 4\r\n\r\nbusy",
            "SSH-2.0-not-http\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let stats = push_to(target);
        assert_eq!(*lock(&requests), 3);
        assert_eq!(
            (stats.exported, stats.dropped, stats.running),
            (1, 0, false)
        );
        assert_eq!(stats.failures_of(FailureCause::Http5xx), 1);
        assert_eq!(stats.failures_of(FailureCause::BadResponse), 1);
    }

    #[test]
    fn a_4xx_is_not_retried() {
        let (target, requests) = server(&[
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 7\r\n\r\nno name",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let stats = push_to(target);
        assert_eq!(*lock(&requests), 1);
        assert_eq!((stats.exported, stats.dropped), (0, 1));
        assert_eq!(stats.failures_of(FailureCause::Http4xx), 1);
        assert_eq!(stats.last_error.as_deref(), Some("HTTP 400: no name"));
    }

    #[test]
    fn a_server_that_is_not_there_is_counted_and_given_up() {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let target = PushTarget::parse(&format!("http://127.0.0.1:{port}")).unwrap();
        let stats = push_to(target);
        assert_eq!((stats.exported, stats.dropped), (0, 1));
        assert_eq!(stats.failures_of(FailureCause::Connect), 3, "{stats:?}");
    }

    /// A server on 127.0.0.1 that accepts one connection and then takes
    /// its request a byte a second; its URL, a flag that stops it, and one
    /// it sets once it got the request's first byte (the client is in the
    /// exchange: its request built).
    #[allow(clippy::type_complexity)]
    fn draining_server() -> (
        PushTarget,
        Arc<core::sync::atomic::AtomicBool>,
        Arc<core::sync::atomic::AtomicBool>,
    ) {
        use core::sync::atomic::{AtomicBool, Ordering};
        use std::io::Read;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicBool::new(false));
        let (stopped, starting) = (Arc::clone(&stop), Arc::clone(&started));
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut byte = [0u8; 1];
            while !stopped.load(Ordering::SeqCst) {
                if stream.read(&mut byte).unwrap_or(0) == 0 {
                    break;
                }
                starting.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        let url = format!("http://127.0.0.1:{port}");
        (PushTarget::parse(&url).unwrap(), stop, started)
    }

    /// A period far larger than the socket buffers (loopback's grow to a
    /// few MB): its request cannot be taken without the peer reading it.
    fn large_period() -> PeriodProfile {
        PeriodProfile {
            pprof_gz: alloc::vec![0x5a; 32 << 20],
            ..one_period()
        }
    }

    /// The timeouts of these tests: a minute for each step to make progress
    /// (a peer draining a byte a second always does, to the kernel), so
    /// that only the exchange's own deadline can end it.
    fn patient() -> Timeouts {
        Timeouts::default()
            .with_write(Duration::from_secs(60))
            .with_exchange(Duration::from_secs(60))
    }

    /// One deadline for the whole exchange: against a peer that drains
    /// the request a byte a second, the exchange ends at its deadline (one
    /// second), not at a per-write timeout (a minute).
    #[test]
    fn an_exchange_with_a_peer_draining_a_byte_a_second_ends_at_its_deadline() {
        use core::sync::atomic::Ordering;
        let (target, stop, _) = draining_server();
        let period = large_period();
        let (head, body) = ingest_request(&target.url, "app", &period, "b");
        let start = Instant::now();
        let timeouts = patient().with_exchange(Duration::from_secs(1));
        let result = crate::sampling::export::http::exchange(&target.url, &head, &body, timeouts);
        let took = start.elapsed();
        stop.store(true, Ordering::SeqCst);
        assert!(matches!(result, Err(HttpError::Timeout)), "{result:?}");
        // It waited (the request did not fit in the buffers), then gave up
        // at the deadline.
        assert!(
            (Duration::from_millis(900)..Duration::from_secs(3)).contains(&took),
            "{took:?}"
        );
    }

    /// The push thread stuck in such an exchange (each step's timeout a
    /// minute): `finish` sets the shutdown's deadline, the exchange keeps
    /// it, and the push thread has ended when `finish` returns (what a
    /// detach waits for: `Sampler::threads_ended`).
    #[test]
    fn a_push_to_a_peer_draining_a_byte_a_second_ends_at_the_finish_deadline() {
        use core::sync::atomic::Ordering;
        let (target, stop, started) = draining_server();
        let options = PushOptions {
            attempts: 1,
            timeouts: patient(),
            ..PushOptions::default()
        };
        let mut exporter = PushExporter::start(target, "app", options).unwrap();
        exporter.export(&large_period());
        // The push thread is in the exchange (its request built, however
        // long that took under load), soon blocked in a write. The bound
        // only stops a hang: under qemu-aarch64 at load 14 (the AArch64
        // leg) building the request took over 60 s.
        let waiting = Instant::now();
        while !started.load(Ordering::SeqCst) {
            assert!(waiting.elapsed() < Duration::from_secs(600), "no request");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(exporter.stats().running);
        let start = Instant::now();
        exporter.finish(Instant::now() + Duration::from_secs(1));
        let took = start.elapsed();
        stop.store(true, Ordering::SeqCst);
        let stats = exporter.stats();
        assert!(took < Duration::from_secs(3), "{took:?}");
        assert_eq!(
            (stats.exported, stats.dropped, stats.running),
            (0, 1, false),
            "{stats:?}"
        );
        assert_eq!(stats.failures_of(FailureCause::Timeout), 1, "{stats:?}");
    }

    #[test]
    fn a_boundary_never_occurs_in_the_content() {
        let seed = 0x1234_5678;
        let first = boundary_for(b"", seed);
        let content = format!("xx{first}yy");
        let second = boundary_for(content.as_bytes(), seed);
        assert_ne!(first, second);
        assert!(!content.contains(&second));
    }
}
