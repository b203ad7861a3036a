//! Profilers made of parts: [`Profiler`] for tuples, each callback handed
//! to every part in order, so that capabilities (the sampler, CallTarget,
//! hooks) and a profiler's own callbacks combine without forwarding by
//! hand.

use alloc::string::String;

use super::args::{Bools, EventPipeEvent};
use super::heap::CallbackObject;
use super::info::{ProfilerInfo, Result};
use super::profiler::Profiler;
use crate::metadata::mdMethodDef;
use crate::profiling::*;
use crate::{ComRef, GUID, HRESULT};

/// Keeps the first error of a dispatch: later parts still run.
#[inline]
fn keep_first(first: &mut Result<()>, result: Result<()>) {
    if first.is_ok() {
        *first = result;
    }
}

/// An answer every part must agree to (`jit_inlining`, ...): `false` if
/// any part says `false`; the first error wins over any answer.
#[inline]
fn all_agree(answer: &mut Result<bool>, part: Result<bool>) {
    match (&*answer, part) {
        (Err(_), _) => {}
        (Ok(_), Err(error)) => *answer = Err(error),
        (Ok(so_far), Ok(yes)) => *answer = Ok(*so_far && yes),
    }
}

/// Implements [`Profiler`] for one tuple size: `__tuple_profiler!(A 0, B 1)`.
/// The callbacks with nothing to decide are listed once, by their
/// arguments after `info`, and dispatched by the `@each` arm.
macro_rules! __tuple_profiler {
    ($($part:ident $index:tt),+) => {
        __tuple_profiler!(@impl [$($part $index),+] [$($index)+]
            fn shutdown();
            fn app_domain_creation_started(app_domain: AppDomainID);
            fn app_domain_creation_finished(app_domain: AppDomainID, status: HRESULT);
            fn app_domain_shutdown_started(app_domain: AppDomainID);
            fn app_domain_shutdown_finished(app_domain: AppDomainID, status: HRESULT);
            fn assembly_load_started(assembly: AssemblyID);
            fn assembly_load_finished(assembly: AssemblyID, status: HRESULT);
            fn assembly_unload_started(assembly: AssemblyID);
            fn assembly_unload_finished(assembly: AssemblyID, status: HRESULT);
            fn module_load_started(module: ModuleID);
            fn module_load_finished(module: ModuleID, status: HRESULT);
            fn module_unload_started(module: ModuleID);
            fn module_unload_finished(module: ModuleID, status: HRESULT);
            fn module_attached_to_assembly(module: ModuleID, assembly: AssemblyID);
            fn class_load_started(class: ClassID);
            fn class_load_finished(class: ClassID, status: HRESULT);
            fn class_unload_started(class: ClassID);
            fn class_unload_finished(class: ClassID, status: HRESULT);
            fn function_unload_started(function: FunctionID);
            fn jit_compilation_started(function: FunctionID, is_safe_to_block: bool);
            fn jit_compilation_finished(function: FunctionID, status: HRESULT, is_safe_to_block: bool);
            fn jit_cached_function_search_finished(function: FunctionID, result: COR_PRF_JIT_CACHE);
            fn jit_function_pitched(function: FunctionID);
            fn thread_created(thread: ThreadID);
            fn thread_destroyed(thread: ThreadID);
            fn thread_assigned_to_os_thread(thread: ThreadID, os_thread_id: u32);
            fn remoting_client_invocation_started();
            fn remoting_client_sending_message(cookie: Option<&GUID>, is_async: bool);
            fn remoting_client_receiving_reply(cookie: Option<&GUID>, is_async: bool);
            fn remoting_client_invocation_finished();
            fn remoting_server_receiving_message(cookie: Option<&GUID>, is_async: bool);
            fn remoting_server_invocation_started();
            fn remoting_server_invocation_returned();
            fn remoting_server_sending_reply(cookie: Option<&GUID>, is_async: bool);
            fn unmanaged_to_managed_transition(function: FunctionID, reason: COR_PRF_TRANSITION_REASON);
            fn managed_to_unmanaged_transition(function: FunctionID, reason: COR_PRF_TRANSITION_REASON);
            fn runtime_suspend_started(reason: COR_PRF_SUSPEND_REASON);
            fn runtime_suspend_finished();
            fn runtime_suspend_aborted();
            fn runtime_resume_started();
            fn runtime_resume_finished();
            fn runtime_thread_suspended(thread: ThreadID);
            fn runtime_thread_resumed(thread: ThreadID);
            fn moved_references(old_starts: &[ObjectID], new_starts: &[ObjectID], lengths: &[u32]);
            fn object_allocated(object: ObjectID, class: ClassID);
            fn objects_allocated_by_class(classes: &[ClassID], counts: &[u32]);
            fn object_references(object: ObjectID, class: ClassID, references: &[ObjectID]);
            fn root_references(roots: &[ObjectID]);
            fn exception_thrown(thrown: CallbackObject<'_>);
            fn exception_search_function_enter(function: FunctionID);
            fn exception_search_function_leave();
            fn exception_search_filter_enter(function: FunctionID);
            fn exception_search_filter_leave();
            fn exception_search_catcher_found(function: FunctionID);
            fn exception_os_handler_enter();
            fn exception_os_handler_leave();
            fn exception_unwind_function_enter(function: FunctionID);
            fn exception_unwind_function_leave();
            fn exception_unwind_finally_enter(function: FunctionID);
            fn exception_unwind_finally_leave();
            fn exception_catcher_enter(function: FunctionID, exception: ObjectID);
            fn exception_catcher_leave();
            fn com_classic_vtable_created(wrapped_class: ClassID, implemented_iid: Option<&GUID>, vtable: usize, slots: u32);
            fn com_classic_vtable_destroyed(wrapped_class: ClassID, implemented_iid: Option<&GUID>, vtable: usize);
            fn exception_clr_catcher_found();
            fn exception_clr_catcher_execute();
            fn thread_name_changed(thread: ThreadID, name: String);
            fn garbage_collection_started(generations_collected: Bools<'_>, reason: COR_PRF_GC_REASON);
            fn surviving_references(starts: &[ObjectID], lengths: &[u32]);
            fn garbage_collection_finished();
            fn finalizeable_object_queued(finalizer_flags: COR_PRF_FINALIZER_FLAGS, object: ObjectID);
            fn root_references2(roots: &[ObjectID], kinds: &[COR_PRF_GC_ROOT_KIND], flags: &[COR_PRF_GC_ROOT_FLAGS], root_ids: &[usize]);
            fn handle_created(handle: GCHandleID, initial_object: ObjectID);
            fn handle_destroyed(handle: GCHandleID);
            fn profiler_attach_complete();
            fn profiler_detach_succeeded();
            fn rejit_compilation_started(function: FunctionID, rejit: ReJITID, is_safe_to_block: bool);
            fn get_rejit_parameters(module: ModuleID, method: mdMethodDef, control: ComRef<'_, ICorProfilerFunctionControl>);
            fn rejit_compilation_finished(function: FunctionID, rejit: ReJITID, status: HRESULT, is_safe_to_block: bool);
            fn rejit_error(module: ModuleID, method: mdMethodDef, function: FunctionID, status: HRESULT);
            fn moved_references2(old_starts: &[ObjectID], new_starts: &[ObjectID], lengths: &[usize]);
            fn surviving_references2(starts: &[ObjectID], lengths: &[usize]);
            fn conditional_weak_table_element_references(keys: &[ObjectID], values: &[ObjectID], handles: &[GCHandleID]);
            fn get_assembly_references(assembly_path: String, provider: ComRef<'_, ICorProfilerAssemblyReferenceProvider>);
            fn module_in_memory_symbols_updated(module: ModuleID);
            fn dynamic_method_jit_compilation_started(function: FunctionID, is_safe_to_block: bool, il_header: &[u8]);
            fn dynamic_method_jit_compilation_finished(function: FunctionID, status: HRESULT, is_safe_to_block: bool);
            fn dynamic_method_unloaded(function: FunctionID);
            fn event_pipe_event_delivered(event: &EventPipeEvent<'_>);
            fn event_pipe_provider_created(provider: EVENTPIPE_PROVIDER);
        );
    };
    (@impl [$($part:ident $index:tt),+] $indices:tt
        $(fn $name:ident($($arg:ident: $ty:ty),*);)*
    ) => {
        impl<$($part: Profiler),+> Profiler for ($($part,)+) {
            fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
                $(self.$index.initialize(info)?;)+
                Ok(())
            }
            fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
                $(self.$index.initialize_for_attach(info, client_data)?;)+
                Ok(())
            }
            fn load_as_notification_only(&self) -> Result<bool> {
                let mut answer = Ok(true);
                $(all_agree(&mut answer, self.$index.load_as_notification_only());)+
                answer
            }
            fn jit_cached_function_search_started(
                &self,
                info: &ProfilerInfo,
                function: FunctionID,
            ) -> Result<bool> {
                let mut answer = Ok(true);
                $(all_agree(
                    &mut answer,
                    self.$index.jit_cached_function_search_started(info, function),
                );)+
                answer
            }
            fn jit_inlining(
                &self,
                info: &ProfilerInfo,
                caller: FunctionID,
                callee: FunctionID,
            ) -> Result<bool> {
                let mut answer = Ok(true);
                $(all_agree(&mut answer, self.$index.jit_inlining(info, caller, callee));)+
                answer
            }
            $(
                fn $name(&self, info: &ProfilerInfo $(, $arg: $ty)*) -> Result<()> {
                    let mut first = Ok(());
                    __tuple_profiler!(
                        @each $indices self first $name (info $(, ::core::clone::Clone::clone(&$arg))*)
                    );
                    first
                }
            )*
        }
    };
    (@each [$($index:tt)+] $this:ident $first:ident $name:ident $args:tt) => {
        $(keep_first(&mut $first, $this.$index.$name $args);)+
    };
}

__tuple_profiler!(A 0);
__tuple_profiler!(A 0, B 1);
__tuple_profiler!(A 0, B 1, C 2);
__tuple_profiler!(A 0, B 1, C 2, D 3);
__tuple_profiler!(A 0, B 1, C 2, D 3, E 4);
__tuple_profiler!(A 0, B 1, C 2, D 3, E 4, F 5);
__tuple_profiler!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
__tuple_profiler!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
