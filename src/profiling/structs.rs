//! The `#[repr(C)]` structs and unions of corprof.idl and the EventPipe handle
//! typedefs. The three structs of cor.h the profiling API also uses
//! ([`COR_FIELD_OFFSET`], [`ASSEMBLYMETADATA`], [`OSINFO`]) are declared with
//! the metadata API, in [`crate::metadata`].
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::c_void;
use core::fmt;

use crate::ctypes::id_types;
use crate::metadata::{mdMethodDef, ASSEMBLYMETADATA};
use crate::profiling::enums::{COR_PRF_CLAUSE_TYPE, COR_PRF_GC_GENERATION};
use crate::profiling::ids::{FunctionID, ModuleID, ObjectID, ReJITID};
use crate::{BOOL, DWORD, LPCWSTR, SIZE_T, UINT_PTR, ULONG, ULONG32, WCHAR};

// ---------------------------------------------------------------------------
// IL and native code maps
// ---------------------------------------------------------------------------

/// One entry of an IL-to-IL map given to `SetILInstrumentedCodeMap`: where an
/// original IL offset moved to in instrumented IL (`COR_IL_MAP`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_IL_MAP {
    /// The IL offset in the original method body.
    pub oldOffset: ULONG32,
    /// The corresponding IL offset in the new body.
    pub newOffset: ULONG32,
    /// Kept for layout compatibility with the debugger's structure.
    pub fAccurate: BOOL,
}

/// One entry of a native-to-IL map from `GetILToNativeMapping`
/// (`COR_DEBUG_IL_TO_NATIVE_MAP`).
///
/// `ilOffset` may hold one of the
/// [`CorDebugIlToNativeMappingTypes`](super::CorDebugIlToNativeMappingTypes)
/// values (negative when read as `i32`) for code with no IL counterpart.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_DEBUG_IL_TO_NATIVE_MAP {
    /// The IL offset, or a special value (prolog, epilog, no mapping).
    pub ilOffset: ULONG32,
    /// Start of the native range, relative to the start of the method's code.
    pub nativeStartOffset: ULONG32,
    /// End (exclusive) of the native range, relative likewise.
    pub nativeEndOffset: ULONG32,
}

/// One contiguous block of a function's native code, from `GetCodeInfo2`
/// and later (`COR_PRF_CODE_INFO`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_CODE_INFO {
    /// The block's start address.
    pub startAddress: UINT_PTR,
    /// Its size in bytes.
    pub size: SIZE_T,
}

// ---------------------------------------------------------------------------
// Function arguments (ELT hooks)
// ---------------------------------------------------------------------------

/// A run of a function's arguments (or its return value) stored
/// contiguously in memory (`COR_PRF_FUNCTION_ARGUMENT_RANGE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_FUNCTION_ARGUMENT_RANGE {
    /// Address of the first byte.
    pub startAddress: UINT_PTR,
    /// Length in bytes.
    pub length: ULONG,
}

/// Where a function's arguments are in memory, left to right, as
/// `numRanges` ranges (`COR_PRF_FUNCTION_ARGUMENT_INFO`); arguments passed in
/// registers are spilled to memory first.
///
/// # A variable-length struct
///
/// C declares `ranges[1]` and lets the array run past the struct's end:
/// the real struct holds `numRanges` entries. Rust declares the one-element
/// array so the layout of the fixed part matches, and
/// [`ranges`](Self::ranges) reads the real entries through a raw pointer.
/// For `GetFunctionEnter3Info` the caller allocates the buffer: call it once
/// to learn the byte size it needs (`*pcbArgumentInfo`), then allocate at
/// least that many bytes, aligned for this struct, and call again.
/// [`size_for`](Self::size_for) computes the size for a given count.
///
/// `Debug` shows only the declared first range; it has no `PartialEq`, which
/// could not see the others either.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct COR_PRF_FUNCTION_ARGUMENT_INFO {
    /// Number of entries in `ranges`.
    pub numRanges: ULONG,
    /// Total size of all arguments in bytes.
    pub totalArgumentSize: ULONG,
    /// The first range; the others follow it in memory.
    pub ranges: [COR_PRF_FUNCTION_ARGUMENT_RANGE; 1],
}

impl COR_PRF_FUNCTION_ARGUMENT_INFO {
    /// Bytes needed for a struct with `num_ranges` ranges (at least the
    /// declared size, which has room for one).
    pub const fn size_for(num_ranges: usize) -> usize {
        let n = if num_ranges == 0 { 1 } else { num_ranges };
        core::mem::offset_of!(COR_PRF_FUNCTION_ARGUMENT_INFO, ranges)
            + n * core::mem::size_of::<COR_PRF_FUNCTION_ARGUMENT_RANGE>()
    }

    /// All `numRanges` ranges of the struct at `this`, including those past
    /// the declared one-element array.
    ///
    /// # Safety
    ///
    /// `this` must be non-null, aligned, and point to a struct the runtime
    /// filled in (or one built the same way) whose memory holds `numRanges`
    /// valid entries and stays valid and unmodified for `'a`.
    pub unsafe fn ranges<'a>(this: *const Self) -> &'a [COR_PRF_FUNCTION_ARGUMENT_RANGE] {
        // SAFETY: the caller guarantees `this` is valid for reads of the fixed
        // part and of `numRanges` entries starting at `ranges`; the pointer is
        // derived from `this` (not from a reference to the one-element array),
        // so it may cover the entries past the declared end.
        unsafe {
            let count = (*this).numRanges as usize;
            let first =
                core::ptr::addr_of!((*this).ranges).cast::<COR_PRF_FUNCTION_ARGUMENT_RANGE>();
            core::slice::from_raw_parts(first, count)
        }
    }
}

/// The argument of the ELT3 hooks: the function's `FunctionID`, or the
/// client value a `FunctionIDMapper` returned for it
/// (`FunctionIDOrClientID`, a C union of two pointer-sized integers).
///
/// Both fields are plain integers of the same size, so reading either is
/// always defined; [`function_id`](Self::function_id) and
/// [`client_id`](Self::client_id) do it without `unsafe`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union FunctionIDOrClientID {
    /// The function's ID (when no mapper remapped it).
    pub functionID: FunctionID,
    /// The value the profiler's ID mapper returned.
    pub clientID: UINT_PTR,
}

impl FunctionIDOrClientID {
    /// The union holding a `FunctionID`.
    #[inline]
    pub const fn from_function_id(functionID: FunctionID) -> Self {
        FunctionIDOrClientID { functionID }
    }
    /// The union holding a client ID.
    #[inline]
    pub const fn from_client_id(clientID: UINT_PTR) -> Self {
        FunctionIDOrClientID { clientID }
    }
    /// The value read as a `FunctionID`.
    #[inline]
    pub const fn function_id(self) -> FunctionID {
        FunctionID(self.client_id())
    }
    /// The value read as a client ID (the raw integer).
    #[inline]
    pub const fn client_id(self) -> UINT_PTR {
        // SAFETY: both fields are `#[repr(transparent)]`/plain `usize`, so
        // every bit pattern of the union is a valid `usize`.
        unsafe { self.clientID }
    }
}

impl Default for FunctionIDOrClientID {
    /// Zero (the null `FunctionID`).
    fn default() -> Self {
        FunctionIDOrClientID { clientID: 0 }
    }
}

impl PartialEq for FunctionIDOrClientID {
    fn eq(&self, other: &Self) -> bool {
        self.client_id() == other.client_id()
    }
}

impl Eq for FunctionIDOrClientID {}

impl fmt::Debug for FunctionIDOrClientID {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FunctionIDOrClientID({:#x})", self.client_id())
    }
}

// ---------------------------------------------------------------------------
// Functions, methods, assembly references
// ---------------------------------------------------------------------------

/// A function together with one of its ReJIT versions, from the function
/// enumerator (`COR_PRF_FUNCTION`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_FUNCTION {
    /// The function.
    pub functionId: FunctionID,
    /// The ReJIT version (0 for the original code).
    pub reJitId: ReJITID,
}

/// An IL method identified by its module and MethodDef token, from the
/// method enumerator (`COR_PRF_METHOD`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_METHOD {
    /// The module defining the method.
    pub moduleId: ModuleID,
    /// The method's token in that module.
    pub methodId: mdMethodDef,
}

/// An assembly reference the profiler will add, declared through
/// `ICorProfilerAssemblyReferenceProvider::AddAssemblyReference`
/// (`COR_PRF_ASSEMBLY_REFERENCE_INFO`). The fields mirror the arguments of
/// `IMetaDataAssemblyEmit::DefineAssemblyRef`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct COR_PRF_ASSEMBLY_REFERENCE_INFO {
    /// The referenced assembly's public key or public key token.
    pub pbPublicKeyOrToken: *mut c_void,
    /// Size of `pbPublicKeyOrToken` in bytes.
    pub cbPublicKeyOrToken: ULONG,
    /// The referenced assembly's simple name (NUL-terminated UTF-16).
    pub szName: LPCWSTR,
    /// The referenced assembly's version and culture.
    pub pMetaData: *mut ASSEMBLYMETADATA,
    /// The hash blob.
    pub pbHashValue: *mut c_void,
    /// Size of `pbHashValue` in bytes.
    pub cbHashValue: ULONG,
    /// `CorAssemblyFlags` for the reference.
    pub dwAssemblyRefFlags: DWORD,
}

impl Default for COR_PRF_ASSEMBLY_REFERENCE_INFO {
    fn default() -> Self {
        COR_PRF_ASSEMBLY_REFERENCE_INFO {
            pbPublicKeyOrToken: core::ptr::null_mut(),
            cbPublicKeyOrToken: 0,
            szName: core::ptr::null(),
            pMetaData: core::ptr::null_mut(),
            pbHashValue: core::ptr::null_mut(),
            cbHashValue: 0,
            dwAssemblyRefFlags: 0,
        }
    }
}

// ---------------------------------------------------------------------------
// Garbage collector and exception clauses
// ---------------------------------------------------------------------------

/// A range of memory belonging to one GC generation, from
/// `GetGenerationBounds` and `GetObjectGeneration`
/// (`COR_PRF_GC_GENERATION_RANGE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_GC_GENERATION_RANGE {
    /// The generation the range belongs to.
    pub generation: COR_PRF_GC_GENERATION,
    /// Start of the range.
    pub rangeStart: ObjectID,
    /// Bytes in use (exact only when asked during a GC start/finish callback).
    pub rangeLength: UINT_PTR,
    /// Bytes reserved, `rangeLength` included.
    pub rangeLengthReserved: UINT_PTR,
}

/// A range of memory of the non-GC (frozen object) heap, from
/// `ICorProfilerInfo14::GetNonGCHeapBounds` (`COR_PRF_NONGC_HEAP_RANGE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_NONGC_HEAP_RANGE {
    /// Start of the range.
    pub rangeStart: ObjectID,
    /// Bytes in use.
    pub rangeLength: UINT_PTR,
    /// Bytes reserved, `rangeLength` included.
    pub rangeLengthReserved: UINT_PTR,
}

/// The exception clause (catch, filter or finally) about to run or just
/// run, with its frame, from `GetNotifiedExceptionClauseInfo`
/// (`COR_PRF_EX_CLAUSE_INFO`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_EX_CLAUSE_INFO {
    /// The kind of clause.
    pub clauseType: COR_PRF_CLAUSE_TYPE,
    /// Native address of the clause's handler.
    pub programCounter: UINT_PTR,
    /// The handler's logical frame pointer.
    pub framePointer: UINT_PTR,
    /// The shadow stack pointer (IA-64 backing store; otherwise unused).
    pub shadowStackPointer: UINT_PTR,
}

// ---------------------------------------------------------------------------
// EventPipe
// ---------------------------------------------------------------------------

id_types! {
    /// An EventPipe provider created by the profiler (`EVENTPIPE_PROVIDER`,
    /// a `UINT_PTR` handle).
    EVENTPIPE_PROVIDER;
    /// An EventPipe event defined by the profiler (`EVENTPIPE_EVENT`, a
    /// `UINT_PTR` handle).
    EVENTPIPE_EVENT;
}

/// An EventPipe session started by the profiler (`EVENTPIPE_SESSION`).
///
/// Unlike the provider and event handles this one is a `UINT64` on every
/// platform, so it is a newtype over `u64`, not over `usize`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EVENTPIPE_SESSION(pub u64);

impl EVENTPIPE_SESSION {
    /// The null session (0).
    pub const NULL: EVENTPIPE_SESSION = EVENTPIPE_SESSION(0);

    /// `true` for the null session.
    #[inline]
    pub const fn is_null(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for EVENTPIPE_SESSION {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EVENTPIPE_SESSION({:#x})", self.0)
    }
}

// SAFETY: #[repr(transparent)] over u64, passed like a UINT64.
unsafe impl crate::AbiParam for EVENTPIPE_SESSION {}

/// One provider to enable in a session started with
/// `EventPipeStartSession` or extended with `EventPipeAddProviderToSession`
/// (`COR_PRF_EVENTPIPE_PROVIDER_CONFIG`).
///
/// `EventPipeAddProviderToSession` takes this struct *by value*, so it
/// implements [`AbiParam`](crate::AbiParam): an `extern "system"` call
/// passes a `#[repr(C)]` struct argument exactly as the platform's C ABI
/// does (in memory or through a hidden copy), which is what the runtime
/// expects. (Struct *returns* are a different matter; none are used.)
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
    /// The provider's name (NUL-terminated UTF-16).
    pub providerName: *const WCHAR,
    /// The keyword mask to enable.
    pub keywords: u64,
    /// The level to enable (a [`COR_PRF_EVENTPIPE_LEVEL`](super::COR_PRF_EVENTPIPE_LEVEL) value).
    pub loggingLevel: u32,
    /// Optional filter arguments for the provider, as
    /// `"key1=value1;key2=value2"` (NUL-terminated UTF-16), or null.
    pub filterData: *const WCHAR,
}

impl Default for COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
    fn default() -> Self {
        COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
            providerName: core::ptr::null(),
            keywords: 0,
            loggingLevel: 0,
            filterData: core::ptr::null(),
        }
    }
}

// SAFETY: #[repr(C)] of integers and raw pointers; passed by value through
// an `extern "system"` function pointer it follows the platform C ABI for
// struct arguments, as the runtime's C++ implementation expects.
unsafe impl crate::AbiParam for COR_PRF_EVENTPIPE_PROVIDER_CONFIG {}

/// Describes one parameter of an EventPipe event the profiler defines with
/// `EventPipeDefineEvent` (`COR_PRF_EVENTPIPE_PARAM_DESC`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct COR_PRF_EVENTPIPE_PARAM_DESC {
    /// The parameter's type (a [`COR_PRF_EVENTPIPE_PARAM_TYPE`](super::COR_PRF_EVENTPIPE_PARAM_TYPE)
    /// value; the C field is named `type`).
    pub r#type: u32,
    /// The element type when `type` is an array; unused otherwise.
    pub elementType: u32,
    /// The parameter's name (NUL-terminated UTF-16).
    pub name: *const WCHAR,
}

impl Default for COR_PRF_EVENTPIPE_PARAM_DESC {
    fn default() -> Self {
        COR_PRF_EVENTPIPE_PARAM_DESC {
            r#type: 0,
            elementType: 0,
            name: core::ptr::null(),
        }
    }
}

/// One block of payload for `EventPipeWriteEvent` (`COR_PRF_EVENT_DATA`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_EVENT_DATA {
    /// Address of the data, as a 64-bit integer.
    pub ptr: u64,
    /// Size of the data in bytes.
    pub size: u32,
    /// Reserved; set to 0.
    pub reserved: u32,
}

/// Filter data a session passes to an [`EventPipeProviderCallback`](super::EventPipeProviderCallback)
/// (`COR_PRF_FILTER_DATA`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_PRF_FILTER_DATA {
    /// Address of the filter data, as a 64-bit integer.
    pub Ptr: u64,
    /// Size of the data in bytes.
    pub Size: u32,
    /// The kind of filter data.
    pub Type: u32,
}
