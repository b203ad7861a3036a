//! [`ProfilerCallback`]: exports a [`Profiler`] as the runtime's raw
//! `ICorProfilerCallback` .. `ICorProfilerCallback11`, converting arguments
//! on the way in and results on the way out.
//!
//! Conversions never trust the runtime blindly: a null or misaligned array
//! pointer with a non-zero count, a null interface or string pointer, or a
//! null out-pointer is answered with `E_POINTER` without calling the
//! profiler. Panics in the profiler are contained by the COM core's thunks
//! (they become `E_FAIL`).

use alloc::string::String;
use core::ffi::c_void;
use std::sync::{Arc, OnceLock};

use super::args::{Bools, EventPipeEvent};
use super::heap::CallbackObject;
use super::info::{ProfilerInfo, Result};
use super::profiler::Profiler;
use super::strings::decode;
use super::termination::{self, TerminationHandler};
use crate::metadata::mdMethodDef;
use crate::profiling::*;
use crate::{
    ComRef, Interface, BOOL, BYTE, DWORD, E_INVALIDARG, E_POINTER, E_UNEXPECTED, FALSE, GUID,
    HRESULT, SIZE_T, S_OK, TRUE, UINT, UINT_PTR, ULONG, WCHAR,
};

/// The adapter between the runtime and a [`Profiler`]: implements the raw
/// callback traits `ICorProfilerCallback_Impl` .. `ICorProfilerCallback11_Impl`
/// by converting each call's arguments and forwarding it to `P`.
///
/// It keeps the [`ProfilerInfo`] obtained in `Initialize` (or
/// `InitializeForAttach`) and passes it to every later call; a call that
/// arrives before it (or a second `Initialize`) gets `E_UNEXPECTED`.
/// [`export_profiler`](super::export_profiler) exports it; you rarely need
/// the type itself.
pub struct ProfilerCallback<P: Profiler> {
    profiler: Arc<P>,
    info: OnceLock<ProfilerInfo>,
    termination: OnceLock<TerminationHandler>,
}

impl<P: Profiler> ProfilerCallback<P> {
    /// Wraps `profiler`; it receives calls once exported.
    pub fn new(profiler: P) -> ProfilerCallback<P> {
        ProfilerCallback {
            profiler: Arc::new(profiler),
            info: OnceLock::new(),
            termination: OnceLock::new(),
        }
    }

    /// The wrapped profiler.
    pub fn profiler(&self) -> &P {
        &self.profiler
    }

    /// The runtime's services, once `Initialize` (or `InitializeForAttach`)
    /// has been called.
    pub fn info(&self) -> Option<&ProfilerInfo> {
        self.info.get()
    }

    /// What became of the `SIGTERM` handler (see
    /// [`Profiler::flush_on_sigterm`]) once `Initialize` or
    /// `InitializeForAttach` has succeeded.
    pub fn termination_handler(&self) -> Option<TerminationHandler> {
        self.termination.get().copied()
    }

    /// After a successful `Initialize`: the `SIGTERM` handler, when the
    /// profiler wants one, the runtime is a real one (it answers
    /// `GetRuntimeInformation`: a test's stand-in does not, and installs
    /// nothing process-wide) and nothing else would run `shutdown`.
    fn arm_termination(&self) {
        let handler = match (self.profiler.flush_on_sigterm(), self.info.get()) {
            (None, _) | (_, None) => TerminationHandler::NotWanted,
            (Some(limit), Some(info)) => match info.runtime_information() {
                Err(_) => TerminationHandler::NotNeeded,
                Ok(runtime) => {
                    let profiler = Arc::clone(&self.profiler);
                    let info = info.clone();
                    termination::install(
                        alloc::boxed::Box::new(move || {
                            if let Err(error) = profiler.shutdown(&info) {
                                std::eprintln!("corprof: the profiler's shutdown failed: {error}");
                            }
                        }),
                        limit,
                        runtime.major,
                    )
                }
            },
        };
        if handler == TerminationHandler::Installed
            && std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1")
        {
            std::eprintln!("corprof: SIGTERM handler installed");
        }
        let _ = self.termination.set(handler);
    }

    /// Whether this adapter installed the `SIGTERM` handler (so a
    /// termination may run, or have run, the profiler's `shutdown`).
    fn armed(&self) -> bool {
        self.termination.get() == Some(&TerminationHandler::Installed)
    }

    /// `Initialize` and `InitializeForAttach`: negotiates the info
    /// interface, stores it (once) and hands it to `init`.
    fn init(
        &self,
        unknown: *mut c_void,
        init: impl FnOnce(&P, &ProfilerInfo) -> Result<()>,
    ) -> Result<()> {
        if self.info.get().is_some() {
            return Err(E_UNEXPECTED.into());
        }
        // SAFETY: the runtime passes a live `IUnknown*` (or null, which
        // `from_raw_unknown` answers with E_POINTER) for the whole call.
        let info = unsafe { ProfilerInfo::from_raw_unknown(unknown) }?;
        self.info.set(info).map_err(|_| E_UNEXPECTED)?;
        let info = self.info.get().ok_or(E_UNEXPECTED)?;
        init(&self.profiler, info)
    }

    /// Every other notification (the runtime's `callback`): `E_UNEXPECTED`
    /// before `Initialize`, else `call`'s result as an `HRESULT`, an error
    /// reported under `CORPROF_DEBUG=1` ([`report_failed_callback`]).
    #[inline]
    fn dispatch(
        &self,
        callback: &'static str,
        call: impl FnOnce(&P, &ProfilerInfo) -> Result<()>,
    ) -> HRESULT {
        let Some(info) = self.info.get() else {
            return E_UNEXPECTED;
        };
        match call(&self.profiler, info) {
            Ok(()) => S_OK,
            Err(error) => {
                report_failed_callback(callback, &error);
                error.into()
            }
        }
    }

    /// A notification whose answer is a `BOOL` out-parameter: checks the
    /// pointer, then writes the answer only when `call` succeeds.
    #[inline]
    fn dispatch_bool(
        &self,
        callback: &'static str,
        out: *mut BOOL,
        call: impl FnOnce(&P, &ProfilerInfo) -> Result<bool>,
    ) -> HRESULT {
        let Some(info) = self.info.get() else {
            return E_UNEXPECTED;
        };
        if out.is_null() || !out.is_aligned() {
            return E_POINTER;
        }
        match call(&self.profiler, info) {
            Ok(answer) => {
                // SAFETY: `out` is non-null and aligned (checked above), and
                // the runtime passes it pointing at a writable BOOL.
                unsafe { out.write(if answer { TRUE } else { FALSE }) };
                S_OK
            }
            Err(error) => {
                report_failed_callback(callback, &error);
                error.into()
            }
        }
    }
}

/// A runtime array as a slice: empty for a zero count (whatever the
/// pointer), `E_POINTER` for a null or misaligned pointer with a non-zero
/// count, `E_INVALIDARG` for a count whose byte size cannot exist.
///
/// # Safety
///
/// When `count` is non-zero and `ptr` is non-null and aligned, `ptr` must
/// point to `count` initialized `T`s that stay valid and unchanged for `'a`
/// (the runtime guarantees it for the duration of a callback).
unsafe fn slice<'a, T>(ptr: *const T, count: ULONG) -> Result<&'a [T]> {
    let len = count as usize;
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(E_POINTER.into());
    }
    match len.checked_mul(core::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => {}
        _ => return Err(E_INVALIDARG.into()),
    }
    // SAFETY: non-null, aligned, `len * size_of::<T>()` fits in an isize
    // (checked above) and the caller guarantees `len` valid elements.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// A counted UTF-16 string (not NUL-terminated) as a `String`; invalid
/// UTF-16 becomes U+FFFD. The pointer rules are those of [`slice`].
///
/// # Safety
///
/// As for [`slice`].
unsafe fn counted_string(ptr: *const WCHAR, count: ULONG) -> Result<String> {
    // SAFETY: forwarded contract.
    let units = unsafe { slice(ptr, count) }?;
    Ok(decode(units))
}

/// A NUL-terminated UTF-16 string as a `String`; `E_POINTER` when null or
/// misaligned.
///
/// # Safety
///
/// A non-null, aligned `ptr` must point to a NUL-terminated UTF-16 string
/// valid for the call.
unsafe fn terminated_string(ptr: *const WCHAR) -> Result<String> {
    if ptr.is_null() || !ptr.is_aligned() {
        return Err(E_POINTER.into());
    }
    let mut len = 0usize;
    // SAFETY: the string is NUL-terminated (caller's contract), so every
    // unit up to and including the terminator is readable.
    while unsafe { ptr.add(len).read() } != 0 {
        len += 1;
    }
    // SAFETY: the `len` units before the terminator were just read.
    Ok(decode(unsafe { core::slice::from_raw_parts(ptr, len) }))
}

/// An optional GUID argument: `None` when null (or misaligned).
///
/// # Safety
///
/// A non-null, aligned `ptr` must point to a GUID valid for `'a`.
unsafe fn guid<'a>(ptr: *const GUID) -> Option<&'a GUID> {
    if !ptr.is_aligned() {
        return None;
    }
    // SAFETY: aligned, and null or valid (caller's contract).
    unsafe { ptr.as_ref() }
}

/// An interface argument as a borrowed view; `E_POINTER` when null.
///
/// # Safety
///
/// A non-null `ptr` must be a live object implementing `I` for `'a`.
unsafe fn interface<'a, I: Interface>(ptr: *mut c_void) -> Result<ComRef<'a, I>> {
    // SAFETY: forwarded contract.
    unsafe { ComRef::from_raw(ptr) }.ok_or(E_POINTER.into())
}

/// With `CORPROF_DEBUG=1`, says on stderr that `Initialize` failed: the
/// runtime then releases the profiler and runs the program without it, and
/// says nothing itself.
fn report_failed_initialize(error: &crate::Error) {
    if std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1") {
        std::eprintln!(
            "corprof: Initialize failed, so the runtime runs the program without this \
             profiler: {error}"
        );
    }
}

/// With `CORPROF_DEBUG=1`, says on stderr that the profiler's `callback`
/// returned `error` (the runtime gets its HRESULT, and for most callbacks
/// ignores it: without this the error would vanish).
#[cold]
fn report_failed_callback(callback: &str, error: &crate::Error) {
    if std::env::var_os("CORPROF_DEBUG").is_some_and(|value| value == "1") {
        std::eprintln!("corprof: the profiler's {callback} callback failed: {error}");
    }
}

/// `BOOL` to `bool`: any non-zero value is true.
#[inline]
fn b(value: BOOL) -> bool {
    value != FALSE
}

impl<P: Profiler> ICorProfilerCallback_Impl for ProfilerCallback<P> {
    unsafe fn Initialize(&self, unknown: *mut c_void) -> HRESULT {
        let result = self.init(unknown, |p, info| p.initialize(info));
        match &result {
            Ok(()) => self.arm_termination(),
            Err(error) => report_failed_initialize(error),
        }
        result.into()
    }
    unsafe fn Shutdown(&self) -> HRESULT {
        // Unless a SIGTERM has run (or runs) the profiler's shutdown: then
        // it is not run twice.
        let answer = if self.armed() {
            termination::run_shutdown(|| self.dispatch("Shutdown", |p, info| p.shutdown(info)))
                .unwrap_or(S_OK)
        } else {
            self.dispatch("Shutdown", |p, info| p.shutdown(info))
        };
        // The runtime tears down once this returns: from now on every
        // ProfilerInfo (and clone) answers AFTER_SHUTDOWN instead of
        // calling it, and calls other threads have in flight finish first.
        if let Some(info) = self.info.get() {
            info.mark_shut_down();
        }
        answer
    }
    unsafe fn AppDomainCreationStarted(&self, app_domain: AppDomainID) -> HRESULT {
        self.dispatch("AppDomainCreationStarted", |p, info| {
            p.app_domain_creation_started(info, app_domain)
        })
    }
    unsafe fn AppDomainCreationFinished(
        &self,
        app_domain: AppDomainID,
        status: HRESULT,
    ) -> HRESULT {
        self.dispatch("AppDomainCreationFinished", |p, info| {
            p.app_domain_creation_finished(info, app_domain, status)
        })
    }
    unsafe fn AppDomainShutdownStarted(&self, app_domain: AppDomainID) -> HRESULT {
        self.dispatch("AppDomainShutdownStarted", |p, info| {
            p.app_domain_shutdown_started(info, app_domain)
        })
    }
    unsafe fn AppDomainShutdownFinished(
        &self,
        app_domain: AppDomainID,
        status: HRESULT,
    ) -> HRESULT {
        self.dispatch("AppDomainShutdownFinished", |p, info| {
            p.app_domain_shutdown_finished(info, app_domain, status)
        })
    }
    unsafe fn AssemblyLoadStarted(&self, assembly: AssemblyID) -> HRESULT {
        self.dispatch("AssemblyLoadStarted", |p, info| {
            p.assembly_load_started(info, assembly)
        })
    }
    unsafe fn AssemblyLoadFinished(&self, assembly: AssemblyID, status: HRESULT) -> HRESULT {
        self.dispatch("AssemblyLoadFinished", |p, info| {
            p.assembly_load_finished(info, assembly, status)
        })
    }
    unsafe fn AssemblyUnloadStarted(&self, assembly: AssemblyID) -> HRESULT {
        self.dispatch("AssemblyUnloadStarted", |p, info| {
            p.assembly_unload_started(info, assembly)
        })
    }
    unsafe fn AssemblyUnloadFinished(&self, assembly: AssemblyID, status: HRESULT) -> HRESULT {
        self.dispatch("AssemblyUnloadFinished", |p, info| {
            p.assembly_unload_finished(info, assembly, status)
        })
    }
    unsafe fn ModuleLoadStarted(&self, module: ModuleID) -> HRESULT {
        self.dispatch("ModuleLoadStarted", |p, info| {
            p.module_load_started(info, module)
        })
    }
    unsafe fn ModuleLoadFinished(&self, module: ModuleID, status: HRESULT) -> HRESULT {
        self.dispatch("ModuleLoadFinished", |p, info| {
            p.module_load_finished(info, module, status)
        })
    }
    unsafe fn ModuleUnloadStarted(&self, module: ModuleID) -> HRESULT {
        // The module's ID may name another module once it is gone.
        if let Some(info) = self.info.get() {
            info.forget_module(module);
        }
        self.dispatch("ModuleUnloadStarted", |p, info| {
            p.module_unload_started(info, module)
        })
    }
    unsafe fn ModuleUnloadFinished(&self, module: ModuleID, status: HRESULT) -> HRESULT {
        self.dispatch("ModuleUnloadFinished", |p, info| {
            p.module_unload_finished(info, module, status)
        })
    }
    unsafe fn ModuleAttachedToAssembly(&self, module: ModuleID, assembly: AssemblyID) -> HRESULT {
        self.dispatch("ModuleAttachedToAssembly", |p, info| {
            p.module_attached_to_assembly(info, module, assembly)
        })
    }
    unsafe fn ClassLoadStarted(&self, class: ClassID) -> HRESULT {
        self.dispatch("ClassLoadStarted", |p, info| {
            p.class_load_started(info, class)
        })
    }
    unsafe fn ClassLoadFinished(&self, class: ClassID, status: HRESULT) -> HRESULT {
        self.dispatch("ClassLoadFinished", |p, info| {
            p.class_load_finished(info, class, status)
        })
    }
    unsafe fn ClassUnloadStarted(&self, class: ClassID) -> HRESULT {
        self.dispatch("ClassUnloadStarted", |p, info| {
            p.class_unload_started(info, class)
        })
    }
    unsafe fn ClassUnloadFinished(&self, class: ClassID, status: HRESULT) -> HRESULT {
        self.dispatch("ClassUnloadFinished", |p, info| {
            p.class_unload_finished(info, class, status)
        })
    }
    unsafe fn FunctionUnloadStarted(&self, function: FunctionID) -> HRESULT {
        self.dispatch("FunctionUnloadStarted", |p, info| {
            p.function_unload_started(info, function)
        })
    }
    unsafe fn JITCompilationStarted(&self, function: FunctionID, safe_to_block: BOOL) -> HRESULT {
        self.dispatch("JITCompilationStarted", |p, info| {
            p.jit_compilation_started(info, function, b(safe_to_block))
        })
    }
    unsafe fn JITCompilationFinished(
        &self,
        function: FunctionID,
        status: HRESULT,
        safe_to_block: BOOL,
    ) -> HRESULT {
        self.dispatch("JITCompilationFinished", |p, info| {
            p.jit_compilation_finished(info, function, status, b(safe_to_block))
        })
    }
    unsafe fn JITCachedFunctionSearchStarted(
        &self,
        function: FunctionID,
        use_cached: *mut BOOL,
    ) -> HRESULT {
        self.dispatch_bool("JITCachedFunctionSearchStarted", use_cached, |p, info| {
            p.jit_cached_function_search_started(info, function)
        })
    }
    unsafe fn JITCachedFunctionSearchFinished(
        &self,
        function: FunctionID,
        result: COR_PRF_JIT_CACHE,
    ) -> HRESULT {
        self.dispatch("JITCachedFunctionSearchFinished", |p, info| {
            p.jit_cached_function_search_finished(info, function, result)
        })
    }
    unsafe fn JITFunctionPitched(&self, function: FunctionID) -> HRESULT {
        self.dispatch("JITFunctionPitched", |p, info| {
            p.jit_function_pitched(info, function)
        })
    }
    unsafe fn JITInlining(
        &self,
        caller: FunctionID,
        callee: FunctionID,
        should_inline: *mut BOOL,
    ) -> HRESULT {
        self.dispatch_bool("JITInlining", should_inline, |p, info| {
            p.jit_inlining(info, caller, callee)
        })
    }
    unsafe fn ThreadCreated(&self, thread: ThreadID) -> HRESULT {
        self.dispatch("ThreadCreated", |p, info| p.thread_created(info, thread))
    }
    unsafe fn ThreadDestroyed(&self, thread: ThreadID) -> HRESULT {
        self.dispatch("ThreadDestroyed", |p, info| {
            p.thread_destroyed(info, thread)
        })
    }
    unsafe fn ThreadAssignedToOSThread(&self, thread: ThreadID, os_thread_id: DWORD) -> HRESULT {
        self.dispatch("ThreadAssignedToOSThread", |p, info| {
            p.thread_assigned_to_os_thread(info, thread, os_thread_id)
        })
    }
    unsafe fn RemotingClientInvocationStarted(&self) -> HRESULT {
        self.dispatch("RemotingClientInvocationStarted", |p, info| {
            p.remoting_client_invocation_started(info)
        })
    }
    unsafe fn RemotingClientSendingMessage(&self, cookie: *mut GUID, is_async: BOOL) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let cookie = unsafe { guid(cookie) };
        self.dispatch("RemotingClientSendingMessage", |p, info| {
            p.remoting_client_sending_message(info, cookie, b(is_async))
        })
    }
    unsafe fn RemotingClientReceivingReply(&self, cookie: *mut GUID, is_async: BOOL) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let cookie = unsafe { guid(cookie) };
        self.dispatch("RemotingClientReceivingReply", |p, info| {
            p.remoting_client_receiving_reply(info, cookie, b(is_async))
        })
    }
    unsafe fn RemotingClientInvocationFinished(&self) -> HRESULT {
        self.dispatch("RemotingClientInvocationFinished", |p, info| {
            p.remoting_client_invocation_finished(info)
        })
    }
    unsafe fn RemotingServerReceivingMessage(&self, cookie: *mut GUID, is_async: BOOL) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let cookie = unsafe { guid(cookie) };
        self.dispatch("RemotingServerReceivingMessage", |p, info| {
            p.remoting_server_receiving_message(info, cookie, b(is_async))
        })
    }
    unsafe fn RemotingServerInvocationStarted(&self) -> HRESULT {
        self.dispatch("RemotingServerInvocationStarted", |p, info| {
            p.remoting_server_invocation_started(info)
        })
    }
    unsafe fn RemotingServerInvocationReturned(&self) -> HRESULT {
        self.dispatch("RemotingServerInvocationReturned", |p, info| {
            p.remoting_server_invocation_returned(info)
        })
    }
    unsafe fn RemotingServerSendingReply(&self, cookie: *mut GUID, is_async: BOOL) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let cookie = unsafe { guid(cookie) };
        self.dispatch("RemotingServerSendingReply", |p, info| {
            p.remoting_server_sending_reply(info, cookie, b(is_async))
        })
    }
    unsafe fn UnmanagedToManagedTransition(
        &self,
        function: FunctionID,
        reason: COR_PRF_TRANSITION_REASON,
    ) -> HRESULT {
        self.dispatch("UnmanagedToManagedTransition", |p, info| {
            p.unmanaged_to_managed_transition(info, function, reason)
        })
    }
    unsafe fn ManagedToUnmanagedTransition(
        &self,
        function: FunctionID,
        reason: COR_PRF_TRANSITION_REASON,
    ) -> HRESULT {
        self.dispatch("ManagedToUnmanagedTransition", |p, info| {
            p.managed_to_unmanaged_transition(info, function, reason)
        })
    }
    unsafe fn RuntimeSuspendStarted(&self, reason: COR_PRF_SUSPEND_REASON) -> HRESULT {
        self.dispatch("RuntimeSuspendStarted", |p, info| {
            p.runtime_suspend_started(info, reason)
        })
    }
    unsafe fn RuntimeSuspendFinished(&self) -> HRESULT {
        self.dispatch("RuntimeSuspendFinished", |p, info| {
            p.runtime_suspend_finished(info)
        })
    }
    unsafe fn RuntimeSuspendAborted(&self) -> HRESULT {
        self.dispatch("RuntimeSuspendAborted", |p, info| {
            p.runtime_suspend_aborted(info)
        })
    }
    unsafe fn RuntimeResumeStarted(&self) -> HRESULT {
        self.dispatch("RuntimeResumeStarted", |p, info| {
            p.runtime_resume_started(info)
        })
    }
    unsafe fn RuntimeResumeFinished(&self) -> HRESULT {
        self.dispatch("RuntimeResumeFinished", |p, info| {
            p.runtime_resume_finished(info)
        })
    }
    unsafe fn RuntimeThreadSuspended(&self, thread: ThreadID) -> HRESULT {
        self.dispatch("RuntimeThreadSuspended", |p, info| {
            p.runtime_thread_suspended(info, thread)
        })
    }
    unsafe fn RuntimeThreadResumed(&self, thread: ThreadID) -> HRESULT {
        self.dispatch("RuntimeThreadResumed", |p, info| {
            p.runtime_thread_resumed(info, thread)
        })
    }
    unsafe fn MovedReferences(
        &self,
        count: ULONG,
        old_starts: *mut ObjectID,
        new_starts: *mut ObjectID,
        lengths: *mut ULONG,
    ) -> HRESULT {
        self.dispatch("MovedReferences", |p, info| {
            // SAFETY: the runtime passes three arrays of `count` elements,
            // valid for the call.
            let (old_starts, new_starts, lengths) = unsafe {
                (
                    slice(old_starts, count)?,
                    slice(new_starts, count)?,
                    slice(lengths, count)?,
                )
            };
            p.moved_references(info, old_starts, new_starts, lengths)
        })
    }
    unsafe fn ObjectAllocated(&self, object: ObjectID, class: ClassID) -> HRESULT {
        self.dispatch("ObjectAllocated", |p, info| {
            p.object_allocated(info, object, class)
        })
    }
    unsafe fn ObjectsAllocatedByClass(
        &self,
        count: ULONG,
        classes: *mut ClassID,
        objects: *mut ULONG,
    ) -> HRESULT {
        self.dispatch("ObjectsAllocatedByClass", |p, info| {
            // SAFETY: the runtime passes two arrays of `count` elements,
            // valid for the call.
            let (classes, objects) = unsafe { (slice(classes, count)?, slice(objects, count)?) };
            p.objects_allocated_by_class(info, classes, objects)
        })
    }
    unsafe fn ObjectReferences(
        &self,
        object: ObjectID,
        class: ClassID,
        count: ULONG,
        references: *mut ObjectID,
    ) -> HRESULT {
        self.dispatch("ObjectReferences", |p, info| {
            // SAFETY: the runtime passes an array of `count` elements,
            // valid for the call.
            let references = unsafe { slice(references, count) }?;
            p.object_references(info, object, class, references)
        })
    }
    unsafe fn RootReferences(&self, count: ULONG, roots: *mut ObjectID) -> HRESULT {
        self.dispatch("RootReferences", |p, info| {
            // SAFETY: the runtime passes an array of `count` elements,
            // valid for the call.
            let roots = unsafe { slice(roots, count) }?;
            p.root_references(info, roots)
        })
    }
    unsafe fn ExceptionThrown(&self, thrown: ObjectID) -> HRESULT {
        self.dispatch("ExceptionThrown", |p, info| {
            // SAFETY: this callback's own argument, on its thread, borrowed
            // for the call only.
            let thrown = unsafe { CallbackObject::new(info, thrown) };
            p.exception_thrown(info, thrown)
        })
    }
    unsafe fn ExceptionSearchFunctionEnter(&self, function: FunctionID) -> HRESULT {
        self.dispatch("ExceptionSearchFunctionEnter", |p, info| {
            p.exception_search_function_enter(info, function)
        })
    }
    unsafe fn ExceptionSearchFunctionLeave(&self) -> HRESULT {
        self.dispatch("ExceptionSearchFunctionLeave", |p, info| {
            p.exception_search_function_leave(info)
        })
    }
    unsafe fn ExceptionSearchFilterEnter(&self, function: FunctionID) -> HRESULT {
        self.dispatch("ExceptionSearchFilterEnter", |p, info| {
            p.exception_search_filter_enter(info, function)
        })
    }
    unsafe fn ExceptionSearchFilterLeave(&self) -> HRESULT {
        self.dispatch("ExceptionSearchFilterLeave", |p, info| {
            p.exception_search_filter_leave(info)
        })
    }
    unsafe fn ExceptionSearchCatcherFound(&self, function: FunctionID) -> HRESULT {
        self.dispatch("ExceptionSearchCatcherFound", |p, info| {
            p.exception_search_catcher_found(info, function)
        })
    }
    unsafe fn ExceptionOSHandlerEnter(&self, _unused: UINT_PTR) -> HRESULT {
        self.dispatch("ExceptionOSHandlerEnter", |p, info| {
            p.exception_os_handler_enter(info)
        })
    }
    unsafe fn ExceptionOSHandlerLeave(&self, _unused: UINT_PTR) -> HRESULT {
        self.dispatch("ExceptionOSHandlerLeave", |p, info| {
            p.exception_os_handler_leave(info)
        })
    }
    unsafe fn ExceptionUnwindFunctionEnter(&self, function: FunctionID) -> HRESULT {
        self.dispatch("ExceptionUnwindFunctionEnter", |p, info| {
            p.exception_unwind_function_enter(info, function)
        })
    }
    unsafe fn ExceptionUnwindFunctionLeave(&self) -> HRESULT {
        self.dispatch("ExceptionUnwindFunctionLeave", |p, info| {
            p.exception_unwind_function_leave(info)
        })
    }
    unsafe fn ExceptionUnwindFinallyEnter(&self, function: FunctionID) -> HRESULT {
        self.dispatch("ExceptionUnwindFinallyEnter", |p, info| {
            p.exception_unwind_finally_enter(info, function)
        })
    }
    unsafe fn ExceptionUnwindFinallyLeave(&self) -> HRESULT {
        self.dispatch("ExceptionUnwindFinallyLeave", |p, info| {
            p.exception_unwind_finally_leave(info)
        })
    }
    unsafe fn ExceptionCatcherEnter(&self, function: FunctionID, exception: ObjectID) -> HRESULT {
        self.dispatch("ExceptionCatcherEnter", |p, info| {
            p.exception_catcher_enter(info, function, exception)
        })
    }
    unsafe fn ExceptionCatcherLeave(&self) -> HRESULT {
        self.dispatch("ExceptionCatcherLeave", |p, info| {
            p.exception_catcher_leave(info)
        })
    }
    unsafe fn COMClassicVTableCreated(
        &self,
        wrapped_class: ClassID,
        implemented_iid: *const GUID,
        vtable: *mut c_void,
        slots: ULONG,
    ) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let iid = unsafe { guid(implemented_iid) };
        self.dispatch("COMClassicVTableCreated", |p, info| {
            p.com_classic_vtable_created(info, wrapped_class, iid, vtable as usize, slots)
        })
    }
    unsafe fn COMClassicVTableDestroyed(
        &self,
        wrapped_class: ClassID,
        implemented_iid: *const GUID,
        vtable: *mut c_void,
    ) -> HRESULT {
        // SAFETY: the runtime passes null or a GUID valid for the call.
        let iid = unsafe { guid(implemented_iid) };
        self.dispatch("COMClassicVTableDestroyed", |p, info| {
            p.com_classic_vtable_destroyed(info, wrapped_class, iid, vtable as usize)
        })
    }
    unsafe fn ExceptionCLRCatcherFound(&self) -> HRESULT {
        self.dispatch("ExceptionCLRCatcherFound", |p, info| {
            p.exception_clr_catcher_found(info)
        })
    }
    unsafe fn ExceptionCLRCatcherExecute(&self) -> HRESULT {
        self.dispatch("ExceptionCLRCatcherExecute", |p, info| {
            p.exception_clr_catcher_execute(info)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback2_Impl for ProfilerCallback<P> {
    unsafe fn ThreadNameChanged(
        &self,
        thread: ThreadID,
        count: ULONG,
        name: *mut WCHAR,
    ) -> HRESULT {
        self.dispatch("ThreadNameChanged", |p, info| {
            // SAFETY: the runtime passes `count` UTF-16 units (or null with
            // a zero count), valid for the call.
            let name = unsafe { counted_string(name, count) }?;
            p.thread_name_changed(info, thread, name)
        })
    }
    unsafe fn GarbageCollectionStarted(
        &self,
        count: i32,
        generations: *mut BOOL,
        reason: COR_PRF_GC_REASON,
    ) -> HRESULT {
        self.dispatch("GarbageCollectionStarted", |p, info| {
            let count = ULONG::try_from(count).map_err(|_| E_INVALIDARG)?;
            // SAFETY: the runtime passes an array of `count` BOOLs, valid
            // for the call.
            let generations = unsafe { slice(generations, count) }?;
            p.garbage_collection_started(info, Bools::new(generations), reason)
        })
    }
    unsafe fn SurvivingReferences(
        &self,
        count: ULONG,
        starts: *mut ObjectID,
        lengths: *mut ULONG,
    ) -> HRESULT {
        self.dispatch("SurvivingReferences", |p, info| {
            // SAFETY: the runtime passes two arrays of `count` elements,
            // valid for the call.
            let (starts, lengths) = unsafe { (slice(starts, count)?, slice(lengths, count)?) };
            p.surviving_references(info, starts, lengths)
        })
    }
    unsafe fn GarbageCollectionFinished(&self) -> HRESULT {
        self.dispatch("GarbageCollectionFinished", |p, info| {
            p.garbage_collection_finished(info)
        })
    }
    unsafe fn FinalizeableObjectQueued(&self, finalizer_flags: DWORD, object: ObjectID) -> HRESULT {
        let flags = COR_PRF_FINALIZER_FLAGS::from_bits_retain(finalizer_flags);
        self.dispatch("FinalizeableObjectQueued", |p, info| {
            p.finalizeable_object_queued(info, flags, object)
        })
    }
    unsafe fn RootReferences2(
        &self,
        count: ULONG,
        roots: *mut ObjectID,
        kinds: *mut COR_PRF_GC_ROOT_KIND,
        flags: *mut COR_PRF_GC_ROOT_FLAGS,
        root_ids: *mut UINT_PTR,
    ) -> HRESULT {
        self.dispatch("RootReferences2", |p, info| {
            // SAFETY: the runtime passes four arrays of `count` elements,
            // valid for the call; the enum and flag newtypes accept every
            // integer value.
            let (roots, kinds, flags, root_ids) = unsafe {
                (
                    slice(roots, count)?,
                    slice(kinds, count)?,
                    slice(flags, count)?,
                    slice(root_ids, count)?,
                )
            };
            p.root_references2(info, roots, kinds, flags, root_ids)
        })
    }
    unsafe fn HandleCreated(&self, handle: GCHandleID, initial_object: ObjectID) -> HRESULT {
        self.dispatch("HandleCreated", |p, info| {
            p.handle_created(info, handle, initial_object)
        })
    }
    unsafe fn HandleDestroyed(&self, handle: GCHandleID) -> HRESULT {
        self.dispatch("HandleDestroyed", |p, info| {
            p.handle_destroyed(info, handle)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback3_Impl for ProfilerCallback<P> {
    unsafe fn InitializeForAttach(
        &self,
        unknown: *mut c_void,
        client_data: *mut c_void,
        size: UINT,
    ) -> HRESULT {
        // Checked before `init` stores the info: bad client data leaves the
        // adapter uninitialized, as any other failed initialization does.
        // SAFETY: the runtime passes `size` bytes of client data (or null
        // with a zero size), valid for the call.
        let client_data = match unsafe { slice(client_data as *const u8, size) } {
            Ok(data) => data,
            Err(error) => return error.into(),
        };
        let result = self.init(unknown, |p, info| {
            p.initialize_for_attach(info, client_data)
        });
        if result.is_ok() {
            // An attached profiler can be detached and unloaded; the
            // process's SIGTERM is left as it is.
            let _ = self.termination.set(TerminationHandler::NotWanted);
        }
        result.into()
    }
    unsafe fn ProfilerAttachComplete(&self) -> HRESULT {
        self.dispatch("ProfilerAttachComplete", |p, info| {
            p.profiler_attach_complete(info)
        })
    }
    unsafe fn ProfilerDetachSucceeded(&self) -> HRESULT {
        if self.armed() {
            termination::detached();
        }
        self.dispatch("ProfilerDetachSucceeded", |p, info| {
            p.profiler_detach_succeeded(info)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback4_Impl for ProfilerCallback<P> {
    unsafe fn ReJITCompilationStarted(
        &self,
        function: FunctionID,
        rejit: ReJITID,
        safe_to_block: BOOL,
    ) -> HRESULT {
        self.dispatch("ReJITCompilationStarted", |p, info| {
            p.rejit_compilation_started(info, function, rejit, b(safe_to_block))
        })
    }
    unsafe fn GetReJITParameters(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        control: *mut c_void,
    ) -> HRESULT {
        self.dispatch("GetReJITParameters", |p, info| {
            // SAFETY: the runtime passes a live ICorProfilerFunctionControl
            // for the duration of the call.
            let control = unsafe { interface::<ICorProfilerFunctionControl>(control) }?;
            p.get_rejit_parameters(info, module, method, control)
        })
    }
    unsafe fn ReJITCompilationFinished(
        &self,
        function: FunctionID,
        rejit: ReJITID,
        status: HRESULT,
        safe_to_block: BOOL,
    ) -> HRESULT {
        self.dispatch("ReJITCompilationFinished", |p, info| {
            p.rejit_compilation_finished(info, function, rejit, status, b(safe_to_block))
        })
    }
    unsafe fn ReJITError(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        function: FunctionID,
        status: HRESULT,
    ) -> HRESULT {
        self.dispatch("ReJITError", |p, info| {
            p.rejit_error(info, module, method, function, status)
        })
    }
    unsafe fn MovedReferences2(
        &self,
        count: ULONG,
        old_starts: *mut ObjectID,
        new_starts: *mut ObjectID,
        lengths: *mut SIZE_T,
    ) -> HRESULT {
        self.dispatch("MovedReferences2", |p, info| {
            // SAFETY: the runtime passes three arrays of `count` elements,
            // valid for the call.
            let (old_starts, new_starts, lengths) = unsafe {
                (
                    slice(old_starts, count)?,
                    slice(new_starts, count)?,
                    slice(lengths, count)?,
                )
            };
            p.moved_references2(info, old_starts, new_starts, lengths)
        })
    }
    unsafe fn SurvivingReferences2(
        &self,
        count: ULONG,
        starts: *mut ObjectID,
        lengths: *mut SIZE_T,
    ) -> HRESULT {
        self.dispatch("SurvivingReferences2", |p, info| {
            // SAFETY: the runtime passes two arrays of `count` elements,
            // valid for the call.
            let (starts, lengths) = unsafe { (slice(starts, count)?, slice(lengths, count)?) };
            p.surviving_references2(info, starts, lengths)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback5_Impl for ProfilerCallback<P> {
    unsafe fn ConditionalWeakTableElementReferences(
        &self,
        count: ULONG,
        keys: *mut ObjectID,
        values: *mut ObjectID,
        handles: *mut GCHandleID,
    ) -> HRESULT {
        self.dispatch("ConditionalWeakTableElementReferences", |p, info| {
            // SAFETY: the runtime passes three arrays of `count` elements,
            // valid for the call.
            let (keys, values, handles) = unsafe {
                (
                    slice(keys, count)?,
                    slice(values, count)?,
                    slice(handles, count)?,
                )
            };
            p.conditional_weak_table_element_references(info, keys, values, handles)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback6_Impl for ProfilerCallback<P> {
    unsafe fn GetAssemblyReferences(&self, path: *const WCHAR, provider: *mut c_void) -> HRESULT {
        self.dispatch("GetAssemblyReferences", |p, info| {
            // SAFETY: the runtime passes a NUL-terminated path and a live
            // ICorProfilerAssemblyReferenceProvider, both valid for the call.
            let (path, provider) = unsafe {
                (
                    terminated_string(path)?,
                    interface::<ICorProfilerAssemblyReferenceProvider>(provider)?,
                )
            };
            p.get_assembly_references(info, path, provider)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback7_Impl for ProfilerCallback<P> {
    unsafe fn ModuleInMemorySymbolsUpdated(&self, module: ModuleID) -> HRESULT {
        self.dispatch("ModuleInMemorySymbolsUpdated", |p, info| {
            p.module_in_memory_symbols_updated(info, module)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback8_Impl for ProfilerCallback<P> {
    unsafe fn DynamicMethodJITCompilationStarted(
        &self,
        function: FunctionID,
        safe_to_block: BOOL,
        header: *const BYTE,
        size: ULONG,
    ) -> HRESULT {
        self.dispatch("DynamicMethodJITCompilationStarted", |p, info| {
            // SAFETY: the runtime passes `size` header bytes, valid for the
            // call.
            let header = unsafe { slice(header, size) }?;
            p.dynamic_method_jit_compilation_started(info, function, b(safe_to_block), header)
        })
    }
    unsafe fn DynamicMethodJITCompilationFinished(
        &self,
        function: FunctionID,
        status: HRESULT,
        safe_to_block: BOOL,
    ) -> HRESULT {
        self.dispatch("DynamicMethodJITCompilationFinished", |p, info| {
            p.dynamic_method_jit_compilation_finished(info, function, status, b(safe_to_block))
        })
    }
}

impl<P: Profiler> ICorProfilerCallback9_Impl for ProfilerCallback<P> {
    unsafe fn DynamicMethodUnloaded(&self, function: FunctionID) -> HRESULT {
        self.dispatch("DynamicMethodUnloaded", |p, info| {
            p.dynamic_method_unloaded(info, function)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback10_Impl for ProfilerCallback<P> {
    unsafe fn EventPipeEventDelivered(
        &self,
        provider: EVENTPIPE_PROVIDER,
        event_id: DWORD,
        event_version: DWORD,
        metadata_size: ULONG,
        metadata: *const BYTE,
        data_size: ULONG,
        data: *const BYTE,
        activity_id: *const GUID,
        related_activity_id: *const GUID,
        thread: ThreadID,
        frame_count: ULONG,
        frames: *mut UINT_PTR,
    ) -> HRESULT {
        self.dispatch("EventPipeEventDelivered", |p, info| {
            // SAFETY: the runtime passes the two blobs and the stack with
            // their sizes, and null or valid activity IDs, all valid for the
            // call.
            let event = unsafe {
                EventPipeEvent {
                    provider,
                    event_id,
                    event_version,
                    metadata: slice(metadata, metadata_size)?,
                    data: slice(data, data_size)?,
                    activity_id: guid(activity_id),
                    related_activity_id: guid(related_activity_id),
                    thread,
                    stack: slice(frames, frame_count)?,
                }
            };
            p.event_pipe_event_delivered(info, &event)
        })
    }
    unsafe fn EventPipeProviderCreated(&self, provider: EVENTPIPE_PROVIDER) -> HRESULT {
        self.dispatch("EventPipeProviderCreated", |p, info| {
            p.event_pipe_provider_created(info, provider)
        })
    }
}

impl<P: Profiler> ICorProfilerCallback11_Impl for ProfilerCallback<P> {
    /// Asked before `Initialize`, so it needs no `ProfilerInfo`.
    unsafe fn LoadAsNotificationOnly(&self, notification_only: *mut BOOL) -> HRESULT {
        if notification_only.is_null() || !notification_only.is_aligned() {
            return E_POINTER;
        }
        match self.profiler.load_as_notification_only() {
            Ok(answer) => {
                // SAFETY: non-null and aligned (checked above); the runtime
                // passes a writable BOOL.
                unsafe { notification_only.write(if answer { TRUE } else { FALSE }) };
                S_OK
            }
            Err(error) => {
                report_failed_callback("LoadAsNotificationOnly", &error);
                error.into()
            }
        }
    }
}
