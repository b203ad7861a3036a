//! Enter/leave/tailcall (ELT) hooks behind a safe trait: [`FunctionHooks`],
//! installed with [`ProfilerInfo::set_function_hooks`].
//!
//! The runtime calls the hooks through plain function pointers with no
//! `this`, so this module keeps the one installed hooks object in a static,
//! set once in `initialize`. Each hooked function gets a [`Hooked`] record,
//! made once by [`FunctionHooks::map_function`] (through the runtime's
//! `FunctionIDMapper2`) and kept for the rest of the process; the runtime
//! passes the record's address to the hooks as the client ID, so a hook
//! reaches its function's data with no lookup.
//!
//! A panic in a hook aborts the process with a message: the hooks are called
//! from JIT-compiled code, which unwinding must never enter.
// The WithInfo thunks receive the runtime's pointers by the profiling API's
// contract; each is checked before use.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::facade::strings::{decode, MAX_CHARS};
use crate::facade::{FrameInfo, ProfilerInfo, Result};
use crate::profiling::*;
use crate::{BOOL, E_INVALIDARG, E_NOTIMPL, E_POINTER, E_UNEXPECTED, FALSE, TRUE, UINT_PTR};

/// How the runtime calls the hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookMode {
    /// `SetEnterLeaveFunctionHooks3`: the JIT calls the crate's assembly
    /// trampolines directly from generated code (the cheapest hooks the
    /// runtime offers). Adds `COR_PRF_MONITOR_ENTERLEAVE` to the event mask;
    /// the mask must not ask for arguments, return values or frames.
    FastPath,
    /// `SetEnterLeaveFunctionHooks3WithInfo`: the runtime's own helper calls
    /// the hooks with a handle to read arguments, return values and frames
    /// ([`EnterCall`], [`LeaveCall`], [`TailcallCall`]). Adds
    /// `COR_PRF_MONITOR_ENTERLEAVE | COR_PRF_ENABLE_FUNCTION_ARGS |
    /// COR_PRF_ENABLE_FUNCTION_RETVAL | COR_PRF_ENABLE_FRAME_INFO`.
    WithInfo,
}

/// The record the hooks receive for one hooked function: its `FunctionID`
/// and the profiler's own data for it (what
/// [`FunctionHooks::map_function`] returned). Made once per function and
/// never freed (the runtime may call the hooks until the process ends).
#[derive(Debug)]
pub struct Hooked<C> {
    function: FunctionID,
    client: C,
}

impl<C> Hooked<C> {
    /// The function's ID.
    #[inline]
    pub fn function(&self) -> FunctionID {
        self.function
    }

    /// The profiler's data for the function.
    #[inline]
    pub fn client(&self) -> &C {
        &self.client
    }

    /// The record itself, for the rest of the process: records are never
    /// freed, so a profiler may keep references to them (as the nodes of a
    /// call tree, say) and read their clients later.
    #[inline]
    pub fn as_static(&self) -> &'static Hooked<C>
    where
        C: 'static,
    {
        let record: *const Hooked<C> = self;
        // SAFETY: a `Hooked` is made only in `mapper`, inside a
        // boxed `Record` that is leaked (`Box::into_raw`) before the hooks
        // can see it, or dropped unseen when another thread's record won;
        // the fields are private, so no other `Hooked` exists outside
        // tests. Every `&Hooked` a caller holds points into memory that is
        // never freed nor mutated.
        unsafe { &*record }
    }

    /// A leaked record for the unit tests of what keeps records.
    #[cfg(test)]
    pub(crate) fn leak_for_test(function: FunctionID, client: C) -> &'static Hooked<C> {
        alloc::boxed::Box::leak(alloc::boxed::Box::new(Hooked { function, client }))
    }
}

/// The enter/leave/tailcall hooks of a profiler, and the choice of which
/// functions get them.
///
/// Implement it on a type the profiler shares (`Arc<Self>`), and install it
/// from [`Profiler::initialize`](crate::facade::Profiler::initialize) with
/// [`ProfilerInfo::set_function_hooks`]. The hooks run on every call of
/// every hooked function, on the calling thread, in the middle of
/// JIT-compiled code: keep them short, never block on a lock another hook
/// may hold for long, and do not call managed code. Most `ProfilerInfo`
/// methods are allowed (the runtime lists which are safe in ELT hooks).
///
/// A panic in any of these methods aborts the process with a message.
///
/// ```no_run
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use corprof::facade::{Profiler, ProfilerInfo, Result};
/// use corprof::hooks::{FunctionHooks, HookMode, Hooked, ProfilerInfoHooks};
/// use corprof::profiling::*;
///
/// /// Counts calls of the program's own functions.
/// #[derive(Default)]
/// struct Calls;
///
/// impl FunctionHooks for Calls {
///     type Client = AtomicU64; // one counter per hooked function
///     fn map_function(&self, info: &ProfilerInfo, function: FunctionID) -> Option<AtomicU64> {
///         let name = info.function_name(function).ok()?;
///         name.type_name.starts_with("MyApp.").then(|| AtomicU64::new(0))
///     }
///     fn function_enter(&self, function: &Hooked<AtomicU64>) {
///         function.client().fetch_add(1, Ordering::Relaxed);
///     }
/// }
///
/// #[derive(Default)]
/// struct Counter {
///     calls: Arc<Calls>,
/// }
///
/// impl Profiler for Counter {
///     fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
///         info.set_event_mask(COR_PRF_DISABLE_INLINING)?;
///         info.set_function_hooks(self.calls.clone(), HookMode::FastPath)
///     }
/// }
///
/// corprof::profiler!(Counter, "{0B1C2D3E-4F50-6172-8394-A5B6C7D8E9F0}");
/// ```
#[allow(unused_variables)]
pub trait FunctionHooks: Send + Sync + 'static {
    /// The per-function data the hooks receive (for example a name, a
    /// counter, an index into the profiler's tables). Use `()` for none.
    type Client: Send + Sync + 'static;

    /// Whether the profiler wants enter hooks. `false` installs no enter
    /// hook at all: the runtime hands the JIT no hook of that kind, and the
    /// JIT then calls its default stub (a single `ret`; "the fast path to
    /// nowhere" in `EEToProfInterfaceImpl::DetermineAndSetEnterLeaveFunctionHooksForJit`),
    /// so [`function_enter`](FunctionHooks::function_enter) and
    /// [`function_enter_with_info`](FunctionHooks::function_enter_with_info)
    /// are never called. At least one of the three must be `true`.
    const ENTER: bool = true;

    /// Whether the profiler wants leave hooks (see
    /// [`ENTER`](FunctionHooks::ENTER)). A profiler that pairs enters with
    /// leaves (shadow stacks, timings) needs both, and tail calls too.
    const LEAVE: bool = true;

    /// Whether the profiler wants tail-call hooks (see
    /// [`ENTER`](FunctionHooks::ENTER)).
    const TAILCALL: bool = true;

    /// Called once per function, when it is first JIT-compiled (or
    /// otherwise prepared), through the runtime's `FunctionIDMapper2`:
    /// `Some(data)` hooks the function and hands `data` to its hooks,
    /// `None` leaves it unhooked (it then costs nothing).
    ///
    /// The runtime's own machinery
    /// ([`ProfilerInfo::runtime_machinery`]: the managed exception dispatch
    /// of CoreCLR 9 and later, 11's `System.Environment.CallEntryPoint`) is
    /// never hooked and never asked about: dispatch frames are dropped
    /// without a leave hook when a `catch` resumes, which would leave every
    /// shadow stack open, and the entry-point caller exists on 11 only, so
    /// `Main` is the root of the main thread's calls on every runtime.
    fn map_function(&self, info: &ProfilerInfo, function: FunctionID) -> Option<Self::Client>;

    /// A hooked function was entered (fast path).
    fn function_enter(&self, function: &Hooked<Self::Client>) {}

    /// A hooked function is returning (fast path).
    fn function_leave(&self, function: &Hooked<Self::Client>) {}

    /// A hooked function is leaving by a tail call (fast path): its frame
    /// is replaced by the callee's, so no `function_leave` follows.
    fn function_tailcall(&self, function: &Hooked<Self::Client>) {}

    /// A hooked function was entered ([`HookMode::WithInfo`]): `call` reads
    /// its arguments. By default calls
    /// [`function_enter`](FunctionHooks::function_enter).
    fn function_enter_with_info(&self, function: &Hooked<Self::Client>, call: &EnterCall<'_>) {
        self.function_enter(function)
    }

    /// A hooked function is returning ([`HookMode::WithInfo`]): `call`
    /// reads its return value. By default calls
    /// [`function_leave`](FunctionHooks::function_leave).
    fn function_leave_with_info(&self, function: &Hooked<Self::Client>, call: &LeaveCall<'_>) {
        self.function_leave(function)
    }

    /// A hooked function is leaving by a tail call ([`HookMode::WithInfo`]).
    /// By default calls
    /// [`function_tailcall`](FunctionHooks::function_tailcall).
    fn function_tailcall_with_info(
        &self,
        function: &Hooked<Self::Client>,
        call: &TailcallCall<'_>,
    ) {
        self.function_tailcall(function)
    }
}

/// The installed hooks: what the static points to (leaked, never freed).
struct Installed<H: FunctionHooks> {
    hooks: Arc<H>,
    info: ProfilerInfo,
    /// The client ID answered for each function, so that the runtime gets
    /// the same value each time it asks, as the mapper's contract requires.
    mapped: Mutex<HashMap<FunctionID, UINT_PTR>>,
}

/// The one installed `Installed<H>`, type-erased; null until
/// [`ProfilerInfo::set_function_hooks`] succeeds.
static INSTALLED: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Runs a hook body; a panic aborts (it must not unwind into JIT code).
#[inline(always)]
fn contained(hook: &str, body: impl FnOnce()) {
    if std::panic::catch_unwind(core::panic::AssertUnwindSafe(body)).is_err() {
        abort_from(hook);
    }
}

#[cold]
#[inline(never)]
fn abort_from(hook: &str) -> ! {
    std::eprintln!(
        "corprof: panic in the {hook} hook; aborting, because unwinding into \
         JIT-compiled code is undefined behaviour"
    );
    std::process::abort()
}

/// What a client ID points to: the hooks it belongs to and the record the
/// hooks receive. Keeping the installed hooks' address here (rather than
/// reading [`INSTALLED`] on every call) makes a hook that does nothing cost
/// nothing: its target never touches memory.
struct Record<H: FunctionHooks> {
    installed: *const Installed<H>,
    hooked: Hooked<H::Client>,
}

/// The installed hooks and the record behind a client ID.
///
/// # Safety
///
/// `H` must be the type installed in [`INSTALLED`], and `id` a client ID
/// the mapper returned (the address of a leaked `Record<H>`).
#[inline(always)]
unsafe fn resolve<'a, H: FunctionHooks>(
    id: FunctionIDOrClientID,
) -> Option<(&'a Installed<H>, &'a Hooked<H::Client>)> {
    let record = id.client_id() as *const Record<H>;
    if record.is_null() {
        return None;
    }
    // SAFETY: per the contract, the record is a leaked (never freed)
    // `Record<H>`, and its `installed` the leaked `Installed<H>` the mapper
    // that made it was given.
    unsafe {
        let record = &*record;
        Some((&*record.installed, &record.hooked))
    }
}

unsafe extern "C" fn enter_target<H: FunctionHooks>(id: FunctionIDOrClientID) {
    // SAFETY: only installed for `H`, with the mapper making every client ID.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        contained("function_enter", || installed.hooks.function_enter(record));
    }
}

unsafe extern "C" fn leave_target<H: FunctionHooks>(id: FunctionIDOrClientID) {
    // SAFETY: as in `enter_target`.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        contained("function_leave", || installed.hooks.function_leave(record));
    }
}

unsafe extern "C" fn tailcall_target<H: FunctionHooks>(id: FunctionIDOrClientID) {
    // SAFETY: as in `enter_target`.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        contained("function_tailcall", || {
            installed.hooks.function_tailcall(record)
        });
    }
}

/// `enter_with_info` with the C convention, for the guard trampoline.
unsafe extern "C" fn enter_with_info_target<H: FunctionHooks>(
    id: FunctionIDOrClientID,
    elt: COR_PRF_ELT_INFO,
) {
    // SAFETY: forwarded: called by the guard with the runtime's arguments.
    unsafe { enter_with_info::<H>(id, elt) }
}

unsafe extern "system" fn enter_with_info<H: FunctionHooks>(
    id: FunctionIDOrClientID,
    elt: COR_PRF_ELT_INFO,
) {
    // SAFETY: as in `enter_target`.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        let call = EnterCall {
            info: &installed.info,
            function: record.function,
            elt,
            _hook: PhantomData,
        };
        contained("function_enter", || {
            installed.hooks.function_enter_with_info(record, &call)
        });
    }
}

unsafe extern "system" fn leave_with_info<H: FunctionHooks>(
    id: FunctionIDOrClientID,
    elt: COR_PRF_ELT_INFO,
) {
    // SAFETY: as in `enter_target`.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        let call = LeaveCall {
            info: &installed.info,
            function: record.function,
            elt,
            _hook: PhantomData,
        };
        contained("function_leave", || {
            installed.hooks.function_leave_with_info(record, &call)
        });
    }
}

unsafe extern "system" fn tailcall_with_info<H: FunctionHooks>(
    id: FunctionIDOrClientID,
    elt: COR_PRF_ELT_INFO,
) {
    // SAFETY: as in `enter_target`.
    if let Some((installed, record)) = unsafe { resolve::<H>(id) } {
        let call = TailcallCall {
            info: &installed.info,
            function: record.function,
            elt,
            _hook: PhantomData,
        };
        contained("function_tailcall", || {
            installed.hooks.function_tailcall_with_info(record, &call)
        });
    }
}

/// The runtime's `FunctionIDMapper2`: asks the profiler once per function
/// and answers the same client ID every time.
unsafe extern "system" fn mapper<H: FunctionHooks>(
    function: FunctionID,
    client_data: *mut c_void,
    hook_function: *mut BOOL,
) -> UINT_PTR {
    let installed = client_data as *const Installed<H>;
    if installed.is_null() || hook_function.is_null() || !hook_function.is_aligned() {
        return function.0;
    }
    // SAFETY: `client_data` is the leaked `Installed<H>` given to
    // `SetFunctionIDMapper2` with this function.
    let installed = unsafe { &*installed };
    let mut answer: Option<UINT_PTR> = None;
    contained("map_function", || {
        let lock = || crate::support::sync::lock(&installed.mapped);
        if let Some(&known) = lock().get(&function) {
            answer = Some(known);
            return;
        }
        // Asked without the lock held, so that the profiler's own calls
        // (names, metadata) can never wait on it. The runtime's own
        // machinery is never hooked (see `FunctionHooks::map_function`).
        let machinery = matches!(installed.info.runtime_machinery(function), Ok(Some(_)));
        let record = (!machinery)
            .then(|| installed.hooks.map_function(&installed.info, function))
            .flatten()
            .map(|client| {
                alloc::boxed::Box::new(Record::<H> {
                    installed,
                    hooked: Hooked { function, client },
                })
            });
        let mut mapped = lock();
        if let Some(&known) = mapped.get(&function) {
            // Another thread answered first: its record is the one in use,
            // and this one was never published.
            answer = Some(known);
            return;
        }
        let id = record.map_or(0, |record| alloc::boxed::Box::into_raw(record) as UINT_PTR);
        mapped.insert(function, id);
        answer = Some(id);
    });
    let id = answer.unwrap_or(0);
    // SAFETY: non-null and aligned (checked above); the runtime passes a
    // writable BOOL.
    unsafe { hook_function.write(if id != 0 { TRUE } else { FALSE }) };
    if id != 0 {
        id
    } else {
        function.0
    }
}

/// The hooks' methods on [`ProfilerInfo`]: installing enter/leave/tailcall
/// hooks and reading a string argument. A trait of this module's, because
/// the facade stands below `hooks` and knows nothing of it; bring it into
/// scope with `use corprof::hooks::ProfilerInfoHooks;`.
pub trait ProfilerInfoHooks {
    /// Installs `hooks` as the process's enter/leave/tailcall hooks, with a
    /// function-ID mapper that asks [`FunctionHooks::map_function`] which
    /// functions to hook.
    ///
    /// Call it from [`Profiler::initialize`](crate::facade::Profiler::initialize),
    /// after [`set_event_mask`](ProfilerInfo::set_event_mask): the runtime
    /// accepts hooks only during `Initialize` and answers
    /// `CORPROF_E_CALL_ONLY_FROM_INIT` anywhere else, which is returned
    /// as is. The event-mask flags `mode` needs are added to the current
    /// mask. One set of hooks per process: a second successful call is
    /// impossible (the runtime refuses it after `Initialize`), and a second
    /// call during `Initialize` gets `E_UNEXPECTED`.
    ///
    /// Kinds of hooks `H` does not want ([`FunctionHooks::ENTER`],
    /// [`LEAVE`](FunctionHooks::LEAVE), [`TAILCALL`](FunctionHooks::TAILCALL)
    /// `false`) are not installed; `E_INVALIDARG` if it wants none.
    ///
    /// `E_NOTIMPL` on a runtime without `ICorProfilerInfo3` or, for
    /// [`HookMode::FastPath`], on a platform without trampolines (see
    /// [`fast_path_hooks`](crate::profiling::fast_path_hooks)).
    fn set_function_hooks<H: FunctionHooks>(&self, hooks: Arc<H>, mode: HookMode) -> Result<()>;

    /// Reads a managed `System.String` object's characters, with the layout
    /// the runtime reports (`GetStringLayout2`). Strings longer than 2^20
    /// characters are `E_UNEXPECTED`.
    ///
    /// # Safety
    ///
    /// `string` must be a live `System.String` object that the garbage
    /// collector cannot move during the call: for example an argument read
    /// in a [`HookMode::WithInfo`] hook, on the hooked thread.
    unsafe fn read_string_object(&self, string: ObjectID) -> Result<alloc::string::String>;
}

impl ProfilerInfoHooks for ProfilerInfo {
    fn set_function_hooks<H: FunctionHooks>(&self, hooks: Arc<H>, mode: HookMode) -> Result<()> {
        let v3 = self.live_v3()?;
        if !(H::ENTER || H::LEAVE || H::TAILCALL) {
            return Err(E_INVALIDARG.into());
        }
        let trampolines = match mode {
            HookMode::FastPath => Some(fast_path_hooks().ok_or(E_NOTIMPL)?),
            HookMode::WithInfo => None,
        };
        let installed = alloc::boxed::Box::into_raw(alloc::boxed::Box::new(Installed {
            hooks,
            info: self.clone(),
            mapped: Mutex::new(HashMap::new()),
        }));
        if INSTALLED
            .compare_exchange(
                core::ptr::null_mut(),
                installed as *mut (),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            // SAFETY: `installed` was never shared.
            drop(unsafe { alloc::boxed::Box::from_raw(installed) });
            return Err(E_UNEXPECTED.into());
        }
        let before = self.event_mask();
        let result = install::<H>(self, &v3, installed, trampolines);
        if result.is_err() {
            // No hooks were set, so nothing calls the targets; the record is
            // kept (leaked), because the runtime may already hold the mapper
            // and its client data.
            INSTALLED.store(core::ptr::null_mut(), Ordering::Release);
            // SAFETY: these hooks are the process's only ones (INSTALLED),
            // and they were not set: no target of theirs can run.
            unsafe {
                set_fast_path_targets(None, None, None);
                set_enter_with_info_target(None);
            }
            if let Ok(before) = before {
                // Best effort: the install's error is the one to report.
                let _ = self.set_event_mask(before);
            }
        }
        result
    }

    unsafe fn read_string_object(&self, string: ObjectID) -> Result<alloc::string::String> {
        let v2 = self.live_v3()?;
        if string.is_null() {
            return Err(E_POINTER.into());
        }
        let (mut length_offset, mut buffer_offset) = (0u32, 0u32);
        // SAFETY: valid out-pointers.
        unsafe { v2.GetStringLayout2(&mut length_offset, &mut buffer_offset) }
            .ok_with("GetStringLayout2")?;
        let base = string.0 as *const u8;
        // SAFETY: a live string object has its length (a 32-bit count) at
        // `length_offset` and that many UTF-16 units at `buffer_offset`.
        unsafe {
            let len = base
                .add(length_offset as usize)
                .cast::<u32>()
                .read_unaligned() as usize;
            if len > MAX_CHARS {
                return Err(E_UNEXPECTED.into());
            }
            let chars = base.add(buffer_offset as usize).cast::<u16>();
            let mut units = Vec::with_capacity(len);
            for i in 0..len {
                units.push(chars.add(i).read_unaligned());
            }
            Ok(decode(&units))
        }
    }
}

/// The install of [`ProfilerInfoHooks::set_function_hooks`]: the event mask,
/// the mapper, the hooks of `mode`.
fn install<H: FunctionHooks>(
    info: &ProfilerInfo,
    v3: &ICorProfilerInfo3,
    installed: *mut Installed<H>,
    trampolines: Option<FastPathHooks>,
) -> Result<()> {
    let current = info.event_mask()?;
    let needed = match trampolines {
        Some(_) => COR_PRF_MONITOR_ENTERLEAVE,
        None => {
            COR_PRF_MONITOR_ENTERLEAVE
                | COR_PRF_ENABLE_FUNCTION_ARGS
                | COR_PRF_ENABLE_FUNCTION_RETVAL
                | COR_PRF_ENABLE_FRAME_INFO
        }
    };
    info.set_event_mask(current | needed)?;
    // SAFETY: `mapper::<H>` reads `clientData` as the `Installed<H>`
    // passed here, which is never freed while installed.
    unsafe { v3.SetFunctionIDMapper2(Some(mapper::<H>), installed as *mut c_void) }
        .ok_with("SetFunctionIDMapper2")?;
    match trampolines {
        Some(t) => {
            // A kind the profiler does not want gets no hook (the JIT's
            // default stub) and no target.
            // SAFETY: these hooks are the process's only ones
            // (INSTALLED), and their targets read the client IDs of
            // `mapper::<H>`, set just above, and never unwind (a panic
            // aborts).
            unsafe {
                set_fast_path_targets(
                    H::ENTER.then_some(enter_target::<H> as FastPathTarget),
                    H::LEAVE.then_some(leave_target::<H> as FastPathTarget),
                    H::TAILCALL.then_some(tailcall_target::<H> as FastPathTarget),
                )
            };
            // SAFETY: the trampolines follow the JIT's register contract
            // and call the targets just set.
            unsafe {
                v3.SetEnterLeaveFunctionHooks3(
                    H::ENTER.then_some(t.enter),
                    H::LEAVE.then_some(t.leave),
                    H::TAILCALL.then_some(t.tailcall),
                )
            }
            .ok_with("SetEnterLeaveFunctionHooks3")
        }
        // SAFETY: the thunks have the IDL's signatures and only read
        // what the runtime passes during the call; the guard calls the
        // enter thunk with the same arguments, keeping xmm0-xmm7.
        None => unsafe {
            let enter: Option<FunctionEnter3WithInfo> = match enter_with_info_guard() {
                _ if !H::ENTER => None,
                Some(guard) => {
                    set_enter_with_info_target(Some(enter_with_info_target::<H>));
                    Some(guard)
                }
                None => Some(enter_with_info::<H>),
            };
            v3.SetEnterLeaveFunctionHooks3WithInfo(
                enter,
                H::LEAVE.then_some(leave_with_info::<H> as FunctionLeave3WithInfo),
                H::TAILCALL.then_some(tailcall_with_info::<H> as FunctionTailcall3WithInfo),
            )
        }
        .ok_with("SetEnterLeaveFunctionHooks3WithInfo"),
    }
}

/// An enter hook's view of the call ([`HookMode::WithInfo`]): valid only
/// during the hook.
pub struct EnterCall<'a> {
    info: &'a ProfilerInfo,
    function: FunctionID,
    elt: COR_PRF_ELT_INFO,
    _hook: PhantomData<*const ()>,
}

/// A leave hook's view of the call ([`HookMode::WithInfo`]): valid only
/// during the hook.
pub struct LeaveCall<'a> {
    info: &'a ProfilerInfo,
    function: FunctionID,
    elt: COR_PRF_ELT_INFO,
    _hook: PhantomData<*const ()>,
}

/// A tailcall hook's view of the call ([`HookMode::WithInfo`]): valid only
/// during the hook.
pub struct TailcallCall<'a> {
    info: &'a ProfilerInfo,
    function: FunctionID,
    elt: COR_PRF_ELT_INFO,
    _hook: PhantomData<*const ()>,
}

/// A function's arguments on entry, as the runtime lays them out: each
/// argument (`this` first) is one or more byte ranges, spilled to memory.
#[derive(Debug)]
pub struct Arguments<'a> {
    /// The frame, for [`ProfilerInfo::instantiated_function_name_in_frame`]
    /// and `GetFunctionInfo2`; borrowed for the hook, like the arguments.
    pub frame: FrameInfo<'a>,
    ranges: Vec<COR_PRF_FUNCTION_ARGUMENT_RANGE>,
    _call: PhantomData<&'a ()>,
}

impl<'a> Arguments<'a> {
    /// The number of ranges (one per argument, except for structs the
    /// runtime splits).
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// `true` when the function takes no arguments.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The bytes of range `index`: an `int` is 4 bytes, a reference is a
    /// pointer-sized [`ObjectID`] (see [`Arguments::object`]).
    pub fn bytes(&self, index: usize) -> Option<&'a [u8]> {
        let range = self.ranges.get(index)?;
        if range.startAddress == 0 {
            return None;
        }
        // SAFETY: the runtime answered this range readable for the duration
        // of the hook, which `'a` does not outlive.
        Some(unsafe {
            core::slice::from_raw_parts(range.startAddress as *const u8, range.length as usize)
        })
    }

    /// Range `index` as a 32-bit integer (`None` unless it is 4 bytes).
    pub fn i32(&self, index: usize) -> Option<i32> {
        Some(i32::from_ne_bytes(self.bytes(index)?.try_into().ok()?))
    }

    /// Range `index` as an object reference (`None` unless pointer-sized).
    pub fn object(&self, index: usize) -> Option<ObjectID> {
        let bytes = self.bytes(index)?;
        Some(ObjectID(usize::from_ne_bytes(bytes.try_into().ok()?)))
    }
}

impl<'a> EnterCall<'a> {
    /// The function being entered.
    pub fn function(&self) -> FunctionID {
        self.function
    }

    /// The runtime's services.
    pub fn info(&self) -> &'a ProfilerInfo {
        self.info
    }

    /// The frame and argument ranges (`GetFunctionEnter3Info`).
    pub fn arguments(&self) -> Result<Arguments<'_>> {
        let v3 = self.info.live_v3()?;
        let mut frame = COR_PRF_FRAME_INFO::NULL;
        let mut size: u32 = 0;
        // SAFETY: a size query: null buffer, valid out-pointers.
        let first = unsafe {
            v3.GetFunctionEnter3Info(
                self.function,
                self.elt,
                &mut frame,
                &mut size,
                core::ptr::null_mut(),
            )
        };
        if first.is_ok() && size == 0 {
            return Ok(Arguments {
                // SAFETY: the runtime's frame info for this hook;
                // `Arguments<'_>` borrows `self`, which lives only during
                // the hook.
                frame: unsafe { FrameInfo::from_raw(frame) },
                ranges: Vec::new(),
                _call: PhantomData,
            });
        }
        // Bounded: more than 64 KiB of ranges is a broken answer.
        if size as usize > 1 << 16 {
            return Err(E_UNEXPECTED.into());
        }
        let words = (size as usize).div_ceil(8).max(2);
        let mut buffer = alloc::vec![0u64; words];
        let info = buffer.as_mut_ptr().cast::<COR_PRF_FUNCTION_ARGUMENT_INFO>();
        // SAFETY: `buffer` holds `size` bytes, 8-aligned.
        unsafe { v3.GetFunctionEnter3Info(self.function, self.elt, &mut frame, &mut size, info) }
            .ok_with("GetFunctionEnter3Info")?;
        // SAFETY: the runtime filled the header and `numRanges` ranges,
        // which fit in `size` bytes (checked against the buffer).
        let ranges = unsafe {
            let count = (*info).numRanges as usize;
            if COR_PRF_FUNCTION_ARGUMENT_INFO::size_for(count) > words * 8 {
                return Err(E_UNEXPECTED.into());
            }
            let first =
                core::ptr::addr_of!((*info).ranges).cast::<COR_PRF_FUNCTION_ARGUMENT_RANGE>();
            (0..count).map(|i| first.add(i).read()).collect()
        };
        Ok(Arguments {
            // SAFETY: as above.
            frame: unsafe { FrameInfo::from_raw(frame) },
            ranges,
            _call: PhantomData,
        })
    }
}

impl<'a> LeaveCall<'a> {
    /// The function returning.
    pub fn function(&self) -> FunctionID {
        self.function
    }

    /// The runtime's services.
    pub fn info(&self) -> &'a ProfilerInfo {
        self.info
    }

    /// The return value's bytes (empty for `void`) and the frame
    /// (`GetFunctionLeave3Info`), both borrowed for the hook.
    pub fn return_value(&self) -> Result<(&'_ [u8], FrameInfo<'_>)> {
        let v3 = self.info.live_v3()?;
        let mut frame = COR_PRF_FRAME_INFO::NULL;
        let mut range = COR_PRF_FUNCTION_ARGUMENT_RANGE::default();
        // SAFETY: valid out-pointers.
        unsafe { v3.GetFunctionLeave3Info(self.function, self.elt, &mut frame, &mut range) }
            .ok_with("GetFunctionLeave3Info")?;
        // SAFETY: the runtime's frame info for this hook, borrowed with `self`.
        let frame = unsafe { FrameInfo::from_raw(frame) };
        if range.startAddress == 0 || range.length == 0 {
            return Ok((&[], frame));
        }
        // SAFETY: the runtime answered this range readable for the hook's
        // duration, which the borrow of `self` does not outlive.
        let bytes = unsafe {
            core::slice::from_raw_parts(range.startAddress as *const u8, range.length as usize)
        };
        Ok((bytes, frame))
    }
}

impl<'a> TailcallCall<'a> {
    /// The function leaving by a tail call.
    pub fn function(&self) -> FunctionID {
        self.function
    }

    /// The runtime's services.
    pub fn info(&self) -> &'a ProfilerInfo {
        self.info
    }

    /// The frame (`GetFunctionTailcall3Info`), borrowed for the hook.
    pub fn frame(&self) -> Result<FrameInfo<'_>> {
        let v3 = self.info.live_v3()?;
        let mut frame = COR_PRF_FRAME_INFO::NULL;
        // SAFETY: a valid out-pointer.
        unsafe { v3.GetFunctionTailcall3Info(self.function, self.elt, &mut frame) }
            .ok_with("GetFunctionTailcall3Info")?;
        // SAFETY: the runtime's frame info for this hook, borrowed with `self`.
        Ok(unsafe { FrameInfo::from_raw(frame) })
    }
}
