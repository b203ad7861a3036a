//! `corprof gcdump -p PID`: a type histogram (count, bytes) of the live
//! heap, largest first, and the same in pprof.
//!
//! The session is `dotnet-gcdump`'s (its `EventPipeDotNetHeapDumper`, in
//! dotnet/diagnostics and microsoft/perfview): the runtime provider, here
//! at the verbose level, with the keywords of TraceEvent's `GCHeapSnapshot`,
//! `0x1980001`: GC (0x1), type (0x80000), heap dump (0x100000), heap
//! collect (0x800000: enabling it makes the runtime run an induced,
//! blocking gen-2 GC at once) and type names (0x1000000); no rundown. That
//! GC's mark walks the live objects: `GCBulkNode` (18) events give each
//! object's `Address`, `Size` and `TypeID`, `GCBulkType` (15) events name
//! the types (`TypeID`, `Name`), and `GCBulkEdge`/`GCBulkRootEdge` the
//! references (not needed for a histogram). As `dotnet-gcdump`, the dump's
//! GC is the first `GCStart` (1) of depth 2 that is not a background GC
//! (`Type` 1), and the dump is complete at the `GCEnd` (2) of the same
//! `Count`; the session is then stopped. Only nodes between the two count.
//! Objects are counted by their `TypeID`, with the node's `Size` as bytes.
//! Only the totals per type are kept, whatever the heap's size.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use corprof::diagnostics::{DiagnosticsClient, Provider, Rundown, SessionConfig};
use corprof::nettrace::{NettraceReader, Value, RUNTIME_PROVIDER};
use corprof::profile::Pprof;

use super::{options, start_session};

/// `GCHeapSnapshot`: GC, type, heap dump, heap collect, type names.
const GC_HEAP_SNAPSHOT: u64 = 0x1 | 0x8_0000 | 0x10_0000 | 0x80_0000 | 0x100_0000;
const GC_START: u32 = 1;
const GC_END: u32 = 2;
/// `GCStart`'s `Type` of a background GC.
const BACKGROUND_GC: u64 = 1;
const GC_BULK_TYPE: u32 = 15;
const GC_BULK_NODE: u32 = 18;

fn values(fields: &[(String, Value)]) -> &[Value] {
    fields
        .iter()
        .find(|(n, _)| n == "Values")
        .and_then(|(_, v)| v.as_array())
        .unwrap_or(&[])
}

/// `corprof gcdump`.
pub(crate) fn gcdump(args: &[&str]) -> Result<(), String> {
    let o = options(args, &["-p", "-o", "--timeout"], &[])?;
    let pid = o.pid("gcdump")?;
    let timeout = o.seconds("--timeout", 86_400.0)?.unwrap_or(60.0);
    let output = o
        .named
        .get("-o")
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("gcdump-{pid}.pb.gz"));
    let mut config = SessionConfig::new(vec![Provider::new(RUNTIME_PROVIDER)
        .keywords(GC_HEAP_SNAPSHOT)
        .level(5)]);
    config.rundown = Rundown::None;
    let client = DiagnosticsClient::for_process(pid).map_err(|e| e.to_string())?;
    let session = start_session(&client, &config, pid)?;
    let stopper = session.stopper();
    // `true`: the dump is complete; `false`: the stream ended.
    let (stop_tx, stop_rx) = mpsc::channel::<bool>();
    let stopping = thread::spawn(move || {
        let got = stop_rx.recv_timeout(Duration::from_secs_f64(timeout));
        let stopped = match got {
            Ok(false) => Ok(()),
            _ => stopper.stop(),
        };
        (got.is_ok(), stopped)
    });
    let mut reader = NettraceReader::new(session);
    let mut names: HashMap<u64, String> = HashMap::new();
    // TypeID -> (objects, bytes).
    let mut histogram: HashMap<u64, (u64, u64)> = HashMap::new();
    // The dump's GC, by its `Count`, once its `GCStart` came.
    let mut dump_gc: Option<u64> = None;
    let mut complete = false;
    let result = loop {
        let event = match reader.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => break Ok(()),
            Err(e) => break Err(format!("reading the session: {e}")),
        };
        if event.provider() != RUNTIME_PROVIDER || complete {
            continue;
        }
        match event.event_id() {
            GC_BULK_TYPE => {
                let fields = event.fields().map_err(|e| format!("GCBulkType: {e}"))?;
                for v in values(&fields) {
                    if let (Some(id), Some(name)) = (
                        v.field("TypeID").and_then(Value::as_u64),
                        v.field("Name").and_then(Value::as_str),
                    ) {
                        names.entry(id).or_insert_with(|| name.to_string());
                    }
                }
            }
            GC_START if dump_gc.is_none() => {
                let fields = event.fields().map_err(|e| format!("GCStart: {e}"))?;
                let get = |n: &str| {
                    fields
                        .iter()
                        .find(|(f, _)| f == n)
                        .and_then(|(_, v)| v.as_u64())
                };
                if get("Depth") == Some(2) && get("Type") != Some(BACKGROUND_GC) {
                    dump_gc = get("Count");
                }
            }
            GC_BULK_NODE if dump_gc.is_some() => {
                let fields = event.fields().map_err(|e| format!("GCBulkNode: {e}"))?;
                for v in values(&fields) {
                    if let (Some(id), Some(size)) = (
                        v.field("TypeID").and_then(Value::as_u64),
                        v.field("Size").and_then(Value::as_u64),
                    ) {
                        let slot = histogram.entry(id).or_insert((0, 0));
                        slot.0 += 1;
                        slot.1 = slot.1.saturating_add(size);
                    }
                }
            }
            GC_END if dump_gc.is_some() => {
                let fields = event.fields().map_err(|e| format!("GCEnd: {e}"))?;
                let count = fields
                    .iter()
                    .find(|(f, _)| f == "Count")
                    .and_then(|(_, v)| v.as_u64());
                if count == dump_gc {
                    complete = true;
                    let _ = stop_tx.send(true);
                }
            }
            _ => {}
        }
    };
    let _ = stop_tx.send(false);
    let (_, stopped) = stopping
        .join()
        .map_err(|_| "the stopping thread panicked".to_string())?;
    result?;
    if !complete {
        return Err(match stopped {
            Err(e) => format!("no complete heap dump from {pid}: {e}"),
            Ok(()) => format!("no complete heap dump from {pid} within {timeout} s"),
        });
    }
    let mut rows: Vec<(String, u64, u64)> = histogram
        .into_iter()
        .map(|(id, (count, bytes))| {
            let name = names
                .get(&id)
                .cloned()
                .unwrap_or_else(|| format!("[type 0x{id:X}]"));
            (name, count, bytes)
        })
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)).then(a.0.cmp(&b.0)));
    let mut pprof = Pprof::new(&[("objects", "count"), ("space", "bytes")]);
    let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let mut text = format!("{:>12} {:>14}  Type\n", "Count", "Bytes");
    let (mut objects, mut bytes) = (0u64, 0u64);
    for (name, count, size) in &rows {
        text.push_str(&format!("{count:>12} {size:>14}  {name}\n"));
        pprof.add_sample(&[name.as_str()], &[clamp(*count), clamp(*size)], &[]);
        objects += count;
        bytes = bytes.saturating_add(*size);
    }
    let mut file = File::create(&output).map_err(|e| format!("{output}: {e}"))?;
    file.write_all(&pprof.encode_gzip())
        .map_err(|e| format!("{output}: {e}"))?;
    print!("{text}");
    eprintln!(
        "corprof: {objects} objects, {bytes} bytes, {} types; wrote {output}",
        rows.len()
    );
    Ok(())
}
