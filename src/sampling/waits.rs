//! Waits from the runtime's `WaitHandleWaitStart` and `WaitHandleWaitStop`
//! events (.NET 9 and later, through an in-process EventPipe session of
//! the sampler's own: keyword `WaitHandle` 0x40000000000, level Verbose),
//! written on the thread that waits when a wait actually blocks.
//!
//! Facts: the event ids, keyword, level and templates from dotnet/runtime
//! `src/coreclr/vm/ClrEtwAll.man` as the runtime's own tests and
//! dd-trace-dotnet's parser quote them (the layouts are in
//! `corprof::eventpipe::runtime_fields`): `WaitHandleWaitStart` is event
//! 301 (version 0: `WaitSource` UInt8 of the map `WaitHandleWaitSourceMap`,
//! 0 `Unknown` and 1 `MonitorWait`; `AssociatedObjectID`, a pointer;
//! `ClrInstanceID` UInt16), `WaitHandleWaitStop` event 302 (version 0:
//! `ClrInstanceID`). Measured (the metadata and payloads each runtime
//! delivers in process, and CoreLib's IL): the metadata names no fields
//! (id, version 0, the keyword and level 5 only) on 9.0.23, 10.0.15 and
//! 11.0.0; on 9.0 and 10.0 the runtime writes the events from native code,
//! on 11.0 from `WaitHandle.WaitOneNoCheck` through a QCall (the stack at
//! the start has `NativeRuntimeEventSource.WaitHandleWaitStart` on top, at
//! the stop not). `WaitHandle.WaitOne` gives source `Unknown`;
//! `Monitor.Wait`, and `ManualResetEventSlim.Wait` (which blocks in a
//! `Monitor.Wait` on a lock of its own), `MonitorWait`; `Thread.Join` on
//! 9.0 and 10.0 `Unknown`; `Thread.Sleep` none. The map's values
//! are the enum `NativeRuntimeEventSource.WaitHandleWaitSourceMap` of
//! CoreLib (0 and 1 on all three).
//!
//! The `AssociatedObjectID` (for `MonitorWait`, the monitor's object) is not
//! read: the callback runs while a GC can run, so the object may move (or
//! its memory be reused) between the event and any read of its address,
//! and asking its class could read freed memory. Measured: a profiler that
//! sleeps 500 ms in the first `WaitHandleWaitStart` callback, and a
//! `GC.Collect()` on another thread 50 ms into it, which took 2 to 12 ms on
//! 9.0.23, 10.0.15 and 11.0.0, for a `Monitor.Wait` and a `WaitOne` alike:
//! the waiting thread does not hold the GC off in the callback (preemptive
//! mode; on 11.0 the event is written inside a QCall). The waiting stack
//! names the wait (`Monitor.Wait`, `WaitHandle.WaitOneNoCheck`).

use core::cell::Cell;
use std::time::Instant;

use crate::eventpipe::{decode_payload, runtime_fields, Field};

/// The runtime provider's `WaitHandleKeyword`.
pub const WAIT_HANDLE_KEYWORD: u64 = 0x400_0000_0000;
/// `WaitHandleWaitStart`'s event id.
pub const WAIT_START: u32 = 301;
/// `WaitHandleWaitStop`'s event id.
pub const WAIT_STOP: u32 = 302;
/// The default rate below which every wait is recorded, per second.
pub const WAITS_PER_SECOND: u32 = 500;

/// A decoded wait event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A thread starts a wait that blocks, of this `WaitSource`.
    Start {
        /// The `WaitHandleWaitSourceMap` value (0 `Unknown`, 1
        /// `MonitorWait`; [`wait_source_name`]).
        source: u8,
    },
    /// The wait ended.
    Stop,
}

/// A `WaitSource`'s name in the manifest's `WaitHandleWaitSourceMap`
/// (`Unknown`, `MonitorWait`), `Source<n>` for a value it does not list.
pub fn wait_source_name(source: u8) -> alloc::string::String {
    match source {
        0 => alloc::string::String::from("Unknown"),
        1 => alloc::string::String::from("MonitorWait"),
        n => alloc::format!("Source{n}"),
    }
}

/// Decodes a runtime-provider event of id `event_id` and version
/// `version` whose payload is `data`: `None` when it is not a wait event
/// this layout table knows, or does not decode (too short).
pub fn decode_wait(event_id: u32, version: u32, data: &[u8]) -> Option<Wait> {
    decode_wait_with(event_id, &runtime_fields(event_id, version)?, data)
}

/// Like [`decode_wait`], by the fields an event's own metadata describes,
/// looked up by name (`WaitSource` for a start; a stop needs its fields
/// to decode).
pub fn decode_wait_with(event_id: u32, fields: &[Field], data: &[u8]) -> Option<Wait> {
    let values = decode_payload(fields, data).ok()?;
    match event_id {
        WAIT_START => {
            let index = fields.iter().position(|f| f.name == "WaitSource")?;
            let source = values.get(index)?.as_u64()?;
            Some(Wait::Start {
                source: u8::try_from(source).ok()?,
            })
        }
        WAIT_STOP => Some(Wait::Stop),
        _ => None,
    }
}

std::thread_local! {
    /// When the calling thread's current wait started, and its source.
    static STARTED: Cell<Option<(Instant, u8)>> = const { Cell::new(None) };
}

/// Notes that the calling thread starts a wait of `source` at `now`.
pub(crate) fn started(now: Instant, source: u8) {
    STARTED.with(|s| s.set(Some((now, source))));
}

/// How long the calling thread waited, and the wait's source, by its
/// start (taken); `None` without a start (the session began during the
/// wait).
pub(crate) fn waited(now: Instant) -> Option<(u64, u8)> {
    STARTED.with(Cell::take).map(|(start, source)| {
        let nanos = now.saturating_duration_since(start).as_nanos();
        (u64::try_from(nanos).unwrap_or(u64::MAX), source)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payloads laid out by hand from the manifest's templates (and as
    /// 10.0.15 delivered them: a `MonitorWait` start of 11 bytes).
    #[test]
    fn decodes_starts_and_stops() {
        let mut start = alloc::vec![1];
        start.extend_from_slice(&0x7f60_f189_d260usize.to_le_bytes());
        start.extend_from_slice(&0u16.to_le_bytes());
        assert_eq!(decode_wait(301, 0, &start), Some(Wait::Start { source: 1 }));
        start[0] = 0;
        assert_eq!(decode_wait(301, 0, &start), Some(Wait::Start { source: 0 }));
        assert_eq!(decode_wait(302, 0, &[0, 0]), Some(Wait::Stop));
        // Bad input: short payloads, other events and versions.
        assert_eq!(decode_wait(301, 0, &start[..5]), None);
        assert_eq!(decode_wait(302, 0, &[0]), None);
        assert_eq!(decode_wait(303, 0, &[0, 0]), None);
        assert_eq!(decode_wait(301, 1, &start), None);
        assert_eq!(decode_wait(81, 1, &[0, 7, 0]), None);
    }

    #[test]
    fn source_names() {
        assert_eq!(wait_source_name(0), "Unknown");
        assert_eq!(wait_source_name(1), "MonitorWait");
        assert_eq!(wait_source_name(7), "Source7");
    }

    #[test]
    fn a_stop_is_timed_from_the_threads_start() {
        let t = Instant::now();
        assert_eq!(waited(t), None);
        started(t, 1);
        let later = t + core::time::Duration::from_micros(250);
        assert_eq!(waited(later), Some((250_000, 1)));
        assert_eq!(waited(later), None, "taken");
    }
}
