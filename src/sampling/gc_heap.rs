//! The GC heap's size after each GC, for the heap rules (`gc-heap`,
//! `heap-growth`; `triggers.rs`): the runtime provider's `GCHeapStats`
//! event (id 4, `GCKeyword` 0x1, level Informational: the keyword and
//! level the GC pauses already enable, `gc_pauses.rs`), which the GC writes
//! at the end of every GC, received through the sampler's in-process
//! EventPipe session (.NET 5 and later).
//!
//! The layout (`GCHeapStats_V2` of dotnet/runtime
//! `src/coreclr/vm/ClrEtwAll.man`, as the lead transcribed it for issue 49;
//! the shared table of `crate::event_format`): `GenerationSize0`,
//! `TotalPromotedSize0` .. `GenerationSize3`, `TotalPromotedSize3` (8 x
//! `UInt64`), `FinalizationPromotedSize`, `FinalizationPromotedCount`
//! (`UInt64`), `PinnedObjectCount`, `SinkBlockCount`, `GCHandleCount`
//! (`UInt32`), `ClrInstanceID` (`UInt16`), then V2's `GenerationSize4`,
//! `TotalPromotedSize4` (`UInt64`): 94 bytes for V1, 110 for V2. Checked at
//! run time, not assumed: the runtime's metadata for its own events names
//! no fields (`eventpipe/mod.rs`), so what can be checked is the event's id,
//! version, level and keywords the metadata gives, and the payload's length,
//! which must be the layout's exactly (V1, V2) or longer (a later version
//! appends); an event whose metadata does name its fields is read by them
//! (the metadata wins). The sampler keeps what the first event said,
//! for `summary.txt` (`gc_heap_event`, [`describe`]).
//!
//! The heap's size is the sum of `GenerationSize0` to `GenerationSize4`
//! (V1: to `GenerationSize3`): each generation's size after the GC (gen 3
//! the large object heap, gen 4 the pinned object heap), free space within
//! them included.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::eventpipe::{decode_payload, runtime_fields, EventMetadata, Field};

/// `GCHeapStats`' event id.
pub(crate) const GC_HEAP_STATS: u32 = 4;

/// `GCHeapStats`' level (Informational) and keyword (`GCKeyword`).
const LEVEL: u32 = 4;
const KEYWORD: u64 = 0x1;

/// What the heap rules saw: `summary.txt`'s `gc_heap_*` lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GcHeapStats {
    /// `GCHeapStats` events read (a rule watches the heap).
    pub events: u64,
    /// Those that did not decode (counted, skipped).
    pub undecoded_events: u64,
    /// The GC heap after the last GC, bytes (the generations summed).
    pub last_bytes: u64,
    /// What the first event's metadata and payload said: `id=4 version=2
    /// level=4 keywords=0x1 metadata_fields=0 event_version=2
    /// payload_bytes=110 layout=manifest V2`.
    pub first_event: Option<String>,
}

impl GcHeapStats {
    /// The `key=value` pairs of `summary.txt`: `gc_heap_events`,
    /// `gc_heap_undecoded_events`, `gc_heap_last_bytes`, and
    /// `gc_heap_event` once one was read.
    pub(crate) fn summary_pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = alloc::vec![
            ("gc_heap_events", format!("{}", self.events)),
            (
                "gc_heap_undecoded_events",
                format!("{}", self.undecoded_events)
            ),
            ("gc_heap_last_bytes", format!("{}", self.last_bytes)),
        ];
        if let Some(first) = &self.first_event {
            out.push(("gc_heap_event", first.clone()));
        }
        out
    }
}

/// The payload's length by the manifest's layout: V1 (94), V2 (110).
fn layout_len(version: u32) -> Option<usize> {
    match version {
        1 => Some(8 * 8 + 8 + 8 + 3 * 4 + 2),
        v if v >= 2 => Some(8 * 8 + 8 + 8 + 3 * 4 + 2 + 2 * 8),
        _ => None,
    }
}

/// What the first `GCHeapStats` event's metadata and payload said, as
/// `summary.txt`'s `gc_heap_event` line has it: `id=4 version=2 level=4
/// keywords=0x1 metadata_fields=0 event_version=2 payload_bytes=110
/// layout=manifest V2`
/// (`layout=metadata` when its metadata named the fields, `layout=none`
/// when it did not decode).
pub(crate) fn describe(metadata: &[u8], version: u32, data: &[u8], decoded: bool) -> String {
    let meta = match EventMetadata::parse(metadata) {
        Ok(m) => format!(
            "id={} version={} level={} keywords=0x{:x} metadata_fields={}",
            m.id,
            m.version,
            m.level,
            m.keywords,
            m.fields.len()
        ),
        Err(_) => String::from("metadata=unreadable"),
    };
    let layout = match EventMetadata::parse(metadata) {
        _ if !decoded => String::from("none"),
        Ok(m) if !m.fields.is_empty() => String::from("metadata"),
        _ => format!("manifest V{}", version.min(2)),
    };
    format!(
        "{meta} event_version={version} payload_bytes={} layout={layout}",
        data.len()
    )
}

/// The heap's size after the GC, in bytes (the generations' sizes summed),
/// from a `GCHeapStats` event: by its metadata's fields when it names them,
/// else by the manifest's layout, whose length the payload must have (V1,
/// V2; a later version at least V2's). `None` when it does not decode, or
/// the metadata says another event, level or keyword.
pub(crate) fn heap_after_gc(metadata: &[u8], version: u32, data: &[u8]) -> Option<u64> {
    let meta = EventMetadata::parse(metadata).ok();
    let fields: Vec<Field> = match &meta {
        Some(m) if !m.fields.is_empty() => m.fields.clone(),
        _ => {
            if let Some(m) = &meta {
                let same = m.id == GC_HEAP_STATS
                    && m.version == version
                    && m.level == LEVEL
                    && m.keywords & KEYWORD != 0;
                if !same {
                    return None;
                }
            }
            let expected = layout_len(version)?;
            let fits = match version {
                1 | 2 => data.len() == expected,
                _ => data.len() >= expected,
            };
            if !fits {
                return None;
            }
            runtime_fields(GC_HEAP_STATS, version)?
        }
    };
    let values = decode_payload(&fields, data).ok()?;
    let mut total = 0u64;
    let mut found = 0;
    for g in 0..5 {
        let name = format!("GenerationSize{g}");
        let Some(index) = fields.iter().position(|f| f.name == name) else {
            continue;
        };
        total = total.checked_add(values.get(index)?.as_u64()?)?;
        found += 1;
    }
    // At least the four generations every version has.
    (found >= 4).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A payload laid out by hand: generation sizes 1..5 MB, promoted
    /// bytes, counts, the instance id; V1 without gen 4.
    fn payload(v2: bool) -> Vec<u8> {
        let mut data = Vec::new();
        for g in 0..4u64 {
            data.extend_from_slice(&((g + 1) << 20).to_le_bytes());
            data.extend_from_slice(&(g * 1000).to_le_bytes());
        }
        data.extend_from_slice(&7u64.to_le_bytes());
        data.extend_from_slice(&8u64.to_le_bytes());
        for count in [9u32, 10, 11] {
            data.extend_from_slice(&count.to_le_bytes());
        }
        data.extend_from_slice(&0u16.to_le_bytes());
        if v2 {
            data.extend_from_slice(&(5u64 << 20).to_le_bytes());
            data.extend_from_slice(&12u64.to_le_bytes());
        }
        data
    }

    /// The metadata blob the runtime gives its own events: id, an empty
    /// name, keywords, version, level, no fields.
    fn blob(id: u32, keywords: u64, version: u32, level: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&keywords.to_le_bytes());
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&level.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b
    }

    #[test]
    fn the_heap_is_the_generations_summed() {
        let v2 = payload(true);
        assert_eq!(v2.len(), 110);
        assert_eq!(payload(false).len(), 94);
        let meta = blob(4, 1, 2, 4);
        assert_eq!(heap_after_gc(&meta, 2, &v2), Some(15 << 20));
        assert_eq!(
            heap_after_gc(&blob(4, 1, 1, 4), 1, &payload(false)),
            Some(10 << 20)
        );
        // A later version appends: its leading fields are V2's.
        let mut v3 = v2.clone();
        v3.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(heap_after_gc(&blob(4, 1, 3, 4), 3, &v3), Some(15 << 20));
        assert_eq!(
            describe(&meta, 2, &v2, true),
            "id=4 version=2 level=4 keywords=0x1 metadata_fields=0 event_version=2 \
             payload_bytes=110 layout=manifest V2"
        );
    }

    /// A payload of another length than its version's layout, metadata
    /// of another event, level or keyword, version 0: refused.
    #[test]
    fn a_layout_that_disagrees_is_refused() {
        let v2 = payload(true);
        let meta = blob(4, 1, 2, 4);
        assert_eq!(heap_after_gc(&meta, 2, &v2[..109]), None);
        let mut longer = v2.clone();
        longer.push(0);
        assert_eq!(heap_after_gc(&meta, 2, &longer), None);
        assert_eq!(heap_after_gc(&blob(4, 1, 1, 4), 1, &v2), None);
        assert_eq!(heap_after_gc(&blob(5, 1, 2, 4), 2, &v2), None);
        assert_eq!(heap_after_gc(&blob(4, 1, 2, 5), 2, &v2), None);
        assert_eq!(heap_after_gc(&blob(4, 0x8000, 2, 4), 2, &v2), None);
        assert_eq!(heap_after_gc(&blob(4, 1, 3, 4), 2, &v2), None);
        assert_eq!(heap_after_gc(&blob(4, 1, 0, 4), 0, &v2), None);
        assert!(describe(&meta, 2, &v2[..109], false).ends_with("layout=none"));
    }

    /// Metadata that names its fields is read by them, whatever the
    /// manifest says: here gen 1 before gen 0, and a field between.
    #[test]
    fn metadata_that_names_the_fields_wins() {
        let mut meta = blob(4, 1, 2, 4);
        meta.truncate(meta.len() - 4);
        let names = [
            "GenerationSize1",
            "Other",
            "GenerationSize0",
            "GenerationSize2",
            "GenerationSize3",
        ];
        meta.extend_from_slice(&(names.len() as u32).to_le_bytes());
        for name in names {
            // System.TypeCode UInt64 (12), then the UTF-16 name.
            meta.extend_from_slice(&12u32.to_le_bytes());
            for unit in name.encode_utf16().chain([0]) {
                meta.extend_from_slice(&unit.to_le_bytes());
            }
        }
        let data: Vec<u8> = [1u64, 100, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(heap_after_gc(&meta, 2, &data), Some(10));
        assert!(describe(&meta, 2, &data, true)
            .ends_with("metadata_fields=5 event_version=2 payload_bytes=40 layout=metadata"));
    }
}
