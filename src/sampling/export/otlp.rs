//! The OTLP exporter: each period as an OpenTelemetry profiles request
//! (`ExportProfilesServiceRequest`, [`Pprof::to_otlp`]) over OTLP/HTTP
//! with binary protobuf, to a Collector or any OTLP receiver.
//!
//! The transport, from open-telemetry/opentelemetry-proto tag v1.11.0,
//! `docs/specification.md` ("OTLP/HTTP"): `POST` to the path
//! `/v1development/profiles` by default, `Content-Type:
//! application/x-protobuf`, optionally `Content-Encoding: gzip`; `200`
//! answers an `ExportProfilesServiceResponse` (`partial_success` = 1:
//! `ExportProfilesPartialSuccess`, `rejected_profiles` = 1 int64,
//! `error_message` = 2), a partial success is not retried; 429, 502, 503
//! and 504 are retried with a back-off, every other 4xx and 5xx is not; a
//! failure's body is a `google.rpc.Status` (`message` = 2).
//!
//! The configuration is the OpenTelemetry exporters' ([`OtlpTarget::from_env`]).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;
use std::time::Instant;

use super::http::{post_head, Response};
use super::sender::{Outcome, Protocol, Sender};
use super::url::Url;
use super::{Exporter, ExporterStats, FailureCause, PeriodProfile, PushOptions};
use crate::profile::{gzip, AttributeValue};
use crate::sampling::env::var;
use crate::sampling::options::{CPU, SAMPLE_TYPES, WALL};
use crate::{Error, E_INVALIDARG};

/// The full URL of the profiles endpoint.
pub(crate) const PROFILES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT";
/// The base URL of every signal (`/v1development/profiles` appended).
pub(crate) const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// Headers of the profiles requests (instead of [`HEADERS`]).
pub(crate) const PROFILES_HEADERS: &str = "OTEL_EXPORTER_OTLP_PROFILES_HEADERS";
/// Headers of every signal's requests.
pub(crate) const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
/// `gzip` or `none`, for profiles (instead of [`COMPRESSION`]).
pub(crate) const PROFILES_COMPRESSION: &str = "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION";
/// `gzip` or `none`.
pub(crate) const COMPRESSION: &str = "OTEL_EXPORTER_OTLP_COMPRESSION";
/// Milliseconds an export may take, for profiles (instead of [`TIMEOUT`]).
pub(crate) const PROFILES_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT";
/// Milliseconds an export may take.
pub(crate) const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
/// The transport, for profiles (instead of [`PROTOCOL`]).
pub(crate) const PROFILES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL";
/// The transport: only `http/protobuf` here.
pub(crate) const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// The service's name (before `service.name` of [`RESOURCE_ATTRIBUTES`]).
pub(crate) const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
/// The resource's attributes, `key=value,...`.
pub(crate) const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";

/// The path a base URL gets for profiles.
pub(crate) const PROFILES_PATH: &str = "/v1development/profiles";

/// Where and how to send OTLP profiles.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtlpTarget {
    /// The endpoint: its host, port and whole path.
    pub url: Url,
    /// Headers sent with each request (an API key, a tenant).
    pub headers: Vec<(String, String)>,
    /// The resource's attributes, `service.name` first; the exporter adds
    /// `process.pid`, `host.name` and `process.runtime.name` when absent,
    /// and `process.runtime.version` when [`runtime_version`](Self::runtime_version) is set.
    pub resource: Vec<(String, AttributeValue)>,
    /// The runtime's version (`process.runtime.version`), filled in by the
    /// profiler from `GetRuntimeInformation`.
    pub runtime_version: Option<String>,
    /// Whether bodies are gzipped (`Content-Encoding: gzip`).
    pub gzip: bool,
    /// How long one export may take (the whole exchange).
    pub timeout: Duration,
}

impl OtlpTarget {
    /// A target whose endpoint is the full URL `url` (as
    /// `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT`: its path used as is), with
    /// `service.name` `unknown_service:<process name>`, no header, no
    /// compression, 10 seconds.
    pub fn endpoint(url: &str) -> Result<OtlpTarget, String> {
        let mut url = Url::parse(url)?;
        if url.prefix.is_empty() {
            url.prefix = String::from("/");
        }
        Ok(OtlpTarget {
            url,
            headers: Vec::new(),
            resource: alloc::vec![(
                String::from("service.name"),
                AttributeValue::Str(format!("unknown_service:{}", super::process_name())),
            )],
            runtime_version: None,
            gzip: false,
            timeout: Duration::from_secs(10),
        })
    }

    /// A target whose endpoint is the base URL `url` with
    /// `/v1development/profiles` appended (as `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn base(url: &str) -> Result<OtlpTarget, String> {
        let mut target = OtlpTarget::endpoint(url)?;
        target.url.prefix = format!("{}{PROFILES_PATH}", target.url.prefix.trim_end_matches('/'));
        Ok(target)
    }

    /// With `service.name` set to `name`.
    #[must_use]
    pub fn with_service_name(self, name: &str) -> OtlpTarget {
        self.with_attribute("service.name", AttributeValue::Str(String::from(name)))
    }

    /// With the resource attribute `key` set to `value` (replaced when
    /// present).
    #[must_use]
    pub fn with_attribute(mut self, key: &str, value: AttributeValue) -> OtlpTarget {
        match self.resource.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.resource.push((String::from(key), value)),
        }
        self
    }

    /// With header `name: value` sent; `Err` when the name is not an HTTP
    /// token or one the client sets itself, or the value has a control
    /// character.
    pub fn with_header(mut self, name: &str, value: &str) -> Result<OtlpTarget, String> {
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return Err(format!("{name:?} is not a header name"));
        }
        const OWN: [&str; 6] = [
            "host",
            "content-length",
            "content-type",
            "content-encoding",
            "connection",
            "transfer-encoding",
        ];
        if OWN.iter().any(|own| own.eq_ignore_ascii_case(name)) {
            return Err(format!("the header {name} is the client's own"));
        }
        if value.chars().any(|c| c.is_control()) {
            return Err(format!(
                "the value of header {name} has a control character"
            ));
        }
        self.headers.push((String::from(name), String::from(value)));
        Ok(self)
    }

    /// With bodies gzipped or not.
    #[must_use]
    pub fn with_gzip(mut self, gzip: bool) -> OtlpTarget {
        self.gzip = gzip;
        self
    }

    /// With `timeout` for each export.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> OtlpTarget {
        self.timeout = timeout;
        self
    }

    /// The target the environment asks for, as the OpenTelemetry SDKs read
    /// it: `None` unless `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT` (the full
    /// URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (the base) is set; headers
    /// from `OTEL_EXPORTER_OTLP_PROFILES_HEADERS`, else
    /// `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,...`, values
    /// percent-decoded); `..._COMPRESSION` (`gzip`, `none`), `..._TIMEOUT`
    /// (milliseconds, default 10000) and `..._PROTOCOL` (only
    /// `http/protobuf`) likewise, the profiles' before the general;
    /// `service.name` from `OTEL_SERVICE_NAME`, else from
    /// `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, percent-decoded), else
    /// `unknown_service:<process name>`. A malformed value is an `Err`
    /// naming the variable.
    pub fn from_env() -> Result<Option<OtlpTarget>, Error> {
        let bad = |name: &str, value: &str, why: String| {
            Error::new(E_INVALIDARG, format!("{name}={value:?}: {why}"))
        };
        let mut target = match (var(PROFILES_ENDPOINT)?, var(ENDPOINT)?) {
            (Some(url), _) => OtlpTarget::endpoint(url.trim())
                .map_err(|e| bad(PROFILES_ENDPOINT, &url, otlp_hint(e)))?,
            (None, Some(url)) => {
                OtlpTarget::base(url.trim()).map_err(|e| bad(ENDPOINT, &url, otlp_hint(e)))?
            }
            (None, None) => return Ok(None),
        };
        if let Some((name, value)) = first_set(PROFILES_PROTOCOL, PROTOCOL)? {
            if value.trim() != "http/protobuf" {
                return Err(bad(
                    name,
                    &value,
                    String::from("corprof sends OTLP over http/protobuf only"),
                ));
            }
        }
        if let Some((name, value)) = first_set(PROFILES_HEADERS, HEADERS)? {
            for (key, text) in pairs(&value).map_err(|e| bad(name, &value, e))? {
                target = target
                    .with_header(&key, &text)
                    .map_err(|e| bad(name, &value, e))?;
            }
        }
        if let Some((name, value)) = first_set(PROFILES_COMPRESSION, COMPRESSION)? {
            target.gzip = match value.trim() {
                "gzip" => true,
                "none" => false,
                _ => return Err(bad(name, &value, String::from("not gzip or none"))),
            };
        }
        if let Some((name, value)) = first_set(PROFILES_TIMEOUT, TIMEOUT)? {
            let ms = value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| (1..=3_600_000).contains(ms))
                .ok_or_else(|| {
                    bad(
                        name,
                        &value,
                        String::from("not milliseconds from 1 to 3600000"),
                    )
                })?;
            target.timeout = Duration::from_millis(ms);
        }
        if let Some(value) = var(RESOURCE_ATTRIBUTES)? {
            for (key, text) in pairs(&value).map_err(|e| bad(RESOURCE_ATTRIBUTES, &value, e))? {
                target = target.with_attribute(&key, AttributeValue::Str(text));
            }
        }
        if let Some(name) = var(SERVICE_NAME)? {
            let name = name.trim();
            if !name.is_empty() {
                target = target.with_service_name(name);
            }
        }
        Ok(Some(target))
    }

    /// The resource as sent: these attributes, then `process.pid`,
    /// `host.name`, `process.runtime.name` and `process.runtime.version`
    /// unless given.
    fn full_resource(&self) -> Vec<(String, AttributeValue)> {
        let mut resource = self.resource.clone();
        let mut add = |key: &str, value: AttributeValue| {
            if !resource.iter().any(|(k, _)| k == key) {
                resource.push((String::from(key), value));
            }
        };
        add(
            "process.pid",
            AttributeValue::Int(i64::from(std::process::id())),
        );
        if let Some(host) = host_name() {
            add("host.name", AttributeValue::Str(host));
        }
        add(
            "process.runtime.name",
            AttributeValue::Str(String::from(".NET")),
        );
        if let Some(version) = &self.runtime_version {
            add(
                "process.runtime.version",
                AttributeValue::Str(version.clone()),
            );
        }
        resource
    }
}

/// The URL error, with the OTLP way round a missing TLS.
fn otlp_hint(error: String) -> String {
    if error.starts_with("https") {
        String::from(
            "https is not supported (corprof speaks plain HTTP, with no TLS library): \
             run an OpenTelemetry Collector (or Grafana Alloy) beside the service, send to \
             it over http://127.0.0.1:4318, and let it forward over https",
        )
    } else {
        error
    }
}

/// The first of `profiles` and `general` that is set, with its name.
fn first_set(
    profiles: &'static str,
    general: &'static str,
) -> Result<Option<(&'static str, String)>, Error> {
    if let Some(value) = var(profiles)? {
        return Ok(Some((profiles, value)));
    }
    Ok(var(general)?.map(|value| (general, value)))
}

/// `key=value` pairs separated by commas, keys and values trimmed, values
/// percent-decoded (the W3C Baggage format the SDKs read these variables
/// in; empty members are skipped).
pub(crate) fn pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for member in text.split(',') {
        let member = member.trim();
        if member.is_empty() {
            continue;
        }
        let Some((key, value)) = member.split_once('=') else {
            return Err(format!("{member:?} is not key=value"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("{member:?} has no key"));
        }
        out.push((String::from(key), percent_decode(value.trim())?));
    }
    Ok(out)
}

/// `%XX` decoded; `Err` for a `%` without two hex digits, or bytes that
/// are not UTF-8.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| core::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{text:?} has a % without two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{text:?} decodes to bytes that are not UTF-8"))
}

/// The machine's name (Linux: the kernel's; Windows: `COMPUTERNAME`).
fn host_name() -> Option<String> {
    let name = if cfg!(windows) {
        std::env::var("COMPUTERNAME").ok()?
    } else {
        std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?
    };
    let name = name.trim();
    (!name.is_empty()).then(|| String::from(name))
}

/// OTLP/HTTP, for the sender.
struct Otlp {
    target: OtlpTarget,
    resource: Vec<(String, AttributeValue)>,
}

/// The sample types the pprof's period applies to: those the clock samples.
fn periodic(kind: &str) -> bool {
    kind == SAMPLE_TYPES[CPU].0 || kind == SAMPLE_TYPES[WALL].0
}

/// The request for `period` to `target` with `resource`: head and body.
pub(crate) fn otlp_request(
    target: &OtlpTarget,
    resource: &[(String, AttributeValue)],
    period: &PeriodProfile,
) -> (Vec<u8>, Vec<u8>) {
    let mut body = period
        .pprof
        .to_otlp(resource, "corprof", env!("CARGO_PKG_VERSION"), &periodic);
    let mut headers: Vec<(&str, &str)> = alloc::vec![("Content-Type", "application/x-protobuf")];
    if target.gzip {
        body = gzip(&body);
        headers.push(("Content-Encoding", "gzip"));
    }
    headers.extend(target.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let head = post_head(&target.url, &target.url.prefix, &headers, body.len());
    (head, body)
}

impl Protocol for Otlp {
    fn url(&self) -> &Url {
        &self.target.url
    }

    fn request(&self, period: &PeriodProfile) -> (Vec<u8>, Vec<u8>) {
        otlp_request(&self.target, &self.resource, period)
    }

    fn judge(&self, response: &Response) -> Outcome {
        judge(response)
    }
}

/// What an OTLP/HTTP response means.
fn judge(response: &Response) -> Outcome {
    let status = response.status;
    let said = || {
        let message =
            status_message(&response.raw).unwrap_or_else(|| String::from(response.body.trim()));
        format!("HTTP {status}: {message}")
    };
    match status {
        200..=299 => match partial_success(&response.raw) {
            Some((rejected, message)) if rejected > 0 => Outcome::Accepted(Some((
                FailureCause::Other("rejected"),
                format!("{rejected} profiles rejected: {message}"),
            ))),
            _ => Outcome::Accepted(None),
        },
        429 => Outcome::Retry(FailureCause::Http4xx, said()),
        502..=504 => Outcome::Retry(FailureCause::Http5xx, said()),
        400..=499 => Outcome::Refused(FailureCause::Http4xx, said()),
        500..=599 => Outcome::Refused(FailureCause::Http5xx, said()),
        _ => Outcome::Retry(
            FailureCause::BadResponse,
            format!("unexpected HTTP {status}"),
        ),
    }
}

/// A varint or length-delimited field of `bytes`; fixed-width ones
/// skipped. `None` at the end or when malformed.
fn next_field<'a>(bytes: &mut &'a [u8]) -> Option<(u64, Result<u64, &'a [u8]>)> {
    fn varint(bytes: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = bytes.split_first()?;
            *bytes = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(value);
            }
        }
        None
    }
    loop {
        let key = varint(bytes)?;
        let skip = |bytes: &mut &'a [u8], n: usize| -> Option<()> {
            *bytes = bytes.get(n..)?;
            Some(())
        };
        match key & 7 {
            0 => return Some((key >> 3, Ok(varint(bytes)?))),
            1 => skip(bytes, 8)?,
            2 => {
                let len = usize::try_from(varint(bytes)?).ok()?;
                let field = bytes.get(..len)?;
                *bytes = &bytes[len..];
                return Some((key >> 3, Err(field)));
            }
            5 => skip(bytes, 4)?,
            _ => return None,
        }
    }
}

/// `ExportProfilesServiceResponse.partial_success`: (`rejected_profiles`,
/// `error_message`), when present.
fn partial_success(body: &[u8]) -> Option<(i64, String)> {
    let mut top = body;
    while let Some((field, value)) = next_field(&mut top) {
        if let (1, Err(mut partial)) = (field, value) {
            let (mut rejected, mut message) = (0i64, String::new());
            while let Some((n, v)) = next_field(&mut partial) {
                match (n, v) {
                    (1, Ok(count)) => rejected = count as i64,
                    (2, Err(text)) => message = String::from_utf8_lossy(text).into_owned(),
                    _ => {}
                }
            }
            return Some((rejected, message));
        }
    }
    None
}

/// `google.rpc.Status.message` of a failure's body, when it is one.
fn status_message(body: &[u8]) -> Option<String> {
    let mut rest = body;
    while let Some((field, value)) = next_field(&mut rest) {
        if let (2, Err(text)) = (field, value) {
            return core::str::from_utf8(text).ok().map(String::from);
        }
    }
    None
}

/// Sends each period to an OTLP receiver from a thread of its own
/// (`corprof-otlp`) and a bounded queue: the rules of the
/// [`PushExporter`](super::PushExporter) (the oldest period dropped when
/// full, counted; a back-off between attempts; one deadline per exchange
/// and the shutdown's), with OTLP's reading of answers: 429, 502, 503, 504
/// and no answer retried, other 4xx and 5xx not; a partial success
/// delivered, its rejections counted (`export_otlp_failed_rejected`).
pub struct OtlpExporter {
    sender: Sender,
}

impl core::fmt::Debug for OtlpExporter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("OtlpExporter").finish_non_exhaustive()
    }
}

impl OtlpExporter {
    /// Starts the thread for `target` (its timeout the exchange's).
    pub fn start(target: OtlpTarget, options: PushOptions) -> std::io::Result<OtlpExporter> {
        let mut options = options;
        options.timeouts = options.timeouts.with_exchange(target.timeout);
        let resource = target.full_resource();
        let protocol = Otlp { target, resource };
        let sender = Sender::start("otlp", "corprof-otlp", Box::new(protocol), options)?;
        Ok(OtlpExporter { sender })
    }
}

impl Exporter for OtlpExporter {
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
    use crate::sampling::export::lock;
    use crate::sampling::export::sender::testing::{one_period, server};

    #[test]
    fn variables_read_as_the_sdks_read_them() {
        assert_eq!(
            pairs(" a=1 , b = x%20y%2C ,,c=").unwrap(),
            [
                (String::from("a"), String::from("1")),
                (String::from("b"), String::from("x y,")),
                (String::from("c"), String::new()),
            ]
        );
        for bad in ["novalue", "=v", "k=%2", "k=%zz", "k=%ff"] {
            assert!(pairs(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn endpoints_full_and_base() {
        let full = OtlpTarget::endpoint("http://collector:4318/custom/path").unwrap();
        assert_eq!(full.url.prefix, "/custom/path");
        assert_eq!(
            OtlpTarget::endpoint("http://c:4318").unwrap().url.prefix,
            "/"
        );
        let base = OtlpTarget::base("http://c:4318/otlp/").unwrap();
        assert_eq!(
            (base.url.port, base.url.prefix.as_str()),
            (4318, "/otlp/v1development/profiles")
        );
        assert_eq!(
            OtlpTarget::base("http://c:4318").unwrap().url.prefix,
            "/v1development/profiles"
        );
        let https = otlp_hint(Url::parse("https://x").unwrap_err());
        assert!(https.contains("Collector"), "{https}");
        let target = full.with_service_name("shop");
        assert_eq!(
            target.resource[0],
            (
                String::from("service.name"),
                AttributeValue::Str(String::from("shop"))
            )
        );
        assert!(target.clone().with_header("X-Key", "a b").is_ok());
        for (name, value) in [
            ("Host", "x"),
            ("content-length", "1"),
            ("A B", "x"),
            ("K", "a\r\nB: c"),
        ] {
            assert!(target.clone().with_header(name, value).is_err(), "{name}");
        }
    }

    fn response(status: u16, raw: &[u8]) -> Response {
        Response {
            status,
            body: String::from_utf8_lossy(raw).into_owned(),
            raw: raw.to_vec(),
            truncated: false,
            retry_after: None,
        }
    }

    #[test]
    fn answers_are_read_as_otlp_says() {
        // partial_success { rejected_profiles: 2, error_message: "no" }
        let partial = b"\x0a\x06\x08\x02\x12\x02no";
        match judge(&response(200, partial)) {
            Outcome::Accepted(Some((FailureCause::Other("rejected"), m))) => {
                assert_eq!(m, "2 profiles rejected: no")
            }
            _ => panic!("a partial success"),
        }
        // A warning alone (0 rejected) and an empty body: full successes.
        assert!(matches!(
            judge(&response(200, b"\x0a\x04\x12\x02ok")),
            Outcome::Accepted(None)
        ));
        assert!(matches!(
            judge(&response(200, b"")),
            Outcome::Accepted(None)
        ));
        for status in [429, 502, 503, 504] {
            assert!(
                matches!(judge(&response(status, b"")), Outcome::Retry(..)),
                "{status}"
            );
        }
        // Status { code: 3, message: "bad" }
        match judge(&response(400, b"\x08\x03\x12\x03bad")) {
            Outcome::Refused(FailureCause::Http4xx, m) => assert_eq!(m, "HTTP 400: bad"),
            _ => panic!("400 refused"),
        }
        assert!(matches!(
            judge(&response(500, b"")),
            Outcome::Refused(FailureCause::Http5xx, _)
        ));
    }

    fn send(url: &str) -> ExporterStats {
        let options = PushOptions {
            backoff: Duration::from_millis(10),
            ..PushOptions::default()
        };
        let mut exporter =
            OtlpExporter::start(OtlpTarget::endpoint(url).unwrap(), options).unwrap();
        exporter.export(&one_period());
        exporter.finish(Instant::now() + Duration::from_secs(20));
        exporter.stats()
    }

    #[test]
    fn a_503_is_retried_and_a_partial_success_counted() {
        let (url, requests) = server(&[
            "HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 8\r\n\r\n\x0a\x06\x08\x02\x12\x02no",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let stats = send(&url);
        assert_eq!(*lock(&requests), 2);
        assert_eq!(
            (stats.name, stats.exported, stats.dropped, stats.running),
            ("otlp", 1, 0, false)
        );
        assert_eq!(stats.failures_of(FailureCause::Http5xx), 1);
        assert_eq!(stats.failures_of(FailureCause::Other("rejected")), 1);
    }

    /// A 503 with `Retry-After: 1` (OTLP/HTTP: the client SHOULD honour
    /// it): the next attempt waits the second, though the exporter's own
    /// back-off is 10 ms; the period is then delivered.
    #[test]
    fn a_retry_after_is_honoured() {
        let (url, requests) = server(&[
            "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let options = PushOptions {
            backoff: Duration::from_millis(10),
            ..PushOptions::default()
        };
        let mut exporter =
            OtlpExporter::start(OtlpTarget::endpoint(&url).unwrap(), options).unwrap();
        let started = Instant::now();
        exporter.export(&one_period());
        // The first answer, then the wait it asks for (the queue open: no
        // shutdown cuts it short): the second request cannot come before
        // a second has passed since the export (seen late, never early).
        while *lock(&requests) < 2 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let retried = started.elapsed();
        assert_eq!(*lock(&requests), 2);
        assert!(
            retried >= Duration::from_secs(1),
            "retried after {retried:?}"
        );
        exporter.finish(Instant::now() + Duration::from_secs(20));
        let stats = exporter.stats();
        assert_eq!((stats.exported, stats.dropped), (1, 0));
        assert_eq!(stats.failures_of(FailureCause::Http5xx), 1);
    }

    #[test]
    fn a_500_is_not_retried() {
        let (url, requests) = server(&[
            "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let stats = send(&url);
        assert_eq!(*lock(&requests), 1);
        assert_eq!((stats.exported, stats.dropped), (0, 1));
        assert_eq!(stats.failures_of(FailureCause::Http5xx), 1);
    }
}
