//! What the exporters that send over HTTP share ([`Sender`]): a thread of
//! their own, a bounded queue (the oldest period dropped when full,
//! counted), retries with a back-off that doubles, one deadline per
//! exchange and the shutdown's, and the counting. A [`Protocol`] says what
//! to send for a period and what a response means: Pyroscope's `/ingest`
//! ([`PushExporter`](super::PushExporter)) and OTLP
//! ([`OtlpExporter`](super::OtlpExporter)).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::time::Duration;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Instant;

use super::http::{exchange_until, lookups_running, Response, Timeouts};
use super::queue::{backoff, Queue};
use super::url::Url;
use super::{lock, ExporterStats, FailureCause, PeriodProfile};

/// How an HTTP exporter sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushOptions {
    /// Periods waiting to be sent before the oldest is dropped.
    pub capacity: usize,
    /// Attempts per period (the first and the retries).
    pub attempts: u32,
    /// The wait before the first retry; doubled each retry up to
    /// `max_backoff`.
    pub backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
    /// Connect, write, read and whole-exchange timeouts (each attempt is
    /// one exchange; at shutdown, the finish's deadline ends it too).
    pub timeouts: Timeouts,
}

impl Default for PushOptions {
    fn default() -> PushOptions {
        PushOptions {
            capacity: 8,
            attempts: 3,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            timeouts: Timeouts::default(),
        }
    }
}

/// The longest wait a server's `Retry-After` gets before the next attempt.
pub(crate) const RETRY_AFTER_MAX: Duration = Duration::from_secs(60);

/// The failure causes the HTTP exporters count.
pub const PUSH_FAILURES: [FailureCause; 6] = [
    FailureCause::Connect,
    FailureCause::Timeout,
    FailureCause::Io,
    FailureCause::BadResponse,
    FailureCause::Http4xx,
    FailureCause::Http5xx,
];

/// What one attempt gave.
pub(crate) enum Outcome {
    /// Delivered; with a cause and a message when the server took only
    /// part of it, or warned (counted as a failure of that cause).
    Accepted(Option<(FailureCause, String)>),
    /// Failed; worth another attempt.
    Retry(FailureCause, String),
    /// Refused: not retried.
    Refused(FailureCause, String),
}

/// What an HTTP exporter sends and how it reads the answer.
pub(crate) trait Protocol: Send + Sync + 'static {
    /// The server.
    fn url(&self) -> &Url;
    /// The request for `period`: its head (ending in the blank line) and
    /// its body.
    fn request(&self, period: &PeriodProfile) -> (Vec<u8>, Vec<u8>);
    /// What `response` means.
    fn judge(&self, response: &Response) -> Outcome;
}

/// The thread and queue of an HTTP exporter.
pub(crate) struct Sender {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    protocol: Box<dyn Protocol>,
    options: PushOptions,
    queue: Queue<PeriodProfile>,
    stats: Mutex<ExporterStats>,
    /// Set by `finish`: give up a period at this instant.
    deadline: Mutex<Option<Instant>>,
}

impl Sender {
    /// Starts the thread `thread` of exporter `name`.
    pub(crate) fn start(
        name: &'static str,
        thread: &str,
        protocol: Box<dyn Protocol>,
        options: PushOptions,
    ) -> std::io::Result<Sender> {
        let shared = Arc::new(Shared {
            protocol,
            options,
            queue: Queue::new(options.capacity),
            stats: Mutex::new(ExporterStats {
                running: true,
                ..ExporterStats::new(name, &PUSH_FAILURES)
            }),
            deadline: Mutex::new(None),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(String::from(thread))
            .spawn(move || worker.run())?;
        Ok(Sender {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues a period (never waits).
    pub(crate) fn export(&self, period: &PeriodProfile) {
        let dropped = self.shared.queue.push(period.clone());
        lock(&self.shared.stats).dropped += dropped as u64;
    }

    /// Closes the queue and waits for the thread until `deadline` (and
    /// a little after, for a name lookup to end); what is left is dropped.
    pub(crate) fn finish(&mut self, deadline: Instant) {
        *lock(&self.shared.deadline) = Some(deadline);
        self.shared.queue.close();
        // The thread gives up at the deadline; wait that long at most.
        if let Some(thread) = self.thread.take() {
            while !thread.is_finished() && Instant::now() < deadline + Duration::from_millis(200) {
                std::thread::sleep(Duration::from_millis(5));
            }
            // A name lookup given up at its deadline runs on until
            // `getaddrinfo` returns: still code of this library running.
            let lookups = || lookups_running() > 0;
            while lookups() && Instant::now() < deadline + Duration::from_millis(200) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if thread.is_finished() {
                let _ = thread.join();
                lock(&self.shared.stats).running = lookups();
            } else {
                lock(&self.shared.stats).running = true;
            }
        }
        // What is still queued was not sent.
        let mut left = 0;
        while self.shared.queue.try_pop().is_some() {
            left += 1;
        }
        lock(&self.shared.stats).dropped += left;
    }

    pub(crate) fn stats(&self) -> ExporterStats {
        lock(&self.shared.stats).clone()
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.shared.queue.close();
    }
}

impl Shared {
    fn run(&self) {
        while let Some(period) = self.queue.pop() {
            self.send(&period);
        }
    }

    /// Sends one period, retrying; counts the outcome.
    fn send(&self, period: &PeriodProfile) {
        let (head, body) = self.protocol.request(period);
        let mut wait = self.options.backoff;
        for attempt in 1..=self.options.attempts.max(1) {
            let deadline = *lock(&self.deadline);
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            // One deadline for the whole exchange, and the shutdown's as
            // soon as `finish` sets one (asked again while it runs).
            let shutdown = || {
                lock(&self.deadline)
                    .unwrap_or_else(|| Instant::now() + self.options.timeouts.exchange)
            };
            let exchanged = exchange_until(
                self.protocol.url(),
                &head,
                &body,
                self.options.timeouts,
                &shutdown,
            );
            let mut asked = None;
            let outcome = match exchanged {
                Ok(response) => {
                    asked = response.retry_after;
                    self.protocol.judge(&response)
                }
                Err(e) => Outcome::Retry(e.cause(), alloc::format!("{e}")),
            };
            let mut stats = lock(&self.stats);
            match outcome {
                Outcome::Accepted(warning) => {
                    stats.exported += 1;
                    if let Some((cause, error)) = warning {
                        stats.fail(cause, error);
                    }
                    return;
                }
                Outcome::Refused(cause, error) => {
                    stats.fail(cause, error);
                    break;
                }
                Outcome::Retry(cause, error) => stats.fail(cause, error),
            }
            drop(stats);
            if attempt < self.options.attempts {
                let closed = self.queue.is_closed();
                // At shutdown, retry at once (until the deadline); before, back off,
                // at least as long as the server's Retry-After asks (up to
                // RETRY_AFTER_MAX; periods arriving meanwhile queue, the
                // oldest dropped and counted, as with any slow server).
                let this_wait = asked.map_or(wait, |a| wait.max(a.min(RETRY_AFTER_MAX)));
                if !closed && backoff(&self.queue, this_wait) {
                    continue;
                }
                wait = (wait * 2).min(self.options.max_backoff);
            }
        }
        lock(&self.stats).dropped += 1;
    }
}

/// Pyroscope's reading of a response: 2xx delivered, 4xx refused, 5xx
/// and anything else retried.
pub(crate) fn judge_by_status(response: &Response) -> Outcome {
    let r = response;
    match r.status {
        200..=299 => Outcome::Accepted(None),
        400..=499 => Outcome::Refused(
            FailureCause::Http4xx,
            alloc::format!("HTTP {}: {}", r.status, r.body.trim()),
        ),
        500.. => Outcome::Retry(
            FailureCause::Http5xx,
            alloc::format!("HTTP {}: {}", r.status, r.body.trim()),
        ),
        _ => Outcome::Retry(
            FailureCause::BadResponse,
            alloc::format!("unexpected HTTP {}", r.status),
        ),
    }
}

/// What the HTTP exporters' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use std::time::UNIX_EPOCH;

    /// A server on 127.0.0.1 answering each connection with the next of
    /// `answers` (after reading the request whole); returns its URL and
    /// the number of requests it got.
    pub(crate) fn server(answers: &'static [&'static str]) -> (String, Arc<Mutex<usize>>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(Mutex::new(0));
        let seen = Arc::clone(&count);
        std::thread::spawn(move || {
            for (stream, answer) in listener.incoming().zip(answers) {
                let mut stream = stream.unwrap();
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                // Head, then Content-Length bytes of body.
                let body_end = loop {
                    let n = stream.read(&mut buffer).unwrap();
                    request.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length: usize = text
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .unwrap()
                            .trim()
                            .parse()
                            .unwrap();
                        break end + 4 + length;
                    }
                };
                while request.len() < body_end {
                    let n = stream.read(&mut buffer).unwrap();
                    request.extend_from_slice(&buffer[..n]);
                }
                *lock(&seen) += 1;
                stream.write_all(answer.as_bytes()).unwrap();
            }
        });
        (alloc::format!("http://127.0.0.1:{port}"), count)
    }

    pub(crate) fn one_period() -> PeriodProfile {
        PeriodProfile {
            seq: 0,
            start: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            duration: Duration::from_secs(1),
            pprof_gz: alloc::vec![0x1f, 0x8b, 0, 0],
            samples: 1,
            pprof: alloc::sync::Arc::new(crate::profile::Pprof::new(&[])),
        }
    }
}
