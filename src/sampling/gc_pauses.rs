//! GC pauses: the time the runtime spends suspended for a garbage
//! collection, per generation and reason, from the runtime provider's GC
//! events received through the sampler's in-process EventPipe session
//! (.NET 5 and later; `GCKeyword` 0x1 at level Informational). A part of
//! its own: it knows the events and keeps the pauses; the sampler forwards
//! the events and asks for the periods' totals. Nothing here turns on
//! `COR_PRF_MONITOR_GC`, which would disable concurrent GC.
//!
//! Facts transcribed from dotnet/runtime `src/coreclr/vm/ClrEtwAll.man`
//! (commit 68813511f6a4855bd2f2b1605ae19418680ae7de):
//!
//! | event | id | version | template: fields |
//! |---|---:|---:|---|
//! | `GCStart` | 1 | 2 | `GCStart_V2`: `Count`, `Depth` (the generation), `Reason` (`GCReasonMap`), `Type`, `ClrInstanceID`, `ClientSequenceNumber` |
//! | `GCEnd` | 2 | 1 | `GCEnd_V1`: `Count`, `Depth`, `ClrInstanceID` |
//! | `GCRestartEEEnd` | 3 | 1 | `GCNoUserData`: `ClrInstanceID` |
//! | `GCSuspendEEBegin` | 9 | 1 | `GCSuspendEE_V1`: `Reason` (`GCSuspendEEReasonMap`), `Count`, `ClrInstanceID` |
//!
//! `GCSuspendEEReasonMap`: 1 `SuspendForGC`, 6 `SuspendForGCPrep` are the
//! GC's own suspensions; the others (0 other, 2 app domain shutdown, 3 code
//! pitching, 4 shutdown, 5 debugger, 7 debugger sweep) are not GC pauses (a
//! profiler's own `SuspendRuntime`, the sampler's suspend-runtime mode,
//! suspends with "other").
//!
//! A pause runs from `GCSuspendEEBegin` to the next `GCRestartEEEnd` (the
//! definition of PerfView's `GCStats`, the "pause" of `dotnet-counters`'
//! time in GC). The events are delivered synchronously, on the thread that
//! writes them (dotnet/runtime `src/native/eventpipe/ep-session.c`,
//! `ep_session_write_event`: a session with a synchronous callback, the
//! kind a profiler's session is, calls it from inside the write), so the
//! time of the delivery is the time of the event. The runtime suspends for
//! one GC at a time: one pause is open at most. A pause is charged to the
//! first `GCStart` inside it (its `Depth` and `Reason`); a GC suspension
//! with no `GCStart` inside it (a background GC's own suspensions after
//! its start) to the last GC started.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use std::sync::Mutex;
use std::time::Instant;

use crate::eventpipe::{decode_payload, gc_reason_name, runtime_fields, Field, FieldType};

/// `GCStart`'s event id.
pub(crate) const GC_START: u32 = 1;
/// `GCEnd`'s event id.
pub(crate) const GC_END: u32 = 2;
/// `GCRestartEEEnd`'s event id.
pub(crate) const GC_RESTART_EE_END: u32 = 3;
/// `GCSuspendEEBegin`'s event id.
pub(crate) const GC_SUSPEND_EE_BEGIN: u32 = 9;

/// `GCSuspendEEReasonMap`'s `SuspendForGC`.
const SUSPEND_FOR_GC: u32 = 1;
/// `GCSuspendEEReasonMap`'s `SuspendForGCPrep`.
const SUSPEND_FOR_GC_PREP: u32 = 6;

/// One GC event, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GcEvent {
    /// `GCSuspendEEBegin`: the runtime starts suspending, for `reason`.
    SuspendBegin { reason: u32 },
    /// `GCStart`: a GC of generation `depth` for `reason` starts.
    Start { depth: u32, reason: u32 },
    /// `GCEnd`: a GC ends.
    End,
    /// `GCRestartEEEnd`: the runtime runs again.
    RestartEnd,
}

/// Whether `event_id` is one of the GC events this part reads.
pub(crate) fn is_gc_event(event_id: u32) -> bool {
    matches!(
        event_id,
        GC_START | GC_END | GC_RESTART_EE_END | GC_SUSPEND_EE_BEGIN
    )
}

/// Decodes a runtime-provider GC event by the manifest's layouts; `None`
/// for another event, a version the manifest does not give, or a payload
/// that does not decode.
pub(crate) fn decode_gc_event(event_id: u32, version: u32, data: &[u8]) -> Option<GcEvent> {
    let u32_field = |fields: &[Field], name: &str| -> Option<u32> {
        let values = decode_payload(fields, data).ok()?;
        let index = fields.iter().position(|f| f.name == name)?;
        u32::try_from(values.get(index)?.as_u64()?).ok()
    };
    match event_id {
        GC_START => {
            let fields = runtime_fields(GC_START, version)?;
            Some(GcEvent::Start {
                depth: u32_field(&fields, "Depth")?,
                reason: u32_field(&fields, "Reason")?,
            })
        }
        GC_SUSPEND_EE_BEGIN if version >= 1 => {
            let fields = [
                field("Reason", FieldType::UInt32),
                field("Count", FieldType::UInt32),
                field("ClrInstanceID", FieldType::UInt16),
            ];
            Some(GcEvent::SuspendBegin {
                reason: u32_field(&fields, "Reason")?,
            })
        }
        // Their payloads carry nothing this part needs; a payload shorter
        // than the template's is still refused.
        GC_END if version >= 1 => (data.len() >= 10).then_some(GcEvent::End),
        GC_RESTART_EE_END if version >= 1 => (data.len() >= 2).then_some(GcEvent::RestartEnd),
        _ => None,
    }
}

fn field(name: &str, ty: FieldType) -> Field {
    Field {
        name: String::from(name),
        ty,
    }
}

/// The generation and reason a pause is charged to.
pub(crate) type GcKind = (u32, u32);

/// Pauses of one kind: how many and how long in all, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PauseTotal {
    pub(crate) count: u64,
    pub(crate) nanos: u64,
}

/// What the GC pauses came to over the run ([`SamplerStats`]).
///
/// [`SamplerStats`]: super::SamplerStats
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcPauseStats {
    /// GC pauses measured.
    pub pauses: u64,
    /// Their total, in nanoseconds.
    pub total_nanos: u64,
    /// The longest, in nanoseconds.
    pub max_nanos: u64,
    /// Per generation and reason (the manifest's `GCReasonMap` name): the
    /// pauses and their total in nanoseconds, by generation then reason.
    pub by_kind: Vec<(u32, String, u64, u64)>,
    /// GC events that did not decode (counted, skipped).
    pub undecoded_events: u64,
}

/// The GC pauses being measured.
#[derive(Debug, Default)]
pub(crate) struct GcPauses {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The open GC suspension: when it began, and the GC started in it.
    open: Option<(Instant, Option<GcKind>)>,
    /// The last GC started (for the suspensions of a background GC).
    last: Option<GcKind>,
    /// The current period's pauses by kind.
    period: BTreeMap<GcKind, PauseTotal>,
    /// The run's pauses by kind.
    run: BTreeMap<GcKind, PauseTotal>,
    max_nanos: u64,
    undecoded: u64,
}

impl GcPauses {
    /// Takes a runtime-provider event with a GC event id, delivered at
    /// `now` (on the thread that wrote it); `event` is `None` when it did
    /// not decode. Never calls the runtime; the lock is held for a few
    /// map updates. Returns the pause that ended, in nanoseconds, if one did.
    pub(crate) fn event(&self, event: Option<GcEvent>, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(event) = event else {
            state.undecoded += 1;
            return None;
        };
        match event {
            GcEvent::SuspendBegin { reason } => {
                state.open = (reason == SUSPEND_FOR_GC || reason == SUSPEND_FOR_GC_PREP)
                    .then_some((now, None));
                None
            }
            GcEvent::Start { depth, reason } => {
                state.last = Some((depth, reason));
                if let Some((_, kind @ None)) = &mut state.open {
                    *kind = Some((depth, reason));
                }
                None
            }
            GcEvent::End => None,
            GcEvent::RestartEnd => {
                let (began, kind) = state.open.take()?;
                // A GC suspension before any GC started has no kind.
                let kind = kind.or(state.last)?;
                let nanos = u64::try_from(now.saturating_duration_since(began).as_nanos())
                    .unwrap_or(u64::MAX);
                let state = &mut *state;
                for totals in [&mut state.period, &mut state.run] {
                    let total = totals.entry(kind).or_default();
                    total.count += 1;
                    total.nanos = total.nanos.saturating_add(nanos);
                }
                state.max_nanos = state.max_nanos.max(nanos);
                Some(nanos)
            }
        }
    }

    /// The current period's pauses by kind, and a new period begins.
    pub(crate) fn take_period(&self) -> BTreeMap<GcKind, PauseTotal> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        core::mem::take(&mut state.period)
    }

    /// The run's pauses by kind so far.
    pub(crate) fn run(&self) -> BTreeMap<GcKind, PauseTotal> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .run
            .clone()
    }

    /// The run's statistics so far.
    pub(crate) fn stats(&self) -> GcPauseStats {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut stats = GcPauseStats {
            max_nanos: state.max_nanos,
            undecoded_events: state.undecoded,
            ..GcPauseStats::default()
        };
        for (&(generation, reason), total) in &state.run {
            stats.pauses += total.count;
            stats.total_nanos = stats.total_nanos.saturating_add(total.nanos);
            stats
                .by_kind
                .push((generation, gc_reason_name(reason), total.count, total.nanos));
        }
        stats
    }
}

/// The synthetic frame of a kind of pause: `[GC gen 2 Induced]`.
pub(crate) fn pause_frame((generation, reason): GcKind) -> String {
    alloc::format!("[GC gen {generation} {}]", gc_reason_name(reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;

    /// Payloads laid out by hand from the manifest's templates.
    #[test]
    fn decodes_the_manifests_layouts() {
        // GCStart_V2: Count 7, Depth 2, Reason 1 (Induced), Type 0, id 0,
        // ClientSequenceNumber 0.
        let mut start = alloc::vec::Vec::new();
        for v in [7u32, 2, 1, 0] {
            start.extend_from_slice(&v.to_le_bytes());
        }
        start.extend_from_slice(&[0, 0]);
        start.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(
            decode_gc_event(GC_START, 2, &start),
            Some(GcEvent::Start {
                depth: 2,
                reason: 1
            })
        );
        // GCSuspendEE_V1: Reason 1, Count 7, id 0.
        let mut suspend = alloc::vec::Vec::new();
        suspend.extend_from_slice(&1u32.to_le_bytes());
        suspend.extend_from_slice(&7u32.to_le_bytes());
        suspend.extend_from_slice(&[0, 0]);
        assert_eq!(
            decode_gc_event(GC_SUSPEND_EE_BEGIN, 1, &suspend),
            Some(GcEvent::SuspendBegin { reason: 1 })
        );
        assert_eq!(
            decode_gc_event(GC_RESTART_EE_END, 1, &[0, 0]),
            Some(GcEvent::RestartEnd)
        );
        assert_eq!(decode_gc_event(GC_END, 1, &[0; 10]), Some(GcEvent::End));
        // Short payloads, unknown versions and other events.
        assert_eq!(decode_gc_event(GC_START, 2, &start[..10]), None);
        assert_eq!(decode_gc_event(GC_SUSPEND_EE_BEGIN, 1, &suspend[..5]), None);
        assert_eq!(decode_gc_event(GC_RESTART_EE_END, 1, &[0]), None);
        assert_eq!(decode_gc_event(GC_END, 1, &[0; 9]), None);
        assert_eq!(decode_gc_event(GC_START, 0, &start), None);
        assert_eq!(decode_gc_event(10, 4, &start), None);
        assert!(is_gc_event(GC_START) && !is_gc_event(10));
    }

    /// A scripted sequence: two induced gen-2 GCs, a background GC with a
    /// second suspension, the profiler's own suspension (not a GC pause),
    /// an undecodable event; periods and run totals kept apart.
    #[test]
    fn pauses_run_from_suspend_to_restart_and_are_charged_to_their_gc() {
        let pauses = GcPauses::default();
        let t = Instant::now();
        let ms = |n: u64| t + Duration::from_millis(n);
        let gc = |pauses: &GcPauses, at: u64, len: u64, depth, reason| {
            pauses.event(Some(GcEvent::SuspendBegin { reason: 1 }), ms(at));
            pauses.event(Some(GcEvent::Start { depth, reason }), ms(at + 1));
            pauses.event(Some(GcEvent::End), ms(at + len - 1));
            pauses.event(Some(GcEvent::RestartEnd), ms(at + len));
        };
        // A restart with nothing open, and a GC suspension before any GC
        // started: nothing.
        pauses.event(Some(GcEvent::RestartEnd), ms(0));
        pauses.event(Some(GcEvent::SuspendBegin { reason: 6 }), ms(1));
        pauses.event(Some(GcEvent::RestartEnd), ms(2));
        gc(&pauses, 10, 4, 2, 1);
        gc(&pauses, 20, 6, 2, 1);
        // The sampler's own suspension (reason 0, other): not a GC pause.
        pauses.event(Some(GcEvent::SuspendBegin { reason: 0 }), ms(30));
        pauses.event(Some(GcEvent::RestartEnd), ms(35));
        let first = pauses.take_period();
        assert_eq!(
            first.into_iter().collect::<Vec<_>>(),
            [(
                (2, 1),
                PauseTotal {
                    count: 2,
                    nanos: 10_000_000
                }
            )]
        );
        // A background gen-2 GC (reason 0): its start pause, then a later
        // suspension of its own with no GCStart, charged to it too.
        gc(&pauses, 40, 3, 2, 0);
        pauses.event(Some(GcEvent::SuspendBegin { reason: 6 }), ms(50));
        pauses.event(Some(GcEvent::RestartEnd), ms(52));
        pauses.event(None, ms(60));
        let second = pauses.take_period();
        assert_eq!(
            second.get(&(2, 0)),
            Some(&PauseTotal {
                count: 2,
                nanos: 5_000_000
            })
        );
        assert_eq!(second.len(), 1);
        assert!(pauses.take_period().is_empty());
        let stats = pauses.stats();
        assert_eq!(stats.pauses, 4);
        assert_eq!(stats.total_nanos, 15_000_000);
        assert_eq!(stats.max_nanos, 6_000_000);
        assert_eq!(stats.undecoded_events, 1);
        assert_eq!(
            stats.by_kind,
            [
                (2, String::from("AllocSmall"), 2, 5_000_000),
                (2, String::from("Induced"), 2, 10_000_000)
            ]
        );
        assert_eq!(pauses.run().len(), 2);
        assert_eq!(pause_frame((2, 1)), "[GC gen 2 Induced]");
    }
}
