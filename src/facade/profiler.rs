//! [`Profiler`]: the runtime's notifications as safe, typed Rust methods.

use alloc::string::String;

use super::args::{Bools, EventPipeEvent};
use super::heap::CallbackObject;
use super::info::{ProfilerInfo, Result};
use crate::metadata::mdMethodDef;
use crate::profiling::*;
use crate::{ComRef, GUID, HRESULT};

/// A .NET profiler written in safe Rust: one method per notification of
/// `ICorProfilerCallback` .. `ICorProfilerCallback11`, in the interfaces'
/// order, each with a default body that does nothing and returns `Ok`.
///
/// Implement the methods for the events you ask for in
/// [`initialize`](Profiler::initialize) with
/// [`ProfilerInfo::set_event_mask`]; each method's documentation names the
/// flag that enables it. Every method receives the runtime's services as
/// `info`. Arguments arrive typed: IDs as their newtypes, `BOOL`s as `bool`,
/// arrays as slices (valid only during the call), strings as `String`, and
/// out-parameters become return values.
///
/// Register the type with [`profiler!`](crate::profiler) (or export it with
/// [`export_profiler`](super::export_profiler)); the
/// [`ProfilerCallback`](super::ProfilerCallback) adapter does the
/// conversions.
///
/// # Profilers made of parts
///
/// A tuple of up to 8 profilers is a profiler: `(A, B, C)` hands every
/// callback to `A`, then `B`, then `C`, so capabilities such as
/// `sampling::SamplingProfiler` and `instrument::CallTargetProfiler` combine
/// with a profiler's own callbacks without forwarding any by hand:
/// `profiler!((SamplingProfiler, CallTargetProfiler, MyPart), "CLSID")`.
/// Each part asks for its events with
/// [`ProfilerInfo::add_event_mask`], which keeps the others'. What the
/// tuple answers:
///
/// - [`initialize`](Profiler::initialize) and
///   [`initialize_for_attach`](Profiler::initialize_for_attach): each part
///   in order, stopping at the first `Err`, which is returned (the runtime
///   then unloads the profiler: the later parts are never started, and no
///   part is shut down). A tuple attaches only if every part accepts attach.
/// - [`jit_inlining`](Profiler::jit_inlining),
///   [`jit_cached_function_search_started`](Profiler::jit_cached_function_search_started)
///   and [`load_as_notification_only`](Profiler::load_as_notification_only):
///   `true` only when every part answers `true` (every part is asked); the
///   first `Err` wins.
/// - Every other callback, [`shutdown`](Profiler::shutdown) included: every
///   part, in order, even after one fails; the first `Err` is returned.
///   Owned arguments (`String`) are cloned for each part.
///
/// # Threads and errors
///
/// The runtime calls these methods from many threads at once, hence
/// `Send + Sync` and `&self`: keep state in atomics or locks. The `HRESULT`
/// of an `Err` goes back to the runtime, which ignores it for almost every
/// notification (the exceptions are documented on their methods). A panic
/// never unwinds into the runtime: it is caught and reported as `E_FAIL`.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use corprof::facade::{Profiler, ProfilerInfo, Result};
/// use corprof::profiling::{FunctionID, COR_PRF_MONITOR_JIT_COMPILATION};
///
/// #[derive(Default)]
/// struct JitCounter {
///     jitted: AtomicUsize,
/// }
///
/// impl Profiler for JitCounter {
///     fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
///         info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)
///     }
///     fn jit_compilation_started(
///         &self,
///         _info: &ProfilerInfo,
///         _function: FunctionID,
///         _safe_to_block: bool,
///     ) -> Result<()> {
///         self.jitted.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
/// ```
#[allow(unused_variables)]
pub trait Profiler: Send + Sync + 'static {
    // ICorProfilerCallback (.NET Framework 1.0)

    /// Called once when the profiler is loaded at startup, before any other
    /// notification but [`load_as_notification_only`](Profiler::load_as_notification_only):
    /// the place to choose events with [`ProfilerInfo::set_event_mask`].
    /// Returning `Err` makes the runtime unload the profiler (it receives
    /// no further call, not even [`shutdown`](Profiler::shutdown)).
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the process shuts down: the last point at which `info`
    /// may be used. Called at most once.
    ///
    /// Also called, on Linux, when the process receives a `SIGTERM` that
    /// nothing in it handles (from .NET 10 the runtime itself handles none:
    /// see [`flush_on_sigterm`](Profiler::flush_on_sigterm)): then from a
    /// thread of corprof's, while the runtime and the application still
    /// run, and the process dies of the signal once it returns. Not called
    /// when the process is killed (`SIGKILL`) or crashes.
    fn shutdown(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// How long [`shutdown`](Profiler::shutdown) may take when a `SIGTERM`
    /// nobody handles runs it; `None`: leave the signal alone (the process
    /// then ends at once, without `shutdown`, on .NET 10 and later).
    ///
    /// Asked once, after [`initialize`](Profiler::initialize) succeeds (not
    /// for a profiler attached to a running process). When the signal's
    /// disposition is the default (.NET 10 and later, unless native code of
    /// the application took it), a handler is installed that runs
    /// `shutdown` on a thread of corprof's, then ends the process by the
    /// signal as the default disposition would (after at most this long).
    /// An application or host that handles `SIGTERM` itself
    /// (`PosixSignalRegistration`; ASP.NET Core's host) keeps it, and the
    /// runtime's `Shutdown` runs `shutdown` as usual. The default: 5 s
    /// ([`DEFAULT_SIGTERM_FLUSH`](super::DEFAULT_SIGTERM_FLUSH)).
    fn flush_on_sigterm(&self) -> Option<core::time::Duration> {
        Some(super::termination::DEFAULT_SIGTERM_FLUSH)
    }
    /// Called when an application domain starts being created; its ID is
    /// not usable yet. Enabled by `COR_PRF_MONITOR_APPDOMAIN_LOADS`.
    fn app_domain_creation_started(
        &self,
        info: &ProfilerInfo,
        app_domain: AppDomainID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an application domain has been created, with the outcome
    /// in `status`. Enabled by `COR_PRF_MONITOR_APPDOMAIN_LOADS`.
    fn app_domain_creation_finished(
        &self,
        info: &ProfilerInfo,
        app_domain: AppDomainID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an application domain starts unloading.
    /// Enabled by `COR_PRF_MONITOR_APPDOMAIN_LOADS`.
    fn app_domain_shutdown_started(
        &self,
        info: &ProfilerInfo,
        app_domain: AppDomainID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an application domain has been unloaded, with the
    /// outcome in `status`. Enabled by `COR_PRF_MONITOR_APPDOMAIN_LOADS`.
    fn app_domain_shutdown_finished(
        &self,
        info: &ProfilerInfo,
        app_domain: AppDomainID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an assembly starts loading; its ID is not usable yet.
    /// Enabled by `COR_PRF_MONITOR_ASSEMBLY_LOADS`.
    fn assembly_load_started(&self, info: &ProfilerInfo, assembly: AssemblyID) -> Result<()> {
        Ok(())
    }
    /// Called when an assembly has loaded, with the outcome in `status`.
    /// Enabled by `COR_PRF_MONITOR_ASSEMBLY_LOADS`. Its name:
    /// `info.assembly_info(assembly)?.name`.
    fn assembly_load_finished(
        &self,
        info: &ProfilerInfo,
        assembly: AssemblyID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an assembly starts unloading.
    /// Enabled by `COR_PRF_MONITOR_ASSEMBLY_LOADS`.
    fn assembly_unload_started(&self, info: &ProfilerInfo, assembly: AssemblyID) -> Result<()> {
        Ok(())
    }
    /// Called when an assembly has been unloaded, with the outcome in
    /// `status`. Enabled by `COR_PRF_MONITOR_ASSEMBLY_LOADS`.
    fn assembly_unload_finished(
        &self,
        info: &ProfilerInfo,
        assembly: AssemblyID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a module starts loading; its ID is not usable yet.
    /// Enabled by `COR_PRF_MONITOR_MODULE_LOADS`.
    fn module_load_started(&self, info: &ProfilerInfo, module: ModuleID) -> Result<()> {
        Ok(())
    }
    /// Called when a module has loaded, with the outcome in `status`; its
    /// metadata may now be read. Enabled by `COR_PRF_MONITOR_MODULE_LOADS`.
    /// Its file: `info.module_info(module)?.path`; its types and methods:
    /// `info.module_metadata(module)?` (`None` for a dynamic module), the
    /// place to look up once what later callbacks need (docs/cil.md).
    fn module_load_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a module starts unloading.
    /// Enabled by `COR_PRF_MONITOR_MODULE_LOADS`.
    fn module_unload_started(&self, info: &ProfilerInfo, module: ModuleID) -> Result<()> {
        Ok(())
    }
    /// Called when a module has been unloaded, with the outcome in `status`.
    /// Enabled by `COR_PRF_MONITOR_MODULE_LOADS`.
    fn module_unload_finished(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a module has been attached to its assembly.
    /// Enabled by `COR_PRF_MONITOR_MODULE_LOADS`.
    fn module_attached_to_assembly(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        assembly: AssemblyID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a class starts loading; its ID is not usable yet.
    /// Enabled by `COR_PRF_MONITOR_CLASS_LOADS`.
    fn class_load_started(&self, info: &ProfilerInfo, class: ClassID) -> Result<()> {
        Ok(())
    }
    /// Called when a class has loaded, with the outcome in `status`.
    /// Enabled by `COR_PRF_MONITOR_CLASS_LOADS`. Its name, generic
    /// arguments included: `info.class_name(class)?`.
    fn class_load_finished(
        &self,
        info: &ProfilerInfo,
        class: ClassID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a class starts unloading.
    /// Enabled by `COR_PRF_MONITOR_CLASS_LOADS`.
    fn class_unload_started(&self, info: &ProfilerInfo, class: ClassID) -> Result<()> {
        Ok(())
    }
    /// Called when a class has been unloaded, with the outcome in `status`.
    /// Enabled by `COR_PRF_MONITOR_CLASS_LOADS`.
    fn class_unload_finished(
        &self,
        info: &ProfilerInfo,
        class: ClassID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a function is being unloaded; its ID is invalid once
    /// this returns. Enabled by `COR_PRF_MONITOR_FUNCTION_UNLOADS`.
    fn function_unload_started(&self, info: &ProfilerInfo, function: FunctionID) -> Result<()> {
        Ok(())
    }
    /// Called when the JIT starts compiling a function: the place to
    /// replace its IL. Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`. Its
    /// name: `info.function_name(function)?` (`Namespace.Type.Method`);
    /// its module and MethodDef: `info.function_info(function)?`. Called
    /// again when tiering or OSR recompiles it
    /// (`info.il_function_body_was_set` tells a rewritten one).
    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        is_safe_to_block: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the JIT has compiled a function, with the outcome in
    /// `status`. Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`. Its name:
    /// `info.function_name(function)?`.
    fn jit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        status: HRESULT,
        is_safe_to_block: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the runtime looks for a precompiled (ReadyToRun/NGen)
    /// body of a function; return `Ok(false)` to have it JIT-compiled
    /// instead (answer the same for repeated calls about one function). The
    /// default is `Ok(true)`. Enabled by `COR_PRF_MONITOR_CACHE_SEARCHES`.
    fn jit_cached_function_search_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<bool> {
        Ok(true)
    }
    /// Called when the search for a precompiled body has ended, with its
    /// `result`. Enabled by `COR_PRF_MONITOR_CACHE_SEARCHES`.
    fn jit_cached_function_search_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        result: COR_PRF_JIT_CACHE,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when JIT-compiled code is discarded (current runtimes never
    /// do it). Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`.
    fn jit_function_pitched(&self, info: &ProfilerInfo, function: FunctionID) -> Result<()> {
        Ok(())
    }
    /// Called when the JIT is about to inline `callee` into `caller`; return
    /// `Ok(false)` to prevent it (the default, `Ok(true)`, allows it).
    /// Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`.
    fn jit_inlining(
        &self,
        info: &ProfilerInfo,
        caller: FunctionID,
        callee: FunctionID,
    ) -> Result<bool> {
        Ok(true)
    }
    /// Called when a managed thread has been created.
    /// Enabled by `COR_PRF_MONITOR_THREADS`.
    fn thread_created(&self, info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        Ok(())
    }
    /// Called when a managed thread has been destroyed; its ID is no longer
    /// valid. Enabled by `COR_PRF_MONITOR_THREADS`.
    fn thread_destroyed(&self, info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        Ok(())
    }
    /// Called when a managed thread starts running on the OS thread
    /// `os_thread_id`. Enabled by `COR_PRF_MONITOR_THREADS`.
    fn thread_assigned_to_os_thread(
        &self,
        info: &ProfilerInfo,
        thread: ThreadID,
        os_thread_id: u32,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a remoting call begins on the client (.NET Framework
    /// only). Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_client_invocation_started(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting client sends its request; `cookie` (with
    /// `COR_PRF_MONITOR_REMOTING_COOKIE`) pairs it with the server's receive.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_client_sending_message(
        &self,
        info: &ProfilerInfo,
        cookie: Option<&GUID>,
        is_async: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting client receives the server's reply.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_client_receiving_reply(
        &self,
        info: &ProfilerInfo,
        cookie: Option<&GUID>,
        is_async: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a remoting call has completed on the client.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_client_invocation_finished(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting server receives a request.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_server_receiving_message(
        &self,
        info: &ProfilerInfo,
        cookie: Option<&GUID>,
        is_async: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting server starts invoking the requested method.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_server_invocation_started(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting server has finished invoking the method.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_server_invocation_returned(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the remoting server sends its reply.
    /// Enabled by `COR_PRF_MONITOR_REMOTING`.
    fn remoting_server_sending_reply(
        &self,
        info: &ProfilerInfo,
        cookie: Option<&GUID>,
        is_async: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when execution passes from unmanaged into managed code (a
    /// call in, or a return from a P/Invoke). Enabled by
    /// `COR_PRF_MONITOR_CODE_TRANSITIONS`.
    fn unmanaged_to_managed_transition(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        reason: COR_PRF_TRANSITION_REASON,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when execution passes from managed into unmanaged code (a
    /// P/Invoke, or a return to a native caller). Enabled by
    /// `COR_PRF_MONITOR_CODE_TRANSITIONS`.
    fn managed_to_unmanaged_transition(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        reason: COR_PRF_TRANSITION_REASON,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the runtime starts suspending its threads, for `reason`.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_suspend_started(
        &self,
        info: &ProfilerInfo,
        reason: COR_PRF_SUSPEND_REASON,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when every thread that must be suspended is suspended.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_suspend_finished(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when a suspension under way is abandoned.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_suspend_aborted(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the runtime starts resuming its threads.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_resume_started(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the runtime has resumed its threads.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_resume_finished(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when one thread has been suspended by a runtime suspension.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_thread_suspended(&self, info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        Ok(())
    }
    /// Called when one thread resumes after a runtime suspension.
    /// Enabled by `COR_PRF_MONITOR_SUSPENDS`.
    fn runtime_thread_resumed(&self, info: &ProfilerInfo, thread: ThreadID) -> Result<()> {
        Ok(())
    }
    /// Called during a compacting GC for the object ranges that moved
    /// (parallel slices: range `i` of `lengths[i]` bytes moved from
    /// `old_starts[i]` to `new_starts[i]`; prefer
    /// [`moved_references2`](Profiler::moved_references2), whose lengths do
    /// not truncate). Enabled by `COR_PRF_MONITOR_GC` (or
    /// `COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS`).
    fn moved_references(
        &self,
        info: &ProfilerInfo,
        old_starts: &[ObjectID],
        new_starts: &[ObjectID],
        lengths: &[u32],
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an object of `class` has been allocated on the managed
    /// heap. Enabled by `COR_PRF_MONITOR_OBJECT_ALLOCATED` (with
    /// `COR_PRF_ENABLE_OBJECT_ALLOCATED` set at startup).
    fn object_allocated(
        &self,
        info: &ProfilerInfo,
        object: ObjectID,
        class: ClassID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called after a GC with, per class, the number of objects allocated
    /// since the previous GC (parallel slices). Enabled by
    /// `COR_PRF_MONITOR_GC`.
    fn objects_allocated_by_class(
        &self,
        info: &ProfilerInfo,
        classes: &[ClassID],
        counts: &[u32],
    ) -> Result<()> {
        Ok(())
    }
    /// Called after a GC with the objects that `object` references; an
    /// `Err` stops these calls until the next GC. Enabled by
    /// `COR_PRF_MONITOR_GC`.
    fn object_references(
        &self,
        info: &ProfilerInfo,
        object: ObjectID,
        class: ClassID,
        references: &[ObjectID],
    ) -> Result<()> {
        Ok(())
    }
    /// Called after a GC with the root references (statics, stack slots,
    /// handles). Enabled by `COR_PRF_MONITOR_GC`.
    fn root_references(&self, info: &ProfilerInfo, roots: &[ObjectID]) -> Result<()> {
        Ok(())
    }
    /// Called when a managed exception has been thrown, on the throwing
    /// thread. Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    ///
    /// The exception's type: `info.class_name(thrown.class()?)?` (no
    /// `unsafe`: `thrown` is valid for this call, see [`CallbackObject`]).
    /// The thrower: the first managed frame of
    /// `info.stack_snapshot(ThreadID::NULL, ..)` (needs
    /// `COR_PRF_ENABLE_STACK_SNAPSHOT`), named with
    /// [`ProfilerInfo::function_name`]; [`CallbackObject`]'s example does
    /// both.
    fn exception_thrown(&self, info: &ProfilerInfo, thrown: CallbackObject<'_>) -> Result<()> {
        Ok(())
    }
    /// Called when the exception search phase enters a function.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_search_function_enter(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the exception search phase leaves a function.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_search_function_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when an exception filter in `function` is about to run.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_search_filter_enter(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an exception filter has run.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_search_filter_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the search phase has found the handler, in `function`.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_search_catcher_found(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        Ok(())
    }
    /// Deprecated: never called by current runtimes.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_os_handler_enter(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Deprecated: never called by current runtimes.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_os_handler_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the exception unwind phase enters a function.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_unwind_function_enter(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the exception unwind phase leaves a function (its frame
    /// is gone). Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_unwind_function_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when the unwind phase enters a `finally` clause in `function`.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_unwind_finally_enter(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the unwind phase leaves a `finally` clause.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_unwind_finally_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when control passes to a `catch` block in `function` for the
    /// exception object `exception`. Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_catcher_enter(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        exception: ObjectID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when control leaves a `catch` block.
    /// Enabled by `COR_PRF_MONITOR_EXCEPTIONS`.
    fn exception_catcher_leave(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when a COM-callable vtable of `slots` slots has been created at
    /// address `vtable` for `wrapped_class` and interface `implemented_iid`.
    /// Enabled by `COR_PRF_MONITOR_CCW`.
    fn com_classic_vtable_created(
        &self,
        info: &ProfilerInfo,
        wrapped_class: ClassID,
        implemented_iid: Option<&GUID>,
        vtable: usize,
        slots: u32,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a COM-callable vtable is being destroyed.
    /// Enabled by `COR_PRF_MONITOR_CCW`.
    fn com_classic_vtable_destroyed(
        &self,
        info: &ProfilerInfo,
        wrapped_class: ClassID,
        implemented_iid: Option<&GUID>,
        vtable: usize,
    ) -> Result<()> {
        Ok(())
    }
    /// Deprecated: no longer called.
    /// Enabled by `COR_PRF_MONITOR_CLR_EXCEPTIONS`.
    fn exception_clr_catcher_found(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Deprecated: no longer called.
    /// Enabled by `COR_PRF_MONITOR_CLR_EXCEPTIONS`.
    fn exception_clr_catcher_execute(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback2 (.NET Framework 2.0)

    /// Called when a managed thread's name has changed.
    /// Enabled by `COR_PRF_MONITOR_THREADS`.
    fn thread_name_changed(
        &self,
        info: &ProfilerInfo,
        thread: ThreadID,
        name: String,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a GC starts; `generations_collected.get(i)` says whether
    /// generation `i` is collected. Enabled by `COR_PRF_MONITOR_GC` (or
    /// `COR_PRF_HIGH_BASIC_GC`).
    fn garbage_collection_started(
        &self,
        info: &ProfilerInfo,
        generations_collected: Bools<'_>,
        reason: COR_PRF_GC_REASON,
    ) -> Result<()> {
        Ok(())
    }
    /// Called during a non-compacting GC for the object ranges that survived
    /// (parallel slices; prefer
    /// [`surviving_references2`](Profiler::surviving_references2), whose
    /// lengths do not truncate). Enabled by `COR_PRF_MONITOR_GC`.
    fn surviving_references(
        &self,
        info: &ProfilerInfo,
        starts: &[ObjectID],
        lengths: &[u32],
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a GC has completed and every notification about it has
    /// been made. Enabled by `COR_PRF_MONITOR_GC` (or `COR_PRF_HIGH_BASIC_GC`).
    fn garbage_collection_finished(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called when an object with a finalizer has been queued for
    /// finalization. Enabled by `COR_PRF_MONITOR_GC`.
    fn finalizeable_object_queued(
        &self,
        info: &ProfilerInfo,
        finalizer_flags: COR_PRF_FINALIZER_FLAGS,
        object: ObjectID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called after a GC with the root references, their kinds, flags and
    /// root IDs (parallel slices). Enabled by `COR_PRF_MONITOR_GC`.
    fn root_references2(
        &self,
        info: &ProfilerInfo,
        roots: &[ObjectID],
        kinds: &[COR_PRF_GC_ROOT_KIND],
        flags: &[COR_PRF_GC_ROOT_FLAGS],
        root_ids: &[usize],
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a GC handle has been created, pointing at
    /// `initial_object`. Enabled by `COR_PRF_MONITOR_GC`.
    fn handle_created(
        &self,
        info: &ProfilerInfo,
        handle: GCHandleID,
        initial_object: ObjectID,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a GC handle has been destroyed.
    /// Enabled by `COR_PRF_MONITOR_GC`.
    fn handle_destroyed(&self, info: &ProfilerInfo, handle: GCHandleID) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback3 (.NET Framework 4)

    /// Called instead of [`initialize`](Profiler::initialize) when the
    /// profiler is attached to a running process, with the data the
    /// attaching tool passed. Returning `Err` makes the runtime unload the
    /// profiler and answer the attaching tool with that code.
    ///
    /// The default refuses with `CORPROF_E_PROFILER_NOT_ATTACHABLE`: a
    /// profiler written for start-up (whose event mask is set in
    /// [`initialize`](Profiler::initialize)) would otherwise be reported as
    /// attached while it listens to nothing. Override it to support attach
    /// (see `docs/attach.md` for the event-mask flags allowed then).
    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        Err(crate::profiling::CORPROF_E_PROFILER_NOT_ATTACHABLE.into())
    }
    /// Called when an attach has completed: the profiler may now catch up on
    /// what was loaded before it (for example with
    /// [`ProfilerInfo::modules`]).
    fn profiler_attach_complete(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }
    /// Called just before the profiler is unloaded after it asked to detach.
    fn profiler_detach_succeeded(&self, info: &ProfilerInfo) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback4 (.NET Framework 4.5)

    /// Called when the JIT starts recompiling a function for a ReJIT
    /// request. Enabled by `COR_PRF_MONITOR_JIT_COMPILATION` (ReJIT itself
    /// needs `COR_PRF_ENABLE_REJIT`).
    fn rejit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        rejit: ReJITID,
        is_safe_to_block: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called once per method to be recompiled after
    /// [`ProfilerInfo::request_rejit`]: set its new IL and code-generation
    /// flags through `control`, which is valid only during the call.
    /// Needs `COR_PRF_ENABLE_REJIT`.
    fn get_rejit_parameters(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the JIT has recompiled a function for a ReJIT request,
    /// with the outcome in `status`. Enabled by
    /// `COR_PRF_MONITOR_JIT_COMPILATION` (ReJIT itself needs
    /// `COR_PRF_ENABLE_REJIT`).
    fn rejit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        rejit: ReJITID,
        status: HRESULT,
        is_safe_to_block: bool,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when a ReJIT request for a method (or one instantiation of it,
    /// `function`) failed with `status`. Needs `COR_PRF_ENABLE_REJIT`.
    fn rejit_error(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        function: FunctionID,
        status: HRESULT,
    ) -> Result<()> {
        Ok(())
    }
    /// Called during a compacting GC for the object ranges that moved, with
    /// pointer-sized lengths (parallel slices; called before
    /// [`moved_references`](Profiler::moved_references)). Enabled by
    /// `COR_PRF_MONITOR_GC` (or `COR_PRF_HIGH_MONITOR_GC_MOVED_OBJECTS`).
    fn moved_references2(
        &self,
        info: &ProfilerInfo,
        old_starts: &[ObjectID],
        new_starts: &[ObjectID],
        lengths: &[usize],
    ) -> Result<()> {
        Ok(())
    }
    /// Called during a non-compacting GC for the object ranges that survived,
    /// with pointer-sized lengths (parallel slices; called before
    /// [`surviving_references`](Profiler::surviving_references)). Enabled by
    /// `COR_PRF_MONITOR_GC`.
    fn surviving_references2(
        &self,
        info: &ProfilerInfo,
        starts: &[ObjectID],
        lengths: &[usize],
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback5 (.NET Framework 4.5.2)

    /// Called after a GC with the dependent handles (`ConditionalWeakTable`
    /// entries): `keys[i]` keeps `values[i]` alive through handle
    /// `handles[i]` (parallel slices). Enabled by `COR_PRF_MONITOR_GC`.
    fn conditional_weak_table_element_references(
        &self,
        info: &ProfilerInfo,
        keys: &[ObjectID],
        values: &[ObjectID],
        handles: &[GCHandleID],
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback6 (.NET Framework 4.5.2)

    /// Called while the assembly at `assembly_path` is being loaded, to
    /// declare through `provider` the assembly references the profiler will
    /// add to it (valid only during the call). Enabled by
    /// `COR_PRF_HIGH_ADD_ASSEMBLY_REFERENCES` (which current runtimes no
    /// longer check).
    fn get_assembly_references(
        &self,
        info: &ProfilerInfo,
        assembly_path: String,
        provider: ComRef<'_, ICorProfilerAssemblyReferenceProvider>,
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback7 (.NET Framework 4.6.1)

    /// Called when the symbol stream of an in-memory module has been
    /// updated. Enabled by `COR_PRF_HIGH_IN_MEMORY_SYMBOLS_UPDATED`.
    fn module_in_memory_symbols_updated(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback8 (.NET Framework 4.7)

    /// Called when the JIT starts compiling a dynamic method (an IL stub or
    /// a `DynamicMethod`), which has no metadata; `il_header` is its IL
    /// method header. Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`.
    fn dynamic_method_jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        is_safe_to_block: bool,
        il_header: &[u8],
    ) -> Result<()> {
        Ok(())
    }
    /// Called when the JIT has compiled a dynamic method, with the outcome
    /// in `status`. Enabled by `COR_PRF_MONITOR_JIT_COMPILATION`.
    fn dynamic_method_jit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        status: HRESULT,
        is_safe_to_block: bool,
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback9 (.NET Core 2.1)

    /// Called when a dynamic method has been garbage collected and unloaded.
    /// Enabled by `COR_PRF_HIGH_MONITOR_DYNAMIC_FUNCTION_UNLOADS`.
    fn dynamic_method_unloaded(&self, info: &ProfilerInfo, function: FunctionID) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback10 (.NET 5)

    /// Called when an EventPipe event reaches the profiler's session.
    /// Enabled by `COR_PRF_HIGH_MONITOR_EVENT_PIPE`.
    fn event_pipe_event_delivered(
        &self,
        info: &ProfilerInfo,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        Ok(())
    }
    /// Called when an EventPipe provider has been created; the profiler may
    /// add it to its session. Enabled by `COR_PRF_HIGH_MONITOR_EVENT_PIPE`.
    fn event_pipe_provider_created(
        &self,
        info: &ProfilerInfo,
        provider: EVENTPIPE_PROVIDER,
    ) -> Result<()> {
        Ok(())
    }

    // ICorProfilerCallback11 (.NET 5)

    /// Called once when the profiler is loaded, *before*
    /// [`initialize`](Profiler::initialize), hence without `info`: return
    /// `Ok(true)` to load as a notification-only profiler beside the main
    /// one (the default, `Ok(false)`, loads as the main profiler; an `Err`
    /// counts as `false`).
    fn load_as_notification_only(&self) -> Result<bool> {
        Ok(false)
    }
}
