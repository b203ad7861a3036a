//! Lock contention from the runtime's `ContentionStart` and
//! `ContentionStop` events (.NET 5 and later, through the sampler's
//! in-process EventPipe session; `ContentionKeyword` 0x4000, level
//! Informational), written on the thread that waits.
//!
//! Facts from dotnet/runtime `src/coreclr/vm/ClrEtwAll.man` at commit
//! 68813511f6a4855bd2f2b1605ae19418680ae7de: `ContentionStart` is event 81
//! (version 1: template `Contention`, `ContentionFlags` UInt8 and
//! `ClrInstanceID` UInt16; version 2, .NET 8: `ContentionStart_V2`, which
//! appends `LockID`, `AssociatedObjectID` (pointers) and
//! `LockOwnerThreadID` UInt64); `ContentionStop` is event 91 (version 0:
//! template `Contention`; version 1: `ContentionStop_V1`, which appends
//! `DurationNs`, a Double). The layouts are in
//! `corprof::eventpipe::runtime_fields`; a stop without a duration is
//! timed from the same thread's start.

use core::cell::Cell;
use std::time::Instant;

use crate::eventpipe::{decode_payload, runtime_fields, Field, Value};

/// The runtime provider's `ContentionKeyword`.
pub const CONTENTION_KEYWORD: u64 = 0x4000;
/// `ContentionStart`'s event id.
pub const CONTENTION_START: u32 = 81;
/// `ContentionStop`'s event id.
pub const CONTENTION_STOP: u32 = 91;
/// The default rate below which every contention is recorded, per second.
pub const CONTENTIONS_PER_SECOND: u32 = 500;

/// A decoded contention event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Contention {
    /// A thread starts waiting for a lock.
    Start {
        /// `ContentionFlags` 1: a native lock (0: a managed `Monitor`).
        native: bool,
    },
    /// The thread got the lock.
    Stop {
        /// `ContentionFlags` 1: a native lock.
        native: bool,
        /// How long it waited (`DurationNs`, version 1 and later), in
        /// nanoseconds; `None` before.
        duration_nanos: Option<f64>,
    },
}

/// Decodes a runtime-provider event of id `event_id` and version
/// `version` whose payload is `data`: `None` when it is not a contention
/// event this layout table knows, or does not decode (too short, a flag
/// other than 0 or 1, a duration that is not a finite, non-negative
/// number).
pub fn decode_contention(event_id: u32, version: u32, data: &[u8]) -> Option<Contention> {
    decode_contention_with(event_id, &runtime_fields(event_id, version)?, data)
}

/// Like [`decode_contention`], by the fields an event's own metadata
/// describes (the runtime provider's managed half, `NativeRuntimeEventSource`,
/// describes its events), looked up by name.
pub fn decode_contention_with(event_id: u32, fields: &[Field], data: &[u8]) -> Option<Contention> {
    if event_id != CONTENTION_START && event_id != CONTENTION_STOP {
        return None;
    }
    if fields.first()?.name != "ContentionFlags" {
        return None;
    }
    let values = decode_payload(fields, data).ok()?;
    let native = match values.first()?.as_u64()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    if event_id == CONTENTION_START {
        return Some(Contention::Start { native });
    }
    let duration_nanos = match fields.iter().position(|f| f.name == "DurationNs") {
        None => None,
        Some(i) => match values.get(i)? {
            Value::Float(d) if d.is_finite() && *d >= 0.0 => Some(*d),
            _ => return None,
        },
    };
    Some(Contention::Stop {
        native,
        duration_nanos,
    })
}

std::thread_local! {
    /// When the calling thread's current contention started.
    static STARTED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Notes that the calling thread starts waiting at `now`.
pub(crate) fn started(now: Instant) {
    STARTED.with(|s| s.set(Some(now)));
}

/// How long the calling thread waited, by its start (taken).
pub(crate) fn waited(now: Instant) -> Option<u64> {
    STARTED
        .with(Cell::take)
        .map(|start| now.saturating_duration_since(start).as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Payloads laid out by hand from the manifest's templates.
    #[test]
    fn decodes_each_version() {
        // ContentionStart_V1: flags 0, ClrInstanceID 7.
        assert_eq!(
            decode_contention(81, 1, &[0, 7, 0]),
            Some(Contention::Start { native: false })
        );
        // ContentionStart_V2: flags 1, id, LockID, AssociatedObjectID, owner.
        let mut v2 = alloc::vec![1, 7, 0];
        v2.extend_from_slice(&0x1000usize.to_le_bytes());
        v2.extend_from_slice(&0x2000usize.to_le_bytes());
        v2.extend_from_slice(&42u64.to_le_bytes());
        assert_eq!(
            decode_contention(81, 2, &v2),
            Some(Contention::Start { native: true })
        );
        // ContentionStop (version 0): no duration.
        assert_eq!(
            decode_contention(91, 0, &[0, 7, 0]),
            Some(Contention::Stop {
                native: false,
                duration_nanos: None
            })
        );
        // ContentionStop_V1: 1234.5 ns.
        let mut v1 = alloc::vec![0, 7, 0];
        v1.extend_from_slice(&1234.5f64.to_le_bytes());
        assert_eq!(
            decode_contention(91, 1, &v1),
            Some(Contention::Stop {
                native: false,
                duration_nanos: Some(1234.5)
            })
        );
        // Bad input: short, unknown flags, a negative or NaN duration,
        // other events and versions.
        assert_eq!(decode_contention(91, 1, &v1[..6]), None);
        assert_eq!(decode_contention(81, 1, &[2, 7, 0]), None);
        let mut negative = alloc::vec![0, 7, 0];
        negative.extend_from_slice(&(-1.0f64).to_le_bytes());
        assert_eq!(decode_contention(91, 1, &negative), None);
        let mut nan = alloc::vec![0, 7, 0];
        nan.extend_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(decode_contention(91, 1, &nan), None);
        assert_eq!(decode_contention(80, 1, &[0, 7, 0]), None);
        assert_eq!(decode_contention(81, 0, &[0, 7, 0]), None);
    }

    #[test]
    fn a_stop_is_timed_from_the_threads_start() {
        let t = Instant::now();
        assert_eq!(waited(t), None);
        started(t);
        let later = t + core::time::Duration::from_micros(250);
        assert_eq!(waited(later), Some(250_000));
        assert_eq!(waited(later), None, "taken");
    }
}
