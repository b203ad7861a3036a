//! The function-pointer typedefs of corprof.idl: the enter/leave/tailcall
//! (ELT) hooks, the function-ID mappers, and the callbacks of stack
//! snapshots, object-reference walks, heap walks and EventPipe providers.
//!
//! (More in the [`profiling`](crate::profiling) module documentation.)
#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::c_void;

use crate::profiling::ids::{FunctionID, ObjectID, COR_PRF_ELT_INFO, COR_PRF_FRAME_INFO};
use crate::profiling::structs::{
    FunctionIDOrClientID, COR_PRF_FILTER_DATA, COR_PRF_FUNCTION_ARGUMENT_INFO,
    COR_PRF_FUNCTION_ARGUMENT_RANGE,
};
use crate::{BOOL, BYTE, HRESULT, UINT_PTR, ULONG32};

/// Maps a `FunctionID` to the value the ELT hooks will receive instead, and
/// says whether to hook the function at all (`FunctionIDMapper`, set with
/// `ICorProfilerInfo::SetFunctionIDMapper`).
///
/// The returned value must not be 0 when `*pbHookFunction` is left TRUE, and
/// must be the same every time the runtime asks about the same function.
pub type FunctionIDMapper =
    unsafe extern "system" fn(funcId: FunctionID, pbHookFunction: *mut BOOL) -> UINT_PTR;

/// Like [`FunctionIDMapper`], with the client data given to
/// `ICorProfilerInfo3::SetFunctionIDMapper2` (`FunctionIDMapper2`).
pub type FunctionIDMapper2 = unsafe extern "system" fn(
    funcId: FunctionID,
    clientData: *mut c_void,
    pbHookFunction: *mut BOOL,
) -> UINT_PTR;

/// Called when a managed function is entered (`FunctionEnter`, the .NET
/// Framework 1.x hook; superseded by [`FunctionEnter3`]).
pub type FunctionEnter = unsafe extern "system" fn(funcID: FunctionID);

/// Called when a managed function returns (`FunctionLeave`; superseded by
/// [`FunctionLeave3`]).
pub type FunctionLeave = unsafe extern "system" fn(funcID: FunctionID);

/// Called when a managed function makes a tail call (`FunctionTailcall`;
/// superseded by [`FunctionTailcall3`]).
pub type FunctionTailcall = unsafe extern "system" fn(funcID: FunctionID);

/// Called when a managed function is entered, with its frame and argument
/// locations (`FunctionEnter2`, .NET Framework 2.0; superseded by
/// [`FunctionEnter3WithInfo`]).
pub type FunctionEnter2 = unsafe extern "system" fn(
    funcId: FunctionID,
    clientData: UINT_PTR,
    func: COR_PRF_FRAME_INFO,
    argumentInfo: *mut COR_PRF_FUNCTION_ARGUMENT_INFO,
);

/// Called when a managed function returns, with its frame and return value
/// location (`FunctionLeave2`; superseded by [`FunctionLeave3WithInfo`]).
pub type FunctionLeave2 = unsafe extern "system" fn(
    funcId: FunctionID,
    clientData: UINT_PTR,
    func: COR_PRF_FRAME_INFO,
    retvalRange: *mut COR_PRF_FUNCTION_ARGUMENT_RANGE,
);

/// Called when a managed function makes a tail call, with its frame
/// (`FunctionTailcall2`; superseded by [`FunctionTailcall3WithInfo`]).
pub type FunctionTailcall2 =
    unsafe extern "system" fn(funcId: FunctionID, clientData: UINT_PTR, func: COR_PRF_FRAME_INFO);

/// Called when a managed function is entered, with its ID or mapped client
/// ID only (`FunctionEnter3`, .NET Framework 4).
pub type FunctionEnter3 = unsafe extern "system" fn(functionIDOrClientID: FunctionIDOrClientID);

/// Called when a managed function returns (`FunctionLeave3`).
pub type FunctionLeave3 = unsafe extern "system" fn(functionIDOrClientID: FunctionIDOrClientID);

/// Called when a managed function makes a tail call (`FunctionTailcall3`).
pub type FunctionTailcall3 = unsafe extern "system" fn(functionIDOrClientID: FunctionIDOrClientID);

/// Called when a managed function is entered, with a handle for
/// `GetFunctionEnter3Info` to read its frame and arguments
/// (`FunctionEnter3WithInfo`).
pub type FunctionEnter3WithInfo = unsafe extern "system" fn(
    functionIDOrClientID: FunctionIDOrClientID,
    eltInfo: COR_PRF_ELT_INFO,
);

/// Called when a managed function returns, with a handle for
/// `GetFunctionLeave3Info` to read its frame and return value
/// (`FunctionLeave3WithInfo`).
pub type FunctionLeave3WithInfo = unsafe extern "system" fn(
    functionIDOrClientID: FunctionIDOrClientID,
    eltInfo: COR_PRF_ELT_INFO,
);

/// Called when a managed function makes a tail call, with a handle for
/// `GetFunctionTailcall3Info` (`FunctionTailcall3WithInfo`).
pub type FunctionTailcall3WithInfo = unsafe extern "system" fn(
    functionIDOrClientID: FunctionIDOrClientID,
    eltInfo: COR_PRF_ELT_INFO,
);

/// Called by `ICorProfilerInfo2::DoStackSnapshot` once per managed frame, or
/// once per run of unmanaged frames (`funcId` 0), from the top of the stack
/// down; returning a failure stops the walk (`StackSnapshotCallback`).
///
/// `context` is a `contextSize`-byte platform `CONTEXT`, present only when
/// the snapshot asked for register contexts; `frameInfo` and `context` are
/// valid only during the call.
pub type StackSnapshotCallback = unsafe extern "system" fn(
    funcId: FunctionID,
    ip: UINT_PTR,
    frameInfo: COR_PRF_FRAME_INFO,
    contextSize: ULONG32,
    context: *mut BYTE,
    clientData: *mut c_void,
) -> HRESULT;

/// Called by `ICorProfilerInfo10::EnumerateObjectReferences` for each
/// reference an object holds; return TRUE to continue, FALSE to stop
/// (`ObjectReferenceCallback`).
pub type ObjectReferenceCallback = unsafe extern "system" fn(
    root: ObjectID,
    reference: *mut ObjectID,
    clientData: *mut c_void,
) -> BOOL;

/// Called by `ICorProfilerInfo15::EnumerateGCHeapObjects` for each object on
/// the GC heap; return TRUE to continue, FALSE to stop (`ObjectCallback`).
pub type ObjectCallback =
    unsafe extern "system" fn(object: ObjectID, callbackState: *mut c_void) -> BOOL;

/// Called when an EventPipe session enables, changes or disables a provider
/// created with `ICorProfilerInfo14::EventPipeCreateProvider2`
/// (`EventPipeProviderCallback`).
///
/// `source_id` points to the 16-byte ID of the session that caused the
/// change, or is null when a session disabled the provider; the keywords are
/// the union over all sessions that have it enabled.
pub type EventPipeProviderCallback = unsafe extern "system" fn(
    source_id: *const u8,
    is_enabled: u32,
    level: u8,
    match_any_keywords: u64,
    match_all_keywords: u64,
    filter_data: *mut COR_PRF_FILTER_DATA,
    callback_data: *mut c_void,
);
