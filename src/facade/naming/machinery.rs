//! Frames of the runtime's own machinery on a managed stack:
//! [`ProfilerInfo::runtime_machinery`].

use crate::facade::info::{ProfilerInfo, Result};
use crate::profiling::FunctionID;

/// A managed function of the runtime's own machinery (in
/// `System.Private.CoreLib`) that runs on a program's stack without being
/// part of what the program does, and that hooks, call trees and stack
/// walks handle the same way on every runtime (see docs/hooks.md,
/// "The runtime's own frames").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuntimeMachinery {
    /// `System.Environment.CallEntryPoint`: the managed caller of `Main`
    /// that CoreCLR 11 adds below it (3.1 to 10 call `Main` from native
    /// code, so there `Main` is the outermost managed frame).
    EntryPointCaller,
    /// The managed exception dispatch, the default exception handling of
    /// CoreCLR 9 and the only one from 10 (dotnet/runtime#104300): the
    /// types `System.Runtime.EH` (and those nested in it),
    /// `System.Runtime.StackFrameIterator` and
    /// `System.Runtime.ExceptionServices.InternalCalls`. It runs above the
    /// throwing frame: the unwind callbacks come from inside it (from
    /// `InternalCalls.RhpSfiNext`), and when a `catch` resumes, its frames
    /// are dropped without a leave hook or an unwind callback.
    ExceptionDispatch,
}

/// `System.Private.CoreLib.dll`'s file name, the module the machinery is in.
const CORELIB: &str = "System.Private.CoreLib.dll";

/// Classifies a declaring type and method name (not yet its module).
fn classify(type_name: &str, method_name: &str) -> Option<RuntimeMachinery> {
    match type_name {
        "System.Environment" if method_name == "CallEntryPoint" => {
            Some(RuntimeMachinery::EntryPointCaller)
        }
        "System.Runtime.EH"
        | "System.Runtime.StackFrameIterator"
        | "System.Runtime.ExceptionServices.InternalCalls" => {
            Some(RuntimeMachinery::ExceptionDispatch)
        }
        _ if type_name.starts_with("System.Runtime.EH+") => {
            Some(RuntimeMachinery::ExceptionDispatch)
        }
        _ => None,
    }
}

impl ProfilerInfo {
    /// Which of the runtime's own machinery `function` is, if any
    /// ([`RuntimeMachinery`]): a function named as above and defined in
    /// `System.Private.CoreLib` (a program's own `System.Environment` is
    /// not). The name comes from the metadata cache of
    /// [`function_name`](Self::function_name); the module is only asked
    /// for when the name matches.
    pub fn runtime_machinery(&self, function: FunctionID) -> Result<Option<RuntimeMachinery>> {
        let name = self.function_name(function)?;
        let Some(kind) = classify(&name.type_name, &name.method_name) else {
            return Ok(None);
        };
        let module = self.function_info(function)?.module;
        let path = self.module_info(module)?.path;
        let file = path.rsplit(['/', '\\']).next().unwrap_or(&path);
        Ok(file.eq_ignore_ascii_case(CORELIB).then_some(kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_machinery_and_only_those() {
        assert_eq!(
            classify("System.Environment", "CallEntryPoint"),
            Some(RuntimeMachinery::EntryPointCaller)
        );
        assert_eq!(
            classify("System.Runtime.EH", "DispatchEx"),
            Some(RuntimeMachinery::ExceptionDispatch)
        );
        for dispatch in [
            "System.Runtime.EH+ExInfo",
            "System.Runtime.StackFrameIterator",
            "System.Runtime.ExceptionServices.InternalCalls",
        ] {
            assert_eq!(
                classify(dispatch, "Next"),
                Some(RuntimeMachinery::ExceptionDispatch)
            );
        }
        assert_eq!(classify("System.Environment", "Exit"), None);
        assert_eq!(classify("System.Runtime.EHelper", "DispatchEx"), None);
        assert_eq!(classify("Program", "Main"), None);
    }
}
