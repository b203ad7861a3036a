//! [`ProfilerInfo`]: the runtime's services, at the highest
//! `ICorProfilerInfo` version it offers, behind safe methods.

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::enumerators::{FunctionIter, ModuleIter};
use super::metadata::{MetadataImport, MethodName};
use super::module_cache::SharedModuleCache;
use super::rewritten::SharedRewrittenMethods;
use super::strings::read_utf16;
use crate::metadata::{mdMethodDef, mdToken, mdTypeDef, ofRead, CorOpenFlags, IMetaDataImport};
use crate::profiling::*;
use crate::{ComRef, IUnknown, Interface, E_NOTIMPL, E_POINTER, HRESULT};

/// How many classes one [`ProfilerInfo::class_name`] names at most, its type
/// arguments' included: past it, arguments print as `...`. Real names need
/// a handful; the bound keeps a self-referential answer from taking
/// exponential time.
const CLASS_NAME_BUDGET: u32 = 256;

/// The result type of the facade: failures are [`Error`](crate::Error)s,
/// the runtime's `HRESULT` (whose `Display` names `CORPROF_E_*` codes with
/// their meaning) with what was being done, for example the runtime method
/// that failed.
pub type Result<T> = core::result::Result<T, crate::Error>;

/// The runtime's profiling services (`ICorProfilerInfo*`), obtained in
/// `initialize` at the highest version the runtime offers.
///
/// Safe methods cover the common needs; [`ProfilerInfo::v2`] to
/// [`ProfilerInfo::v15`] give the raw invokers of each version (`None` when
/// the runtime is older), for everything else, with no copy or conversion.
///
/// Calls are allowed only where the profiling API allows them; a call made
/// in the wrong callback fails with `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`
/// (see `docs/safety.md`).
///
/// It is `Send + Sync`, and `Clone` takes another reference to the
/// runtime's interface (`AddRef`): a thread of the profiler's own can keep a
/// clone, for example to call [`request_rejit`](ProfilerInfo::request_rejit),
/// which the runtime wants called from such a thread rather than from a
/// callback.
///
/// Once the runtime's `Shutdown` callback has been delivered (after
/// [`Profiler::shutdown`](super::Profiler::shutdown) returns), every method
/// of this value and of its clones answers [`AFTER_SHUTDOWN`]
/// (`CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`) without calling the runtime, which
/// is being torn down; calls other threads have in flight then are waited
/// for (at most one second) before the runtime goes on. Stop the threads
/// that hold clones in `shutdown` all the same (see [`ShutdownFlag`](super::ShutdownFlag)).
#[derive(Clone)]
pub struct ProfilerInfo {
    /// The pointer answered for the highest version; its vtable extends
    /// every lower version's, so it serves them all.
    raw: ICorProfilerInfo,
    version: u32,
    /// Metadata importers of modules that cannot unload, for naming
    /// (shared with clones; see `module_cache.rs`).
    modules: SharedModuleCache,
    /// The methods whose IL was set: rewrite once (shared with clones; see
    /// `rewritten.rs`).
    rewritten: SharedRewrittenMethods,
    /// Shut down yet, and the calls in flight (shared with clones).
    lifecycle: Arc<Lifecycle>,
}

/// Where a function belongs: what `GetFunctionInfo` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// The class that declares it (null for some generic instantiations and
    /// for functions of unloaded classes).
    pub class: ClassID,
    /// The module that holds its metadata.
    pub module: ModuleID,
    /// Its MethodDef token in that module.
    pub token: mdMethodDef,
}

/// A loaded module: what `GetModuleInfo` answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleInfo {
    /// Its file path (or, for an in-memory module, its name).
    pub path: String,
    /// Its owning assembly (null while the module is still loading).
    pub assembly: AssemblyID,
    /// The address it is loaded at.
    pub base_address: usize,
}

/// A loaded assembly: what `GetAssemblyInfo` answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblyInfo {
    /// Its simple name (`System.Private.CoreLib`).
    pub name: String,
    /// The application domain it is loaded into.
    pub app_domain: AppDomainID,
    /// Its manifest module.
    pub manifest_module: ModuleID,
}

/// The runtime's kind and version: what `GetRuntimeInformation` answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeInfo {
    /// Desktop CLR or CoreCLR.
    pub runtime_type: COR_PRF_RUNTIME_TYPE,
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
    /// Build number.
    pub build: u16,
    /// QFE (patch) version.
    pub qfe: u16,
    /// The full version string.
    pub version_string: String,
}

/// Calls a method that answers one interface through a `void**`, and takes
/// ownership of it: `E_POINTER` if it succeeded without writing one.
///
/// # Safety
///
/// `call` must write to its argument either null or a pointer that owns one
/// reference to an object implementing `I`.
pub(super) unsafe fn take_interface<I: Interface>(
    what: &'static str,
    call: impl FnOnce(*mut *mut c_void) -> HRESULT,
) -> Result<I> {
    let mut out: *mut c_void = core::ptr::null_mut();
    call(&mut out).ok_with(what)?;
    // SAFETY: per the contract, `out` is null or one owned reference to an `I`.
    unsafe { crate::com::interface::invoker::from_raw::<I>(out) }.ok_or(E_POINTER.into())
}

/// What a [`ProfilerInfo`] and its clones share about the runtime's
/// lifetime: the [`SHUT_DOWN`] bit, raised once the `Shutdown` callback has
/// been delivered, and the number of facade calls into the runtime in
/// flight (the other bits).
#[derive(Default)]
pub(super) struct Lifecycle(AtomicUsize);

/// The bit of [`Lifecycle`] that says the runtime has shut down.
const SHUT_DOWN: usize = 1 << (usize::BITS - 1);

/// How long the `Shutdown` callback waits for facade calls other threads
/// have in flight before it lets the runtime go on (and tear down): a call
/// blocked inside the runtime must not hang the process's exit.
const SHUTDOWN_GRACE: core::time::Duration = core::time::Duration::from_secs(1);

impl Lifecycle {
    /// Counts a call in, unless the runtime has shut down.
    fn enter(&self) -> Result<()> {
        let before = self.0.fetch_add(1, Ordering::Acquire);
        if before & SHUT_DOWN != 0 {
            self.leave();
            return Err(crate::Error::new(AFTER_SHUTDOWN, "a call after Shutdown"));
        }
        Ok(())
    }

    /// Counts a call out.
    fn leave(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    /// Raises the shut-down bit, then waits (at most `grace`) for the calls
    /// in flight to finish: `true` when they did. Called with none of the
    /// calling thread's own calls in flight.
    fn shut_down(&self, grace: core::time::Duration) -> bool {
        self.0.fetch_or(SHUT_DOWN, Ordering::AcqRel);
        let start = std::time::Instant::now();
        while self.0.load(Ordering::Acquire) & !SHUT_DOWN != 0 {
            if start.elapsed() >= grace {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    fn is_shut_down(&self) -> bool {
        self.0.load(Ordering::Acquire) & SHUT_DOWN != 0
    }
}

/// What every [`ProfilerInfo`] method answers once the runtime's `Shutdown`
/// callback has been delivered, instead of calling into a runtime that is
/// being torn down: `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`, the code the
/// runtime itself gives a call made at a time it does not support.
pub const AFTER_SHUTDOWN: HRESULT = CORPROF_E_UNSUPPORTED_CALL_SEQUENCE;

/// A runtime interface borrowed for one facade call: while it lives the
/// call counts as in flight, so `Shutdown` does not return under it.
pub(crate) struct Live<'a, T> {
    raw: &'a T,
    lifecycle: &'a Lifecycle,
}

impl<T> core::ops::Deref for Live<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.raw
    }
}

impl<T> Drop for Live<'_, T> {
    fn drop(&mut self) {
        self.lifecycle.leave();
    }
}

macro_rules! version_accessors {
    ($($n:literal $method:ident $live:ident $ty:ident;)*) => {$(
        #[doc = ::core::concat!(
            "[`", ::core::stringify!($ty), "`] for one facade call: `E_NOTIMPL` when the runtime ",
            "is older, [`AFTER_SHUTDOWN`] once it has shut down."
        )]
        #[inline]
        #[allow(dead_code)] // not every version has a facade method yet
        pub(crate) fn $live(&self) -> Result<Live<'_, $ty>> {
            let raw = self.$method().ok_or(E_NOTIMPL)?;
            self.lifecycle.enter()?;
            Ok(Live { raw, lifecycle: &self.lifecycle })
        }

        #[doc = ::core::concat!(
            "The raw [`", ::core::stringify!($ty), "`] invoker, if the runtime offers version ",
            ::core::stringify!($n), " or later. Its methods are `unsafe`; calling them after ",
            "`shutdown` breaks their contract."
        )]
        #[inline]
        pub fn $method(&self) -> Option<&$ty> {
            if self.version >= $n {
                // SAFETY: every ICorProfilerInfoN invoker is
                // #[repr(transparent)] over the same COM pointer, and the
                // object's vtable (answered for version `self.version` >= N)
                // begins with version N's, so the reference is valid as one.
                Some(unsafe { &*(&self.raw as *const ICorProfilerInfo as *const $ty) })
            } else {
                None
            }
        }
    )*};
}

macro_rules! negotiate {
    ($unknown:expr; $($n:literal $ty:ident),*) => {{
        $(
            if let Ok(info) = $unknown.cast::<$ty>() {
                // SAFETY: `into_raw` hands over the reference QueryInterface
                // took; the vtable of version N begins with version 1's.
                let raw = unsafe { ICorProfilerInfo::from_raw(info.into_raw()) };
                return raw
                    .map(|raw| ProfilerInfo {
                        raw,
                        version: $n,
                        modules: Default::default(),
                        rewritten: Default::default(),
                        lifecycle: Default::default(),
                    })
                    .ok_or(E_POINTER.into());
            }
        )*
    }};
}

impl ProfilerInfo {
    /// Asks the object the runtime passed to `Initialize` for
    /// `ICorProfilerInfo15`, then 14, ... down to 1, and keeps the first
    /// (highest) one it answers.
    pub fn from_unknown(unknown: &IUnknown) -> Result<ProfilerInfo> {
        negotiate!(unknown;
            15 ICorProfilerInfo15, 14 ICorProfilerInfo14, 13 ICorProfilerInfo13, 12 ICorProfilerInfo12,
            11 ICorProfilerInfo11, 10 ICorProfilerInfo10, 9 ICorProfilerInfo9, 8 ICorProfilerInfo8,
            7 ICorProfilerInfo7, 6 ICorProfilerInfo6, 5 ICorProfilerInfo5, 4 ICorProfilerInfo4,
            3 ICorProfilerInfo3, 2 ICorProfilerInfo2, 1 ICorProfilerInfo
        );
        Err(crate::E_NOINTERFACE.into())
    }

    /// Like [`ProfilerInfo::from_unknown`], from the raw `IUnknown*` a
    /// callback receives. `E_POINTER` when it is null.
    ///
    /// # Safety
    ///
    /// A non-null `unknown` must be a live COM object for the duration of
    /// the call.
    pub unsafe fn from_raw_unknown(unknown: *mut c_void) -> Result<ProfilerInfo> {
        // SAFETY: forwarded contract.
        let unknown = unsafe { ComRef::<IUnknown>::from_raw(unknown) }.ok_or(E_POINTER)?;
        ProfilerInfo::from_unknown(&unknown)
    }

    /// The highest `ICorProfilerInfo` version the runtime offers (1 to 15).
    /// .NET Core 3.1 offers 11; .NET 8 offers 14 or more.
    #[inline]
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The raw `ICorProfilerInfo` (version 1) invoker.
    #[inline]
    pub fn v1(&self) -> &ICorProfilerInfo {
        &self.raw
    }

    version_accessors! {
        2 v2 live_v2 ICorProfilerInfo2; 3 v3 live_v3 ICorProfilerInfo3;
        4 v4 live_v4 ICorProfilerInfo4; 5 v5 live_v5 ICorProfilerInfo5;
        6 v6 live_v6 ICorProfilerInfo6; 7 v7 live_v7 ICorProfilerInfo7;
        8 v8 live_v8 ICorProfilerInfo8; 9 v9 live_v9 ICorProfilerInfo9;
        10 v10 live_v10 ICorProfilerInfo10; 11 v11 live_v11 ICorProfilerInfo11;
        12 v12 live_v12 ICorProfilerInfo12; 13 v13 live_v13 ICorProfilerInfo13;
        14 v14 live_v14 ICorProfilerInfo14; 15 v15 live_v15 ICorProfilerInfo15;
    }

    /// `ICorProfilerInfo` for one facade call: [`AFTER_SHUTDOWN`] once the
    /// runtime has shut down.
    #[inline]
    pub(crate) fn live(&self) -> Result<Live<'_, ICorProfilerInfo>> {
        self.lifecycle.enter()?;
        Ok(Live {
            raw: &self.raw,
            lifecycle: &self.lifecycle,
        })
    }

    /// Whether the runtime's `Shutdown` callback has been delivered: from
    /// then on every method answers [`AFTER_SHUTDOWN`]
    /// (`CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`) without calling the runtime,
    /// in this value and in all its clones.
    pub fn is_shut_down(&self) -> bool {
        self.lifecycle.is_shut_down()
    }

    /// Marks the runtime shut down (after the `Shutdown` callback has
    /// run): later calls answer [`AFTER_SHUTDOWN`], and calls other threads
    /// have in flight are waited for (at most one second).
    pub(crate) fn mark_shut_down(&self) {
        self.lifecycle.shut_down(SHUTDOWN_GRACE);
    }

    /// The class, module and token of a function (`GetFunctionInfo`).
    pub fn function_info(&self, function: FunctionID) -> Result<FunctionInfo> {
        let raw = self.live()?;
        let (mut class, mut module, mut token) = (ClassID::NULL, ModuleID::NULL, mdToken(0));
        // SAFETY: valid out-pointers.
        unsafe { raw.GetFunctionInfo(function, &mut class, &mut module, &mut token) }
            .ok_with("GetFunctionInfo")?;
        Ok(FunctionInfo {
            class,
            module,
            token: mdMethodDef(token.0),
        })
    }

    /// The metadata of the module that defines `function`, and its token
    /// (`GetTokenAndMetaDataFromFunction`).
    pub fn function_metadata(&self, function: FunctionID) -> Result<(MetadataImport, mdMethodDef)> {
        let raw = self.live()?;
        let mut token = mdToken(0);
        // SAFETY: a valid IID and token out-pointer; the call writes null or
        // one reference to an IMetaDataImport.
        let import: IMetaDataImport = unsafe {
            take_interface("GetTokenAndMetaDataFromFunction", |out| {
                raw.GetTokenAndMetaDataFromFunction(
                    function,
                    &IMetaDataImport::IID,
                    out,
                    &mut token,
                )
            })
        }?;
        Ok((MetadataImport::new(import), mdMethodDef(token.0)))
    }

    /// A function's name and its declaring type's full name, read from
    /// metadata (`Program.Fib`, `Outer+Inner.Method`).
    ///
    /// This names the method's definition: a generic type keeps its
    /// metadata name with its arity and no type arguments
    /// (``WebShop.Repository`1.Find``, for every instantiation), as ildasm
    /// prints it. For the instantiation of one compiled function use
    /// [`instantiated_function_name`](ProfilerInfo::instantiated_function_name)
    /// (`WebShop.Repository<System.Int32>.Find`); instrumentation targets
    /// (`corprof::instrument::MethodTarget`) are written
    /// ``Shop!WebShop.Repository`1::Find``. docs/hooks.md ("One method,
    /// three names") compares the three forms. This format is stable: the
    /// JIT tracer and its C baseline print it.
    ///
    /// The metadata of modules that cannot unload is kept per module after
    /// the first use, so naming costs `GetFunctionInfo`, `GetMethodProps`
    /// and `GetTypeDefProps`; other functions are named through
    /// `GetTokenAndMetaDataFromFunction`. To format the name without
    /// allocating, use [`write_function_name`](ProfilerInfo::write_function_name).
    pub fn function_name(&self, function: FunctionID) -> Result<MethodName> {
        let (import, token) = self.function_import(function)?;
        import.method_name(token)
    }

    pub(crate) fn module_cache(&self) -> &super::module_cache::ModuleCache {
        &self.modules
    }

    pub(crate) fn rewritten_methods(&self) -> &super::rewritten::RewrittenMethods {
        &self.rewritten
    }

    /// A class's full name, generic instantiations included
    /// (`System.Collections.Generic.List<System.String>`), from
    /// `GetClassIDInfo2` and the module's metadata. Arrays are named by
    /// `IsArrayClass` as their element type with C#-like brackets
    /// (`System.Byte[]`, `System.String[,]`, `System.Int32[][]`); other
    /// classes without a TypeDef (pointers, function pointers) give the
    /// runtime's error.
    ///
    /// Bounded against broken answers: type arguments nest at most 16 deep
    /// and at most 256 classes are named in all (the rest print as `...`);
    /// a count of type arguments above 65,535 is `E_UNEXPECTED`. Module
    /// metadata comes from the same per-module cache as
    /// [`function_name`](ProfilerInfo::function_name)'s.
    pub fn class_name(&self, class: ClassID) -> Result<String> {
        let mut budget = CLASS_NAME_BUDGET;
        self.class_name_depth(class, 0, &mut budget)
    }

    fn class_name_depth(&self, class: ClassID, depth: u32, budget: &mut u32) -> Result<String> {
        let raw = self.live()?;
        const MAX_DEPTH: u32 = 16;
        *budget = budget.saturating_sub(1);
        if let Some(name) = self.array_class_name(class, depth, budget) {
            return Ok(name);
        }
        let (mut module, mut typedef) = (ModuleID::NULL, mdTypeDef(0));
        let mut args: Vec<ClassID> = Vec::new();
        if let Some(v2) = self.v2() {
            let mut parent = ClassID::NULL;
            let mut count: u32 = 0;
            // SAFETY: valid out-pointers; a zero-capacity first call asks for the count.
            unsafe {
                v2.GetClassIDInfo2(
                    class,
                    &mut module,
                    &mut typedef,
                    &mut parent,
                    0,
                    &mut count,
                    core::ptr::null_mut(),
                )
                .ok_with("GetClassIDInfo2")?;
            }
            // Metadata numbers generic parameters with 16 bits: a larger
            // count is a broken answer, refused before allocating for it.
            if count > u32::from(u16::MAX) {
                return Err(crate::E_UNEXPECTED.into());
            }
            if count > 0 {
                args.resize(count as usize, ClassID::NULL);
                let mut written: u32 = 0;
                // SAFETY: `args` has room for `count` IDs.
                unsafe {
                    v2.GetClassIDInfo2(
                        class,
                        &mut module,
                        &mut typedef,
                        &mut parent,
                        count,
                        &mut written,
                        args.as_mut_ptr(),
                    )
                    .ok_with("GetClassIDInfo2")?;
                }
                args.truncate(written as usize);
            }
        } else {
            // SAFETY: valid out-pointers.
            unsafe { raw.GetClassIDInfo(class, &mut module, &mut typedef) }
                .ok_with("GetClassIDInfo")?;
        }
        let import = self.module_import(module)?;
        let mut name = import.type_name(typedef)?;
        if !args.is_empty() {
            if let Some(tick) = name.rfind('`') {
                name.truncate(tick);
            }
            name.push('<');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    name.push_str(", ");
                }
                if depth < MAX_DEPTH && *budget > 0 {
                    name.push_str(
                        &self
                            .class_name_depth(*arg, depth + 1, budget)
                            .unwrap_or_else(|_| String::from("?")),
                    );
                } else {
                    name.push_str("...");
                }
            }
            name.push('>');
        }
        Ok(name)
    }

    /// The name of an array class (`System.Byte[]`, `System.String[,]`)
    /// from `IsArrayClass`, or `None` when `class` is not an array: arrays
    /// have no TypeDef for `GetClassIDInfo2` to answer.
    fn array_class_name(&self, class: ClassID, depth: u32, budget: &mut u32) -> Option<String> {
        let raw = self.live().ok()?;
        let (mut element, mut element_class, mut rank) =
            (crate::metadata::CorElementType(0), ClassID::NULL, 0u32);
        // SAFETY: valid out-pointers; S_FALSE (not an array) is checked.
        let hr = unsafe { raw.IsArrayClass(class, &mut element, &mut element_class, &mut rank) };
        if hr != crate::S_OK || rank == 0 || rank > 32 {
            return None;
        }
        let mut name = if !element_class.is_null() && depth < 16 && *budget > 0 {
            self.class_name_depth(element_class, depth + 1, budget)
                .unwrap_or_else(|_| String::from("?"))
        } else {
            String::from(primitive_name(element).unwrap_or("?"))
        };
        name.push('[');
        for _ in 1..rank {
            name.push(',');
        }
        name.push(']');
        Some(name)
    }

    /// A module's path, assembly and load address (`GetModuleInfo`).
    pub fn module_info(&self, module: ModuleID) -> Result<ModuleInfo> {
        let raw = self.live()?;
        let mut base: *const u8 = core::ptr::null();
        let mut assembly = AssemblyID::NULL;
        let path = read_utf16(|cap, needed, buf| {
            // SAFETY: `read_utf16` passes a buffer of `cap` characters and a
            // valid length pointer; the other out-pointers are locals.
            unsafe { raw.GetModuleInfo(module, &mut base, cap, needed, buf, &mut assembly) }
        })
        .map_err(|hr| crate::Error::new(hr, "GetModuleInfo"))?;
        Ok(ModuleInfo {
            path,
            assembly,
            base_address: base as usize,
        })
    }

    /// An assembly's name, app domain and manifest module (`GetAssemblyInfo`).
    pub fn assembly_info(&self, assembly: AssemblyID) -> Result<AssemblyInfo> {
        let raw = self.live()?;
        let (mut app_domain, mut manifest_module) = (AppDomainID::NULL, ModuleID::NULL);
        let name = read_utf16(|cap, needed, buf| {
            // SAFETY: as in `module_info`.
            unsafe {
                raw.GetAssemblyInfo(
                    assembly,
                    cap,
                    needed,
                    buf,
                    &mut app_domain,
                    &mut manifest_module,
                )
            }
        })
        .map_err(|hr| crate::Error::new(hr, "GetAssemblyInfo"))?;
        Ok(AssemblyInfo {
            name,
            app_domain,
            manifest_module,
        })
    }

    /// An application domain's name (`GetAppDomainInfo`).
    pub fn app_domain_name(&self, app_domain: AppDomainID) -> Result<String> {
        let raw = self.live()?;
        let mut process = ProcessID::NULL;
        read_utf16(|cap, needed, buf| {
            // SAFETY: as in `module_info`.
            unsafe { raw.GetAppDomainInfo(app_domain, cap, needed, buf, &mut process) }
        })
        .map_err(|hr| crate::Error::new(hr, "GetAppDomainInfo"))
    }

    /// A module's metadata for reading (`GetModuleMetaData` with `ofRead`).
    /// `Ok(None)` when the module has none (resource modules: the runtime
    /// answers `S_FALSE` and no interface).
    pub fn module_metadata(&self, module: ModuleID) -> Result<Option<MetadataImport>> {
        // SAFETY: `ofRead` opens read-only metadata as IMetaDataImport.
        Ok(
            unsafe { self.module_metadata_as::<IMetaDataImport>(module, ofRead) }?
                .map(MetadataImport::new),
        )
    }

    /// A module's metadata as any metadata interface `I` (for example
    /// `IMetaDataEmit` with `ofWrite`, to add references before IL
    /// rewriting; [`ProfilerInfo::module_metadata_emit`] wraps that case).
    /// `Ok(None)` on `S_FALSE` with no interface.
    ///
    /// # Safety
    ///
    /// `open_flags` must be flags the runtime accepts (`ofRead`, `ofWrite`),
    /// and `I` a metadata interface (the runtime answers other IIDs with an
    /// error, not a crash, but writing metadata has rules of its own).
    pub unsafe fn module_metadata_as<I: Interface>(
        &self,
        module: ModuleID,
        open_flags: CorOpenFlags,
    ) -> Result<Option<I>> {
        let raw = self.live()?;
        let mut out: *mut c_void = core::ptr::null_mut();
        // SAFETY: a valid IID and out-pointer; on success `out` is null or
        // one reference to an `I`, which `from_raw` takes over.
        unsafe {
            raw.GetModuleMetaData(module, open_flags.bits(), &I::IID, &mut out)
                .ok_with("GetModuleMetaData")?;
            Ok(crate::com::interface::invoker::from_raw::<I>(out))
        }
    }

    /// The modules loaded now (`EnumModules`, version 3), as an iterator
    /// that releases the runtime's enumerator when dropped.
    pub fn modules(&self) -> Result<ModuleIter> {
        let v3 = self.live_v3()?;
        // SAFETY: EnumModules writes null or one ICorProfilerModuleEnum reference.
        unsafe { take_interface("EnumModules", |out| v3.EnumModules(out)) }.map(ModuleIter::new)
    }

    /// Asks the runtime to detach this profiler (`RequestProfilerDetach`,
    /// version 3), for a profiler that has finished its work: the runtime
    /// waits about `expected_milliseconds`, then until no call into the
    /// profiler is in progress, calls `profiler_detach_succeeded` and
    /// unloads the profiler's library. The runtime refuses a profiler that
    /// set flags that cannot be undone (`CORPROF_E_IMMUTABLE_FLAGS_SET`) or
    /// that was not loaded by attach or startup in a detachable way.
    ///
    /// # Safety
    /// Unloading the library unmaps its code and statics: every thread of
    /// the profiler's own (samplers, exporters, timers) must have ended, or
    /// will have within `expected_milliseconds`, and no callback may be
    /// left that the runtime or another library could still call.
    pub unsafe fn request_profiler_detach(&self, expected_milliseconds: u32) -> Result<()> {
        let v3 = self.v3().ok_or(E_NOTIMPL)?;
        // SAFETY: a plain call; what it leads to is the caller's contract.
        unsafe { v3.RequestProfilerDetach(expected_milliseconds) }.ok_with("RequestProfilerDetach")
    }

    /// The functions JIT-compiled so far (`EnumJITedFunctions`, version 3).
    pub fn jited_functions(&self) -> Result<FunctionIter> {
        let v3 = self.live_v3()?;
        // SAFETY: EnumJITedFunctions writes null or one ICorProfilerFunctionEnum reference.
        unsafe { take_interface("EnumJITedFunctions", |out| v3.EnumJITedFunctions(out)) }
            .map(FunctionIter::new)
    }

    /// The managed thread calling this method (`GetCurrentThreadID`);
    /// `CORPROF_E_NOT_MANAGED_THREAD` on a native thread.
    pub fn current_thread(&self) -> Result<ThreadID> {
        let raw = self.live()?;
        let mut thread = ThreadID::NULL;
        // SAFETY: a valid out-pointer.
        unsafe { raw.GetCurrentThreadID(&mut thread) }.ok_with("GetCurrentThreadID")?;
        Ok(thread)
    }

    /// The OS thread ID a managed thread currently runs on (`GetThreadInfo`).
    pub fn os_thread_id(&self, thread: ThreadID) -> Result<u32> {
        let raw = self.live()?;
        let mut os = 0;
        // SAFETY: a valid out-pointer.
        unsafe { raw.GetThreadInfo(thread, &mut os) }.ok_with("GetThreadInfo")?;
        Ok(os)
    }

    /// The class of an object (`GetClassFromObject`).
    ///
    /// # Safety
    ///
    /// `object` must be the ID of a live object that the garbage collector
    /// cannot move or free during the call. An `ObjectID` is the object's
    /// address, valid only until the next garbage collection, and the
    /// runtime reads the object through it without checking it. Call this
    /// in the callback that handed the ID over (`object_allocated`,
    /// `exception_thrown`, ...), on that callback's thread, or while the
    /// runtime is suspended with an ID obtained since it was suspended.
    pub unsafe fn class_of(&self, object: ObjectID) -> Result<ClassID> {
        let raw = self.live()?;
        let mut class = ClassID::NULL;
        // SAFETY: a valid out-pointer; `object` is live and does not move
        // (this function's contract).
        unsafe { raw.GetClassFromObject(object, &mut class) }.ok_with("GetClassFromObject")?;
        Ok(class)
    }

    /// The runtime's kind and version (`GetRuntimeInformation`, version 3).
    pub fn runtime_information(&self) -> Result<RuntimeInfo> {
        let v3 = self.live_v3()?;
        let mut info = RuntimeInfo {
            runtime_type: COR_PRF_RUNTIME_TYPE(0),
            major: 0,
            minor: 0,
            build: 0,
            qfe: 0,
            version_string: String::new(),
        };
        let mut instance = 0u16;
        info.version_string = read_utf16(|cap, needed, buf| {
            // SAFETY: as in `module_info`.
            unsafe {
                v3.GetRuntimeInformation(
                    &mut instance,
                    &mut info.runtime_type,
                    &mut info.major,
                    &mut info.minor,
                    &mut info.build,
                    &mut info.qfe,
                    cap,
                    needed,
                    buf,
                )
            }
        })
        .map_err(|hr| crate::Error::new(hr, "GetRuntimeInformation"))?;
        Ok(info)
    }

    /// A copy of a method's IL body as the runtime holds it, header and
    /// exception sections included (`GetILFunctionBody`): the bytes
    /// [`crate::cil::MethodBody::decode`] reads.
    ///
    /// The runtime's bytes live as long as their module, and a collectible
    /// assembly's module can be unloaded while the profiler runs, so the
    /// facade copies them (bodies are small) rather than hand out a borrow
    /// it cannot bound. [`ProfilerInfo::v1`] gives the raw call.
    pub fn il_function_body(&self, module: ModuleID, method: mdMethodDef) -> Result<Vec<u8>> {
        let raw = self.live()?;
        let mut header: *const u8 = core::ptr::null();
        let mut size: u32 = 0;
        // SAFETY: valid out-pointers.
        unsafe { raw.GetILFunctionBody(module, method, &mut header, &mut size) }
            .ok_with("GetILFunctionBody")?;
        if header.is_null() {
            return Err(E_POINTER.into());
        }
        // SAFETY: the runtime answered `size` readable bytes at `header`,
        // owned by the module, which is loaded during this call (the caller
        // passed its ID); they are copied before returning.
        Ok(unsafe { core::slice::from_raw_parts(header, size as usize) }.to_vec())
    }

    /// Replaces a method's IL body before it is JIT-compiled: copies `body`
    /// (header, code and EH sections, as `cil::MethodBody::encode` writes them) into
    /// memory from the module's `IMethodMalloc` and calls
    /// `SetILFunctionBody`. Call it from `jit_compilation_started` or
    /// `module_load_finished`.
    ///
    /// **Once per method.** The IL set here is what every later compilation
    /// of the method starts from: tier 1 after tier 0, PGO's instrumented
    /// tier on .NET 8, and on .NET 7 and later on-stack replacement, which
    /// compiles a method with a hot loop again mid-loop at an offset of
    /// this IL. Rewriting it again at a later `JITCompilationStarted` would
    /// instrument the instrumentation and move the offsets the runtime uses
    /// (on .NET 8, an `InvalidProgramException`). So a second call for the
    /// same method (since its module loaded) does not reach the runtime and
    /// answers `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE`; ask
    /// [`il_function_body_was_set`](Self::il_function_body_was_set) first
    /// to skip the work. A call that failed does not count. This holds for
    /// this `ProfilerInfo` and its clones (they share the record).
    ///
    /// # Safety
    ///
    /// `body` must be a valid CIL method body for `method` whose tokens
    /// exist in `module`: the JIT compiles what it is given, and malformed
    /// IL can crash the process rather than fail.
    pub unsafe fn set_il_function_body(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        body: &[u8],
    ) -> Result<()> {
        self.rewritten
            // SAFETY: the caller's contract, passed on.
            .set_once(module, method, || unsafe {
                self.set_il_function_body_now(module, method, body)
            })
            .unwrap_or(Err(CORPROF_E_UNSUPPORTED_CALL_SEQUENCE.into()))
    }

    /// True when [`set_il_function_body`](Self::set_il_function_body) has
    /// set this method's IL (since its module loaded): the method must not
    /// be rewritten again, however many times the runtime compiles it.
    pub fn il_function_body_was_set(&self, module: ModuleID, method: mdMethodDef) -> bool {
        self.rewritten.contains(module, method)
    }

    /// `SetILFunctionBody` itself (see [`set_il_function_body`](Self::set_il_function_body)).
    ///
    /// # Safety
    ///
    /// As for `set_il_function_body`.
    unsafe fn set_il_function_body_now(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        body: &[u8],
    ) -> Result<()> {
        let raw = self.live()?;
        // SAFETY: GetILFunctionBodyAllocator writes null or one IMethodMalloc reference.
        let malloc: IMethodMalloc = unsafe {
            take_interface("GetILFunctionBodyAllocator", |out| {
                raw.GetILFunctionBodyAllocator(module, out)
            })
        }?;
        let size = u32::try_from(body.len()).map_err(|_| crate::E_INVALIDARG)?;
        // SAFETY: `Alloc` returns null or `size` writable bytes owned by the
        // runtime, which frees them with the module.
        unsafe {
            let memory = malloc.Alloc(size) as *mut u8;
            if memory.is_null() {
                return Err(crate::E_OUTOFMEMORY.into());
            }
            core::ptr::copy_nonoverlapping(body.as_ptr(), memory, body.len());
            raw.SetILFunctionBody(module, method, memory)
                .ok_with("SetILFunctionBody")
        }
    }

    /// Asks the runtime to JIT-compile these methods again
    /// (`RequestReJIT`, version 4); the new code's IL comes from
    /// `get_rejit_parameters`. Requires `COR_PRF_ENABLE_REJIT` in the event
    /// mask.
    pub fn request_rejit(&self, methods: &[(ModuleID, mdMethodDef)]) -> Result<()> {
        let v4 = self.live_v4()?;
        let (mut modules, mut tokens): (Vec<ModuleID>, Vec<mdMethodDef>) =
            methods.iter().copied().unzip();
        let count = u32::try_from(methods.len()).map_err(|_| crate::E_INVALIDARG)?;
        // SAFETY: two arrays of `count` elements.
        unsafe { v4.RequestReJIT(count, modules.as_mut_ptr(), tokens.as_mut_ptr()) }
            .ok_with("RequestReJIT")
    }

    /// Like [`request_rejit`](Self::request_rejit), and also JIT-compiles
    /// again every method that inlined one of them, so that the new code
    /// takes effect there too (`RequestReJITWithInliners`,
    /// `ICorProfilerInfo10`; `COR_PRF_REJIT_BLOCK_INLINING` keeps the new
    /// code from being inlined anywhere, `COR_PRF_REJIT_INLINING_CALLBACKS`
    /// asks `get_rejit_parameters` for the inliners too). Requires
    /// `COR_PRF_ENABLE_REJIT` in the event mask.
    pub fn request_rejit_with_inliners(
        &self,
        flags: COR_PRF_REJIT_FLAGS,
        methods: &[(ModuleID, mdMethodDef)],
    ) -> Result<()> {
        let v10 = self.live_v10()?;
        let (mut modules, mut tokens): (Vec<ModuleID>, Vec<mdMethodDef>) =
            methods.iter().copied().unzip();
        let count = u32::try_from(methods.len()).map_err(|_| crate::E_INVALIDARG)?;
        // SAFETY: two arrays of `count` elements.
        unsafe {
            v10.RequestReJITWithInliners(flags.0, count, modules.as_mut_ptr(), tokens.as_mut_ptr())
        }
        .ok_with("RequestReJITWithInliners")
    }

    /// Reverts methods to their original IL (`RequestRevert`, version 4).
    /// Returns one status per method.
    pub fn request_revert(&self, methods: &[(ModuleID, mdMethodDef)]) -> Result<Vec<HRESULT>> {
        let v4 = self.live_v4()?;
        let (mut modules, mut tokens): (Vec<ModuleID>, Vec<mdMethodDef>) =
            methods.iter().copied().unzip();
        let mut statuses = alloc::vec![crate::S_OK; methods.len()];
        let count = u32::try_from(methods.len()).map_err(|_| crate::E_INVALIDARG)?;
        // SAFETY: three arrays of `count` elements.
        unsafe {
            v4.RequestRevert(
                count,
                modules.as_mut_ptr(),
                tokens.as_mut_ptr(),
                statuses.as_mut_ptr(),
            )
        }
        .ok_with("RequestRevert")?;
        Ok(statuses)
    }
}

/// The per-method ReJIT controller that
/// [`Profiler::get_rejit_parameters`](super::Profiler::get_rejit_parameters)
/// receives (`ICorProfilerFunctionControl`), valid only during that call.
#[derive(Clone, Copy)]
pub struct FunctionControl<'a> {
    raw: ComRef<'a, ICorProfilerFunctionControl>,
}

impl<'a> FunctionControl<'a> {
    /// Wraps the controller a callback received.
    pub fn new(raw: ComRef<'a, ICorProfilerFunctionControl>) -> FunctionControl<'a> {
        FunctionControl { raw }
    }

    /// The raw invoker.
    pub fn raw(&self) -> &ICorProfilerFunctionControl {
        &self.raw
    }

    /// Sets the IL of the method being re-JIT-compiled
    /// (`ICorProfilerFunctionControl::SetILFunctionBody`): header, code and
    /// EH sections, as [`crate::cil::MethodBody::encode`] writes them. The
    /// runtime copies the bytes, so `body` may be any buffer (no
    /// `IMethodMalloc`). `E_INVALIDARG` for an empty body.
    ///
    /// # Safety
    ///
    /// As for [`ProfilerInfo::set_il_function_body`]: `body` must be a valid
    /// CIL method body for the method whose tokens exist in its module.
    pub unsafe fn set_il_function_body(&self, body: &[u8]) -> Result<()> {
        if body.is_empty() {
            return Err(crate::E_INVALIDARG.into());
        }
        let size = u32::try_from(body.len()).map_err(|_| crate::E_INVALIDARG)?;
        // SAFETY: `size` readable bytes at `body`, which the runtime copies
        // before it returns; the IL's validity is the caller's contract.
        unsafe { self.raw.SetILFunctionBody(size, body.as_ptr()) }.ok_with("SetILFunctionBody")
    }

    /// Sets code-generation flags for the recompilation
    /// (`SetCodegenFlags`), e.g. `COR_PRF_CODEGEN_DISABLE_INLINING`.
    pub fn set_codegen_flags(&self, flags: COR_PRF_CODEGEN_FLAGS) -> Result<()> {
        // SAFETY: a plain value argument.
        unsafe { self.raw.SetCodegenFlags(flags.0) }.ok_with("SetCodegenFlags")
    }
}

impl<'a> From<ComRef<'a, ICorProfilerFunctionControl>> for FunctionControl<'a> {
    fn from(raw: ComRef<'a, ICorProfilerFunctionControl>) -> FunctionControl<'a> {
        FunctionControl::new(raw)
    }
}

impl fmt::Debug for FunctionControl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionControl")
            .field("raw", &self.raw.as_raw())
            .finish()
    }
}

impl fmt::Debug for ProfilerInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProfilerInfo")
            .field("version", &self.version)
            .field("raw", &self.raw)
            .finish()
    }
}

/// The runtime type of a primitive element type, as `class_name` names it.
fn primitive_name(element: crate::metadata::CorElementType) -> Option<&'static str> {
    use crate::metadata::*;
    Some(match element {
        ELEMENT_TYPE_BOOLEAN => "System.Boolean",
        ELEMENT_TYPE_CHAR => "System.Char",
        ELEMENT_TYPE_I1 => "System.SByte",
        ELEMENT_TYPE_U1 => "System.Byte",
        ELEMENT_TYPE_I2 => "System.Int16",
        ELEMENT_TYPE_U2 => "System.UInt16",
        ELEMENT_TYPE_I4 => "System.Int32",
        ELEMENT_TYPE_U4 => "System.UInt32",
        ELEMENT_TYPE_I8 => "System.Int64",
        ELEMENT_TYPE_U8 => "System.UInt64",
        ELEMENT_TYPE_R4 => "System.Single",
        ELEMENT_TYPE_R8 => "System.Double",
        ELEMENT_TYPE_STRING => "System.String",
        ELEMENT_TYPE_I => "System.IntPtr",
        ELEMENT_TYPE_U => "System.UIntPtr",
        ELEMENT_TYPE_OBJECT => "System.Object",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BYTE, DWORD, ULONG};
    use std::sync::Mutex;

    /// Records what the facade hands the runtime's controller, copying the
    /// body as the runtime does.
    #[derive(Default)]
    struct Control {
        body: Mutex<Vec<u8>>,
        flags: Mutex<u32>,
    }

    impl ICorProfilerFunctionControl_Impl for Control {
        unsafe fn SetCodegenFlags(&self, flags: DWORD) -> HRESULT {
            *self.flags.lock().unwrap() = flags;
            crate::S_OK
        }
        unsafe fn SetILFunctionBody(&self, size: ULONG, body: *const BYTE) -> HRESULT {
            // SAFETY: the facade passes `size` readable bytes.
            let bytes = unsafe { core::slice::from_raw_parts(body, size as usize) };
            *self.body.lock().unwrap() = bytes.to_vec();
            crate::S_OK
        }
    }

    #[test]
    fn function_control_passes_the_body_and_flags() {
        let object = std::sync::Arc::new(Control::default());
        let owned: ICorProfilerFunctionControl = crate::export_arc(object.clone());
        // SAFETY: `owned` keeps the object alive for the borrow.
        let view = unsafe { ComRef::from_raw(owned.as_raw()) }.unwrap();
        let control = FunctionControl::from(view);
        let il = [0x0E, 0x1F, 42, 0x2A];
        // SAFETY: the double only copies the bytes.
        assert_eq!(unsafe { control.set_il_function_body(&il) }, Ok(()));
        assert_eq!(*object.body.lock().unwrap(), il);
        // SAFETY: an empty body is refused before any call.
        let empty = unsafe { control.set_il_function_body(&[]) };
        assert_eq!(empty, Err(crate::E_INVALIDARG.into()));
        assert_eq!(
            control.set_codegen_flags(COR_PRF_CODEGEN_DISABLE_INLINING),
            Ok(())
        );
        assert_eq!(*object.flags.lock().unwrap(), 1);
        assert!(alloc::format!("{control:?}").starts_with("FunctionControl"));
    }

    #[test]
    fn profiler_info_is_send_sync_and_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<ProfilerInfo>();
    }
}

#[cfg(test)]
mod lifecycle_tests {
    use super::*;
    use core::time::Duration;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;

    #[test]
    fn shutting_down_waits_for_the_calls_in_flight_and_refuses_new_ones() {
        let lifecycle = Arc::new(Lifecycle::default());
        lifecycle.enter().unwrap(); // a call in flight on this thread
        let done = Arc::new(AtomicBool::new(false));
        let shutting = {
            let (lifecycle, done) = (lifecycle.clone(), done.clone());
            std::thread::spawn(move || {
                // A grace no test run reaches: only the call's end lets it return.
                let waited = lifecycle.shut_down(Duration::from_secs(600));
                done.store(true, Ordering::SeqCst);
                waited
            })
        };
        while !lifecycle.is_shut_down() {
            std::thread::yield_now();
        }
        assert_eq!(lifecycle.enter(), Err(AFTER_SHUTDOWN.into()), "no new call");
        assert!(
            !done.load(Ordering::SeqCst),
            "Shutdown waits for the call in flight"
        );
        lifecycle.leave();
        assert!(shutting.join().unwrap(), "and returns once it ended");
        assert!(done.load(Ordering::SeqCst));
        assert_eq!(
            lifecycle.0.load(Ordering::SeqCst),
            SHUT_DOWN,
            "nothing left in flight"
        );
    }

    #[test]
    fn a_call_that_never_ends_delays_shutdown_by_the_grace_only() {
        let lifecycle = Lifecycle::default();
        lifecycle.enter().unwrap();
        let (sent, received) = mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| sent.send(lifecycle.shut_down(Duration::ZERO)).unwrap());
        });
        assert_eq!(
            received.recv(),
            Ok(false),
            "gave up waiting instead of hanging"
        );
        assert_eq!(lifecycle.enter(), Err(AFTER_SHUTDOWN.into()));
    }
}
