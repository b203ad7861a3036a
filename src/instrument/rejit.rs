//! [`RejitBodies`]: the new IL of methods to re-JIT-compile, kept from the
//! time it is made until the runtime asks for it in
//! [`get_rejit_parameters`](crate::facade::Profiler::get_rejit_parameters).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;
use std::sync::{Mutex, MutexGuard};

use crate::facade::{FunctionControl, ProfilerInfo, Result};
use crate::metadata::mdMethodDef;
use crate::profiling::{ModuleID, COR_PRF_REJIT_BLOCK_INLINING, COR_PRF_REJIT_FLAGS};
use crate::HRESULT;

/// New IL bodies per `(module, method)`, each with a note of the caller's
/// (`T`: a name for messages, a summary of the edit, or `()`).
///
/// A ReJIT takes three steps in three places: the profiler makes the new
/// IL (in `module_load_finished`, where metadata may still change, or on
/// a thread of its own), calls [`ProfilerInfo::request_rejit`] from a
/// thread of its own, and the runtime then asks for the IL of each method
/// in [`get_rejit_parameters`](crate::facade::Profiler::get_rejit_parameters).
/// `RejitBodies` carries the IL between them: [`insert`](Self::insert) it,
/// request the ReJIT of [`methods`](Self::methods) (or of some of them),
/// and answer `get_rejit_parameters` with [`set_il`](Self::set_il).
///
/// It is `Send + Sync` (a lock inside) when `T` is `Send`, so the profiler
/// and its thread can share it behind an `Arc` or in the profiler itself.
/// The bodies stay until [`remove`](Self::remove)d, so a method reverted
/// and re-JIT-compiled again gets the same IL.
pub struct RejitBodies<T = ()> {
    bodies: Mutex<Bodies<T>>,
}

/// The IL and note of each method.
type Bodies<T> = BTreeMap<(ModuleID, mdMethodDef), (Vec<u8>, T)>;

impl<T> Default for RejitBodies<T> {
    fn default() -> Self {
        RejitBodies {
            bodies: Mutex::new(BTreeMap::new()),
        }
    }
}

impl<T> RejitBodies<T> {
    /// No bodies.
    pub fn new() -> RejitBodies<T> {
        RejitBodies::default()
    }

    /// The map; a panic while it was held left it consistent (every
    /// update is one map call).
    fn lock(&self) -> MutexGuard<'_, Bodies<T>> {
        crate::support::sync::lock(&self.bodies)
    }

    /// Keeps `il` (header, code and EH sections, as
    /// [`crate::cil::MethodBody::encode`] writes them) and `note` for
    /// `method` of `module`, replacing what was kept for it. Returns the
    /// note it replaced.
    ///
    /// # Safety
    ///
    /// As for [`FunctionControl::set_il_function_body`], which
    /// [`set_il`](Self::set_il) calls with these bytes: `il` must be a
    /// valid CIL method body for `method` whose tokens exist in `module`.
    pub unsafe fn insert(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        il: Vec<u8>,
        note: T,
    ) -> Option<T> {
        self.lock()
            .insert((module, method), (il, note))
            .map(|(_, note)| note)
    }

    /// Forgets the body of `method` of `module`; returns it and its note.
    pub fn remove(&self, module: ModuleID, method: mdMethodDef) -> Option<(Vec<u8>, T)> {
        self.lock().remove(&(module, method))
    }

    /// Whether a body is kept for `method` of `module`.
    pub fn contains(&self, module: ModuleID, method: mdMethodDef) -> bool {
        self.lock().contains_key(&(module, method))
    }

    /// The methods with a body, ordered by module and token: the argument
    /// of [`ProfilerInfo::request_rejit`] and
    /// [`ProfilerInfo::request_revert`].
    pub fn methods(&self) -> Vec<(ModuleID, mdMethodDef)> {
        self.lock().keys().copied().collect()
    }

    /// The number of methods with a body.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no body is kept.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Asks the runtime to re-JIT-compile every method with a body
    /// ([`ProfilerInfo::request_rejit`]; call it from a thread of the
    /// profiler's own) and returns how many that was. With no body it asks
    /// nothing and returns `Ok(0)`.
    pub fn request_rejit(&self, info: &ProfilerInfo) -> Result<usize> {
        let methods = self.methods();
        if !methods.is_empty() {
            info.request_rejit(&methods)?;
        }
        Ok(methods.len())
    }

    /// Like [`request_rejit`](Self::request_rejit), with
    /// [`ProfilerInfo::request_rejit_with_inliners`]: the methods that
    /// inlined a kept method are compiled again too.
    pub fn request_rejit_with_inliners(
        &self,
        info: &ProfilerInfo,
        flags: COR_PRF_REJIT_FLAGS,
    ) -> Result<usize> {
        let methods = self.methods();
        if !methods.is_empty() {
            info.request_rejit_with_inliners(flags, &methods)?;
        }
        Ok(methods.len())
    }

    /// Asks the runtime to make the original code of every method with a
    /// body active again ([`ProfilerInfo::request_revert`], from a thread
    /// of the profiler's own): one status per method, in the order of
    /// [`methods`](Self::methods). With no body it asks nothing. The
    /// bodies are kept.
    pub fn request_revert(&self, info: &ProfilerInfo) -> Result<Vec<HRESULT>> {
        let methods = self.methods();
        if methods.is_empty() {
            return Ok(Vec::new());
        }
        info.request_revert(&methods)
    }
}

/// The first major version of the runtime (`GetRuntimeInformation`; CoreCLR
/// 3.1 answers 4, .NET 5 and later their own number) whose
/// `RequestReJITWithInliners` is used with `COR_PRF_REJIT_BLOCK_INLINING`.
/// Before it the call can crash the process: the ReadyToRun inlining
/// information was resolved to MethodDescs of methods not loaded yet
/// (fixed by dotnet/runtime#69634, merged May 2022, after .NET 6), and an
/// access violation in `CodeVersionManager::GetActiveILCodeVersion` was
/// reported in July 2023 (dotnet/runtime#88924). Seen here: CoreCLR 3.1.23
/// died of SIGSEGV in 8 runs of 12 asked for `System.Console::WriteLine`'s
/// 18 overloads with `COR_PRF_REJIT_BLOCK_INLINING` (none of 12 without
/// it); 8.0.4 ran 6 of 6. 8 is the first version checked to work.
pub const BLOCK_INLINING_FROM_MAJOR: u16 = 8;

/// Requests the ReJIT of `methods` (from a thread of the profiler's own)
/// so that, where the runtime allows it, no caller keeps an inlined copy
/// of their old code: on .NET 8 and later ([`BLOCK_INLINING_FROM_MAJOR`])
/// [`ProfilerInfo::request_rejit_with_inliners`] with
/// `COR_PRF_REJIT_BLOCK_INLINING` (the methods that inlined one of them,
/// JIT-compiled or precompiled, are compiled again, and the new code is
/// never inlined); before, [`ProfilerInfo::request_rejit`], and the
/// callers that inlined a method keep the old code until they are
/// compiled again (the caller keeps them from inlining it, for instance
/// by answering `false` in
/// [`jit_inlining`](crate::facade::Profiler::jit_inlining)). Returns
/// whether the inliners were included.
pub fn request_rejit_blocking_inlining(
    info: &ProfilerInfo,
    methods: &[(ModuleID, mdMethodDef)],
) -> Result<bool> {
    let major = info.runtime_information().map_or(0, |r| r.major);
    if major >= BLOCK_INLINING_FROM_MAJOR {
        info.request_rejit_with_inliners(COR_PRF_REJIT_BLOCK_INLINING, methods)?;
        Ok(true)
    } else {
        info.request_rejit(methods)?;
        Ok(false)
    }
}

impl<T: Clone> RejitBodies<T> {
    /// Answers [`get_rejit_parameters`](crate::facade::Profiler::get_rejit_parameters):
    /// gives `control` the body kept for `method` of `module`
    /// ([`FunctionControl::set_il_function_body`]). `None` when no body is
    /// kept for it (the method is recompiled with the IL it has); else its
    /// note and what the runtime answered.
    pub fn set_il(
        &self,
        module: ModuleID,
        method: mdMethodDef,
        control: FunctionControl<'_>,
    ) -> Option<(T, Result<()>)> {
        let bodies = self.lock();
        let (il, note) = bodies.get(&(module, method))?;
        // SAFETY: `insert`'s contract: a valid body for this method whose
        // tokens exist in its module.
        let set = unsafe { control.set_il_function_body(il) };
        Some((note.clone(), set))
    }
}

impl<T: fmt::Debug> fmt::Debug for RejitBodies<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bodies = self.lock();
        f.debug_map()
            .entries(
                bodies
                    .iter()
                    .map(|(key, (il, note))| (key, (il.len(), note))),
            )
            .finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profiling::{ICorProfilerFunctionControl, ICorProfilerFunctionControl_Impl};
    use crate::{ComRef, BYTE, DWORD, E_FAIL, S_OK, ULONG};
    use alloc::string::String;
    use alloc::vec;
    use std::sync::Arc;

    /// Records the bodies it is given, copying them as the runtime does;
    /// answers `answer`.
    pub(crate) struct Control {
        pub(crate) bodies: Mutex<Vec<Vec<u8>>>,
        answer: HRESULT,
    }

    impl ICorProfilerFunctionControl_Impl for Control {
        unsafe fn SetCodegenFlags(&self, _flags: DWORD) -> HRESULT {
            S_OK
        }
        unsafe fn SetILFunctionBody(&self, size: ULONG, body: *const BYTE) -> HRESULT {
            // SAFETY: the facade passes `size` readable bytes.
            let bytes = unsafe { core::slice::from_raw_parts(body, size as usize) };
            self.bodies.lock().unwrap().push(bytes.to_vec());
            self.answer
        }
    }

    /// A function-control double (shared with `rejit_profiler`'s tests).
    pub(crate) fn control(answer: HRESULT) -> (ICorProfilerFunctionControl, Arc<Control>) {
        let object = Arc::new(Control {
            bodies: Mutex::default(),
            answer,
        });
        (crate::export_arc(object.clone()), object)
    }

    const M1: ModuleID = ModuleID(0x100);
    const M2: ModuleID = ModuleID(0x200);
    const F: mdMethodDef = mdMethodDef::from_rid(1);
    const G: mdMethodDef = mdMethodDef::from_rid(2);
    /// `ldc.i4.s 42; ret` in a tiny header.
    const FORTY_TWO: [u8; 4] = [0x0E, 0x1F, 42, 0x2A];
    /// `ldc.i4.1; ret`.
    const ONE: [u8; 3] = [0x0A, 0x17, 0x2A];

    fn bodies() -> RejitBodies<String> {
        let bodies = RejitBodies::new();
        // SAFETY: never given to a runtime; the double only copies them.
        unsafe {
            assert_eq!(bodies.insert(M2, F, ONE.to_vec(), "m2 f".into()), None);
            assert_eq!(bodies.insert(M1, G, ONE.to_vec(), "m1 g".into()), None);
            assert_eq!(
                bodies.insert(M1, F, FORTY_TWO.to_vec(), "m1 f".into()),
                None
            );
        }
        bodies
    }

    #[test]
    fn set_il_gives_the_kept_body_of_that_method_only() {
        let bodies = bodies();
        assert_eq!(bodies.methods(), [(M1, F), (M1, G), (M2, F)]);
        assert_eq!((bodies.len(), bodies.is_empty()), (3, false));
        let (raw, object) = control(S_OK);
        // SAFETY: `raw` keeps the object alive for the borrow.
        let view = unsafe { ComRef::from_raw(raw.as_raw()) }.unwrap();

        let answer = bodies.set_il(M1, F, FunctionControl::new(view));
        assert_eq!(answer, Some((String::from("m1 f"), Ok(()))));
        assert_eq!(*object.bodies.lock().unwrap(), [FORTY_TWO.to_vec()]);

        // Same token, other module; other token, same module: nothing kept.
        assert_eq!(bodies.set_il(M2, G, FunctionControl::new(view)), None);
        bodies.remove(M2, F).unwrap();
        assert_eq!(bodies.set_il(M2, F, FunctionControl::new(view)), None);
        assert_eq!(object.bodies.lock().unwrap().len(), 1, "untouched");
        assert!(!bodies.contains(M2, F) && bodies.contains(M1, G));
    }

    #[test]
    fn insert_replaces_and_a_refusal_comes_back_with_the_note() {
        let bodies = bodies();
        // SAFETY: as in `bodies`.
        let old = unsafe { bodies.insert(M1, F, ONE.to_vec(), "again".into()) };
        assert_eq!(old.as_deref(), Some("m1 f"));
        assert_eq!(bodies.len(), 3);
        let (raw, object) = control(E_FAIL);
        // SAFETY: `raw` keeps the object alive for the borrow.
        let view = unsafe { ComRef::from_raw(raw.as_raw()) }.unwrap();
        let answer = bodies.set_il(M1, F, FunctionControl::new(view));
        assert_eq!(answer, Some((String::from("again"), Err(E_FAIL.into()))));
        assert_eq!(*object.bodies.lock().unwrap(), [ONE.to_vec()]);
        let listed = alloc::format!("{bodies:?}");
        assert!(listed.contains("(3, \"again\")"), "{listed}");
    }

    /// A version-4 runtime that records each `RequestReJIT`.
    #[derive(Default)]
    struct Info {
        requests: Mutex<Vec<Vec<(ModuleID, mdMethodDef)>>>,
        /// The count of each `RequestRevert`.
        reverts: Mutex<Vec<u32>>,
    }

    impl crate::profiling::ICorProfilerInfo_Impl for Info {}
    impl crate::profiling::ICorProfilerInfo2_Impl for Info {}
    impl crate::profiling::ICorProfilerInfo3_Impl for Info {}
    impl crate::profiling::ICorProfilerInfo4_Impl for Info {
        unsafe fn RequestReJIT(
            &self,
            count: ULONG,
            modules: *mut ModuleID,
            methods: *mut mdMethodDef,
        ) -> HRESULT {
            // SAFETY: the facade passes two arrays of `count` elements.
            let pairs = unsafe {
                let modules = core::slice::from_raw_parts(modules, count as usize);
                let methods = core::slice::from_raw_parts(methods, count as usize);
                modules
                    .iter()
                    .copied()
                    .zip(methods.iter().copied())
                    .collect()
            };
            self.requests.lock().unwrap().push(pairs);
            S_OK
        }
        unsafe fn RequestRevert(
            &self,
            count: ULONG,
            modules: *mut ModuleID,
            _methods: *mut mdMethodDef,
            statuses: *mut HRESULT,
        ) -> HRESULT {
            // SAFETY: the facade passes three arrays of `count` elements.
            unsafe {
                for i in 0..count as usize {
                    // Methods of module M2 fail to revert.
                    let failed = *modules.add(i) == M2;
                    *statuses.add(i) = if failed { E_FAIL } else { S_OK };
                }
            }
            self.reverts.lock().unwrap().push(count);
            S_OK
        }
    }

    fn facade() -> (ProfilerInfo, Arc<Info>) {
        let fake = Arc::new(Info::default());
        let exported: crate::profiling::ICorProfilerInfo4 = crate::export_arc(fake.clone());
        let unknown: crate::IUnknown = exported.cast().unwrap();
        (ProfilerInfo::from_unknown(&unknown).unwrap(), fake)
    }

    #[test]
    fn request_rejit_asks_for_every_kept_method_at_once() {
        let (info, fake) = facade();
        assert_eq!(info.version(), 4);
        let bodies = bodies();
        assert_eq!(bodies.request_rejit(&info), Ok(3));
        assert_eq!(
            *fake.requests.lock().unwrap(),
            [vec![(M1, F), (M1, G), (M2, F)]]
        );
        // One status per method, in the order of `methods`.
        assert_eq!(bodies.request_revert(&info), Ok(vec![S_OK, S_OK, E_FAIL]));
        assert_eq!(*fake.reverts.lock().unwrap(), [3]);
        assert_eq!(bodies.len(), 3, "kept");
    }

    #[test]
    fn empty_bodies_request_nothing() {
        fn check<T: Send + Sync>() {}
        check::<RejitBodies<String>>();
        let bodies = RejitBodies::<()>::default();
        assert!(bodies.is_empty() && bodies.methods().is_empty());
        let (info, fake) = facade();
        assert_eq!(bodies.request_rejit(&info), Ok(0));
        assert_eq!(bodies.request_revert(&info), Ok(vec![]));
        assert!(fake.requests.lock().unwrap().is_empty(), "not called");
        assert!(fake.reverts.lock().unwrap().is_empty(), "not called");
    }
}
