//! The profiling API's C types (corprof.idl) and the profiling and metadata
//! error codes (corerror.xml), checked against values transcribed a second
//! time, independently of the declarations, from the runtime's files.
#![allow(missing_docs, non_snake_case)]

mod common;

use common::ids::fake_id;

use core::ffi::c_void;
use core::mem::{align_of, offset_of, size_of};

use corprof::metadata::*;
use corprof::profiling::*;
use corprof::*;

// ---------------------------------------------------------------------------
// Enum values (transcribed again from corprof.idl)
// ---------------------------------------------------------------------------

#[test]
fn enum_values_match_the_idl() {
    let u32_enums: &[(u32, u32)] = &[
        (COR_PRF_CACHED_FUNCTION_FOUND.0, 0),
        (COR_PRF_CACHED_FUNCTION_NOT_FOUND.0, 1),
        (COR_PRF_TRANSITION_CALL.0, 0),
        (COR_PRF_TRANSITION_RETURN.0, 1),
        (COR_PRF_SUSPEND_OTHER.0, 0),
        (COR_PRF_SUSPEND_FOR_GC.0, 1),
        (COR_PRF_SUSPEND_FOR_APPDOMAIN_SHUTDOWN.0, 2),
        (COR_PRF_SUSPEND_FOR_CODE_PITCHING.0, 3),
        (COR_PRF_SUSPEND_FOR_SHUTDOWN.0, 4),
        (COR_PRF_SUSPEND_FOR_INPROC_DEBUGGER.0, 6),
        (COR_PRF_SUSPEND_FOR_GC_PREP.0, 7),
        (COR_PRF_SUSPEND_FOR_REJIT.0, 8),
        (COR_PRF_SUSPEND_FOR_PROFILER.0, 9),
        (COR_PRF_DESKTOP_CLR.0, 1),
        (COR_PRF_CORE_CLR.0, 2),
        (COR_PRF_EVENTPIPE_OBJECT.0, 1),
        (COR_PRF_EVENTPIPE_BOOLEAN.0, 3),
        (COR_PRF_EVENTPIPE_CHAR.0, 4),
        (COR_PRF_EVENTPIPE_SBYTE.0, 5),
        (COR_PRF_EVENTPIPE_BYTE.0, 6),
        (COR_PRF_EVENTPIPE_INT16.0, 7),
        (COR_PRF_EVENTPIPE_UINT16.0, 8),
        (COR_PRF_EVENTPIPE_INT32.0, 9),
        (COR_PRF_EVENTPIPE_UINT32.0, 10),
        (COR_PRF_EVENTPIPE_INT64.0, 11),
        (COR_PRF_EVENTPIPE_UINT64.0, 12),
        (COR_PRF_EVENTPIPE_SINGLE.0, 13),
        (COR_PRF_EVENTPIPE_DOUBLE.0, 14),
        (COR_PRF_EVENTPIPE_DECIMAL.0, 15),
        (COR_PRF_EVENTPIPE_DATETIME.0, 16),
        (COR_PRF_EVENTPIPE_GUID.0, 17),
        (COR_PRF_EVENTPIPE_STRING.0, 18),
        (COR_PRF_EVENTPIPE_ARRAY.0, 19),
        (COR_PRF_EVENTPIPE_LOGALWAYS.0, 0),
        (COR_PRF_EVENTPIPE_CRITICAL.0, 1),
        (COR_PRF_EVENTPIPE_ERROR.0, 2),
        (COR_PRF_EVENTPIPE_WARNING.0, 3),
        (COR_PRF_EVENTPIPE_INFORMATIONAL.0, 4),
        (COR_PRF_EVENTPIPE_VERBOSE.0, 5),
        (COR_PRF_HANDLE_TYPE_WEAK.0, 1),
        (COR_PRF_HANDLE_TYPE_STRONG.0, 2),
        (COR_PRF_HANDLE_TYPE_PINNED.0, 3),
        (COR_PRF_GC_ROOT_STACK.0, 1),
        (COR_PRF_GC_ROOT_FINALIZER.0, 2),
        (COR_PRF_GC_ROOT_HANDLE.0, 3),
        (COR_PRF_GC_ROOT_OTHER.0, 0),
        (COR_PRF_GC_GEN_0.0, 0),
        (COR_PRF_GC_GEN_1.0, 1),
        (COR_PRF_GC_GEN_2.0, 2),
        (COR_PRF_GC_LARGE_OBJECT_HEAP.0, 3),
        (COR_PRF_GC_PINNED_OBJECT_HEAP.0, 4),
        (COR_PRF_CLAUSE_NONE.0, 0),
        (COR_PRF_CLAUSE_FILTER.0, 1),
        (COR_PRF_CLAUSE_CATCH.0, 2),
        (COR_PRF_CLAUSE_FINALLY.0, 3),
        (COR_PRF_GC_INDUCED.0, 1),
        (COR_PRF_GC_OTHER.0, 0),
        (PROFILER_PARENT_UNKNOWN.0, 0xFFFFFFFD),
        (PROFILER_GLOBAL_CLASS.0, 0xFFFFFFFE),
        (PROFILER_GLOBAL_MODULE.0, 0xFFFFFFFF),
    ];
    for (i, &(got, want)) in u32_enums.iter().enumerate() {
        assert_eq!(got, want, "entry {i}");
    }
    assert_eq!(NO_MAPPING.0, -1);
    assert_eq!(PROLOG.0, -2);
    assert_eq!(EPILOG.0, -3);
    // The IL offset field is a ULONG32; the special values are its two's complement.
    assert_eq!(NO_MAPPING.0 as u32, 0xFFFF_FFFF);
    assert_eq!(EPILOG.0 as u32, 0xFFFF_FFFD);

    // Named value counts per enum.
    assert_eq!(COR_PRF_SUSPEND_REASON::VALUES.len(), 9);
    assert_eq!(COR_PRF_EVENTPIPE_PARAM_TYPE::VALUES.len(), 18);
    assert_eq!(COR_PRF_GC_GENERATION::VALUES.len(), 5);
}

#[test]
fn enums_print_by_name_and_unknown_values_by_number() {
    assert_eq!(format!("{:?}", COR_PRF_GC_INDUCED), "COR_PRF_GC_INDUCED");
    assert_eq!(
        format!("{:?}", COR_PRF_GC_REASON(99)),
        "COR_PRF_GC_REASON(99)"
    );
    assert_eq!(format!("{:?}", COR_PRF_GC_REASON(1)), "COR_PRF_GC_INDUCED");
    assert_eq!(COR_PRF_GC_REASON(99).name(), None);
    assert_eq!(
        COR_PRF_SUSPEND_FOR_PROFILER.name(),
        Some("COR_PRF_SUSPEND_FOR_PROFILER")
    );
    assert_eq!(
        format!("{:?}", COR_PRF_SUSPEND_REASON(5)),
        "COR_PRF_SUSPEND_REASON(5)"
    );
    assert_eq!(format!("{:?}", PROLOG), "PROLOG");
    assert_eq!(
        format!("{:?}", CorDebugIlToNativeMappingTypes(-7)),
        "CorDebugIlToNativeMappingTypes(-7)"
    );
    assert_eq!(COR_PRF_GC_GENERATION::default(), COR_PRF_GC_GEN_0);
}

// ---------------------------------------------------------------------------
// Flag values and set operations
// ---------------------------------------------------------------------------

#[test]
fn monitor_flag_values_match_the_idl() {
    let singles: &[(COR_PRF_MONITOR, u32)] = &[
        (COR_PRF_MONITOR_NONE, 0x0),
        (COR_PRF_MONITOR_FUNCTION_UNLOADS, 0x1),
        (COR_PRF_MONITOR_CLASS_LOADS, 0x2),
        (COR_PRF_MONITOR_MODULE_LOADS, 0x4),
        (COR_PRF_MONITOR_ASSEMBLY_LOADS, 0x8),
        (COR_PRF_MONITOR_APPDOMAIN_LOADS, 0x10),
        (COR_PRF_MONITOR_JIT_COMPILATION, 0x20),
        (COR_PRF_MONITOR_EXCEPTIONS, 0x40),
        (COR_PRF_MONITOR_GC, 0x80),
        (COR_PRF_MONITOR_OBJECT_ALLOCATED, 0x100),
        (COR_PRF_MONITOR_THREADS, 0x200),
        (COR_PRF_MONITOR_REMOTING, 0x400),
        (COR_PRF_MONITOR_CODE_TRANSITIONS, 0x800),
        (COR_PRF_MONITOR_ENTERLEAVE, 0x1000),
        (COR_PRF_MONITOR_CCW, 0x2000),
        (COR_PRF_MONITOR_REMOTING_COOKIE, 0x4400),
        (COR_PRF_MONITOR_REMOTING_ASYNC, 0x8400),
        (COR_PRF_MONITOR_SUSPENDS, 0x10000),
        (COR_PRF_MONITOR_CACHE_SEARCHES, 0x20000),
        (COR_PRF_ENABLE_REJIT, 0x40000),
        (COR_PRF_ENABLE_INPROC_DEBUGGING, 0x80000),
        (COR_PRF_ENABLE_JIT_MAPS, 0x100000),
        (COR_PRF_DISABLE_INLINING, 0x200000),
        (COR_PRF_DISABLE_OPTIMIZATIONS, 0x400000),
        (COR_PRF_ENABLE_OBJECT_ALLOCATED, 0x800000),
        (COR_PRF_MONITOR_CLR_EXCEPTIONS, 0x1000000),
        (COR_PRF_MONITOR_ALL, 0x0107FFFF),
        (COR_PRF_ENABLE_FUNCTION_ARGS, 0x2000000),
        (COR_PRF_ENABLE_FUNCTION_RETVAL, 0x4000000),
        (COR_PRF_ENABLE_FRAME_INFO, 0x8000000),
        (COR_PRF_ENABLE_STACK_SNAPSHOT, 0x10000000),
        (COR_PRF_USE_PROFILE_IMAGES, 0x20000000),
        (
            COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST,
            0x40000000,
        ),
        (COR_PRF_DISABLE_ALL_NGEN_IMAGES, 0x80000000),
        (COR_PRF_ALL, 0x8FFFFFFF),
        // Composite masks, or-ed by hand from the IDL's member lists.
        (COR_PRF_REQUIRE_PROFILE_IMAGE, 0x20001800),
        (COR_PRF_ALLOWABLE_AFTER_ATTACH, 0x106502FE),
        (COR_PRF_ALLOWABLE_NOTIFICATION_PROFILER, 0xB1E32B7F),
        (COR_PRF_MONITOR_IMMUTABLE, 0xEE98CC00),
    ];
    for &(flag, want) in singles {
        assert_eq!(flag.bits(), want, "{flag:?}");
    }
    assert_eq!(COR_PRF_MONITOR::FLAGS.len(), singles.len());
}

#[test]
fn other_flag_values_match_the_idl() {
    let high: &[(COR_PRF_HIGH_MONITOR, u32)] = &[
        (COR_PRF_HIGH_MONITOR_NONE, 0),
        (COR_PRF_HIGH_ADD_ASSEMBLY_REFERENCES, 0x1),
        (COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED, 0x2),
        (COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS, 0x4),
        (COR_PRF_HIGH_DISABLE_TIERED_COMPILATION, 0x8),
        (COR_PRF_HIGH_BASIC_GC, 0x10),
        (COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS, 0x20),
        (COR_PRF_HIGH_REQUIRE_PROFILE_IMAGE, 0),
        (COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED, 0x40),
        (COR_PRF_HIGH_MONITOR_EVENT_PIPE, 0x80),
        (COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED, 0x100),
        (COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH, 0xF6),
        (COR_PRF_HIGH_ALLOWABLE_NOTIFICATION_PROFILER, 0xFE),
        (COR_PRF_HIGH_MONITOR_IMMUTABLE, 0x8),
    ];
    for &(flag, want) in high {
        assert_eq!(flag.bits(), want, "{flag:?}");
    }
    assert_eq!(COR_PRF_HIGH_MONITOR::FLAGS.len(), high.len());

    let misc: &[(u32, u32)] = &[
        (COR_PRF_SNAPSHOT_DEFAULT.0, 0),
        (COR_PRF_SNAPSHOT_REGISTER_CONTEXT.0, 1),
        (COR_PRF_SNAPSHOT_X86_OPTIMIZED.0, 2),
        (COR_PRF_FIELD_NOT_A_STATIC.0, 0),
        (COR_PRF_FIELD_APP_DOMAIN_STATIC.0, 1),
        (COR_PRF_FIELD_THREAD_STATIC.0, 2),
        (COR_PRF_FIELD_CONTEXT_STATIC.0, 4),
        (COR_PRF_FIELD_RVA_STATIC.0, 8),
        (COR_PRF_GC_ROOT_PINNING.0, 1),
        (COR_PRF_GC_ROOT_WEAKREF.0, 2),
        (COR_PRF_GC_ROOT_INTERIOR.0, 4),
        (COR_PRF_GC_ROOT_REFCOUNTED.0, 8),
        (COR_PRF_FINALIZER_CRITICAL.0, 1),
        (COR_PRF_MODULE_DISK.0, 0x1),
        (COR_PRF_MODULE_NGEN.0, 0x2),
        (COR_PRF_MODULE_DYNAMIC.0, 0x4),
        (COR_PRF_MODULE_COLLECTIBLE.0, 0x8),
        (COR_PRF_MODULE_RESOURCE.0, 0x10),
        (COR_PRF_MODULE_FLAT_LAYOUT.0, 0x20),
        (COR_PRF_MODULE_WINDOWS_RUNTIME.0, 0x40),
        (COR_PRF_REJIT_BLOCK_INLINING.0, 1),
        (COR_PRF_REJIT_INLINING_CALLBACKS.0, 2),
        (COR_PRF_CODEGEN_DISABLE_INLINING.0, 1),
        (COR_PRF_CODEGEN_DISABLE_ALL_OPTIMIZATIONS.0, 2),
        (COR_PRF_CODEGEN_DEBUG_INFO.0, 3),
    ];
    for (i, &(got, want)) in misc.iter().enumerate() {
        assert_eq!(got, want, "entry {i}");
    }
}

#[test]
fn flag_set_operations() {
    let mask = COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION;
    assert_eq!(mask.bits(), 0xA0);
    assert!(mask.contains(COR_PRF_MONITOR_GC));
    assert!(!mask.contains(COR_PRF_MONITOR_THREADS));
    assert!(mask.intersects(COR_PRF_MONITOR_GC | COR_PRF_MONITOR_THREADS));
    assert!(COR_PRF_ALLOWABLE_AFTER_ATTACH.contains(mask));
    assert!(!COR_PRF_ALLOWABLE_AFTER_ATTACH.contains(COR_PRF_MONITOR_ENTERLEAVE));
    assert_eq!(mask - COR_PRF_MONITOR_GC, COR_PRF_MONITOR_JIT_COMPILATION);
    assert_eq!(mask & COR_PRF_MONITOR_GC, COR_PRF_MONITOR_GC);
    assert_eq!(
        COR_PRF_MONITOR_JIT_COMPILATION.union(COR_PRF_MONITOR_GC),
        mask
    );
    let mut m = COR_PRF_MONITOR::empty();
    assert!(m.is_empty());
    m |= COR_PRF_ENABLE_STACK_SNAPSHOT;
    m |= COR_PRF_MONITOR_THREADS;
    m -= COR_PRF_MONITOR_THREADS;
    assert_eq!(m, COR_PRF_ENABLE_STACK_SNAPSHOT);
    // The remoting sub-flags include the remoting bit itself.
    assert!(COR_PRF_MONITOR_REMOTING_COOKIE.contains(COR_PRF_MONITOR_REMOTING));
    assert!(COR_PRF_MONITOR_IMMUTABLE.contains(COR_PRF_MONITOR_REMOTING_ASYNC));
    // Everything the IDL counts as an event is inside MONITOR_ALL.
    assert!(COR_PRF_MONITOR_ALL.contains(COR_PRF_MONITOR_CLR_EXCEPTIONS | COR_PRF_ENABLE_REJIT));
    // The IDL's COR_PRF_ALL (0x8FFFFFFF) leaves out bits 28-30.
    assert!(!COR_PRF_ALL.intersects(
        COR_PRF_ENABLE_STACK_SNAPSHOT
            | COR_PRF_USE_PROFILE_IMAGES
            | COR_PRF_DISABLE_TRANSPARENCY_CHECKS_UNDER_FULL_TRUST
    ));
    assert!(COR_PRF_ALL.contains(
        COR_PRF_MONITOR_ALL | COR_PRF_ENABLE_FRAME_INFO | COR_PRF_DISABLE_ALL_NGEN_IMAGES
    ));
    // Bits pass through unchanged, unknown ones included.
    assert_eq!(
        COR_PRF_HIGH_MONITOR::from_bits_retain(0x8000_0001).bits(),
        0x8000_0001
    );
}

#[test]
fn flags_debug_names_the_bits() {
    assert_eq!(
        format!("{:?}", COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION),
        "COR_PRF_MONITOR(COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_MONITOR_GC)"
    );
    assert_eq!(
        format!("{:?}", COR_PRF_MONITOR_NONE),
        "COR_PRF_MONITOR(0x0)"
    );
    // 0x4000 alone has no name: only the composite COOKIE (0x4400) does.
    assert_eq!(
        format!("{:?}", COR_PRF_MONITOR_REMOTING_COOKIE),
        "COR_PRF_MONITOR(COR_PRF_MONITOR_REMOTING | 0x4000)"
    );
    assert_eq!(
        format!("{:?}", COR_PRF_HIGH_MONITOR(0x8000_0010)),
        "COR_PRF_HIGH_MONITOR(COR_PRF_HIGH_BASIC_GC | 0x80000000)"
    );
    // DEBUG_INFO (3) is the union of the two single bits.
    assert_eq!(
        format!("{:?}", COR_PRF_CODEGEN_DEBUG_INFO),
        "COR_PRF_CODEGEN_FLAGS(COR_PRF_CODEGEN_DISABLE_INLINING | COR_PRF_CODEGEN_DISABLE_ALL_OPTIMIZATIONS)"
    );
    assert_eq!(
        format!("{:?}", COR_PRF_GC_ROOT_WEAKREF | COR_PRF_GC_ROOT_REFCOUNTED),
        "COR_PRF_GC_ROOT_FLAGS(COR_PRF_GC_ROOT_WEAKREF | COR_PRF_GC_ROOT_REFCOUNTED)"
    );
}

// ---------------------------------------------------------------------------
// Layouts (sizes and offsets computed by hand from the IDL's field types)
// ---------------------------------------------------------------------------

#[test]
fn c_enums_and_flags_are_32_bit() {
    assert_eq!(size_of::<COR_PRF_GC_REASON>(), 4);
    assert_eq!(size_of::<CorDebugIlToNativeMappingTypes>(), 4);
    assert_eq!(size_of::<COR_PRF_MISC>(), 4);
    assert_eq!(size_of::<COR_PRF_MONITOR>(), 4);
    assert_eq!(size_of::<COR_PRF_HIGH_MONITOR>(), 4);
    assert_eq!(size_of::<COR_PRF_CODEGEN_FLAGS>(), 4);
    assert_eq!(align_of::<COR_PRF_GC_ROOT_KIND>(), 4);
    assert_eq!(size_of::<EVENTPIPE_SESSION>(), 8);
    assert_eq!(size_of::<EVENTPIPE_PROVIDER>(), size_of::<usize>());
    assert_eq!(size_of::<EVENTPIPE_EVENT>(), size_of::<usize>());
}

#[test]
fn layouts_independent_of_pointer_width() {
    assert_eq!(size_of::<OSINFO>(), 12);
    assert_eq!(size_of::<COR_FIELD_OFFSET>(), 8);
    assert_eq!(offset_of!(COR_FIELD_OFFSET, ulOffset), 4);
    assert_eq!(size_of::<COR_IL_MAP>(), 12);
    assert_eq!(offset_of!(COR_IL_MAP, newOffset), 4);
    assert_eq!(offset_of!(COR_IL_MAP, fAccurate), 8);
    assert_eq!(size_of::<COR_DEBUG_IL_TO_NATIVE_MAP>(), 12);
    assert_eq!(offset_of!(COR_DEBUG_IL_TO_NATIVE_MAP, nativeEndOffset), 8);
    assert_eq!(size_of::<COR_PRF_EVENT_DATA>(), 16);
    assert_eq!(offset_of!(COR_PRF_EVENT_DATA, size), 8);
    assert_eq!(offset_of!(COR_PRF_EVENT_DATA, reserved), 12);
    assert_eq!(size_of::<COR_PRF_FILTER_DATA>(), 16);
    assert_eq!(offset_of!(COR_PRF_FILTER_DATA, Size), 8);
    assert_eq!(offset_of!(COR_PRF_FILTER_DATA, Type), 12);
}

#[cfg(target_pointer_width = "64")]
#[test]
fn layouts_on_64_bit() {
    // (size, align) of every struct.
    let sizes: &[(&str, usize, usize, usize, usize)] = &[
        (
            "ASSEMBLYMETADATA",
            size_of::<ASSEMBLYMETADATA>(),
            56,
            align_of::<ASSEMBLYMETADATA>(),
            8,
        ),
        (
            "COR_PRF_CODE_INFO",
            size_of::<COR_PRF_CODE_INFO>(),
            16,
            align_of::<COR_PRF_CODE_INFO>(),
            8,
        ),
        (
            "COR_PRF_FUNCTION_ARGUMENT_RANGE",
            size_of::<COR_PRF_FUNCTION_ARGUMENT_RANGE>(),
            16,
            align_of::<COR_PRF_FUNCTION_ARGUMENT_RANGE>(),
            8,
        ),
        (
            "COR_PRF_FUNCTION_ARGUMENT_INFO",
            size_of::<COR_PRF_FUNCTION_ARGUMENT_INFO>(),
            24,
            align_of::<COR_PRF_FUNCTION_ARGUMENT_INFO>(),
            8,
        ),
        (
            "FunctionIDOrClientID",
            size_of::<FunctionIDOrClientID>(),
            8,
            align_of::<FunctionIDOrClientID>(),
            8,
        ),
        (
            "COR_PRF_FUNCTION",
            size_of::<COR_PRF_FUNCTION>(),
            16,
            align_of::<COR_PRF_FUNCTION>(),
            8,
        ),
        (
            "COR_PRF_METHOD",
            size_of::<COR_PRF_METHOD>(),
            16,
            align_of::<COR_PRF_METHOD>(),
            8,
        ),
        (
            "COR_PRF_ASSEMBLY_REFERENCE_INFO",
            size_of::<COR_PRF_ASSEMBLY_REFERENCE_INFO>(),
            48,
            align_of::<COR_PRF_ASSEMBLY_REFERENCE_INFO>(),
            8,
        ),
        (
            "COR_PRF_GC_GENERATION_RANGE",
            size_of::<COR_PRF_GC_GENERATION_RANGE>(),
            32,
            align_of::<COR_PRF_GC_GENERATION_RANGE>(),
            8,
        ),
        (
            "COR_PRF_NONGC_HEAP_RANGE",
            size_of::<COR_PRF_NONGC_HEAP_RANGE>(),
            24,
            align_of::<COR_PRF_NONGC_HEAP_RANGE>(),
            8,
        ),
        (
            "COR_PRF_EX_CLAUSE_INFO",
            size_of::<COR_PRF_EX_CLAUSE_INFO>(),
            32,
            align_of::<COR_PRF_EX_CLAUSE_INFO>(),
            8,
        ),
        (
            "COR_PRF_EVENTPIPE_PROVIDER_CONFIG",
            size_of::<COR_PRF_EVENTPIPE_PROVIDER_CONFIG>(),
            32,
            align_of::<COR_PRF_EVENTPIPE_PROVIDER_CONFIG>(),
            8,
        ),
        (
            "COR_PRF_EVENTPIPE_PARAM_DESC",
            size_of::<COR_PRF_EVENTPIPE_PARAM_DESC>(),
            16,
            align_of::<COR_PRF_EVENTPIPE_PARAM_DESC>(),
            8,
        ),
    ];
    for &(name, size, want_size, align, want_align) in sizes {
        assert_eq!((size, align), (want_size, want_align), "{name}");
    }

    assert_eq!(offset_of!(ASSEMBLYMETADATA, usRevisionNumber), 6);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, szLocale), 8);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, cbLocale), 16);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, rProcessor), 24);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, ulProcessor), 32);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, rOS), 40);
    assert_eq!(offset_of!(ASSEMBLYMETADATA, ulOS), 48);

    assert_eq!(offset_of!(COR_PRF_CODE_INFO, size), 8);
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_RANGE, length), 8);
    assert_eq!(
        offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, totalArgumentSize),
        4
    );
    assert_eq!(offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, ranges), 8);
    assert_eq!(offset_of!(COR_PRF_FUNCTION, reJitId), 8);
    assert_eq!(offset_of!(COR_PRF_METHOD, methodId), 8);

    assert_eq!(
        offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, cbPublicKeyOrToken),
        8
    );
    assert_eq!(offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, szName), 16);
    assert_eq!(offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, pMetaData), 24);
    assert_eq!(offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, pbHashValue), 32);
    assert_eq!(offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, cbHashValue), 40);
    assert_eq!(
        offset_of!(COR_PRF_ASSEMBLY_REFERENCE_INFO, dwAssemblyRefFlags),
        44
    );

    assert_eq!(offset_of!(COR_PRF_GC_GENERATION_RANGE, rangeStart), 8);
    assert_eq!(offset_of!(COR_PRF_GC_GENERATION_RANGE, rangeLength), 16);
    assert_eq!(
        offset_of!(COR_PRF_GC_GENERATION_RANGE, rangeLengthReserved),
        24
    );
    assert_eq!(
        offset_of!(COR_PRF_NONGC_HEAP_RANGE, rangeLengthReserved),
        16
    );

    assert_eq!(offset_of!(COR_PRF_EX_CLAUSE_INFO, programCounter), 8);
    assert_eq!(offset_of!(COR_PRF_EX_CLAUSE_INFO, framePointer), 16);
    assert_eq!(offset_of!(COR_PRF_EX_CLAUSE_INFO, shadowStackPointer), 24);

    assert_eq!(offset_of!(COR_PRF_EVENTPIPE_PROVIDER_CONFIG, keywords), 8);
    assert_eq!(
        offset_of!(COR_PRF_EVENTPIPE_PROVIDER_CONFIG, loggingLevel),
        16
    );
    assert_eq!(
        offset_of!(COR_PRF_EVENTPIPE_PROVIDER_CONFIG, filterData),
        24
    );
    assert_eq!(offset_of!(COR_PRF_EVENTPIPE_PARAM_DESC, elementType), 4);
    assert_eq!(offset_of!(COR_PRF_EVENTPIPE_PARAM_DESC, name), 8);
}

// ---------------------------------------------------------------------------
// Struct helpers
// ---------------------------------------------------------------------------

#[test]
fn argument_info_reads_ranges_past_the_declared_array() {
    #[repr(C)]
    struct ThreeRanges {
        info: COR_PRF_FUNCTION_ARGUMENT_INFO,
        more: [COR_PRF_FUNCTION_ARGUMENT_RANGE; 2],
    }
    let range = |startAddress, length| COR_PRF_FUNCTION_ARGUMENT_RANGE {
        startAddress,
        length,
    };
    let buffer = ThreeRanges {
        info: COR_PRF_FUNCTION_ARGUMENT_INFO {
            numRanges: 3,
            totalArgumentSize: 24,
            ranges: [range(0x1000, 8)],
        },
        more: [range(0x2000, 4), range(0x3000, 12)],
    };
    assert_eq!(
        COR_PRF_FUNCTION_ARGUMENT_INFO::size_for(3),
        size_of::<ThreeRanges>()
    );
    assert_eq!(
        COR_PRF_FUNCTION_ARGUMENT_INFO::size_for(0),
        size_of::<COR_PRF_FUNCTION_ARGUMENT_INFO>()
    );
    let this = core::ptr::addr_of!(buffer).cast::<COR_PRF_FUNCTION_ARGUMENT_INFO>();
    // SAFETY: `this` points to a live, aligned buffer holding the fixed part
    // and three contiguous ranges (`more` follows `info` with no padding:
    // checked by the size_for assertion above).
    let ranges = unsafe { COR_PRF_FUNCTION_ARGUMENT_INFO::ranges(this) };
    assert_eq!(
        ranges,
        &[range(0x1000, 8), range(0x2000, 4), range(0x3000, 12)]
    );
}

#[test]
fn function_id_or_client_id_reads_either_field() {
    let id = FunctionIDOrClientID::from_function_id(fake_id!(FunctionID, 0x1234));
    assert_eq!(id.client_id(), 0x1234);
    assert_eq!(id.function_id(), fake_id!(FunctionID, 0x1234));
    assert_eq!(
        FunctionIDOrClientID::from_client_id(7).function_id(),
        fake_id!(FunctionID, 7)
    );
    assert_eq!(FunctionIDOrClientID::default().client_id(), 0);
    assert_eq!(format!("{id:?}"), "FunctionIDOrClientID(0x1234)");
}

#[test]
fn defaults_are_zero_and_null() {
    let md = ASSEMBLYMETADATA::default();
    assert!(md.szLocale.is_null() && md.rProcessor.is_null() && md.rOS.is_null());
    assert_eq!((md.usMajorVersion, md.cbLocale, md.ulOS), (0, 0, 0));
    let config = COR_PRF_EVENTPIPE_PROVIDER_CONFIG::default();
    assert!(config.providerName.is_null() && config.filterData.is_null());
    assert!(COR_PRF_EVENTPIPE_PARAM_DESC::default().name.is_null());
    assert!(COR_PRF_ASSEMBLY_REFERENCE_INFO::default()
        .pMetaData
        .is_null());
    assert_eq!(
        COR_PRF_EX_CLAUSE_INFO::default().clauseType,
        COR_PRF_CLAUSE_NONE
    );
    assert!(EVENTPIPE_SESSION::default().is_null());
    assert!(EVENTPIPE_PROVIDER::NULL.is_null());
    assert_eq!(
        format!("{:?}", EVENTPIPE_SESSION(0x2a)),
        "EVENTPIPE_SESSION(0x2a)"
    );
}

// ---------------------------------------------------------------------------
// Hooks, and the types crossing a COM vtable
// ---------------------------------------------------------------------------

unsafe extern "system" fn enter3(_: FunctionIDOrClientID) {}
unsafe extern "system" fn enter3_info(_: FunctionIDOrClientID, _: COR_PRF_ELT_INFO) {}
unsafe extern "system" fn enter2(
    _: FunctionID,
    _: UINT_PTR,
    _: COR_PRF_FRAME_INFO,
    _: *mut COR_PRF_FUNCTION_ARGUMENT_INFO,
) {
}
unsafe extern "system" fn leave2(
    _: FunctionID,
    _: UINT_PTR,
    _: COR_PRF_FRAME_INFO,
    _: *mut COR_PRF_FUNCTION_ARGUMENT_RANGE,
) {
}
unsafe extern "system" fn mapper(funcId: FunctionID, pbHookFunction: *mut BOOL) -> UINT_PTR {
    // SAFETY: the caller passes a writable BOOL.
    unsafe { *pbHookFunction = TRUE };
    funcId.as_raw() + 1
}
unsafe extern "system" fn snapshot(
    funcId: FunctionID,
    _ip: UINT_PTR,
    _frame: COR_PRF_FRAME_INFO,
    _contextSize: ULONG32,
    _context: *mut BYTE,
    clientData: *mut c_void,
) -> HRESULT {
    // SAFETY: the caller passes a pointer to a Vec<FunctionID>.
    unsafe { (*clientData.cast::<Vec<FunctionID>>()).push(funcId) };
    S_OK
}
unsafe extern "system" fn each_object(_: ObjectID, state: *mut c_void) -> BOOL {
    // SAFETY: the caller passes a pointer to a u32 counter.
    unsafe { *state.cast::<u32>() += 1 };
    TRUE
}
unsafe extern "system" fn provider_cb(
    _: *const u8,
    _: u32,
    _: u8,
    _: u64,
    _: u64,
    _: *mut COR_PRF_FILTER_DATA,
    _: *mut c_void,
) {
}

#[test]
fn hooks_have_the_idl_signatures_and_are_one_pointer() {
    let _: FunctionEnter3 = enter3;
    let _: FunctionLeave3 = enter3;
    let _: FunctionTailcall3 = enter3;
    let _: FunctionEnter3WithInfo = enter3_info;
    let _: FunctionLeave3WithInfo = enter3_info;
    let _: FunctionTailcall3WithInfo = enter3_info;
    let _: FunctionEnter2 = enter2;
    let _: FunctionLeave2 = leave2;
    let _: ObjectCallback = each_object;
    let _: EventPipeProviderCallback = provider_cb;
    assert_eq!(size_of::<Option<FunctionEnter>>(), size_of::<usize>());
    assert_eq!(
        size_of::<Option<StackSnapshotCallback>>(),
        size_of::<usize>()
    );
    assert_eq!(size_of::<Option<FunctionIDMapper2>>(), size_of::<usize>());

    let m: FunctionIDMapper = mapper;
    let mut hook = FALSE;
    // SAFETY: `mapper` only writes through the valid pointer it is given.
    assert_eq!(unsafe { m(FunctionID::from_raw(41), &mut hook) }, 42);
    assert_eq!(hook, TRUE);

    let cb: StackSnapshotCallback = snapshot;
    let mut frames: Vec<FunctionID> = Vec::new();
    for f in [1usize, 2, 3] {
        // SAFETY: `snapshot` reads clientData as the Vec it is.
        let hr = unsafe {
            cb(
                FunctionID::from_raw(f),
                0,
                COR_PRF_FRAME_INFO::from_raw(0),
                0,
                core::ptr::null_mut(),
                (&mut frames as *mut Vec<FunctionID>).cast(),
            )
        };
        assert_eq!(hr, S_OK);
    }
    assert_eq!(
        frames.iter().map(|f| f.as_raw()).collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

fn abi_param<T: AbiParam>() {}

#[test]
fn by_value_types_are_abi_params() {
    abi_param::<COR_PRF_GC_REASON>();
    abi_param::<CorDebugIlToNativeMappingTypes>();
    abi_param::<COR_PRF_MONITOR>();
    abi_param::<EVENTPIPE_SESSION>();
    abi_param::<EVENTPIPE_PROVIDER>();
    abi_param::<EVENTPIPE_EVENT>();
    abi_param::<COR_PRF_EVENTPIPE_PROVIDER_CONFIG>();
    abi_param::<Option<FunctionEnter3WithInfo>>();
    abi_param::<Option<ObjectReferenceCallback>>();
    abi_param::<Option<EventPipeProviderCallback>>();
}

com_interface! {
    /// Takes each kind of by-value type this module defines, the way the
    /// info interfaces will.
    #[iid("0A1B2C3D-0000-4000-8000-0000000000D1")]
    #[vtable(ITypesProbe_Vtbl)]
    #[implement(ITypesProbe_Impl)]
    pub unsafe interface ITypesProbe: IUnknown {
        fn AddProvider(session: EVENTPIPE_SESSION, providerConfig: COR_PRF_EVENTPIPE_PROVIDER_CONFIG, pOut: *mut u64) -> HRESULT;
        fn SetHooks(pFuncEnter: Option<FunctionEnter3>, callback: Option<ObjectCallback>, pCount: *mut u32) -> HRESULT;
        fn Classify(reason: COR_PRF_GC_REASON, dwEvents: COR_PRF_MONITOR) -> u32;
    }
}

struct Probe;

impl ITypesProbe_Impl for Probe {
    unsafe fn AddProvider(
        &self,
        session: EVENTPIPE_SESSION,
        providerConfig: COR_PRF_EVENTPIPE_PROVIDER_CONFIG,
        pOut: *mut u64,
    ) -> HRESULT {
        // SAFETY: the test passes a valid out-pointer.
        unsafe {
            *pOut = session.0 ^ providerConfig.keywords ^ u64::from(providerConfig.loggingLevel)
        };
        if providerConfig.providerName.is_null() {
            E_POINTER
        } else {
            S_OK
        }
    }
    unsafe fn SetHooks(
        &self,
        pFuncEnter: Option<FunctionEnter3>,
        callback: Option<ObjectCallback>,
        pCount: *mut u32,
    ) -> HRESULT {
        if let Some(enter) = pFuncEnter {
            // SAFETY: the hook ignores its argument.
            unsafe { enter(FunctionIDOrClientID::from_client_id(1)) };
        }
        match callback {
            None => S_FALSE,
            Some(cb) => {
                // SAFETY: `each_object` increments the u32 behind pCount.
                unsafe { cb(ObjectID::from_raw(0x10), pCount.cast()) };
                S_OK
            }
        }
    }
    unsafe fn Classify(&self, reason: COR_PRF_GC_REASON, dwEvents: COR_PRF_MONITOR) -> u32 {
        reason.0 * 1000 + dwEvents.bits()
    }
}

#[test]
fn by_value_types_cross_a_vtable() {
    let probe: ITypesProbe = export(Probe);
    let name: Vec<u16> = "MyProvider\0".encode_utf16().collect();
    let config = COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
        providerName: name.as_ptr(),
        keywords: 0xF0F0_0000_0000_00FF,
        loggingLevel: COR_PRF_EVENTPIPE_VERBOSE.0,
        filterData: core::ptr::null(),
    };
    let mut out = 0u64;
    // SAFETY: the probe is alive and `out` is writable.
    let hr = unsafe { probe.AddProvider(EVENTPIPE_SESSION(0x1_0000_0000), config, &mut out) };
    assert_eq!(hr, S_OK);
    assert_eq!(out, 0x1_0000_0000 ^ 0xF0F0_0000_0000_00FF ^ 5);
    // SAFETY: as above.
    let hr = unsafe {
        probe.AddProvider(
            EVENTPIPE_SESSION::NULL,
            COR_PRF_EVENTPIPE_PROVIDER_CONFIG::default(),
            &mut out,
        )
    };
    assert_eq!(hr, E_POINTER);

    let mut count = 0u32;
    // SAFETY: the hooks are valid functions; `count` is writable.
    let hr = unsafe { probe.SetHooks(Some(enter3), Some(each_object), &mut count) };
    assert_eq!((hr, count), (S_OK, 1));
    // SAFETY: None is a null pointer, which the probe checks.
    let hr = unsafe { probe.SetHooks(None, None, &mut count) };
    assert_eq!((hr, count), (S_FALSE, 1));

    // SAFETY: the probe is alive.
    let n = unsafe { probe.Classify(COR_PRF_GC_INDUCED, COR_PRF_MONITOR_GC) };
    assert_eq!(n, 1000 + 0x80);
}

// ---------------------------------------------------------------------------
// Error codes (transcribed again from corerror.xml)
// ---------------------------------------------------------------------------

const CORPROF_CODES: &[(u32, &str)] = &[
    (0x80131350, "CORPROF_E_FUNCTION_NOT_COMPILED"),
    (0x80131351, "CORPROF_E_DATAINCOMPLETE"),
    (0x80131354, "CORPROF_E_FUNCTION_NOT_IL"),
    (0x80131355, "CORPROF_E_NOT_MANAGED_THREAD"),
    (0x80131356, "CORPROF_E_CALL_ONLY_FROM_INIT"),
    (0x8013135b, "CORPROF_E_NOT_YET_AVAILABLE"),
    (0x8013135c, "CORPROF_E_TYPE_IS_PARAMETERIZED"),
    (0x8013135d, "CORPROF_E_FUNCTION_IS_PARAMETERIZED"),
    (0x8013135e, "CORPROF_E_STACKSNAPSHOT_INVALID_TGT_THREAD"),
    (0x8013135f, "CORPROF_E_STACKSNAPSHOT_UNMANAGED_CTX"),
    (0x80131360, "CORPROF_E_STACKSNAPSHOT_UNSAFE"),
    (0x80131361, "CORPROF_E_STACKSNAPSHOT_ABORTED"),
    (0x80131362, "CORPROF_E_LITERALS_HAVE_NO_ADDRESS"),
    (0x80131363, "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE"),
    (0x80131364, "CORPROF_E_ASYNCHRONOUS_UNSAFE"),
    (0x80131365, "CORPROF_E_CLASSID_IS_ARRAY"),
    (0x80131366, "CORPROF_E_CLASSID_IS_COMPOSITE"),
    (0x80131367, "CORPROF_E_PROFILER_DETACHING"),
    (0x80131368, "CORPROF_E_PROFILER_NOT_ATTACHABLE"),
    (0x80131369, "CORPROF_E_UNRECOGNIZED_PIPE_MSG_FORMAT"),
    (0x8013136a, "CORPROF_E_PROFILER_ALREADY_ACTIVE"),
    (0x8013136b, "CORPROF_E_PROFILEE_INCOMPATIBLE_WITH_TRIGGER"),
    (0x8013136c, "CORPROF_E_IPC_FAILED"),
    (0x8013136d, "CORPROF_E_PROFILEE_PROCESS_NOT_FOUND"),
    (0x8013136e, "CORPROF_E_CALLBACK3_REQUIRED"),
    (0x8013136f, "CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER"),
    (0x80131370, "CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT"),
    (0x80131371, "CORPROF_E_RUNTIME_UNINITIALIZED"),
    (0x80131372, "CORPROF_E_IMMUTABLE_FLAGS_SET"),
    (0x80131373, "CORPROF_E_PROFILER_NOT_YET_INITIALIZED"),
    (0x80131374, "CORPROF_E_INCONSISTENT_WITH_FLAGS"),
    (0x80131375, "CORPROF_E_PROFILER_CANCEL_ACTIVATION"),
    (0x80131376, "CORPROF_E_CONCURRENT_GC_NOT_PROFILABLE"),
    (0x80131378, "CORPROF_E_DEBUGGING_DISABLED"),
    (0x80131379, "CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC"),
    (0x8013137a, "CORPROF_E_MODULE_IS_DYNAMIC"),
    (0x8013137b, "CORPROF_E_CALLBACK4_REQUIRED"),
    (0x8013137c, "CORPROF_E_REJIT_NOT_ENABLED"),
    (0x8013137e, "CORPROF_E_FUNCTION_IS_COLLECTIBLE"),
    (0x80131380, "CORPROF_E_CALLBACK6_REQUIRED"),
    (0x80131382, "CORPROF_E_CALLBACK7_REQUIRED"),
    (0x80131383, "CORPROF_E_REJIT_INLINING_DISABLED"),
    (0x80131388, "CORPROF_E_SUSPENSION_IN_PROGRESS"),
];

const METADATA_CODES: &[(u32, &str)] = &[
    (0x00131106, "CLDB_S_TRUNCATION"),
    (0x00131197, "META_S_DUPLICATE"),
    (0x80131100, "CLDB_E_FILE_BADREAD"),
    (0x80131101, "CLDB_E_FILE_BADWRITE"),
    (0x80131107, "CLDB_E_FILE_OLDVER"),
    (0x8013110a, "CLDB_E_SMDUPLICATE"),
    (0x8013110b, "CLDB_E_NO_DATA"),
    (0x8013110d, "CLDB_E_INCOMPATIBLE"),
    (0x8013110e, "CLDB_E_FILE_CORRUPT"),
    (0x80131110, "CLDB_E_BADUPDATEMODE"),
    (0x80131124, "CLDB_E_INDEX_NOTFOUND"),
    (0x80131130, "CLDB_E_RECORD_NOTFOUND"),
    (0x80131135, "CLDB_E_RECORD_OUTOFORDER"),
    (0x80131154, "CLDB_E_TOO_BIG"),
    (0x8013115f, "META_E_INVALID_TOKEN_TYPE"),
    (0x8013118a, "META_E_BADMETADATA"),
    (0x80131192, "META_E_BAD_SIGNATURE"),
    (0x80131193, "META_E_BAD_INPUT_PARAMETER"),
    (0x80131196, "META_E_CANNOTRESOLVETYPEREF"),
    (0x80131198, "META_E_STRINGSPACE_FULL"),
    (0x8013119a, "META_E_HAS_UNMARKALL"),
    (0x8013119b, "META_E_MUST_CALL_UNMARKALL"),
    (0x801311c0, "META_E_CA_INVALID_TARGET"),
    (0x801311c1, "META_E_CA_INVALID_VALUE"),
    (0x801311c2, "META_E_CA_INVALID_BLOB"),
    (0x801311c3, "META_E_CA_REPEATED_ARG"),
    (0x801311c4, "META_E_CA_UNKNOWN_ARGUMENT"),
    (0x801311c7, "META_E_CA_UNEXPECTED_TYPE"),
    (0x801311c8, "META_E_CA_INVALID_ARGTYPE"),
    (0x801311c9, "META_E_CA_INVALID_ARG_FOR_TYPE"),
    (0x801311ca, "META_E_CA_INVALID_UUID"),
    (0x801311cb, "META_E_CA_INVALID_MARSHALAS_FIELDS"),
    (0x801311cc, "META_E_CA_NT_FIELDONLY"),
    (0x801311cd, "META_E_CA_NEGATIVE_PARAMINDEX"),
    (0x801311cf, "META_E_CA_NEGATIVE_CONSTSIZE"),
    (0x801311d0, "META_E_CA_FIXEDSTR_SIZE_REQUIRED"),
    (0x801311d1, "META_E_CA_CUSTMARSH_TYPE_REQUIRED"),
    (0x801311d4, "META_E_NOT_IN_ENC_MODE"),
    (0x801311e5, "META_E_CA_BAD_FRIENDS_ARGS"),
    (0x801311e6, "META_E_CA_FRIENDS_SN_REQUIRED"),
    (0x80131fff, "CLDB_E_INTERNALERROR"),
];

#[test]
fn error_codes_are_known_by_name_and_meaning() {
    assert_eq!(CORPROF_CODES.len(), 43);
    assert_eq!(METADATA_CODES.len(), 41);
    for &(value, name) in CORPROF_CODES.iter().chain(METADATA_CODES) {
        let hr = HRESULT(value as i32);
        assert_eq!(hr.name(), Some(name), "{value:#010x}");
        let meaning = hr.meaning().unwrap();
        assert!(
            meaning.len() > 10 && meaning.ends_with('.'),
            "{name}: {meaning:?}"
        );
        assert_eq!(format!("{hr:?}"), name);
    }
    // The internal-only code corerror.xml comments out stays unknown.
    assert_eq!(HRESULT(0x8013_1381_u32 as i32).name(), None);
}

#[test]
fn unsupported_call_sequence_formats_by_name() {
    assert_eq!(
        CORPROF_E_UNSUPPORTED_CALL_SEQUENCE,
        HRESULT(0x80131363_u32 as i32)
    );
    assert_eq!(
        format!("{:?}", HRESULT(0x80131363_u32 as i32)),
        "CORPROF_E_UNSUPPORTED_CALL_SEQUENCE"
    );
    let shown = format!("{CORPROF_E_UNSUPPORTED_CALL_SEQUENCE}");
    assert!(
        shown.starts_with("CORPROF_E_UNSUPPORTED_CALL_SEQUENCE (0x80131363): "),
        "{shown}"
    );
    assert!(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.is_err());
    assert_eq!(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.facility(), 0x13);
    assert_eq!(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.code(), 0x1363);
}

#[test]
fn metadata_success_codes_are_successes() {
    assert!(CLDB_S_TRUNCATION.is_ok());
    assert!(META_S_DUPLICATE.is_ok());
    assert!(!CLDB_S_TRUNCATION.is_false());
    assert_eq!(CLDB_S_TRUNCATION.ok(), Ok(()));
    assert_eq!(CLDB_E_RECORD_NOTFOUND.ok(), Err(CLDB_E_RECORD_NOTFOUND));
    assert_eq!(
        format!("{:?}", META_E_BAD_SIGNATURE),
        "META_E_BAD_SIGNATURE"
    );
}
