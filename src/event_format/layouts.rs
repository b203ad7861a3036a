//! Layouts of the runtime's own events, whose metadata names no fields
//! (dotnet/runtime#96365), transcribed from the runtime's manifest
//! (dotnet/runtime `src/coreclr/vm/ClrEtwAll.man`, templates
//! `MethodLoadUnloadVerbose_V1`/`_V2`, `ModuleLoadUnload_V1`/`_V2`,
//! `GCStart_V1`/`_V2`, `GCEnd_V1`, `GCHeapStats_V1`/`_V2`, `GCNoUserData`, `GCSuspendEE_V1`, `GCAllocationTick_V2`/`_V3`/`_V4`,
//! `BulkType`, `GCBulkNode`, `GCBulkEdge`, `GCBulkRootEdge`,
//! `ThreadStartWork`, `Exception`, `Contention`, `ContentionStart_V2`,
//! `ContentionStop_V1`, `AllocationSampled`, `WaitHandleWaitStart`,
//! `WaitHandleWaitStop`) for the events this crate
//! uses, in process (`eventpipe::runtime_fields`) and in traces
//! (`nettrace::clr_fields`). Where a later
//! version appends fields, the earlier layout still reads the leading ones
//! (the decoder ignores trailing bytes).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::event_format::{Field, FieldType, Length};

/// The runtime's provider.
pub const RUNTIME_PROVIDER: &str = "Microsoft-Windows-DotNETRuntime";
/// The runtime's rundown provider (the methods and modules loaded, sent
/// when a session with rundown stops).
pub const RUNDOWN_PROVIDER: &str = "Microsoft-Windows-DotNETRuntimeRundown";
/// EventPipe's sample profiler: one `ThreadSample` (event 0) per thread per
/// sampling interval, with the thread's stack.
pub const SAMPLE_PROFILER_PROVIDER: &str = "Microsoft-DotNETCore-SampleProfiler";

fn f(name: &str, ty: FieldType) -> Field {
    Field {
        name: String::from(name),
        ty,
    }
}

fn counted(count: &'static str, element: FieldType) -> FieldType {
    FieldType::Array {
        element: Box::new(element),
        length: Length::Field(count),
    }
}

/// `MethodLoadUnloadVerbose_V1` (`_V2` appends `ReJITID`).
fn method_verbose(version: u32) -> Vec<Field> {
    use FieldType::*;
    let mut v = vec![
        f("MethodID", UInt64),
        f("ModuleID", UInt64),
        f("MethodStartAddress", UInt64),
        f("MethodSize", UInt32),
        f("MethodToken", UInt32),
        f("MethodFlags", UInt32),
        f("MethodNamespace", String),
        f("MethodName", String),
        f("MethodSignature", String),
        f("ClrInstanceID", UInt16),
    ];
    if version >= 2 {
        v.push(f("ReJITID", UInt64));
    }
    v
}

/// `ModuleLoadUnload_V1` (`_V2` appends the PDB fields).
fn module(version: u32) -> Vec<Field> {
    use FieldType::*;
    let mut v = vec![
        f("ModuleID", UInt64),
        f("AssemblyID", UInt64),
        f("ModuleFlags", UInt32),
        f("Reserved1", UInt32),
        f("ModuleILPath", String),
        f("ModuleNativePath", String),
        f("ClrInstanceID", UInt16),
    ];
    if version >= 2 {
        v.extend([
            f("ManagedPdbSignature", Guid),
            f("ManagedPdbAge", UInt32),
            f("ManagedPdbBuildPath", String),
            f("NativePdbSignature", Guid),
            f("NativePdbAge", UInt32),
            f("NativePdbBuildPath", String),
        ]);
    }
    v
}

/// The fields of a runtime, rundown or sample-profiler event, by provider,
/// event id and version; `None` for events this table does not know.
///
/// | provider | event | id | layout |
/// | --- | --- | --- | --- |
/// | runtime | `GCStart` | 1 | `Count`, `Depth`, `Reason`, `Type`, `ClrInstanceID`, (v2) `ClientSequenceNumber` |
/// | runtime | `GCEnd` | 2 | `Count`, `Depth`, `ClrInstanceID` |
/// | runtime | `GCHeapStats` | 4 | v1+: `GenerationSize0`, `TotalPromotedSize0` .. `GenerationSize3`, `TotalPromotedSize3`, `FinalizationPromotedSize`, `FinalizationPromotedCount`, `PinnedObjectCount`, `SinkBlockCount`, `GCHandleCount`, `ClrInstanceID`, (v2) `GenerationSize4`, `TotalPromotedSize4` |
/// | runtime | `GCRestartEEEnd`, `GCRestartEEBegin`, `GCSuspendEEEnd` | 3, 7, 8 | `ClrInstanceID` (v1) |
/// | runtime | `GCSuspendEEBegin` | 9 | `Reason`, `Count`, `ClrInstanceID` (v1) |
/// | runtime | `GCAllocationTick` | 10 | v2+: ... `TypeID`, `TypeName`, `HeapIndex`, (v3) `Address`, (v4) `ObjectSize` |
/// | runtime | `GCBulkType` | 15 | `Count`, `ClrInstanceID`, `Values[Count]` of types (`TypeID`, `ModuleID`, `TypeNameID`, `Flags`, `CorElementType`, `Name`, `TypeParameterCount`, `TypeParameters[TypeParameterCount]`) |
/// | runtime | `GCBulkRootEdge` | 16 | `Index`, `Count`, `ClrInstanceID`, `Values[Count]` of root edges |
/// | runtime | `GCBulkNode` | 18 | `Index`, `Count`, `ClrInstanceID`, `Values[Count]` of objects |
/// | runtime | `GCBulkEdge` | 19 | `Index`, `Count`, `ClrInstanceID`, `Values[Count]` of references |
/// | runtime | `ThreadCreating`, `ThreadRunning` | 70, 71 | `ID`, `ClrInstanceID` |
/// | runtime | `ExceptionThrown` | 80 | `ExceptionType`, `ExceptionMessage`, `ExceptionEIP`, `ExceptionHRESULT`, `ExceptionFlags`, `ClrInstanceID` |
/// | runtime | `ContentionStart` | 81 | `ContentionFlags`, `ClrInstanceID`, (v2) `LockID`, `AssociatedObjectID`, `LockOwnerThreadID` |
/// | runtime | `ContentionStop` | 91 | `ContentionFlags`, `ClrInstanceID`, (v1) `DurationNs` |
/// | runtime | `WaitHandleWaitStart` | 301 | `WaitSource`, `AssociatedObjectID`, `ClrInstanceID` |
/// | runtime | `WaitHandleWaitStop` | 302 | `ClrInstanceID` |
/// | runtime | `AllocationSampled` | 303 | `AllocationKind`, `ClrInstanceID`, `TypeID`, `TypeName`, `Address`, `ObjectSize`, `SampledByteOffset` |
/// | runtime | `MethodLoadVerbose`, `MethodUnloadVerbose` | 143, 144 | `MethodID` .. `MethodNamespace`, `MethodName`, `MethodSignature`, `ClrInstanceID`, (v2) `ReJITID` |
/// | runtime | `ModuleLoad`, `ModuleUnload` | 152, 153 | `ModuleID`, `AssemblyID`, `ModuleFlags`, `Reserved1`, `ModuleILPath`, `ModuleNativePath`, `ClrInstanceID`, (v2) PDB fields |
/// | rundown | `MethodDCStartVerbose`, `MethodDCEndVerbose` | 143, 144 | as `MethodLoadVerbose` |
/// | rundown | `ModuleDCStart`, `ModuleDCEnd` | 153, 154 | as `ModuleLoad` |
/// | sample profiler | `ThreadSample` | 0 | `Type` (`u32`: 1 managed code, 2 external code) |
pub fn clr_fields(provider: &str, event_id: u32, version: u32) -> Option<Vec<Field>> {
    use FieldType::*;
    match provider {
        RUNTIME_PROVIDER => Some(match (event_id, version) {
            (1, v) if v >= 1 => {
                let mut list = vec![
                    f("Count", UInt32),
                    f("Depth", UInt32),
                    f("Reason", UInt32),
                    f("Type", UInt32),
                    f("ClrInstanceID", UInt16),
                ];
                if v >= 2 {
                    list.push(f("ClientSequenceNumber", UInt64));
                }
                list
            }
            (2, v) if v >= 1 => vec![
                f("Count", UInt32),
                f("Depth", UInt32),
                f("ClrInstanceID", UInt16),
            ],
            (3 | 7 | 8, v) if v >= 1 => vec![f("ClrInstanceID", UInt16)],
            // GCHeapStats (GCKeyword, Informational), after each GC: the
            // generations' sizes and promoted bytes (gen 3 the large object
            // heap; gen 4, V2's, the pinned object heap, .NET 5).
            (4, v) if v >= 1 => {
                let mut list = vec![];
                for g in 0..4 {
                    list.push(f(&alloc::format!("GenerationSize{g}"), UInt64));
                    list.push(f(&alloc::format!("TotalPromotedSize{g}"), UInt64));
                }
                list.extend([
                    f("FinalizationPromotedSize", UInt64),
                    f("FinalizationPromotedCount", UInt64),
                    f("PinnedObjectCount", UInt32),
                    f("SinkBlockCount", UInt32),
                    f("GCHandleCount", UInt32),
                    f("ClrInstanceID", UInt16),
                ]);
                if v >= 2 {
                    list.push(f("GenerationSize4", UInt64));
                    list.push(f("TotalPromotedSize4", UInt64));
                }
                list
            }
            (9, v) if v >= 1 => vec![
                f("Reason", UInt32),
                f("Count", UInt32),
                f("ClrInstanceID", UInt16),
            ],
            (10, v) if v >= 2 => {
                let mut list = vec![
                    f("AllocationAmount", UInt32),
                    f("AllocationKind", UInt32),
                    f("ClrInstanceID", UInt16),
                    f("AllocationAmount64", UInt64),
                    f("TypeID", Pointer),
                    f("TypeName", String),
                    f("HeapIndex", UInt32),
                ];
                if v >= 3 {
                    list.push(f("Address", Pointer));
                }
                if v >= 4 {
                    list.push(f("ObjectSize", UInt64));
                }
                list
            }
            (15, _) => vec![
                f("Count", UInt32),
                f("ClrInstanceID", UInt16),
                f(
                    "Values",
                    counted(
                        "Count",
                        Struct(vec![
                            f("TypeID", UInt64),
                            f("ModuleID", UInt64),
                            f("TypeNameID", UInt32),
                            f("Flags", UInt32),
                            f("CorElementType", Byte),
                            f("Name", String),
                            f("TypeParameterCount", UInt32),
                            f("TypeParameters", counted("TypeParameterCount", UInt64)),
                        ]),
                    ),
                ),
            ],
            (16, _) => bulk(Struct(vec![
                f("RootedNodeAddress", Pointer),
                f("GCRootKind", Byte),
                f("GCRootFlag", UInt32),
                f("GCRootID", Pointer),
            ])),
            (18, _) => bulk(Struct(vec![
                f("Address", Pointer),
                f("Size", UInt64),
                f("TypeID", UInt64),
                f("EdgeCount", UInt64),
            ])),
            (19, _) => bulk(Struct(vec![
                f("Value", Pointer),
                f("ReferencingFieldID", UInt32),
            ])),
            (70 | 71, _) => vec![f("ID", Pointer), f("ClrInstanceID", UInt16)],
            // AllocationSampled (.NET 10; keyword 0x80000000000, level
            // Informational): AllocationKind (GCAllocationKindMap: 0 small,
            // 1 large, 2 pinned object heap), ClrInstanceID, TypeID,
            // TypeName, Address, ObjectSize and SampledByteOffset, the
            // 0-based offset in the object of the byte whose trial succeeded
            // (dotnet/runtime docs/design/features/RandomizedAllocationSampling.md;
            // the template as dotnet/diagnostics' and dd-trace-dotnet's
            // readers transcribe it). Checked against 10.0.15's and 11.0.0's
            // payloads: `System.Int32[]` of 10,424 bytes, no HeapIndex (which
            // NativeAOT's FireEtwAllocationSampled call passes).
            // WaitHandleWaitStart and WaitHandleWaitStop (.NET 9; keyword
            // WaitHandle 0x40000000000, level Verbose, task 39, version 0):
            // `WaitSource` win:UInt8 (map WaitHandleWaitSourceMap: 0
            // Unknown, 1 MonitorWait), `AssociatedObjectID` win:Pointer,
            // `ClrInstanceID` win:UInt16; the stop has `ClrInstanceID` only
            // (ClrEtwAll.man's templates as the runtime's own tests and
            // dd-trace-dotnet's parser quote them). Checked against 9.0.23's,
            // 10.0.15's and 11.0.0's payloads: 11 bytes (1 + 8 + 2) and 2
            // bytes on x86-64, metadata of id 301/302, version 0, keywords
            // 0x40000000000, level 5 and no fields.
            (301, 0) => vec![
                f("WaitSource", Byte),
                f("AssociatedObjectID", Pointer),
                f("ClrInstanceID", UInt16),
            ],
            (302, 0) => vec![f("ClrInstanceID", UInt16)],
            (303, 0) => vec![
                f("AllocationKind", UInt32),
                f("ClrInstanceID", UInt16),
                f("TypeID", Pointer),
                f("TypeName", String),
                f("Address", Pointer),
                f("ObjectSize", UInt64),
                f("SampledByteOffset", UInt64),
            ],
            (80, v) if v >= 1 => vec![
                f("ExceptionType", String),
                f("ExceptionMessage", String),
                f("ExceptionEIP", Pointer),
                f("ExceptionHRESULT", UInt32),
                f("ExceptionFlags", UInt16),
                f("ClrInstanceID", UInt16),
            ],
            (81, 1) | (91, 0) => vec![f("ContentionFlags", Byte), f("ClrInstanceID", UInt16)],
            (81, v) if v >= 2 => vec![
                f("ContentionFlags", Byte),
                f("ClrInstanceID", UInt16),
                f("LockID", Pointer),
                f("AssociatedObjectID", Pointer),
                f("LockOwnerThreadID", UInt64),
            ],
            (91, v) if v >= 1 => vec![
                f("ContentionFlags", Byte),
                f("ClrInstanceID", UInt16),
                f("DurationNs", Double),
            ],
            (143 | 144, v) if v >= 1 => method_verbose(v),
            (152 | 153, v) if v >= 1 => module(v),
            _ => return None,
        }),
        RUNDOWN_PROVIDER => Some(match (event_id, version) {
            (143 | 144, v) if v >= 1 => method_verbose(v),
            (153 | 154, v) if v >= 1 => module(v),
            _ => return None,
        }),
        SAMPLE_PROFILER_PROVIDER => match event_id {
            0 => Some(vec![f("Type", UInt32)]),
            _ => None,
        },
        _ => None,
    }
}

/// `Index`, `Count`, `ClrInstanceID`, then `Count` elements (the heap
/// dump's bulk events).
fn bulk(element: FieldType) -> Vec<Field> {
    vec![
        f("Index", FieldType::UInt32),
        f("Count", FieldType::UInt32),
        f("ClrInstanceID", FieldType::UInt16),
        f("Values", counted("Count", element)),
    ]
}
