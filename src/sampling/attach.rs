//! Sampling a running process on demand: the settings an attach carries in
//! its client data (`InitializeForAttach`), for
//! [`SamplingProfiler`](super::SamplingProfiler)'s attach path.

use alloc::format;
use alloc::string::String;
use core::time::Duration;

use super::export::{ExportOptions, PushTarget};
use super::sampler::SamplerOptions;
use super::signal::SamplingMode;
use crate::{Error, E_INVALIDARG};

/// The keys the client data may hold.
const KEYS: &str = "seconds=N, dir=PATH, push=URL, app=NAME, hz=N, mode=NAME or heap=N";

/// What an attach asks for: sample for `seconds`, then write or push the
/// profile and detach.
///
/// The client data is `key=value` items separated by `;`:
///
/// | key | meaning | default |
/// |---|---|---|
/// | `seconds` | how long to sample, 1 to 3600 | 10 |
/// | `dir` | the directory of the profile (`profile-<start>-<seq>.pb.gz`) | none |
/// | `push` | a Pyroscope-compatible server, `http://host:port` | none |
/// | `app` | the application's name on that server | `dotnet-app` |
/// | `hz` | samples per second, 1 to 10000 | 99 |
/// | `mode` | [`SamplingMode`] by name (`signal`, `thread-suspend`, `suspend-runtime`) | `suspend-runtime` |
/// | `heap` | seconds between heap snapshots into `dir` (.NET 9 and later; [`SamplerOptions::heap_snapshot_every`]), 1 to 3600 | none |
///
/// `dir` or `push` (or both) must be given. The sampler runs in
/// [`SamplingMode::SuspendRuntime`] unless `mode` says otherwise: signal
/// mode arms each thread's timer when the runtime reports the thread
/// created, and an attached profiler is told of no thread that ran before
/// it, so that it samples only the threads started after the attach. Its
/// stop puts the `SIGPROF` disposition back before the detach.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AttachRequest {
    /// How long to sample.
    pub seconds: u64,
    /// The sampler's options: one period as long as the whole run.
    pub options: SamplerOptions,
    /// Where the profile goes (1,000 period files kept at the most).
    pub export: ExportOptions,
}

impl AttachRequest {
    /// Reads the client data; an error says which item is wrong
    /// (`E_INVALIDARG`).
    pub fn parse(client_data: &[u8]) -> Result<AttachRequest, Error> {
        let bad = |message: String| Error::new(E_INVALIDARG, message);
        let text = core::str::from_utf8(client_data)
            .map_err(|_| bad(String::from("client data is not UTF-8")))?;
        let (mut seconds, mut options, mut export) =
            (10, SamplerOptions::default(), ExportOptions::default());
        let mut mode = SamplingMode::SuspendRuntime;
        export.app = String::from("dotnet-app");
        export.keep = 1000;
        let number = |v: &str, max: u64| v.parse::<u64>().ok().filter(|n| (1..=max).contains(n));
        for item in text.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            match item.split_once('=') {
                Some(("seconds", v)) => {
                    seconds = number(v, 3600).ok_or_else(|| bad("seconds: 1 to 3600".into()))?
                }
                Some(("hz", v)) => {
                    options.hz =
                        number(v, 10_000).ok_or_else(|| bad("hz: 1 to 10000".into()))? as u32
                }
                Some(("heap", v)) => {
                    let every = number(v, 3600).ok_or_else(|| bad("heap: 1 to 3600".into()))?;
                    options.heap_snapshot_every = Some(Duration::from_secs(every));
                }
                Some(("dir", v)) if !v.is_empty() => export.dir = Some(v.into()),
                Some(("push", v)) => {
                    export.push = Some(PushTarget::parse(v).map_err(|e| bad(format!("push: {e}")))?)
                }
                Some(("app", v)) if !v.is_empty() => export.app = String::from(v),
                Some(("mode", v)) => {
                    mode = SamplingMode::from_name(v).ok_or_else(|| {
                        bad(format!(
                            "mode: {v:?} is not signal, thread-suspend or suspend-runtime"
                        ))
                    })?
                }
                _ => return Err(bad(format!("{item:?} is not {KEYS}"))),
            }
        }
        if options.heap_snapshot_every.is_some() && export.dir.is_none() {
            return Err(bad(String::from(
                "heap snapshots are written into dir=PATH",
            )));
        }
        if export.dir.is_none() && export.push.is_none() {
            return Err(bad(String::from(
                "say where the profile goes: dir=PATH or push=URL",
            )));
        }
        // One period: the whole run, cut when the sampler stops.
        options.period = Duration::from_secs(seconds + 3600);
        options.mode = mode;
        Ok(AttachRequest {
            seconds,
            options,
            export,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(data: &str) -> String {
        String::from(AttachRequest::parse(data.as_bytes()).unwrap_err().message())
    }

    #[test]
    fn the_documented_keys_and_defaults() {
        let request = AttachRequest::parse(b"dir=/tmp/p").unwrap();
        assert_eq!(request.seconds, 10);
        assert_eq!(request.options.hz, SamplerOptions::default().hz);
        assert_eq!(request.options.mode, SamplingMode::SuspendRuntime);
        assert_eq!(request.export.dir.as_deref(), Some("/tmp/p".as_ref()));
        assert_eq!(request.export.app, "dotnet-app");
        assert_eq!(request.export.keep, 1000);
        let request =
            AttachRequest::parse(b" seconds=3; hz=250 ;push=http://127.0.0.1:4040;app=shop;")
                .unwrap();
        assert_eq!((request.seconds, request.options.hz), (3, 250));
        assert!(request.export.push.is_some() && request.export.dir.is_none());
        assert_eq!(request.export.app, "shop");
        assert_eq!(request.options.period, Duration::from_secs(3603));
        let request = AttachRequest::parse(b"dir=/tmp/p;mode=signal").unwrap();
        assert_eq!(request.options.mode, SamplingMode::Signal);
        let request = AttachRequest::parse(b"dir=/tmp/p;mode=thread-suspend").unwrap();
        assert_eq!(request.options.mode, SamplingMode::ThreadSuspend);
        let request = AttachRequest::parse(b"dir=/tmp/p;heap=30").unwrap();
        assert_eq!(
            request.options.heap_snapshot_every,
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            AttachRequest::parse(b"dir=/tmp/p")
                .unwrap()
                .options
                .heap_snapshot_every,
            None
        );
    }

    #[test]
    fn bad_client_data_says_which_item() {
        assert_eq!(message("seconds=0;dir=x"), "seconds: 1 to 3600");
        assert_eq!(message("seconds=3601;dir=x"), "seconds: 1 to 3600");
        assert_eq!(message("hz=abc;dir=x"), "hz: 1 to 10000");
        assert_eq!(message("heap=0;dir=x"), "heap: 1 to 3600");
        assert_eq!(
            message("heap=5;push=http://127.0.0.1:1"),
            "heap snapshots are written into dir=PATH"
        );
        assert_eq!(
            message("dir=x;colour=blue"),
            "\"colour=blue\" is not seconds=N, dir=PATH, push=URL, app=NAME, hz=N, mode=NAME or heap=N"
        );
        assert_eq!(
            message("dir="),
            "\"dir=\" is not seconds=N, dir=PATH, push=URL, app=NAME, hz=N, mode=NAME or heap=N"
        );
        assert_eq!(
            message("seconds=5"),
            "say where the profile goes: dir=PATH or push=URL"
        );
        assert_eq!(
            message(""),
            "say where the profile goes: dir=PATH or push=URL"
        );
        assert!(message("push=https://x:1").starts_with("push: "));
        assert_eq!(
            message("dir=x;mode=signals"),
            "mode: \"signals\" is not signal, thread-suspend or suspend-runtime"
        );
        assert_eq!(
            AttachRequest::parse(&[0xFF, 0xFE]).unwrap_err().message(),
            "client data is not UTF-8"
        );
        assert_eq!(AttachRequest::parse(b"x").unwrap_err().code(), E_INVALIDARG);
    }
}
