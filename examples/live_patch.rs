//! Live patching: an attach-time profiler that changes one integer constant
//! of one method in a running process by ReJIT, and changes it back later.
//!
//! Its client data (the last argument of the `attach` example) is
//! `Assembly!Namespace.Type::Method OLD NEW [SECONDS]`. While attaching it
//! finds the method among the loaded modules and patches its IL: the first
//! load of `OLD` loads `NEW` (`ConstantPatch`, `IlEdit::ReplaceConstant`).
//! Once attached it asks the runtime to JIT-compile the method again
//! (`RequestReJIT`): calls that start after it run the new code, and the
//! process does not restart. With `SECONDS`, it calls `RequestRevert` that
//! many seconds later, and the original code runs again.
//!
//! ```sh
//! cargo build --example attach --example live_patch
//! target/debug/examples/attach PID target/debug/examples/liblive_patch.so \
//!     7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A 'Attach!E2E.Attach.Program::Value 41 42 2'
//! ```
//!
//! Messages go to the target's stderr as `live_patch: ...`. Bad client
//! data, a method that is not found or a constant that is not there refuse
//! the attach (`E_INVALIDARG`): the target runs on untouched. The ReJIT
//! callbacks are the library's `RejitProfiler`, the first part of the
//! profiler. The method must not have been inlined into its callers
//! (inlined copies keep the old constant).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use corprof::facade::{Profiler, ProfilerInfo, Result, ShutdownFlag};
use corprof::instrument::{ConstantPatch, RejitBodies, RejitProfiler};
use corprof::E_INVALIDARG;

fn log(text: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "live_patch: {text}"); // never panics
}

/// `Assembly!Namespace.Type::Method OLD NEW [SECONDS]`.
fn parse(data: &[u8]) -> std::result::Result<(ConstantPatch, Option<Duration>), String> {
    let text = std::str::from_utf8(data).map_err(|_| "not UTF-8".to_string())?;
    let words: Vec<&str> = text.split_whitespace().collect();
    let (patch, seconds) = match words.as_slice() {
        [patch @ .., seconds] if words.len() == 4 => (patch.join(" "), Some(*seconds)),
        _ => (text.to_string(), None),
    };
    let revert_after = match seconds.map(|s| (s, s.parse::<f64>())) {
        None => None,
        Some((_, Ok(s))) if s > 0.0 && s <= 86_400.0 => Some(Duration::from_secs_f64(s)),
        Some((word, _)) => return Err(format!("{word:?} is not a number of seconds")),
    };
    let patch = ConstantPatch::parse(&patch).map_err(|e| e.message().to_string())?;
    Ok((patch, revert_after))
}

/// The part that attaches, patches and, from a thread of its own, asks
/// for the ReJIT and the revert.
struct LivePatch {
    bodies: Arc<RejitBodies<String>>,
    patch: Arc<OnceLock<(ConstantPatch, Option<Duration>)>>,
    shut_down: Arc<ShutdownFlag>,
}

impl Profiler for LivePatch {
    fn initialize(&self, _info: &ProfilerInfo) -> Result<()> {
        log(format_args!(
            "only attaches to running processes; not loading"
        ));
        Err(E_INVALIDARG.into())
    }

    fn initialize_for_attach(&self, info: &ProfilerInfo, data: &[u8]) -> Result<()> {
        let text = String::from_utf8_lossy(data);
        let (patch, revert_after) = parse(data).map_err(|why| {
            log(format_args!("bad client data {text:?}: {why}"));
            E_INVALIDARG
        })?;
        // Patched before accepting: a refusal reaches the `attach` command.
        let note = |_: &_| format!("{} loads {}", patch.target, patch.new);
        let (_, _, edited) = patch
            .prepare_rejit(info, &self.bodies, note)
            .map_err(|why| {
                log(format_args!(
                    "cannot patch, not attaching: {}",
                    why.message()
                ));
                E_INVALIDARG
            })?;
        let (target, old, size) = (&patch.target, patch.old, edited.il().len());
        log(format_args!(
            "found in initialize_for_attach: {target} loads {old} ({size}-byte new body)"
        ));
        log(format_args!("attached: {text}"));
        let _ = self.patch.set((patch, revert_after));
        Ok(())
    }

    fn profiler_attach_complete(&self, info: &ProfilerInfo) -> Result<()> {
        let (info, bodies) = (info.clone(), self.bodies.clone());
        let (patch, shut_down) = (self.patch.clone(), self.shut_down.clone());
        let thread = std::thread::Builder::new().name("live_patch".into());
        let spawned = thread.spawn(move || {
            let Some((patch, revert_after)) = patch.get() else {
                return;
            };
            if let Err(e) = bodies.request_rejit(&info) {
                return log(format_args!("RequestReJIT failed: {e}"));
            }
            let (target, old, new) = (&patch.target, patch.old, patch.new);
            log(format_args!("ReJIT requested: {target} {old} -> {new}"));
            if revert_after.is_some_and(|after| shut_down.sleep(after)) {
                match bodies.request_revert(&info) {
                    Ok(s) if s.iter().all(|s| s.is_ok()) => log(format_args!("reverted: {target}")),
                    Ok(s) => log(format_args!("RequestRevert statuses: {s:?}")),
                    Err(e) => log(format_args!("RequestRevert failed: {e}")),
                }
            }
        });
        if let Err(e) = spawned {
            log(format_args!("cannot start the ReJIT thread: {e}"));
        }
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.shut_down.raise();
        Ok(())
    }
}

fn new() -> (RejitProfiler, LivePatch) {
    let rejit = RejitProfiler::logging("live_patch");
    let (patch, shut_down) = (Arc::default(), Arc::default());
    let bodies = rejit.bodies();
    let patcher = LivePatch {
        bodies,
        patch,
        shut_down,
    };
    (rejit, patcher)
}

corprof::profiler!(
    (RejitProfiler, LivePatch),
    "7E4D2C1B-9A8F-4E3D-B2C1-0F9E8D7C6B5A",
    new
);
