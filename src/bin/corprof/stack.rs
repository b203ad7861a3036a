//! `corprof stack -p PID`: every managed thread's stack now, as
//! `dotnet-stack report` shows it.
//!
//! Transcribed from dotnet/diagnostics `src/Tools/dotnet-stack/
//! ReportCommand.cs`: a short session (10 ms by default) of
//! `Microsoft-DotNETCore-SampleProfiler` at the informational level, with
//! the rundown at stop; the first sample of each thread (`ThreadSample`,
//! event 0 of the sample profiler, on the thread it is about) is its
//! stack, its frames named by the rundown's method events (innermost
//! first; consecutive frames no method holds shown as one
//! `[Native Frames]`).

use std::collections::BTreeMap;
use std::thread;
use std::time::Duration;

use corprof::diagnostics::{DiagnosticsClient, Provider, SessionConfig};
use corprof::nettrace::{NettraceReader, SAMPLE_PROFILER_PROVIDER};

use super::{lookup, method_of, options, start_session};

/// `corprof stack`.
pub(crate) fn stack(args: &[&str]) -> Result<(), String> {
    let o = options(args, &["-p", "--duration"], &[])?;
    let pid = o.pid("stack")?;
    let seconds = o.seconds("--duration", 3600.0)?.unwrap_or(0.01);
    let config = SessionConfig::new(vec![Provider::new(SAMPLE_PROFILER_PROVIDER).level(4)]);
    let client = DiagnosticsClient::for_process(pid).map_err(|e| e.to_string())?;
    let session = start_session(&client, &config, pid)?;
    let stopper = session.stopper();
    let stopping = thread::spawn(move || {
        thread::sleep(Duration::from_secs_f64(seconds));
        stopper.stop()
    });
    let mut reader = NettraceReader::new(session);
    // The first sample of each thread, in the order the threads came.
    let mut first: BTreeMap<u64, (usize, std::sync::Arc<[u64]>)> = BTreeMap::new();
    let mut methods = Vec::new();
    let result = loop {
        match reader.next_event() {
            Ok(Some(event)) => {
                if event.provider() == SAMPLE_PROFILER_PROVIDER
                    && event.event_id() == 0
                    && !event.stack.is_empty()
                {
                    let n = first.len();
                    first
                        .entry(event.thread_id)
                        .or_insert_with(|| (n, event.stack.clone()));
                } else if let Some(m) = method_of(&event) {
                    methods.push(m);
                }
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(format!("reading the session: {e}")),
        }
    };
    match stopping.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) if result.is_ok() => return Err(format!("stopping the session: {e}")),
        _ => {}
    }
    result?;
    methods.sort_by_key(|m| m.start);
    let mut threads: Vec<_> = first.into_iter().collect();
    threads.sort_by_key(|(_, (n, _))| *n);
    let mut text = String::new();
    for (thread, (_, stack)) in &threads {
        text.push_str(&format!("Thread (0x{thread:X}):\n"));
        let mut last_native = false;
        for &ip in stack.iter() {
            match lookup(&methods, ip) {
                Some(name) => {
                    text.push_str(&format!("  {name}\n"));
                    last_native = false;
                }
                None if !last_native => {
                    text.push_str("  [Native Frames]\n");
                    last_native = true;
                }
                None => {}
            }
        }
        text.push('\n');
    }
    print!("{text}");
    eprintln!(
        "corprof: {} threads, {} methods named",
        threads.len(),
        methods.len()
    );
    Ok(())
}
