//! Layouts of the runtime provider's events, whose metadata names no
//! fields: the table the trace reader uses too (`crate::event_format`,
//! transcribed from the runtime's manifest, dotnet/runtime
//! `src/coreclr/vm/ClrEtwAll.man`), and the manifest's `GCReasonMap`.
//! Only leading fields are listed where later versions append more: the
//! decoder ignores the rest.

use alloc::string::String;
use alloc::vec::Vec;

use crate::event_format::{clr_fields, Field};

pub use crate::event_format::RUNTIME_PROVIDER;

/// The fields of a runtime-provider event, by event id and version, for the
/// events the manifest table knows (`nettrace::clr_fields` for
/// `Microsoft-Windows-DotNETRuntime`): among them `GCStart` (1),
/// `GCAllocationTick` (10, version 2 and later), `ExceptionThrown` (80),
/// `ContentionStart` (81), `ContentionStop` (91), `AllocationSampled`
/// (303), the method and module load events. `None` for others.
pub fn runtime_fields(event_id: u32, version: u32) -> Option<Vec<Field>> {
    clr_fields(RUNTIME_PROVIDER, event_id, version)
}

/// A GC reason by its name in the manifest's `GCReasonMap` (`Induced`,
/// `AllocSmall`, ...); `Reason<n>` for values the map does not list.
pub fn gc_reason_name(reason: u32) -> String {
    let name = match reason {
        0 => "AllocSmall",
        1 => "Induced",
        2 => "LowMemory",
        3 => "Empty",
        4 => "AllocLarge",
        5 => "OutOfSpaceSmallObjectHeap",
        6 => "OutOfSpaceLargeObjectHeap",
        7 => "InducedNoForce",
        8 => "Stress",
        9 => "InducedLowMemory",
        _ => return alloc::format!("Reason{reason}"),
    };
    String::from(name)
}
