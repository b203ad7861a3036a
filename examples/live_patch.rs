//! Live patching: an attach-time profiler that changes one integer constant
//! of one method in a running process by ReJIT, and changes it back later.
//!
//! Its client data (the last argument of the `attach` example) is
//!
//! ```text
//! Assembly!Namespace.Type::Method OLD NEW [SECONDS]
//! ```
//!
//! While attaching it finds `Method` of `Namespace.Type` in the loaded
//! assembly named `Assembly`, checks that its IL loads the constant `OLD`
//! (any `ldc.i4` form); once attached it asks the runtime to JIT-compile it again
//! (`RequestReJIT`); the new IL, which it supplies in
//! `get_rejit_parameters`, loads `NEW` instead at the first such load
//! (encoded in the shortest `ldc.i4` form). Calls that start after the
//! ReJIT run the new code; the process does not restart. With `SECONDS`, it
//! calls `RequestRevert` that many seconds later, and the original code runs
//! again.
//!
//! ```sh
//! cargo build --example attach --example live_patch
//! target/debug/examples/attach PID target/debug/examples/liblive_patch.so \
//!     7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A 'Attach!E2E.Attach.Program::Value 41 42 2'
//! ```
//!
//! Messages go to the target's stderr, each line starting with
//! `live_patch: `. Client data that does not parse, and a method that is
//! not found or that has no such constant, are refused: `initialize_for_attach`
//! (which finds the method and makes its new IL before it accepts) fails
//! with `E_INVALIDARG` after saying why, so the runtime unloads the
//! profiler and the attach fails; the target runs on untouched.
//!
//! ReJIT after attach needs `COR_PRF_ENABLE_REJIT`, which CoreCLR allows
//! after attach since 3.0 (`ProfAPI_RejitOnAttach`, on by default); the
//! e2e test `tests/e2e_attach.rs` shows it on 3.1. The method must not have
//! been inlined into its callers (the test's is `NoInlining`): inlined
//! copies keep the old constant.

use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;

use corprof::cil::{MethodBody, OpCode};
use corprof::facade::{MetadataImport, Profiler, ProfilerInfo, Result, ShutdownFlag};
use corprof::instrument::{MethodTarget, RejitBodies};
use corprof::metadata::mdMethodDef;
use corprof::profiling::{
    FunctionID, ICorProfilerFunctionControl, ModuleID, ReJITID, COR_PRF_ENABLE_REJIT,
};
use corprof::{ComRef, E_INVALIDARG, HRESULT};

const USAGE: &str = "expected `Assembly!Namespace.Type::Method OLD NEW [SECONDS]`";

/// The parsed client data.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Patch {
    target: MethodTarget,
    old: i32,
    new: i32,
    revert_after: Option<Duration>,
}

/// Parses `Assembly!Namespace.Type::Method OLD NEW [SECONDS]`.
fn parse(data: &[u8]) -> std::result::Result<Patch, String> {
    let text = std::str::from_utf8(data).map_err(|_| "the client data is not UTF-8".to_string())?;
    let words: Vec<&str> = text.split_whitespace().collect();
    let (target, old, new, seconds) = match words.as_slice() {
        [target, old, new] => (*target, *old, *new, None),
        [target, old, new, seconds] => (*target, *old, *new, Some(*seconds)),
        _ => return Err(format!("{} words instead of 3 or 4", words.len())),
    };
    let int = |word: &str| {
        word.parse::<i32>()
            .map_err(|_| format!("{word:?} is not a 32-bit integer"))
    };
    let revert_after = match seconds {
        None => None,
        Some(word) => match word.parse::<f64>() {
            Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Some(Duration::from_secs_f64(s)),
            _ => {
                return Err(format!(
                    "{word:?} is not a number of seconds (0 < s <= 86400)"
                ))
            }
        },
    };
    Ok(Patch {
        target: MethodTarget::parse(target).map_err(|e| e.message().to_owned())?,
        old: int(old)?,
        new: int(new)?,
        revert_after,
    })
}

/// The patched IL of a body: the first load of `old` loads `new`.
fn patched(
    original: &[u8],
    patch: &Patch,
    import: &MetadataImport,
) -> std::result::Result<Vec<u8>, String> {
    let mut body = MethodBody::decode(original).map_err(|e| format!("decode: {e}"))?;
    let at = body
        .find(|ins| ins.i4_constant() == Some(patch.old))
        .ok_or_else(|| format!("no `ldc.i4 {}` in {}", patch.old, patch.target))?;
    let (opcode, operand) = OpCode::ldc_i4(patch.new);
    body.replace(at, opcode, operand)
        .map_err(|e| format!("replace: {e}"))?;
    body.update_max_stack(|token| import.stack_sig(token))
        .map_err(|e| format!("max stack: {e}"))?;
    let bytes = body.encode().map_err(|e| format!("encode: {e}"))?;
    MethodBody::decode(&bytes).map_err(|e| format!("re-decode: {e}"))?;
    Ok(bytes)
}

fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "live_patch: {text}"); // stderr gone: nothing to do
}

#[derive(Default)]
struct Shared {
    patch: OnceLock<Patch>,
    /// The patched IL of the method, once found and checked.
    bodies: RejitBodies,
    shut_down: ShutdownFlag,
}

#[derive(Default)]
struct LivePatch {
    shared: Arc<Shared>,
}

/// Finds the one method `patch` names among the loaded modules.
fn find(
    info: &ProfilerInfo,
    patch: &Patch,
) -> std::result::Result<(ModuleID, mdMethodDef), String> {
    let (module, methods) = patch.target.find_loaded(info).map_err(|e| e.to_string())?;
    match methods.as_slice() {
        [method] => Ok((module, *method)),
        _ => Err(format!(
            "{} is overloaded ({} methods)",
            patch.target,
            methods.len()
        )),
    }
}

/// Finds the method and makes its patched IL: what `initialize_for_attach`
/// checks before it accepts the attach.
fn prepare(
    info: &ProfilerInfo,
    patch: &Patch,
) -> std::result::Result<(ModuleID, mdMethodDef, Vec<u8>), String> {
    let (module, method) = find(info, patch)?;
    let il = info
        .il_function_body(module, method)
        .map_err(|e| format!("GetILFunctionBody: {e}"))?;
    let import = info
        .module_metadata(module)
        .map_err(|e| format!("metadata: {e}"))?
        .ok_or("no metadata")?;
    Ok((module, method, patched(&il, patch, &import)?))
}

impl Shared {
    /// The profiler's own thread: the runtime wants `RequestReJIT` and
    /// `RequestRevert` called from such a thread, not from a callback.
    fn run(&self, info: &ProfilerInfo) {
        let Some(patch) = self.patch.get() else {
            return;
        };
        // The IL was patched and kept in `initialize_for_attach`.
        match self.bodies.request_rejit(info) {
            Ok(_) => log(format_args!(
                "ReJIT requested: {} {} -> {}",
                patch.target, patch.old, patch.new
            )),
            Err(error) => {
                log(format_args!("RequestReJIT failed: {error}"));
                return;
            }
        }
        let Some(after) = patch.revert_after else {
            return;
        };
        if !self.shut_down.sleep(after) {
            return;
        }
        match self.bodies.request_revert(info) {
            Ok(statuses) if statuses.iter().all(|s| s.is_ok()) => {
                log(format_args!("reverted: {}", patch.target))
            }
            Ok(statuses) => log(format_args!("RequestRevert statuses: {statuses:?}")),
            Err(error) => log(format_args!("RequestRevert failed: {error}")),
        }
    }
}

impl Profiler for LivePatch {
    fn initialize(&self, _info: &ProfilerInfo) -> Result<()> {
        log(format_args!(
            "live_patch only attaches to running processes; not loading"
        ));
        Err(E_INVALIDARG.into())
    }

    fn initialize_for_attach(&self, info: &ProfilerInfo, client_data: &[u8]) -> Result<()> {
        let patch = match parse(client_data) {
            Ok(patch) => patch,
            Err(why) => {
                log(format_args!(
                    "bad client data {:?}: {why}; {USAGE}",
                    String::from_utf8_lossy(client_data)
                ));
                return Err(E_INVALIDARG.into());
            }
        };
        // Patch the IL before accepting: a method that is not there, or
        // that has no such constant, refuses the attach, so the trigger
        // hears of it and the target runs on untouched (CoreCLR 3.1 allows
        // EnumModules, GetModuleMetaData and GetILFunctionBody here:
        // measured by tests/e2e_attach.rs).
        let (module, method, bytes) = match prepare(info, &patch) {
            Ok(prepared) => prepared,
            Err(why) => {
                log(format_args!("cannot patch, not attaching: {why}"));
                return Err(E_INVALIDARG.into());
            }
        };
        log(format_args!(
            "found in initialize_for_attach: {} loads {} ({}-byte new body)",
            patch.target,
            patch.old,
            bytes.len()
        ));
        info.set_event_mask_for_attach(COR_PRF_ENABLE_REJIT)?;
        // SAFETY: the method's own IL with one constant load replaced by
        // another (same stack effect), re-encoded and decoded again.
        unsafe { self.shared.bodies.insert(module, method, bytes, ()) };
        log(format_args!(
            "attached: {}",
            String::from_utf8_lossy(client_data)
        ));
        let _ = self.shared.patch.set(patch); // initialize_for_attach runs once
        Ok(())
    }

    fn profiler_attach_complete(&self, info: &ProfilerInfo) -> Result<()> {
        let shared = Arc::clone(&self.shared);
        let info = info.clone();
        let spawned = thread::Builder::new()
            .name("live_patch".into())
            .spawn(move || shared.run(&info));
        if let Err(error) = spawned {
            log(format_args!("cannot start the ReJIT thread: {error}"));
        }
        Ok(())
    }

    fn get_rejit_parameters(
        &self,
        _info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        control: ComRef<'_, ICorProfilerFunctionControl>,
    ) -> Result<()> {
        let Some(patch) = self.shared.patch.get() else {
            return Ok(());
        };
        match self.shared.bodies.set_il(module, method, control.into()) {
            Some(((), Ok(()))) => log(format_args!(
                "new IL set: {} loads {}",
                patch.target, patch.new
            )),
            Some(((), Err(error))) => log(format_args!("SetILFunctionBody failed: {error}")),
            None => {}
        }
        Ok(())
    }

    fn rejit_compilation_finished(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _rejit: ReJITID,
        status: HRESULT,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        let name = info
            .function_name(function)
            .map_or_else(|_| format!("{function:?}"), |n| n.to_string());
        log(format_args!("ReJIT compiled {name}: {status:?}"));
        Ok(())
    }

    fn rejit_error(
        &self,
        _info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        _function: FunctionID,
        status: HRESULT,
    ) -> Result<()> {
        log(format_args!(
            "ReJIT error for {method:?} in {module:?}: {status}"
        ));
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.shared.shut_down.raise();
        Ok(())
    }
}

corprof::profiler!(LivePatch, "7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A");

#[cfg(test)]
mod tests {
    use super::*;
    use corprof::cil::Operand;

    #[test]
    fn client_data_parses() {
        let patch = parse(b"Attach!E2E.Attach.Program::Value 41 42 2.5").unwrap();
        assert_eq!(patch.target.assembly, "Attach");
        assert_eq!(patch.target.type_name, "E2E.Attach.Program");
        assert_eq!(patch.target.method, "Value");
        assert_eq!((patch.old, patch.new), (41, 42));
        assert_eq!(patch.revert_after, Some(Duration::from_millis(2500)));
        assert_eq!(parse(b"A!T::M -1 100000").unwrap().revert_after, None);
        for bad in [
            &b""[..],
            b"A!T::M 1",
            b"A!T::M 1 2 3 4",
            b"AT::M 1 2",
            b"A!TM 1 2",
            b"!T::M 1 2",
            b"A!T:: 1 2",
            b"A!T::M x 2",
            b"A!T::M 1 99999999999",
            b"A!T::M 1 2 -1",
            b"A!T::M 1 2 NaN",
            b"A!T::M 1 2 inf",
            b"\xFF!T::M 1 2",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn shortest_forms_round_trip() {
        for value in [-129, -128, -2, -1, 0, 1, 8, 9, 127, 128, i32::MIN, i32::MAX] {
            let (opcode, operand) = OpCode::ldc_i4(value);
            let mut body = MethodBody::new();
            body.push(opcode, operand).unwrap();
            body.push(OpCode::RET, Operand::None).unwrap();
            let decoded = MethodBody::decode(&body.encode().unwrap()).unwrap();
            assert_eq!(
                decoded.instructions()[0].i4_constant(),
                Some(value),
                "{value}"
            );
        }
    }
}
