//! The functions' side of [`ProfilerInfo`]: a method's IL body read and
//! replaced, ReJIT requested and reverted, and the [`FunctionControl`] a
//! ReJIT hands the profiler. A child of `info.rs` (its impl split by job),
//! so it names no sibling room of the facade's.

use alloc::vec::Vec;
use core::fmt;

use super::{take_interface, ProfilerInfo, Result};
use crate::metadata::mdMethodDef;
use crate::profiling::*;
use crate::{ComRef, E_POINTER, HRESULT};

impl ProfilerInfo {
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
/// [`Profiler::get_rejit_parameters`](crate::facade::Profiler::get_rejit_parameters)
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
}
