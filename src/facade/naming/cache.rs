//! The per-module cache of metadata importers behind the naming hot path
//! ([`ProfilerInfo::function_name`], [`ProfilerInfo::write_function_name`],
//! [`ProfilerInfo::class_name`]):
//! one `GetFunctionInfo` and a map lookup per function instead of a
//! `QueryInterface` and `Release` of the module's importer.
//!
//! # Why the cache stays correct
//!
//! A `ModuleID` is the address of the runtime's module object, and is
//! reused once a module is unloaded: an importer cached under an ID that
//! now names another module would name methods wrongly. So only modules
//! that cannot unload are cached: before caching, `GetModuleInfo2` must
//! answer flags without `COR_PRF_MODULE_COLLECTIBLE` (modules of
//! non-collectible assemblies stay loaded until the runtime shuts down).
//! Collectible modules (and every module on a runtime without
//! `GetModuleInfo2`) are remembered as "not cached" and named through
//! `GetTokenAndMetaDataFromFunction` every time (a stale "not cached" entry
//! costs speed, never correctness); when the flags or the metadata cannot
//! be read, nothing is remembered and the next call asks again. In addition, the adapter drops the
//! entry of every module the runtime reports in `ModuleUnloadStarted` (when
//! the profiler asked for module events), so not even a collectible
//! module's negative entry outlives it.

use crate::facade::emit::MetadataEmit;
use crate::facade::info::{ProfilerInfo, Result};
use crate::facade::metadata::MetadataImport;
use crate::facade::strings::Utf16Buf;
use crate::metadata::mdMethodDef;
use crate::metadata::{ofRead, ofWrite, IMetaDataEmit};
use crate::profiling::{AssemblyID, FunctionID, ModuleID, COR_PRF_MODULE_COLLECTIBLE};

impl ProfilerInfo {
    /// The metadata and token of `function`, from the per-module cache when
    /// its module is cached (or can be), else from
    /// `GetTokenAndMetaDataFromFunction`.
    pub(crate) fn function_import(
        &self,
        function: FunctionID,
    ) -> Result<(MetadataImport, mdMethodDef)> {
        let info = self.function_info(function)?;
        if !info.module.is_null() {
            let cached = match self.module_cache().get(info.module) {
                Some(entry) => entry,
                None => self.cache_module(info.module),
            };
            if let Some(import) = cached {
                return Ok((import, info.token));
            }
        }
        self.function_metadata(function)
    }

    /// The metadata of `module` for naming (as [`ProfilerInfo::module_metadata`],
    /// `E_FAIL` when it has none), from the cache when the module is cached
    /// (or can be).
    pub(crate) fn module_import(&self, module: ModuleID) -> Result<MetadataImport> {
        if !module.is_null() {
            let cached = match self.module_cache().get(module) {
                Some(entry) => entry,
                None => self.cache_module(module),
            };
            if let Some(import) = cached {
                return Ok(import);
            }
        }
        self.module_metadata(module)?.ok_or(crate::E_FAIL.into())
    }

    /// Looks `module` up and remembers the answer when it is final: the
    /// importer of a permanent module, or "not cached" for a collectible
    /// module (or a runtime without `GetModuleInfo2`). A call that fails
    /// (for example made where the runtime refuses it, or while the module
    /// is still loading) records nothing, so a later call tries again.
    fn cache_module(&self, module: ModuleID) -> Option<MetadataImport> {
        match self.module_is_permanent(module) {
            Some(true) => {
                let import = self.module_metadata(module).ok().flatten()?;
                self.module_cache().insert(module, Some(import.clone()));
                Some(import)
            }
            Some(false) => {
                self.module_cache().insert(module, None);
                None
            }
            None => None,
        }
    }

    /// Whether the module can never unload: `Some(true)` when
    /// `GetModuleInfo2` (version 3) answers flags without
    /// `COR_PRF_MODULE_COLLECTIBLE`, `Some(false)` when they have it or the
    /// runtime has no version 3, `None` when the call fails.
    fn module_is_permanent(&self, module: ModuleID) -> Option<bool> {
        let v3 = match self.live_v3() {
            Ok(v3) => v3,
            Err(e) if e.code() == crate::E_NOTIMPL => return Some(false),
            Err(_) => return None,
        };
        let mut base: *const u8 = core::ptr::null();
        let mut assembly = AssemblyID::NULL;
        let mut flags: u32 = 0;
        let mut path = Utf16Buf::new();
        path.read(|cap, needed, buf| {
            // SAFETY: `read` passes a buffer of `cap` characters and a valid
            // length pointer; the other out-pointers are locals.
            unsafe {
                v3.GetModuleInfo2(
                    module,
                    &mut base,
                    cap,
                    needed,
                    buf,
                    &mut assembly,
                    &mut flags,
                )
            }
        })
        .ok()?;
        Some(flags & COR_PRF_MODULE_COLLECTIBLE.0 == 0)
    }

    /// The emitter of `module`: the cached one of a permanent module, or a
    /// new one (cached when the module is permanent). `Ok(None)` when the
    /// module has no metadata.
    pub(crate) fn cached_metadata_emit(
        &self,
        module: ModuleID,
        open: impl FnOnce() -> Result<Option<MetadataEmit>>,
    ) -> Result<Option<MetadataEmit>> {
        let cache = self.module_cache();
        if let Some(emit) = cache.emitter(module) {
            return Ok(Some(emit));
        }
        let emit = open()?;
        if let Some(emit) = &emit {
            if self.module_is_permanent(module) == Some(true) {
                cache.keep_emitter(module, emit);
            }
        }
        Ok(emit)
    }

    /// Forgets what the cache knows of `module`: the adapter calls it on
    /// `ModuleUnloadStarted`.
    pub(crate) fn forget_module(&self, module: ModuleID) {
        self.module_cache().remove(module);
        self.rewritten_methods().forget_module(module);
    }
}

impl ProfilerInfo {
    /// A module's metadata for writing (`GetModuleMetaData` with `ofRead |
    /// ofWrite`, as `IMetaDataEmit`). `Ok(None)` when the module has no
    /// metadata. See [`MetadataEmit`] for when changes are allowed.
    ///
    /// The emitter of a module that cannot unload is kept (and dropped at
    /// `ModuleUnloadStarted` when the profiler asked for module events), so
    /// that what it found and defined is looked up, not scanned for, by the
    /// next call.
    pub fn module_metadata_emit(&self, module: ModuleID) -> Result<Option<MetadataEmit>> {
        self.cached_metadata_emit(module, || {
            // SAFETY: `ofWrite` is a valid CorOpenFlags value for
            // GetModuleMetaData and IMetaDataEmit a metadata interface.
            let emit =
                unsafe { self.module_metadata_as::<IMetaDataEmit>(module, ofRead | ofWrite) }?;
            emit.map(MetadataEmit::new).transpose()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_scope::{FakeScope, TD_PUBLIC};
    use crate::metadata::{mdToken, mdTypeDef};
    use crate::profiling::*;
    use crate::{BYTE, DWORD, HRESULT, REFIID, S_OK, ULONG, WCHAR};
    use alloc::string::{String, ToString};
    use core::ffi::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PERMANENT: ModuleID = ModuleID(0x100);
    const COLLECTIBLE: ModuleID = ModuleID(0x200);
    /// Its `GetModuleInfo2` fails.
    const UNREADABLE: ModuleID = ModuleID(0x300);

    /// Writes `text` and its terminator by the length-then-buffer protocol.
    ///
    /// # Safety
    ///
    /// `buf` has room for `cap` characters; `needed` is valid.
    unsafe fn answer(text: &str, cap: ULONG, needed: *mut ULONG, buf: *mut WCHAR) -> HRESULT {
        let units: alloc::vec::Vec<u16> = text.encode_utf16().chain([0]).collect();
        // SAFETY: forwarded contract.
        unsafe {
            *needed = units.len() as ULONG;
            core::ptr::copy_nonoverlapping(units.as_ptr(), buf, units.len().min(cap as usize));
        }
        S_OK
    }

    /// Functions 0x10 (in PERMANENT) and 0x20 (in COLLECTIBLE); counts the
    /// calls that hand out an importer.
    #[derive(Default)]
    struct Info {
        module_metadata: AtomicUsize,
        token_and_metadata: AtomicUsize,
    }

    /// Method 0x06000001 `Run` of type `N.C`.
    fn import() -> *mut c_void {
        let mut scope = FakeScope::new();
        scope.type_def("<Module>", 0, mdToken(0));
        let class = scope.type_def("N.C", TD_PUBLIC, mdToken(0));
        scope.method(class, "Run", 0x16, &[0x00, 0x00, 0x01]);
        scope.raw().into_raw()
    }

    impl ICorProfilerInfo_Impl for Info {
        unsafe fn GetFunctionInfo(
            &self,
            f: FunctionID,
            c: *mut ClassID,
            m: *mut ModuleID,
            t: *mut mdToken,
        ) -> HRESULT {
            // SAFETY: valid out-pointers.
            unsafe {
                *c = ClassID(1);
                *m = match f.0 {
                    0x10 => PERMANENT,
                    0x20 => COLLECTIBLE,
                    _ => UNREADABLE,
                };
                *t = mdToken(0x0600_0001);
            }
            S_OK
        }
        unsafe fn GetTokenAndMetaDataFromFunction(
            &self,
            _f: FunctionID,
            _riid: REFIID,
            out: *mut *mut c_void,
            token: *mut mdToken,
        ) -> HRESULT {
            self.token_and_metadata.fetch_add(1, Ordering::SeqCst);
            // SAFETY: valid out-pointers.
            unsafe {
                *out = import();
                *token = mdToken(0x0600_0001);
            }
            S_OK
        }
        unsafe fn GetModuleMetaData(
            &self,
            _m: ModuleID,
            _flags: DWORD,
            _riid: REFIID,
            out: *mut *mut c_void,
        ) -> HRESULT {
            self.module_metadata.fetch_add(1, Ordering::SeqCst);
            // SAFETY: a valid out-pointer.
            unsafe { *out = import() };
            S_OK
        }
    }
    impl ICorProfilerInfo2_Impl for Info {
        #[allow(clippy::too_many_arguments)]
        unsafe fn GetClassIDInfo2(
            &self,
            _class: ClassID,
            module: *mut ModuleID,
            typedef: *mut mdTypeDef,
            parent: *mut ClassID,
            _cap: ULONG,
            count: *mut ULONG,
            _args: *mut ClassID,
        ) -> HRESULT {
            // SAFETY: valid out-pointers.
            unsafe {
                *module = PERMANENT;
                *typedef = mdTypeDef(0x0200_0002);
                *parent = ClassID::NULL;
                *count = 0;
            }
            S_OK
        }
    }
    impl ICorProfilerInfo3_Impl for Info {
        unsafe fn GetModuleInfo2(
            &self,
            m: ModuleID,
            _base: *mut *const BYTE,
            cap: ULONG,
            needed: *mut ULONG,
            name: *mut WCHAR,
            _assembly: *mut AssemblyID,
            flags: *mut DWORD,
        ) -> HRESULT {
            if m == UNREADABLE {
                return crate::E_FAIL;
            }
            // SAFETY: valid out-pointers.
            unsafe {
                *flags = if m == COLLECTIBLE {
                    COR_PRF_MODULE_COLLECTIBLE.0
                } else {
                    0
                };
                answer("/m.dll", cap, needed, name)
            }
        }
    }

    fn facade() -> (ProfilerInfo, alloc::sync::Arc<Info>) {
        let fake = alloc::sync::Arc::new(Info::default());
        let exported: ICorProfilerInfo3 = crate::export_arc(fake.clone());
        let unknown: crate::IUnknown = exported.cast().unwrap();
        (ProfilerInfo::from_unknown(&unknown).unwrap(), fake)
    }

    #[test]
    fn a_permanent_module_is_asked_for_its_metadata_once() {
        let (info, fake) = facade();
        assert_eq!(info.version(), 3);
        for _ in 0..3 {
            assert_eq!(
                info.function_name(FunctionID(0x10)).unwrap().to_string(),
                "N.C.Run"
            );
            let mut line = String::new();
            info.write_function_name(FunctionID(0x10), &mut line)
                .unwrap();
            assert_eq!(line, "N.C.Run");
        }
        assert_eq!(info.class_name(ClassID(1)).unwrap(), "N.C");
        assert_eq!(fake.module_metadata.load(Ordering::SeqCst), 1);
        assert_eq!(fake.token_and_metadata.load(Ordering::SeqCst), 0);
        // A clone shares the cache.
        let clone = info.clone();
        clone.function_name(FunctionID(0x10)).unwrap();
        assert_eq!(fake.module_metadata.load(Ordering::SeqCst), 1);
        // Forgotten (ModuleUnloadStarted): asked again.
        info.forget_module(PERMANENT);
        assert_eq!(info.module_cache().len(), 0);
        info.function_name(FunctionID(0x10)).unwrap();
        assert_eq!(fake.module_metadata.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_permanent_module_keeps_its_emitter_until_forgotten() {
        let (info, _fake) = facade();
        let (emit, _scope) = crate::facade::emit::tests::scope();
        let opened = core::cell::Cell::new(0);
        let open = || {
            opened.set(opened.get() + 1);
            Ok(Some(emit.clone()))
        };
        for _ in 0..3 {
            info.cached_metadata_emit(PERMANENT, open).unwrap().unwrap();
        }
        assert_eq!(opened.get(), 1, "opened once, then kept");
        for _ in 0..3 {
            info.cached_metadata_emit(COLLECTIBLE, open)
                .unwrap()
                .unwrap();
        }
        assert_eq!(opened.get(), 4, "a collectible module's is never kept");
        info.forget_module(PERMANENT);
        info.cached_metadata_emit(PERMANENT, open).unwrap().unwrap();
        assert_eq!(opened.get(), 5, "forgotten at ModuleUnloadStarted");
    }

    #[test]
    fn a_collectible_module_is_never_cached() {
        let (info, fake) = facade();
        for _ in 0..3 {
            assert_eq!(
                info.function_name(FunctionID(0x20)).unwrap().to_string(),
                "N.C.Run"
            );
        }
        assert_eq!(fake.module_metadata.load(Ordering::SeqCst), 0);
        assert_eq!(
            fake.token_and_metadata.load(Ordering::SeqCst),
            3,
            "named the uncached way each time"
        );
        assert_eq!(info.module_cache().len(), 1, "remembered as not cached");
    }

    #[test]
    fn a_module_whose_flags_cannot_be_read_is_asked_again_next_time() {
        let (info, fake) = facade();
        for _ in 0..2 {
            assert_eq!(
                info.function_name(FunctionID(0x30)).unwrap().to_string(),
                "N.C.Run"
            );
        }
        assert_eq!(info.module_cache().len(), 0, "nothing remembered");
        assert_eq!(fake.token_and_metadata.load(Ordering::SeqCst), 2);
    }
}
