//! Function names with their generic instantiations
//! (`Util.Parse<System.Int32>`, `Holder<System.String>.Get`).

use alloc::string::String;
use alloc::vec::Vec;

use crate::facade::info::{ProfilerInfo, Result};
use crate::facade::stack::FrameInfo;
use crate::metadata::mdToken;
use crate::profiling::*;
use crate::E_UNEXPECTED;

/// How many method type arguments are named at most; the rest print as
/// `...` (real methods have a handful, the bound keeps a broken answer
/// cheap).
const MAX_METHOD_TYPE_ARGS: usize = 64;

impl ProfilerInfo {
    /// A function's name with the type arguments of its class and of the
    /// method itself: `Holder<System.String>.Get`,
    /// `Util.Parse<System.Int32>`, `Program.Main` for a non-generic one.
    ///
    /// Classes are named by [`class_name`](ProfilerInfo::class_name), so the
    /// two agree and share its bounds; method type arguments are at most 64
    /// (the rest print as `...`), one that cannot be named prints as `?`, and
    /// a count above 65,535 is `E_UNEXPECTED`.
    ///
    /// Code shared by instantiations over reference types is one function,
    /// and without a frame it is named in its canonical form on every
    /// runtime: each shared type argument is `System.__Canon`, as the
    /// runtime itself (and PerfView, dotnet-trace) spell it
    /// (`Util.Echo<System.__Canon>`, `Holder<System.__Canon>.Get`). For a
    /// method of a generic class, CoreCLR 10 and later give that canonical
    /// class; 3.1 to 9 give no class at all, and then every argument of the
    /// class is spelled `System.__Canon` (exact but for a class with several
    /// arguments mixing value and reference types, `Pair<System.Int32,
    /// System.__Canon>` on 10, which those runtimes do not tell apart).
    /// [`instantiated_function_name_in_frame`](Self::instantiated_function_name_in_frame)
    /// with the frame of a WithInfo hook gives the exact one.
    ///
    /// Unlike [`function_name`](Self::function_name), which names the
    /// definition in metadata form (``Holder`1.Get``), this names one
    /// compiled instance, C#-like; docs/hooks.md ("One method, three
    /// names") compares the two with the targets of
    /// `corprof::instrument::MethodTarget` (``Asm!Holder`1::Get``).
    pub fn instantiated_function_name(&self, function: FunctionID) -> Result<String> {
        self.instantiated_function_name_in_frame(function, FrameInfo::NONE)
    }

    /// Like [`instantiated_function_name`](Self::instantiated_function_name),
    /// with a frame (from an enter/leave hook, `corprof::hooks::Arguments::frame`, or a
    /// stack walk) that lets the runtime name the exact instantiation of
    /// shared generic code (`GetFunctionInfo2`). The frame is borrowed for
    /// the callback that handed it out, so this is called inside it.
    pub fn instantiated_function_name_in_frame(
        &self,
        function: FunctionID,
        frame: FrameInfo<'_>,
    ) -> Result<String> {
        let frame = frame.as_raw();
        let v2 = self.live_v2()?;
        let (mut class, mut module, mut token) = (ClassID::NULL, ModuleID::NULL, mdToken(0));
        let mut count: u32 = 0;
        // SAFETY: valid out-pointers; a zero-capacity call asks for the count.
        unsafe {
            v2.GetFunctionInfo2(
                function,
                frame,
                &mut class,
                &mut module,
                &mut token,
                0,
                &mut count,
                core::ptr::null_mut(),
            )
        }
        .ok_with("GetFunctionInfo2")?;
        if count > u32::from(u16::MAX) {
            return Err(E_UNEXPECTED.into());
        }
        let mut args: Vec<ClassID> = Vec::new();
        if count > 0 {
            args.resize(count as usize, ClassID::NULL);
            let mut written: u32 = 0;
            // SAFETY: `args` has room for `count` IDs.
            unsafe {
                v2.GetFunctionInfo2(
                    function,
                    frame,
                    &mut class,
                    &mut module,
                    &mut token,
                    count,
                    &mut written,
                    args.as_mut_ptr(),
                )
            }
            .ok_with("GetFunctionInfo2")?;
            args.truncate(written as usize);
        }
        let plain = self.function_name(function)?;
        let mut name = if class.is_null() {
            canonical_arguments(&plain.type_name)
        } else {
            self.class_name(class)
                .unwrap_or_else(|_| plain.type_name.clone())
        };
        if !name.is_empty() {
            name.push('.');
        }
        name.push_str(&plain.method_name);
        if !args.is_empty() {
            name.push('<');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    name.push_str(", ");
                }
                if i >= MAX_METHOD_TYPE_ARGS {
                    name.push_str("...");
                    break;
                }
                match self.class_name(*arg) {
                    Ok(arg) => name.push_str(&arg),
                    Err(_) => name.push('?'),
                }
            }
            name.push('>');
        }
        Ok(name)
    }
}

/// The spelling of a type argument of shared generic code, the runtime's
/// own name for its canonical type (`System.__Canon`).
const CANON: &str = "System.__Canon";

/// A generic type's metadata name (`Holder`1`) with its arguments shared
/// (`Holder<System.__Canon>`): what CoreCLR 3.1 to 9 leave unsaid for the
/// class of shared code without a frame.
fn canonical_arguments(type_name: &str) -> String {
    let Some((base, arity)) = type_name.rsplit_once('`') else {
        return String::from(type_name);
    };
    let Ok(arity) = arity.parse::<usize>() else {
        return String::from(type_name);
    };
    let mut name = String::from(base);
    name.push('<');
    for i in 0..arity.min(MAX_METHOD_TYPE_ARGS) {
        if i > 0 {
            name.push_str(", ");
        }
        name.push_str(CANON);
    }
    name.push('>');
    name
}
