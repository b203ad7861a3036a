//! Layouts of the runtime provider's events, whose metadata names no
//! fields, transcribed from the runtime's manifest
//! (dotnet/runtime `src/coreclr/vm/ClrEtwAll.man`: the templates and the
//! `GCReasonMap`). Only leading fields are listed where later versions
//! append more: the decoder ignores the rest.

use alloc::string::String;
use alloc::vec::Vec;

use crate::event_format::{Field, FieldType};

/// The runtime's own provider.
pub const RUNTIME_PROVIDER: &str = "Microsoft-Windows-DotNETRuntime";

fn fields(list: &[(&str, FieldType)]) -> Vec<Field> {
    list.iter()
        .map(|(name, ty)| Field {
            name: String::from(*name),
            ty: ty.clone(),
        })
        .collect()
}

/// The fields of a runtime-provider event, by event id and version, for the
/// events this table knows: `GCStart` (1, version 2 and later),
/// `GCAllocationTick` (10, version 2 and later), `ExceptionThrown` (80,
/// version 1), `ContentionStart` (81, versions 1 and 2) and
/// `ContentionStop` (91, versions 0 and 1). `None` for others.
pub fn runtime_fields(event_id: u32, version: u32) -> Option<Vec<Field>> {
    use FieldType::*;
    match (event_id, version) {
        // GCStart_V2: Count, Depth, Reason (GCReasonMap), Type (GCTypeMap),
        // ClrInstanceID, ClientSequenceNumber.
        (1, v) if v >= 2 => Some(fields(&[
            ("Count", UInt32),
            ("Depth", UInt32),
            ("Reason", UInt32),
            ("Type", UInt32),
            ("ClrInstanceID", UInt16),
            ("ClientSequenceNumber", UInt64),
        ])),
        // GCAllocationTick_V2; V3 appends Address, V4 (.NET 5 and later)
        // ObjectSize; later versions may append more.
        (10, v) if v >= 2 => {
            let mut list = fields(&[
                ("AllocationAmount", UInt32),
                ("AllocationKind", UInt32),
                ("ClrInstanceID", UInt16),
                ("AllocationAmount64", UInt64),
                ("TypeID", Pointer),
                ("TypeName", String),
                ("HeapIndex", UInt32),
            ]);
            if v >= 3 {
                list.extend(fields(&[("Address", Pointer)]));
            }
            if v >= 4 {
                list.extend(fields(&[("ObjectSize", UInt64)]));
            }
            Some(list)
        }
        // AllocationSampled (.NET 10; keyword 0x80000000000, level
        // Informational): AllocationKind (GCAllocationKindMap: 0 small, 1
        // large, 2 pinned object heap), ClrInstanceID, TypeID, TypeName,
        // Address, ObjectSize and SampledByteOffset, the 0-based offset in
        // the object of the byte whose trial succeeded (dotnet/runtime
        // docs/design/features/RandomizedAllocationSampling.md; the
        // template as dotnet/diagnostics' and dd-trace-dotnet's readers
        // transcribe it). Checked against 10.0.15's and 11.0.0's payloads:
        // `System.Int32[]` of 10,424 bytes, no HeapIndex (which NativeAOT's
        // FireEtwAllocationSampled call passes).
        (303, 0) => Some(fields(&[
            ("AllocationKind", UInt32),
            ("ClrInstanceID", UInt16),
            ("TypeID", Pointer),
            ("TypeName", String),
            ("Address", Pointer),
            ("ObjectSize", UInt64),
            ("SampledByteOffset", UInt64),
        ])),
        // ExceptionThrown_V1: ExceptionType, ExceptionMessage, ExceptionEIP,
        // ExceptionHRESULT, ExceptionFlags, ClrInstanceID.
        (80, 1) => Some(fields(&[
            ("ExceptionType", String),
            ("ExceptionMessage", String),
            ("ExceptionEIP", Pointer),
            ("ExceptionHRESULT", UInt32),
            ("ExceptionFlags", UInt16),
            ("ClrInstanceID", UInt16),
        ])),
        // ContentionStart_V1 and ContentionStop (template `Contention`):
        // ContentionFlags (ContentionFlagsMap: 0 managed, 1 native),
        // ClrInstanceID. ContentionStart_V2 (.NET 8) appends LockID,
        // AssociatedObjectID, LockOwnerThreadID; ContentionStop_V1 appends
        // DurationNs. As of dotnet/runtime 68813511f6a4855bd2f2b1605ae19418680ae7de.
        (81, 1) | (91, 0) => Some(fields(&[
            ("ContentionFlags", Byte),
            ("ClrInstanceID", UInt16),
        ])),
        (81, v) if v >= 2 => Some(fields(&[
            ("ContentionFlags", Byte),
            ("ClrInstanceID", UInt16),
            ("LockID", Pointer),
            ("AssociatedObjectID", Pointer),
            ("LockOwnerThreadID", UInt64),
        ])),
        (91, v) if v >= 1 => Some(fields(&[
            ("ContentionFlags", Byte),
            ("ClrInstanceID", UInt16),
            ("DurationNs", Double),
        ])),
        _ => None,
    }
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
