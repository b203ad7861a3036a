//! `corprof counters monitor|collect`: EventCounters and
//! `System.Diagnostics.Metrics` instruments, as `dotnet-counters` reads
//! them.
//!
//! Transcribed from dotnet/diagnostics `src/Microsoft.Diagnostics.Monitoring.
//! EventPipe/Configuration/MetricSourceConfiguration.cs` and dotnet/runtime
//! `System/Diagnostics/Metrics/MetricsEventSource.cs`:
//! * each named provider is enabled as an EventSource at the informational
//!   level, no keywords, with the argument `EventCounterIntervalSec=N`; it
//!   writes an `EventCounters` event per counter and interval, whose
//!   payload (a struct `Payload`) has `Name`, `DisplayName`, `DisplayUnits`,
//!   `CounterType` (`Mean` or `Sum`) and the value in `Mean` or
//!   `Increment`;
//! * `System.Diagnostics.Metrics` (.NET 6 and later) is enabled with the
//!   keyword `TimeSeriesValues` (0x2), informational, and the arguments
//!   `SessionId` (ours, to tell our events from another session's),
//!   `Metrics` (the meter names, comma-separated), `RefreshInterval`
//!   (seconds), `MaxTimeSeries` (1000) and `MaxHistograms` (10); it writes
//!   `CounterRateValuePublished` (`rate`: the increase over the interval),
//!   `UpDownCounterRateValuePublished` (`value`), `GaugeValuePublished`
//!   (`lastValue`), each with `sessionId`, `meterName`, `instrumentName`,
//!   `unit` and `tags` (`k=v,k=v`), the numbers as strings (empty when
//!   there is none this interval), and errors as `Error` (`errorMessage`),
//!   `TimeSeriesLimitReached`, `HistogramLimitReached` and
//!   `MultipleSessions*Error`.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use corprof::diagnostics::{DiagnosticsClient, Provider, Rundown, SessionConfig};
use corprof::nettrace::{Event, NettraceReader, Value};

use super::show::{row, Monitor};
use super::{options, start_session, usage_error};

/// The `System.Diagnostics.Metrics` EventSource.
const METRICS_PROVIDER: &str = "System.Diagnostics.Metrics";
/// Its `TimeSeriesValues` keyword.
const TIME_SERIES_VALUES: u64 = 0x2;
/// EventSource's informational level.
const INFORMATIONAL: u32 = 4;

/// One value of one counter or instrument.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reading {
    /// Wall time, Unix seconds.
    pub time: f64,
    /// The EventSource or meter.
    pub provider: String,
    /// The counter's or instrument's name, with its tags in brackets.
    pub name: String,
    /// Its unit (`%`, `MB`, `{request}`), maybe empty.
    pub unit: String,
    /// `Mean`, `Sum`, `Rate`, `UpDown` or `Gauge`.
    pub kind: &'static str,
    /// The value.
    pub value: f64,
}

/// `Name` or `Name[counter,counter]`, split at the commas outside brackets.
fn parse_list(list: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut pieces = Vec::new();
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("--counters: unbalanced brackets in `{list}`"));
        }
    }
    if depth != 0 {
        return Err(format!("--counters: unbalanced brackets in `{list}`"));
    }
    pieces.push(&list[start..]);
    for piece in pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let (name, names) = match piece.split_once('[') {
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix(']')
                    .ok_or_else(|| format!("--counters: `{piece}` has text after `]`"))?;
                let names: Vec<String> = inner
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                (name.trim(), names)
            }
            None => (piece, Vec::new()),
        };
        if name.is_empty() || name.contains(['[', ']', ';', '=']) {
            return Err(format!("--counters: `{piece}` is not a provider name"));
        }
        out.push((name.to_string(), names));
    }
    if out.is_empty() {
        return Err("--counters names no provider".to_string());
    }
    Ok(out)
}

/// The providers of a counters session.
fn session_config(
    list: &[(String, Vec<String>)],
    interval: f64,
    session_id: &str,
) -> SessionConfig {
    let seconds = format!("{interval}");
    let mut providers: Vec<Provider> = list
        .iter()
        .filter(|(name, _)| name != METRICS_PROVIDER)
        .map(|(name, _)| {
            Provider::new(name)
                .keywords(0)
                .level(INFORMATIONAL)
                .argument("EventCounterIntervalSec", &seconds)
        })
        .collect();
    let meters: Vec<&str> = list.iter().map(|(name, _)| name.as_str()).collect();
    providers.push(
        Provider::new(METRICS_PROVIDER)
            .keywords(TIME_SERIES_VALUES)
            .level(INFORMATIONAL)
            .argument("SessionId", session_id)
            .argument("Metrics", &meters.join(","))
            .argument("RefreshInterval", &seconds)
            .argument("MaxTimeSeries", "1000")
            .argument("MaxHistograms", "10"),
    );
    let mut config = SessionConfig::new(providers);
    config.rundown = Rundown::None;
    config
}

fn text<'a>(fields: &'a [(String, Value)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(n, _)| n == name)?.1.as_str()
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Float(v) => Some(*v),
        Value::Int(v) => Some(*v as f64),
        Value::UInt(v) => Some(*v as f64),
        _ => None,
    }
}

/// What one event says: a reading, an error of the metrics provider, or
/// nothing of interest.
#[derive(Debug, PartialEq)]
pub(crate) enum Seen {
    Reading(Reading),
    Problem(String),
    Nothing,
}

/// Reads one event of a counters session.
pub(crate) fn read_event(event: &Event, session_id: &str, time: f64) -> Seen {
    let Ok(fields) = event.fields() else {
        return Seen::Nothing;
    };
    if event.name() == "EventCounters" {
        // The payload is a struct `Payload`; some writers give its fields
        // at the top.
        let payload = match fields.iter().find(|(n, _)| n == "Payload") {
            Some((_, Value::Struct(inner))) => inner.as_slice(),
            _ => fields.as_slice(),
        };
        let Some(name) = text(payload, "Name") else {
            return Seen::Nothing;
        };
        let (kind, key) = match text(payload, "CounterType") {
            Some("Sum") => ("Sum", "Increment"),
            _ => ("Mean", "Mean"),
        };
        let Some(value) = payload
            .iter()
            .find(|(n, _)| n == key)
            .and_then(|(_, v)| number(v))
        else {
            return Seen::Nothing;
        };
        return Seen::Reading(Reading {
            time,
            provider: event.provider().to_string(),
            name: name.to_string(),
            unit: text(payload, "DisplayUnits").unwrap_or("").to_string(),
            kind,
            value,
        });
    }
    if event.provider() != METRICS_PROVIDER
        || text(&fields, "sessionId").is_some_and(|s| s != session_id)
    {
        return Seen::Nothing;
    }
    let (kind, key) = match event.name() {
        "CounterRateValuePublished" => ("Rate", "rate"),
        "UpDownCounterRateValuePublished" => ("UpDown", "value"),
        "GaugeValuePublished" => ("Gauge", "lastValue"),
        "Error" => {
            return Seen::Problem(format!(
                "{METRICS_PROVIDER}: {}",
                text(&fields, "errorMessage").unwrap_or("an error")
            ))
        }
        "TimeSeriesLimitReached" | "HistogramLimitReached" => {
            return Seen::Problem(format!("{METRICS_PROVIDER}: {}", event.name()))
        }
        name if name.starts_with("MultipleSessions") => {
            return Seen::Problem(format!(
                "{METRICS_PROVIDER}: {name} (another tool is reading this process's metrics)"
            ))
        }
        _ => return Seen::Nothing,
    };
    let (Some(meter), Some(instrument)) =
        (text(&fields, "meterName"), text(&fields, "instrumentName"))
    else {
        return Seen::Nothing;
    };
    let Some(value) = text(&fields, key).and_then(|s| s.trim().parse::<f64>().ok()) else {
        return Seen::Nothing;
    };
    let tags = text(&fields, "tags").unwrap_or("");
    Seen::Reading(Reading {
        time,
        provider: meter.to_string(),
        name: if tags.is_empty() {
            instrument.to_string()
        } else {
            format!("{instrument}[{tags}]")
        },
        unit: text(&fields, "unit").unwrap_or("").to_string(),
        kind,
        value,
    })
}

/// `counters monitor` (`collect == false`) and `counters collect`.
pub(crate) fn counters(args: &[&str], collect: bool) -> Result<(), String> {
    let o = options(
        args,
        &[
            "-p",
            "--counters",
            "--refresh-interval",
            "--duration",
            "--format",
            "-o",
        ],
        &[],
    )?;
    let pid = o.pid("counters")?;
    let year = 86_400.0 * 365.0;
    let interval = o.seconds("--refresh-interval", year)?.unwrap_or(1.0);
    let duration = o.seconds("--duration", year)?;
    let format = o.named.get("--format").copied().unwrap_or("csv");
    if !["csv", "json"].contains(&format) {
        return Err(usage_error(format!("unknown format {format} (csv, json)")));
    }
    if !collect && (o.named.contains_key("--format") || o.named.contains_key("-o")) {
        return Err(usage_error(
            "counters monitor prints a table: --format and -o are collect's",
        ));
    }
    let list = parse_list(
        o.named
            .get("--counters")
            .copied()
            .unwrap_or("System.Runtime"),
    )
    .map_err(usage_error)?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let session_id = format!("corprof-{}-{pid}-{nanos:x}", std::process::id());
    let config = session_config(&list, interval, &session_id);

    let client = DiagnosticsClient::for_process(pid).map_err(|e| e.to_string())?;
    // ProcessInfo came with .NET 5, System.Diagnostics.Metrics with .NET 6:
    // a runtime that does not know ProcessInfo has no meters to read.
    let old_runtime = client
        .clone()
        .with_timeout(Duration::from_secs(2))
        .process_info()
        .is_err();
    let session = start_session(&client, &config, pid)?;
    let stopper = session.stopper();
    let (stop_tx, stop_rx) = mpsc::channel::<bool>();
    let enter = stop_tx.clone();
    thread::spawn(move || {
        let mut line = String::new();
        if io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {
            let _ = enter.send(true);
        }
    });
    let stopping = thread::spawn(move || {
        let got = match duration {
            Some(d) => stop_rx.recv_timeout(Duration::from_secs_f64(d)).ok(),
            None => stop_rx.recv().ok(),
        };
        match got {
            Some(false) => Ok(()),
            _ => stopper.stop(),
        }
    });
    eprintln!(
        "corprof: counters of {pid} every {interval} s{}; press Enter to stop",
        duration.map(|d| format!(" for {d} s")).unwrap_or_default()
    );
    if old_runtime {
        eprintln!(
            "corprof: {pid} runs a runtime older than .NET 5 (it does not answer ProcessInfo): \
             System.Diagnostics.Metrics instruments need .NET 6 or later; \
             only EventCounters will show"
        );
    }

    let output = o.named.get("-o").map(|s| s.to_string());
    let mut out: Box<dyn Write> = match &output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).map_err(|e| format!("{path}: {e}"))?,
        )),
        None => Box::new(io::stdout().lock()),
    };
    let wanted = |r: &Reading| {
        list.iter().any(|(provider, names)| {
            provider == &r.provider
                && (names.is_empty() || names.iter().any(|n| names_it(n, &r.name)))
        })
    };
    // The session is read on its own thread: a frame of the monitor is
    // drawn when it is due, whether or not an event comes then.
    let (events_tx, events) = mpsc::channel::<Result<Seen, String>>();
    thread::spawn(move || {
        let mut reader = NettraceReader::new(session);
        loop {
            let seen = match reader.next_event() {
                Ok(Some(event)) => {
                    let time = reader
                        .trace()
                        .and_then(|t| t.unix_nanos(event.timestamp))
                        .map(|n| n as f64 / 1e9)
                        .unwrap_or(0.0);
                    Ok(read_event(&event, &session_id, time))
                }
                Ok(None) => break,
                Err(e) => Err(format!("reading the session: {e}")),
            };
            let end = seen.is_err();
            if events_tx.send(seen).is_err() || end {
                break;
            }
        }
    });
    let in_place = output.is_none() && io::stdout().is_terminal();
    let mut monitor = Monitor::new(
        Duration::from_secs_f64(interval),
        in_place,
        format!("corprof counters monitor: {pid} every {interval} s; press Enter to stop"),
    );
    let mut heard: BTreeSet<(String, String)> = BTreeSet::new();
    let mut count = 0u64;
    let mut first_row = true;
    let write_err = |e: io::Error| format!("writing: {e}");
    if collect {
        if format == "csv" {
            writeln!(
                out,
                "Timestamp,Provider,Counter Name,Counter Type,Unit,Value"
            )
            .map_err(write_err)?;
        } else {
            write!(out, "{{\"TargetProcess\":{pid},\"Events\":[").map_err(write_err)?;
        }
    }
    let result = loop {
        let seen = match monitor.due() {
            Some(at) => match events.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(seen) => seen,
                Err(RecvTimeoutError::Timeout) => {
                    monitor.draw(&mut out).map_err(write_err)?;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break Ok(()),
            },
            None => match events.recv() {
                Ok(seen) => seen,
                Err(_) => break Ok(()),
            },
        };
        match seen {
            Ok(Seen::Reading(r)) if wanted(&r) => {
                count += 1;
                heard.insert((r.provider.clone(), r.name.clone()));
                if collect {
                    out.write_all(row(format, &r, first_row).as_bytes())
                        .map_err(write_err)?;
                    first_row = false;
                    out.flush().map_err(write_err)?;
                } else {
                    monitor.add(r);
                }
            }
            Ok(Seen::Problem(message)) => eprintln!("corprof: {message}"),
            Ok(_) => {}
            Err(e) => break Err(e),
        }
    };
    let _ = stop_tx.send(false);
    // The last values, even if their interval is not over.
    monitor.draw(&mut out).map_err(write_err)?;
    if collect && format == "json" {
        writeln!(out, "]}}").map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    match stopping.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) if result.is_ok() => eprintln!("corprof: stopping: {e}"),
        _ => {}
    }
    result?;
    let frames = if collect {
        String::new()
    } else {
        format!(" in {} tables", monitor.frames())
    };
    eprintln!(
        "corprof: {count} values{frames}{}",
        output.map(|o| format!("; wrote {o}")).unwrap_or_default()
    );
    // A provider or counter that never reported: exit 1, once the values
    // of the others are out.
    let mut silent = silent(&list, &heard);
    if old_runtime {
        for line in &mut silent {
            line.push_str(" (a Meter needs .NET 6 or later)");
        }
    }
    if silent.is_empty() {
        Ok(())
    } else {
        Err(silent.join("\ncorprof: "))
    }
}

/// Whether `name` (a counter of a `--counters` list) names the counter
/// `counter`: the same, or with tags (`name[k=v]`).
fn names_it(name: &str, counter: &str) -> bool {
    counter == name
        || counter
            .strip_prefix(name)
            .is_some_and(|tags| tags.starts_with('['))
}

/// The providers and counters of `list` that gave no value (`heard`: the
/// provider and name of each value), one line each.
fn silent(list: &[(String, Vec<String>)], heard: &BTreeSet<(String, String)>) -> Vec<String> {
    let mut lines = Vec::new();
    for (provider, names) in list {
        if !heard.iter().any(|(p, _)| p == provider) {
            lines.push(format!("no values from {provider}: is the name right?"));
            continue;
        }
        for name in names {
            if !heard
                .iter()
                .any(|(p, n)| p == provider && names_it(name, n))
            {
                lines.push(format!(
                    "no values of {name} from {provider}: is the counter's name right?"
                ));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use corprof::nettrace::{Field, FieldType, Metadata};
    use corprof::GUID;
    use std::sync::Arc;

    /// An event of the metrics provider with string fields.
    fn metrics_event(name: &str, fields: &[(&str, &str)]) -> Event {
        let mut payload = Vec::new();
        for (_, value) in fields {
            for unit in value.encode_utf16().chain([0]) {
                payload.extend(unit.to_le_bytes());
            }
        }
        Event {
            metadata: Arc::new(Metadata {
                metadata_id: 1,
                provider: METRICS_PROVIDER.to_string(),
                event_id: 5,
                name: name.to_string(),
                keywords: TIME_SERIES_VALUES,
                version: 0,
                level: INFORMATIONAL,
                opcode: None,
                fields: fields
                    .iter()
                    .map(|(n, _)| Field {
                        name: n.to_string(),
                        ty: FieldType::String,
                    })
                    .collect(),
            }),
            sequence_number: 1,
            thread_id: 1,
            capture_thread_id: 1,
            processor: 0,
            timestamp: 0,
            activity_id: GUID::default(),
            related_activity_id: GUID::default(),
            stack_id: 0,
            stack: Arc::from(Vec::new()),
            payload,
            sorted: true,
            pointer_size: 8,
        }
    }

    fn gauge(session: &str, value: &str, tags: &str) -> Event {
        metrics_event(
            "GaugeValuePublished",
            &[
                ("sessionId", session),
                ("meterName", "M"),
                ("meterVersion", ""),
                ("instrumentName", "queue"),
                ("unit", "{item}"),
                ("tags", tags),
                ("lastValue", value),
            ],
        )
    }

    #[test]
    fn metrics_events_of_this_session_only() {
        assert_eq!(
            read_event(&gauge("S", "42", ""), "S", 1.5),
            Seen::Reading(Reading {
                time: 1.5,
                provider: "M".to_string(),
                name: "queue".to_string(),
                unit: "{item}".to_string(),
                kind: "Gauge",
                value: 42.0,
            })
        );
        match read_event(&gauge("S", "1.5", "k=v,x=y"), "S", 0.0) {
            Seen::Reading(r) => assert_eq!((r.name.as_str(), r.value), ("queue[k=v,x=y]", 1.5)),
            other => panic!("{other:?}"),
        }
        // Another session's, and an interval without a value.
        assert_eq!(read_event(&gauge("T", "42", ""), "S", 0.0), Seen::Nothing);
        assert_eq!(read_event(&gauge("S", "", ""), "S", 0.0), Seen::Nothing);
        assert_eq!(read_event(&gauge("S", "x", ""), "S", 0.0), Seen::Nothing);
        let error = metrics_event("Error", &[("sessionId", "S"), ("errorMessage", "boom")]);
        assert_eq!(
            read_event(&error, "S", 0.0),
            Seen::Problem(format!("{METRICS_PROVIDER}: boom"))
        );
    }

    #[test]
    fn lists_split_outside_brackets() {
        assert_eq!(
            parse_list("System.Runtime[cpu-usage,gc-heap-size], My.Meter").unwrap(),
            vec![
                (
                    "System.Runtime".to_string(),
                    vec!["cpu-usage".to_string(), "gc-heap-size".to_string()]
                ),
                ("My.Meter".to_string(), vec![]),
            ]
        );
        for bad in ["", "a[b", "a]b", "a[b]c", "[x]", "a;b"] {
            assert!(parse_list(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn silent_providers_and_counters_are_named() {
        let list = parse_list("System.Runtime[cpu-usage,cpu-usag,queue],Nope.Source,M").unwrap();
        let heard: BTreeSet<(String, String)> = [
            ("System.Runtime", "cpu-usage"),
            ("System.Runtime", "queue[k=v]"),
            ("M", "x"),
            ("Other", "cpu-usag"),
        ]
        .iter()
        .map(|(p, n)| (p.to_string(), n.to_string()))
        .collect();
        assert_eq!(
            silent(&list, &heard),
            [
                "no values of cpu-usag from System.Runtime: is the counter's name right?",
                "no values from Nope.Source: is the name right?",
            ]
        );
        assert!(names_it("queue", "queue[k=v]") && !names_it("queue", "queue2"));
    }

    #[test]
    fn providers_are_dotnet_counters_ones() {
        let list = parse_list("System.Runtime,Corprof.Diag").unwrap();
        let config = session_config(&list, 2.0, "S");
        let p = &config.providers;
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].keywords, p[0].level), (0, 4));
        assert_eq!(
            p[0].filter_data().as_deref(),
            Some("EventCounterIntervalSec=2")
        );
        assert_eq!(p[2].name, METRICS_PROVIDER);
        assert_eq!(p[2].keywords, 2);
        assert_eq!(
            p[2].filter_data().as_deref(),
            Some("SessionId=S;Metrics=System.Runtime,Corprof.Diag;RefreshInterval=2;MaxTimeSeries=1000;MaxHistograms=10")
        );
    }
}
