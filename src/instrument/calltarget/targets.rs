//! [`MethodTarget`]: a method named `Assembly!Namespace.Type::Method`, its
//! parsing and finding in a module's metadata; [`MethodTargets`], a list
//! matched against modules as they load; [`WrapWhen`], when a module's
//! targets can be wrapped.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use std::sync::{Mutex, MutexGuard};

use crate::facade::{MetadataImport, ProfilerInfo};
use crate::metadata::{mdMethodDef, CLDB_E_RECORD_NOTFOUND};
use crate::profiling::{ModuleID, COR_PRF_MODULE_FLAGS, COR_PRF_MODULE_NGEN};
use crate::{Error, E_INVALIDARG, E_NOINTERFACE, HRESULT};

/// When a target method can be given its wrapped IL, by what the runtime
/// does at the method's first call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WrapWhen {
    /// The runtime JIT-compiles the method at its first call: wrap it in
    /// `jit_compilation_started` ([`CallTarget::wrap_in_module`](super::CallTarget::wrap_in_module), then
    /// [`ProfilerInfo::set_il_function_body`]).
    FirstJit,
    /// The module is precompiled (ReadyToRun): its methods' precompiled
    /// code runs without a JIT compilation (and so without
    /// `jit_compilation_started`) until tiered compilation compiles a hot
    /// one again, if ever. Wrap by ReJIT: the IL made in
    /// `module_load_finished`, kept in a
    /// [`RejitBodies`](crate::instrument::RejitBodies), requested with
    /// [`ProfilerInfo::request_rejit_with_inliners`] and
    /// [`COR_PRF_REJIT_BLOCK_INLINING`](crate::profiling::COR_PRF_REJIT_BLOCK_INLINING),
    /// which also compiles again the methods whose precompiled code
    /// inlined it.
    ReJit,
}

impl WrapWhen {
    /// How the targets of `module` are wrapped: [`ReJit`](WrapWhen::ReJit)
    /// when the module's flags (`GetModuleInfo2`, `ICorProfilerInfo3`) have
    /// `COR_PRF_MODULE_NGEN`, which CoreCLR sets for a ReadyToRun module
    /// (`ProfToEEInterfaceImpl::GetModuleFlags`,
    /// src/coreclr/vm/proftoeeinterfaceimpl.cpp: `pModule->IsReadyToRun()`
    /// gives `COR_PRF_MODULE_DISK | COR_PRF_MODULE_NGEN`), otherwise
    /// [`FirstJit`](WrapWhen::FirstJit). A runtime without version 3
    /// has no precompiled modules to report: `FirstJit`.
    pub fn of_module(info: &ProfilerInfo, module: ModuleID) -> Result<WrapWhen, HRESULT> {
        let Some(v3) = info.v3() else {
            return Ok(WrapWhen::FirstJit);
        };
        let mut flags: u32 = 0;
        // SAFETY: every out-pointer but the flags' is null, which
        // GetModuleInfo2 allows (it writes only where asked); `flags` is a
        // local.
        unsafe {
            v3.GetModuleInfo2(
                module,
                core::ptr::null_mut(),
                0,
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                &mut flags,
            )
        }
        .ok()?;
        Ok(WrapWhen::of_flags(COR_PRF_MODULE_FLAGS(flags)))
    }

    /// [`of_module`](Self::of_module)'s rule on flags already read.
    pub fn of_flags(flags: COR_PRF_MODULE_FLAGS) -> WrapWhen {
        if flags.contains(COR_PRF_MODULE_NGEN) {
            WrapWhen::ReJit
        } else {
            WrapWhen::FirstJit
        }
    }
}

/// One target of instrumentation: `Assembly!Namespace.Type::Method` (every
/// overload of `Method`), optionally with its own integration type,
/// `Assembly!Namespace.Type::Method=Namespace.IntegrationType`. Nested types join their names with `+`
/// (`Assembly!N.Outer+Inner::M`); a generic type is named as in metadata,
/// with its arity and without type arguments (``Shop!WebShop.Repository`1::Find``,
/// every instantiation). How this form relates to
/// [`ProfilerInfo::function_name`] (``WebShop.Repository`1.Find``) and
/// [`ProfilerInfo::instantiated_function_name`]
/// (`WebShop.Repository<System.__Canon>.Find`): docs/hooks.md, "One method, three names".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MethodTarget {
    /// The assembly's simple name.
    pub assembly: String,
    /// The type's full name.
    pub type_name: String,
    /// The method's name.
    pub method: String,
    /// The integration type named after `=`, if any (otherwise the
    /// caller's default, [`DEFAULT_INTEGRATION`](super::DEFAULT_INTEGRATION) in the example).
    pub integration: Option<String>,
}

impl fmt::Display for MethodTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}!{}::{}", self.assembly, self.type_name, self.method)?;
        match &self.integration {
            Some(i) => write!(f, "={i}"),
            None => Ok(()),
        }
    }
}

impl MethodTarget {
    /// Parses one `Assembly!Namespace.Type::Method[=Namespace.IntegrationType]`.
    pub fn parse(text: &str) -> Result<MethodTarget, Error> {
        let text = text.trim();
        let bad = |why: &str| {
            Error::new(
                E_INVALIDARG,
                format!("bad target {text:?}: {why} (expected Assembly!Namespace.Type::Method)"),
            )
        };
        let (target, integration) = match text.split_once('=') {
            Some((t, i)) => {
                let i = i.trim();
                if i.is_empty() || i.contains(['!', ':', ';', '=', '\0', ' ']) {
                    return Err(bad("an empty or malformed integration type after `=`"));
                }
                (t.trim(), Some(String::from(i)))
            }
            None => (text, None),
        };
        let (assembly, rest) = target.split_once('!').ok_or_else(|| bad("no `!`"))?;
        let (type_name, method) = rest.rsplit_once("::").ok_or_else(|| bad("no `::`"))?;
        let ok = |s: &str| !s.is_empty() && !s.contains(['!', ':', ';', '\0']);
        if !ok(assembly) || !ok(type_name) || !ok(method) {
            return Err(bad("an empty or malformed part"));
        }
        Ok(MethodTarget {
            assembly: assembly.into(),
            type_name: type_name.into(),
            method: method.into(),
            integration,
        })
    }

    /// Parses a `;`-separated list (empty items are skipped; an empty list
    /// is an error).
    pub fn parse_list(text: &str) -> Result<Vec<MethodTarget>, Error> {
        let targets = text
            .split(';')
            .filter(|s| !s.trim().is_empty())
            .map(MethodTarget::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if targets.is_empty() {
            return Err(Error::new(E_INVALIDARG, "no targets"));
        }
        Ok(targets)
    }

    /// What to say when the type is not found and looks like a name from
    /// [`ProfilerInfo::instantiated_function_name`] (`Repository<System.__Canon>`): a
    /// target names the type as metadata does, with its arity.
    fn hint(&self) -> &'static str {
        // Compiler-generated names (`<>c`, `<Main>d__0`) start with `<`.
        let generic = self
            .type_name
            .split(['+', '.'])
            .any(|part| !part.starts_with('<') && part.contains('<'));
        if generic {
            "; name a generic type with its arity, as metadata does: Repository`1, not Repository<T>"
        } else {
            ""
        }
    }

    /// The MethodDefs of every overload of this target in a module's
    /// metadata; `Err` says what is missing.
    pub fn find(&self, import: &MetadataImport) -> Result<Vec<mdMethodDef>, Error> {
        let mut typedef = None;
        for part in self.type_name.split('+') {
            typedef =
                Some(import.find_type_def(part, typedef).map_err(|e| {
                    e.context(format!("no type {}{}", self.type_name, self.hint()))
                })?);
        }
        let typedef = typedef.ok_or_else(|| {
            Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!("no type {}", self.type_name),
            )
        })?;
        let methods = import
            .methods(typedef)
            .map_err(|e| e.context(format!("cannot list the methods of {}", self.type_name)))?;
        let mut found = Vec::new();
        for m in methods {
            let props = import.method_props(m)?;
            if props.name == self.method {
                found.push(m);
            }
        }
        if found.is_empty() {
            return Err(Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!("no method {} in {}", self.method, self.type_name),
            ));
        }
        Ok(found)
    }

    /// Finds this target among the modules loaded now (`EnumModules`), as
    /// a profiler that attaches to a running process must: the first
    /// module whose assembly is named [`assembly`](MethodTarget::assembly),
    /// and the MethodDefs [`find`](MethodTarget::find) answers in it.
    /// Modules whose name cannot be read are skipped; `Err` says what is
    /// missing.
    pub fn find_loaded(&self, info: &ProfilerInfo) -> Result<(ModuleID, Vec<mdMethodDef>), Error> {
        let modules = info.modules()?;
        for module in modules {
            let Ok(module_info) = info.module_info(module) else {
                continue;
            };
            let Ok(assembly) = info.assembly_info(module_info.assembly) else {
                continue;
            };
            if assembly.name != self.assembly {
                continue;
            }
            let import = info
                .module_metadata(module)
                .map_err(|e| e.context(format!("metadata of {}", self.assembly)))?
                .ok_or_else(|| {
                    Error::new(E_NOINTERFACE, format!("{} has no metadata", self.assembly))
                })?;
            return Ok((module, self.find(&import)?));
        }
        Err(Error::new(
            CLDB_E_RECORD_NOTFOUND,
            format!("no loaded assembly named {}", self.assembly),
        ))
    }
}

/// A list of [`MethodTarget`]s matched against modules as the runtime
/// meets them (in `module_load_finished` or `jit_compilation_started`):
/// each module is looked up once and its answer kept, and the targets
/// found in some module are remembered, so that those never found can be
/// reported at shutdown. `Send + Sync`: callbacks on any thread share it.
#[derive(Debug)]
pub struct MethodTargets {
    targets: Vec<MethodTarget>,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// The target methods of every module looked up, each with the index
    /// of the (first) target that named it.
    modules: BTreeMap<ModuleID, Vec<(mdMethodDef, usize)>>,
    /// Per target: found in some module.
    found: Vec<bool>,
}

impl MethodTargets {
    /// Matches `targets` (as [`MethodTarget::parse_list`] gives them).
    pub fn new(targets: Vec<MethodTarget>) -> MethodTargets {
        let found = vec![false; targets.len()];
        MethodTargets {
            targets,
            seen: Mutex::new(Seen {
                modules: BTreeMap::new(),
                found,
            }),
        }
    }

    /// The targets, in the order given.
    pub fn targets(&self) -> &[MethodTarget] {
        &self.targets
    }

    fn lock(&self) -> MutexGuard<'_, Seen> {
        crate::support::sync::lock(&self.seen)
    }

    /// The target methods `module` defines (every overload). The first
    /// call for a module asks the runtime for its assembly's name
    /// (`GetModuleInfo` and `GetAssemblyInfo`, known from
    /// `module_load_finished` on), and only when a target names that
    /// assembly reads the module's metadata, [`MethodTarget::find`] for
    /// each of its targets; later calls answer from memory. A module
    /// without metadata has no targets.
    ///
    /// `unknown` hears, once per module, of each target of the module's
    /// assembly that the module does not define, and why (it is called
    /// after the internal lock is released).
    pub fn methods_of(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        if let Some(known) = self.lock().modules.get(&module) {
            return known.iter().map(|m| m.0).collect();
        }
        // The metadata is opened only for a target's assembly (see
        // `assembly_name`: opening it slows the runtime's own reads).
        let assembly =
            crate::instrument::assembly_name::assembly_of(info, module).unwrap_or_default();
        let named = self.targets.iter().any(|t| t.assembly == assembly);
        let import = named.then(|| info.module_metadata(module).ok().flatten());
        match import.flatten() {
            Some(import) => self.methods_in(module, &assembly, &import, unknown),
            None => self.remember(module, Vec::new(), &[], Vec::new(), unknown),
        }
    }

    /// As [`methods_of`](Self::methods_of), with the module's assembly
    /// name and metadata at hand.
    pub fn methods_in(
        &self,
        module: ModuleID,
        assembly: &str,
        import: &MetadataImport,
        unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        if let Some(known) = self.lock().modules.get(&module) {
            return known.iter().map(|m| m.0).collect();
        }
        let (mut methods, mut found, mut missing) = (Vec::new(), Vec::new(), Vec::new());
        for (i, target) in self.targets.iter().enumerate() {
            if target.assembly != assembly {
                continue;
            }
            match target.find(import) {
                Ok(m) => {
                    methods.extend(m.into_iter().map(|m| (m, i)));
                    found.push(i);
                }
                Err(why) => missing.push((i, why)),
            }
        }
        self.remember(module, methods, &found, missing, unknown)
    }

    /// Keeps the answer for `module` unless another thread kept one first
    /// (then that one is the answer, and this one's reports are dropped).
    fn remember(
        &self,
        module: ModuleID,
        methods: Vec<(mdMethodDef, usize)>,
        found: &[usize],
        missing: Vec<(usize, Error)>,
        mut unknown: impl FnMut(&MethodTarget, &Error),
    ) -> Vec<mdMethodDef> {
        {
            let mut seen = self.lock();
            if let Some(known) = seen.modules.get(&module) {
                return known.iter().map(|m| m.0).collect();
            }
            seen.modules.insert(module, methods.clone());
            for &i in found {
                seen.found[i] = true;
            }
        }
        for (i, why) in missing {
            unknown(&self.targets[i], &why);
        }
        methods.into_iter().map(|m| m.0).collect()
    }

    /// The target that named `method` of `module` (the first, when several
    /// did), once [`methods_of`](Self::methods_of) or
    /// [`methods_in`](Self::methods_in) looked the module up.
    pub fn target_of(&self, module: ModuleID, method: mdMethodDef) -> Option<&MethodTarget> {
        let i = self
            .lock()
            .modules
            .get(&module)?
            .iter()
            .find(|m| m.0 == method)?
            .1;
        self.targets.get(i)
    }

    /// Forgets what was found in `module` (call it from
    /// `module_unload_started`: the runtime may reuse the ID). Targets
    /// found there still count as found.
    pub fn forget_module(&self, module: ModuleID) {
        self.lock().modules.remove(&module);
    }

    /// The targets not found in any module looked up so far.
    pub fn never_found(&self) -> Vec<&MethodTarget> {
        let seen = self.lock();
        self.targets
            .iter()
            .zip(&seen.found)
            .filter(|(_, &found)| !found)
            .map(|(t, _)| t)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_scope::{FakeScope, TD_PUBLIC};
    use crate::metadata::{mdToken, IMetaDataImport};
    use alloc::string::ToString;

    #[test]
    fn targets_parse_and_print_back() {
        let t = MethodTarget::parse(" App!N.S.Type::Run ").unwrap();
        assert_eq!(
            t,
            MethodTarget {
                assembly: "App".into(),
                type_name: "N.S.Type".into(),
                method: "Run".into(),
                integration: None,
            }
        );
        assert_eq!(t.to_string(), "App!N.S.Type::Run");
        let nested = MethodTarget::parse("App!N.Outer+Inner::.ctor").unwrap();
        assert_eq!(nested.type_name, "N.Outer+Inner");
        assert_eq!(nested.method, ".ctor");
        let list = MethodTarget::parse_list("A!T::M;; B!U::N ;").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1].assembly, "B");
    }

    #[test]
    fn targets_may_name_their_integration() {
        let t = MethodTarget::parse("App!N.T::M = My.Integration").unwrap();
        assert_eq!(t.integration.as_deref(), Some("My.Integration"));
        assert_eq!((t.type_name.as_str(), t.method.as_str()), ("N.T", "M"));
        assert_eq!(t.to_string(), "App!N.T::M=My.Integration");
        assert_eq!(MethodTarget::parse("App!N.T::M").unwrap().integration, None);
        for bad in [
            "App!N.T::M=",
            "App!N.T::M=a b",
            "App!N.T::M=A=B",
            "App!N.T::M=A::B",
        ] {
            let err = MethodTarget::parse(bad).unwrap_err().message().to_string();
            assert!(err.contains("integration type after `=`"), "{bad}: {err}");
        }
    }

    #[test]
    fn bad_targets_say_what_is_wrong() {
        for (text, why) in [
            ("App.N.T::M", "no `!`"),
            ("App!N.T.M", "no `::`"),
            ("!N.T::M", "an empty or malformed part"),
            ("App!::M", "an empty or malformed part"),
            ("App!N.T::", "an empty or malformed part"),
            ("App!N!T::M", "an empty or malformed part"),
        ] {
            let err = MethodTarget::parse(text).unwrap_err().message().to_string();
            assert!(err.contains(why), "{text}: {err}");
            assert!(err.contains("expected Assembly!Namespace.Type::Method"));
        }
        assert_eq!(
            MethodTarget::parse_list(" ; ").unwrap_err().message(),
            "no targets"
        );
        assert!(
            MethodTarget::parse_list("A!T::M;bad").is_err(),
            "one bad item fails the list"
        );
    }

    /// A module's metadata: type `N.Outer` (methods `Run` and two
    /// overloads of `Over`, rows 1-3) with a nested type `Inner` (method
    /// `Deep`, row 4).
    fn scope() -> FakeScope {
        let mut scope = FakeScope::new();
        scope.type_def("<Module>", 0, mdToken(0));
        let outer = scope.type_def("N.Outer", TD_PUBLIC, mdToken(0));
        let inner = scope.nested("Inner", outer);
        let void = [0x00, 0x00, 0x01]; // static void ()
        let int = [0x00, 0x01, 0x01, 0x08]; // static void (int)
        scope.method(outer, "Run", 0x16, &void);
        scope.method(outer, "Over", 0x16, &void);
        scope.method(outer, "Over", 0x16, &int);
        scope.method(inner, "Deep", 0x16, &void);
        scope
    }

    #[test]
    fn find_answers_every_overload_and_says_what_is_missing() {
        let import = scope().import();
        let find = |text: &str| MethodTarget::parse(text).unwrap().find(&import);
        assert_eq!(find("A!N.Outer::Run"), Ok(vec![mdMethodDef::from_rid(1)]));
        assert_eq!(
            find("A!N.Outer::Over"),
            Ok(vec![mdMethodDef::from_rid(2), mdMethodDef::from_rid(3)])
        );
        assert_eq!(
            find("A!N.Outer+Inner::Deep"),
            Ok(vec![mdMethodDef::from_rid(4)])
        );
        assert_eq!(
            find("A!N.Outer::Nope").unwrap_err().message(),
            "no method Nope in N.Outer"
        );
        // `Deep` is not a method of the enclosing type.
        assert_eq!(
            find("A!N.Outer::Deep").unwrap_err().message(),
            "no method Deep in N.Outer"
        );
        let err = find("A!N.Nowhere::Run").unwrap_err().message().to_string();
        assert!(err.starts_with("no type N.Nowhere: "), "{err}");
        let err = find("A!N.Outer+Nope::Run")
            .unwrap_err()
            .message()
            .to_string();
        assert!(err.starts_with("no type N.Outer+Nope: "), "{err}");
        assert!(!err.contains("arity"), "{err}");
        // A name copied from a call tree gets a hint; a compiler-generated
        // name (starting with `<`) does not.
        for generic in [
            "A!N.Outer<System.__Canon>::Run",
            "A!N.Outer+Inner<System.Int32>::Deep",
        ] {
            let err = find(generic).unwrap_err().message().to_string();
            assert!(err.starts_with("no type N.Outer"), "{err}");
            assert!(
                err.contains("; name a generic type with its arity, as metadata does: Repository`1, not Repository<T>"),
                "{err}"
            );
        }
        let err = find("A!N.Outer+<>c::Run")
            .unwrap_err()
            .message()
            .to_string();
        assert!(!err.contains("arity"), "{err}");
    }

    #[test]
    fn method_targets_look_each_module_up_once_and_remember_what_was_found() {
        let import = scope().import();
        let targets = MethodTargets::new(
            MethodTarget::parse_list(
                "A!N.Outer::Over;A!N.Outer+Inner::Deep;A!N.Outer::Nope;B!N.Outer::Run;A!N.Nowhere::Run",
            )
            .unwrap(),
        );
        let (m1, m2, m3) = (ModuleID(0x100), ModuleID(0x200), ModuleID(0x300));
        let mut unknown = Vec::new();
        let methods = targets.methods_in(m1, "A", &import, |t, why| {
            unknown.push(alloc::format!("{t}: {}", why.message()))
        });
        let rids: Vec<u32> = methods.iter().map(|m| m.0 & 0xFF_FFFF).collect();
        assert_eq!(rids, [2, 3, 4], "both overloads of Over, then Deep");
        assert_eq!(unknown.len(), 2, "{unknown:?}");
        assert_eq!(unknown[0], "A!N.Outer::Nope: no method Nope in N.Outer");
        assert!(unknown[1].starts_with("A!N.Nowhere::Run: no type N.Nowhere"));

        // Asked again (even with other metadata): the same answer, no reports.
        let again = targets.methods_in(m1, "B", &import, |t, _| panic!("{t} reported twice"));
        assert_eq!(again, methods);
        // A module of another assembly has only that assembly's targets.
        let other = targets.methods_in(m2, "B", &import, |t, _| panic!("{t}"));
        assert_eq!(other, [mdMethodDef::from_rid(1)]);
        let none = targets.methods_in(m3, "C", &import, |t, _| panic!("{t}"));
        assert!(none.is_empty());

        let never: Vec<String> = targets
            .never_found()
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(never, ["A!N.Outer::Nope", "A!N.Nowhere::Run"]);
        assert_eq!(targets.targets().len(), 5);

        // A forgotten module is looked up afresh; found stays found.
        targets.forget_module(m2);
        let fresh = targets.methods_in(m2, "C", &import, |t, _| panic!("{t}"));
        assert!(fresh.is_empty());
        assert_eq!(targets.never_found().len(), 2);
    }

    /// Writes `text` by the length-then-buffer protocol of the string calls.
    ///
    /// # Safety
    ///
    /// `buf` is null or has room for `cap` characters; `needed` is valid.
    unsafe fn answer(text: &str, cap: crate::ULONG, needed: *mut crate::ULONG, buf: *mut u16) {
        let units: Vec<u16> = text.encode_utf16().chain([0]).collect();
        // SAFETY: forwarded contract.
        unsafe {
            *needed = units.len() as crate::ULONG;
            if !buf.is_null() {
                let n = units.len().min(cap as usize);
                core::ptr::copy_nonoverlapping(units.as_ptr(), buf, n);
            }
        }
    }

    use crate::profiling::{
        AppDomainID, AssemblyID, ICorProfilerInfo2_Impl, ICorProfilerInfo3, ICorProfilerInfo3_Impl,
        ICorProfilerInfo_Impl, ICorProfilerModuleEnum, ICorProfilerModuleEnum_Impl,
    };

    /// The modules a fake runtime has loaded, in `EnumModules` order: the
    /// assembly each belongs to (`None`: `GetModuleInfo` fails) and whether
    /// it has metadata (the [`scope`] fake).
    const LOADED: [(usize, Option<&str>, bool); 5] = [
        (0x100, Some("Other"), true),
        (0x200, None, true),
        (0x300, Some("A"), true),
        (0x400, Some("A"), true),
        (0x500, Some("Bare"), false),
    ];

    struct Runtime;
    struct Modules(std::sync::Mutex<usize>);

    impl ICorProfilerModuleEnum_Impl for Modules {
        unsafe fn Next(
            &self,
            celt: crate::ULONG,
            ids: *mut ModuleID,
            fetched: *mut crate::ULONG,
        ) -> HRESULT {
            let mut next = self.0.lock().unwrap();
            let mut n = 0;
            while n < celt as usize && *next < LOADED.len() {
                // SAFETY: the facade passes room for `celt` IDs.
                unsafe { *ids.add(n) = ModuleID(LOADED[*next].0) };
                n += 1;
                *next += 1;
            }
            // SAFETY: a valid out-pointer.
            unsafe { *fetched = n as crate::ULONG };
            if n == celt as usize {
                crate::S_OK
            } else {
                crate::S_FALSE
            }
        }
    }

    fn loaded(module: ModuleID) -> Option<(usize, Option<&'static str>, bool)> {
        LOADED.iter().copied().find(|m| m.0 == module.0)
    }

    impl ICorProfilerInfo_Impl for Runtime {
        unsafe fn GetModuleInfo(
            &self,
            module: ModuleID,
            _base: *mut *const crate::BYTE,
            cap: crate::ULONG,
            needed: *mut crate::ULONG,
            name: *mut u16,
            assembly: *mut AssemblyID,
        ) -> HRESULT {
            let Some((id, Some(_), _)) = loaded(module) else {
                return crate::E_FAIL;
            };
            // SAFETY: valid out-pointers and a buffer of `cap` characters.
            unsafe {
                *assembly = AssemblyID(id + 1);
                answer("/m.dll", cap, needed, name);
            }
            crate::S_OK
        }
        unsafe fn GetAssemblyInfo(
            &self,
            assembly: AssemblyID,
            cap: crate::ULONG,
            needed: *mut crate::ULONG,
            name: *mut u16,
            _domain: *mut AppDomainID,
            _module: *mut ModuleID,
        ) -> HRESULT {
            let Some((_, Some(text), _)) = loaded(ModuleID(assembly.0 - 1)) else {
                return crate::E_FAIL;
            };
            // SAFETY: as above.
            unsafe { answer(text, cap, needed, name) };
            crate::S_OK
        }
        unsafe fn GetModuleMetaData(
            &self,
            module: ModuleID,
            _flags: crate::DWORD,
            _iid: crate::REFIID,
            out: *mut *mut core::ffi::c_void,
        ) -> HRESULT {
            let has = loaded(module).is_some_and(|m| m.2);
            let import: Option<IMetaDataImport> = has.then(|| scope().raw());
            // SAFETY: a valid out-pointer; it takes over the reference.
            unsafe { *out = import.map_or(core::ptr::null_mut(), |i| i.into_raw()) };
            if has {
                crate::S_OK
            } else {
                crate::S_FALSE
            }
        }
    }
    impl ICorProfilerInfo2_Impl for Runtime {}
    impl ICorProfilerInfo3_Impl for Runtime {
        unsafe fn EnumModules(&self, out: *mut *mut core::ffi::c_void) -> HRESULT {
            let modules: ICorProfilerModuleEnum = crate::export(Modules(Default::default()));
            // SAFETY: a valid out-pointer; it takes over the reference.
            unsafe { *out = modules.into_raw() };
            crate::S_OK
        }
    }

    #[test]
    fn find_loaded_takes_the_first_module_of_the_assembly() {
        let exported: ICorProfilerInfo3 = crate::export(Runtime);
        let unknown: crate::IUnknown = exported.cast().unwrap();
        let info = ProfilerInfo::from_unknown(&unknown).unwrap();
        let find = |text: &str| MethodTarget::parse(text).unwrap().find_loaded(&info);
        // 0x200 cannot be read and is skipped; 0x300 comes before 0x400.
        assert_eq!(
            find("A!N.Outer::Over"),
            Ok((
                ModuleID(0x300),
                vec![mdMethodDef::from_rid(2), mdMethodDef::from_rid(3)]
            ))
        );
        assert_eq!(
            find("Other!N.Outer::Run"),
            Ok((ModuleID(0x100), vec![mdMethodDef::from_rid(1)]))
        );
        assert_eq!(
            find("Z!N.Outer::Run").unwrap_err().message(),
            "no loaded assembly named Z"
        );
        assert_eq!(
            find("Bare!N.Outer::Run").unwrap_err().message(),
            "Bare has no metadata"
        );
        assert_eq!(
            find("A!N.Outer::Nope").unwrap_err().message(),
            "no method Nope in N.Outer"
        );
    }

    #[test]
    fn method_targets_are_shared_between_threads() {
        fn check<T: Send + Sync>() {}
        check::<MethodTargets>();
    }

    #[test]
    fn precompiled_modules_are_wrapped_by_rejit() {
        use crate::profiling::{COR_PRF_MODULE_DISK, COR_PRF_MODULE_FLAT_LAYOUT};
        // What CoreCLR answers for a ReadyToRun module (DISK | NGEN) and for
        // an IL-only one loaded from disk, mapped or flat.
        assert_eq!(
            WrapWhen::of_flags(COR_PRF_MODULE_DISK | COR_PRF_MODULE_NGEN),
            WrapWhen::ReJit
        );
        assert_eq!(WrapWhen::of_flags(COR_PRF_MODULE_DISK), WrapWhen::FirstJit);
        assert_eq!(
            WrapWhen::of_flags(COR_PRF_MODULE_DISK | COR_PRF_MODULE_FLAT_LAYOUT),
            WrapWhen::FirstJit
        );
        assert_eq!(COR_PRF_MODULE_NGEN.0, 0x2, "corprof.idl");
    }
}
