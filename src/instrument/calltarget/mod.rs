//! [`CallTarget`]: wrap a method of a module so that it calls the generic
//! methods of an integration type in a managed helper assembly the module
//! never referenced (see [`wrap`] for the IL shape and
//! docs/instrumentation.md for the contract and the whole path).
//!
//! [`Integration::read`] reads an integration's methods from the helper
//! module's metadata once. For each method wrapped: the helper's
//! AssemblyRef, TypeRefs to the integration and the contract's value types,
//! MemberRefs of the integration's generic methods (signatures carried over
//! from the helper), a TypeRef to `System.Exception` (in the scope the
//! module already uses for `System.Object`), MethodSpecs instantiating them
//! for the method, the method-name user string and the extended local
//! signature are added to the module's metadata through [`MetadataEmit`]
//! (idempotently), then the body is wrapped and encoded.
//!
//! The parts, file by file:
//!
//! - `mod.rs`: [`CallTarget::wrap_method`] and [`CallTarget::wrap_in_module`],
//!   which put the parts together, and their [`WrapError`];
//! - `contract.rs`: [`Integration`], the contract's methods read from the
//!   helper's metadata and filed by shape;
//! - `references.rs`: the references the wrapped body uses, added to the
//!   module's metadata (and the answers to [`WrapContext`]);
//! - `il/`: the IL ([`wrap`]), in phases;
//! - `targets.rs`: [`MethodTarget`] (`Assembly!Type::Method`), its parsing
//!   and finding, [`MethodTargets`], and [`WrapWhen`].

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::cil::{LocalVarSig, MethodBody, MethodSig, Token, TypeSig};
use crate::facade::ProfilerInfo;
use crate::facade::{AssemblyReference, MetadataEmit};
use crate::metadata::{mdMethodDef, mdSignature};
use crate::profiling::ModuleID;
use crate::{Error, HRESULT};

mod contract;
mod il;
mod references;
mod targets;

use references::{generic_param_count, is_value_type, EmitContext};

pub use contract::Integration;
pub use il::{wrap, AsyncProbes, Continuation, Probes, ThisArg, WrapContext};
pub use targets::{MethodTarget, MethodTargets, WrapWhen};

/// The namespace of the contract's types (calltarget/Contract.cs).
const CONTRACT: &str = "CorProf.CallTarget";

/// `CorMethodImpl::miAsync` (`MethodImplAttributes.Async`): a runtime-async
/// method (.NET 11), whose IL returns the awaited value, not the task its
/// signature names.
const MI_ASYNC: u32 = 0x2000;

/// The integration every target uses unless it names its own.
pub const DEFAULT_INTEGRATION: &str = "CorProf.CallTarget.LogIntegration";

/// The helper assembly and the integration whose methods a wrapped method
/// calls.
#[derive(Clone, Debug)]
pub struct CallTarget<'a> {
    /// The helper assembly, as the module will reference it (it defines
    /// the contract's types and the integration).
    pub assembly: AssemblyReference<'a>,
    /// The integration, as [`Integration::read`] found it in the helper.
    pub integration: &'a Integration,
}

/// Why a method was not wrapped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WrapError {
    /// A metadata call failed: what was asked, and the runtime's answer.
    Metadata(&'static str, HRESULT),
    /// The IL or signature could not be decoded, wrapped or encoded
    /// (including [`ErrorKind::Unsupported`](crate::cil::ErrorKind::Unsupported)).
    Cil(crate::cil::Error),
    /// A method the wrapper refuses; the text says why.
    Unsupported(&'static str),
    /// The integration has no method of the shape this method needs.
    Integration(String),
}

impl fmt::Display for WrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WrapError::Metadata(what, hr) => write!(f, "{what} failed ({hr})"),
            WrapError::Cil(e) => write!(f, "{e}"),
            WrapError::Unsupported(why) => write!(f, "unsupported: {why}"),
            WrapError::Integration(why) => write!(f, "{why}"),
        }
    }
}

impl core::error::Error for WrapError {}

impl From<WrapError> for Error {
    /// A metadata failure keeps its code and says what was asked; the
    /// others are `E_FAIL` (`CORPROF_E_*` codes do not describe IL) with the
    /// reason as the message.
    fn from(e: WrapError) -> Error {
        match e {
            WrapError::Metadata(what, hr) => Error::new(hr, what),
            other => Error::new(crate::E_FAIL, format!("{other}")),
        }
    }
}

impl From<crate::cil::Error> for WrapError {
    fn from(e: crate::cil::Error) -> Self {
        WrapError::Cil(e)
    }
}

/// A metadata failure (a raw `HRESULT` or the facade's [`Error`](crate::Error))
/// while doing `what`.
fn md<E: Into<HRESULT>>(what: &'static str) -> impl FnOnce(E) -> WrapError {
    move |e| WrapError::Metadata(what, e.into())
}

/// A wrapped method: its new IL and the name given to the probes.
#[derive(Clone, Debug)]
pub struct Wrapped {
    /// The new IL body (header, code, exception sections).
    pub il: Vec<u8>,
    /// `Namespace.Type::Method`, as `OnMethodBegin` receives it.
    pub name: String,
    /// The module's tokens the new IL uses for the integration (the same
    /// for every method of a module of the same shape: the references are
    /// found, not redefined).
    pub probes: Probes,
}

impl CallTarget<'_> {
    /// Wraps `method` (whose current IL is `il`) of the module `emit` opens.
    ///
    /// Refuses constructors (`this` is not an object before the base
    /// constructor runs) and whatever [`wrap`] refuses, leaving the module's
    /// IL to the caller (nothing is installed here; metadata references may
    /// have been added, which is harmless).
    pub fn wrap_method(
        &self,
        emit: &MetadataEmit,
        method: mdMethodDef,
        il: &[u8],
    ) -> Result<Wrapped, WrapError> {
        let import = emit.import();
        let props = import.method_props(method).map_err(md("GetMethodProps"))?;
        if props.name == ".ctor" || props.name == ".cctor" {
            return Err(WrapError::Unsupported("constructor"));
        }
        let sig = MethodSig::decode(props.signature)?;
        // A runtime-async method's body returns the awaited value (nothing
        // for Task and ValueTask): it is wrapped as a method returning that.
        let awaited = if props.impl_flags & MI_ASYNC != 0 {
            match references::async_kind(import, &sig.ret) {
                Some((_, _, result)) => Some(result.unwrap_or(TypeSig::Void)),
                None => {
                    return Err(WrapError::Unsupported(
                        "a runtime-async method (MethodImplAttributes.Async) that returns \
                         no Task, Task<T>, ValueTask or ValueTask<T>",
                    ))
                }
            }
        } else {
            None
        };
        let class = props.declaring_type;
        let type_name = import.type_name(class).map_err(md("GetTypeDefProps"))?;
        let name = format!("{type_name}::{}", props.name);
        let this = if !sig.has_this() {
            ThisArg::Static
        } else {
            // The declaring type as a signature: itself, or a generic
            // instantiation over its own parameters (`!0`, `!1`, ...).
            let value = is_value_type(import, class)?;
            let class_token = Token(class.0);
            let n = generic_param_count(import, class.token())?;
            let ty = match (n, value) {
                (0, true) => TypeSig::ValueType(class_token),
                (0, false) => TypeSig::Class(class_token),
                (n, true) => {
                    TypeSig::generic_value_type(class_token, (0..n).map(TypeSig::Var).collect())
                }
                (n, false) => {
                    TypeSig::generic_class(class_token, (0..n).map(TypeSig::Var).collect())
                }
            };
            if value {
                ThisArg::Value(ty)
            } else {
                ThisArg::Reference(ty)
            }
        };
        let mut body = MethodBody::decode(il)?;
        let locals = match body.header().local_var_sig {
            Some(t) => LocalVarSig::decode(
                &emit
                    .signature_blob(mdSignature(t.0))
                    .map_err(md("GetSigFromToken"))?,
            )?,
            None => LocalVarSig { locals: vec![] },
        };
        let probes = self.probes(emit, &name, &sig, awaited.as_ref())?;
        let mut cx = EmitContext {
            emit,
            failure: None,
        };
        let body_sig = match awaited {
            Some(ret) => MethodSig { ret, ..sig.clone() },
            None => sig,
        };
        let wrapped = wrap(&mut body, &body_sig, &this, &locals, &probes, &mut cx);
        if let Some(failure) = cx.failure {
            return Err(failure);
        }
        wrapped?;
        Ok(Wrapped {
            il: body.encode()?,
            name,
            probes,
        })
    }

    /// Wraps `method` of `module` as the runtime holds it now: opens the
    /// module's metadata for writing
    /// ([`ProfilerInfo::module_metadata_emit`]), reads the method's IL
    /// ([`ProfilerInfo::il_function_body`]) and calls
    /// [`wrap_method`](Self::wrap_method). Call it where metadata may
    /// change: `module_load_finished` or `jit_compilation_started`.
    pub fn wrap_in_module(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> Result<Wrapped, WrapError> {
        let emit = info
            .module_metadata_emit(module)
            .map_err(md("GetModuleMetaData(ofWrite)"))?
            .ok_or(WrapError::Unsupported("a module without metadata"))?;
        let il = info
            .il_function_body(module, method)
            .map_err(md("GetILFunctionBody"))?;
        self.wrap_method(&emit, method, &il)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_scope::{FakeScope, TD_PUBLIC};
    use crate::metadata::mdToken;
    use alloc::collections::BTreeMap;
    use alloc::string::ToString;

    /// Runtime async is read from the implementation flags: a flagged
    /// method returning no task type is refused; a flagged `Task` method is
    /// a void method to the integration, a flagged `Task<int>` one and an
    /// unflagged `Task` one are not (the empty integration then says what
    /// it lacks for which).
    #[test]
    fn runtime_async_is_told_by_the_flag_and_wrapped_by_the_awaited_type() {
        let mut scope = FakeScope::new();
        let corlib = mdToken(0x2300_0001);
        let object = scope.type_ref(corlib, "System.Object");
        let task_of = scope.type_ref(corlib, "System.Threading.Tasks.Task`1");
        let task = scope.type_ref(corlib, "System.Threading.Tasks.Task");
        let class = scope.type_def("N.P", TD_PUBLIC, object.token());
        // TypeDefOrRef coded index of a TypeRef row: row << 2 | 1.
        let coded = |t: crate::metadata::mdTypeRef| ((t.0 & 0xFF_FFFF) << 2 | 1) as u8;
        // static Task<int> ()  /  static Task ()  /  static int ()
        let task_of_int = [0x00, 0x00, 0x15, 0x12, coded(task_of), 0x01, 0x08];
        let plain_task = [0x00, 0x00, 0x12, coded(task)];
        let int = [0x00, 0x00, 0x08];
        let flagged_int = scope.method(class, "Int", 0x16, &int);
        let flagged_task_of = scope.method(class, "TaskOfInt", 0x16, &task_of_int);
        let flagged_task = scope.method(class, "Task", 0x16, &plain_task);
        let unflagged_task = scope.method(class, "Plain", 0x16, &plain_task);
        for m in [flagged_int, flagged_task_of, flagged_task] {
            scope.set_impl_flags(m, MI_ASYNC | 0x8);
        }
        let integration = Integration::empty("I", BTreeMap::new());
        let ct = CallTarget {
            assembly: AssemblyReference {
                name: "Helper",
                ..AssemblyReference::default()
            },
            integration: &integration,
        };
        let emit = scope.emit();
        let ret = [0x06, 0x2A]; // tiny header, `ret`
        let error = |m| ct.wrap_method(&emit, m, &ret).unwrap_err().to_string();
        assert_eq!(
            error(flagged_int),
            "unsupported: a runtime-async method (MethodImplAttributes.Async) that returns no \
             Task, Task<T>, ValueTask or ValueTask<T>"
        );
        let lacks = |kind: &str| {
            alloc::format!(
                "integration I has no OnMethodEnd for a {kind} method and no OnMethodBegin"
            )
        };
        assert_eq!(error(flagged_task), lacks("void"));
        assert_eq!(error(flagged_task_of), lacks("non-void"));
        assert_eq!(error(unflagged_task), lacks("non-void"));
    }

    #[test]
    fn wrap_errors_display_what_failed() {
        let hr = crate::E_FAIL;
        assert_eq!(
            WrapError::Metadata("DefineMemberRef(probe)", hr).to_string(),
            alloc::format!("DefineMemberRef(probe) failed ({hr})")
        );
        assert_eq!(
            WrapError::Unsupported("constructor").to_string(),
            "unsupported: constructor"
        );
    }
}
