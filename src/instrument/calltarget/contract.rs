//! [`Integration`]: what an integration type of the helper assembly offers,
//! read from the helper module's metadata and filed by the contract's
//! shapes (docs/instrumentation.md, "The contract").

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::CONTRACT;
use crate::cil::{MethodSig, Token, TypeSig};
use crate::facade::MetadataImport;
use crate::metadata::{mdToken, CLDB_E_RECORD_NOTFOUND};
use crate::Error;

/// One of an integration's methods the wrapper calls: its signature as the
/// helper declares it (helper tokens) and the helper's names for them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ProbeMethod {
    pub(super) name: &'static str,
    pub(super) sig: MethodSig,
}

/// What an integration type of the helper assembly offers: which
/// `OnMethodBegin` arities, and whether `OnMethodEnd<TTarget, TReturn>`
/// and `OnMethodEnd<TTarget>` exist (the contract:
/// docs/instrumentation.md). Read once per integration from the helper
/// module's metadata; `Send + Sync`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Integration {
    pub(super) type_name: String,
    /// By number of target arguments; `true`: takes the trailing name.
    pub(super) begins: BTreeMap<u32, (ProbeMethod, bool)>,
    pub(super) end: Option<ProbeMethod>,
    pub(super) end_void: Option<ProbeMethod>,
    pub(super) async_end: Option<ProbeMethod>,
    /// `CallTargetAsync.ContinueTask`/`ContinueValueTask`, by name and
    /// generic parameter count.
    pub(super) continuations: Vec<(&'static str, u32, ProbeMethod)>,
    /// The full names of the helper's TypeDefs (`true`) and TypeRefs
    /// (`false`) the signatures use.
    pub(super) names: BTreeMap<u32, (bool, String)>,
    pub(super) ignored: Vec<String>,
}

/// Whether `ty` is `VALUETYPE` of the contract type `name`, per `names`.
fn is_contract_type(ty: &TypeSig, names: &BTreeMap<u32, (bool, String)>, name: &str) -> bool {
    let token = match ty.unmodified() {
        TypeSig::ValueType(t) => t,
        TypeSig::GenericInst {
            value_type: true,
            ty,
            ..
        } => ty,
        _ => return false,
    };
    names.get(&token.0).is_some_and(|(def, n)| {
        *def && n.strip_prefix(CONTRACT).and_then(|r| r.strip_prefix('.')) == Some(name)
    })
}

/// Collects the tokens a type uses.
fn tokens_of(ty: &TypeSig, out: &mut Vec<Token>) {
    match ty {
        TypeSig::ValueType(t) | TypeSig::Class(t) => out.push(*t),
        TypeSig::GenericInst { ty, args, .. } => {
            out.push(*ty);
            args.iter().for_each(|a| tokens_of(a, out));
        }
        TypeSig::Modified { modifier, ty, .. } => {
            out.push(*modifier);
            tokens_of(ty, out);
        }
        TypeSig::Ptr(t) | TypeSig::ByRef(t) | TypeSig::Pinned(t) | TypeSig::SzArray(t) => {
            tokens_of(t, out)
        }
        TypeSig::Array(t, _) => tokens_of(t, out),
        TypeSig::FnPtr(m) => {
            tokens_of(&m.ret, out);
            m.params.iter().for_each(|p| tokens_of(p, out));
        }
        _ => {}
    }
}

impl Integration {
    /// Reads the integration type `type_name` (`Namespace.Type`, a
    /// top-level type) from the helper module's metadata: its public
    /// static `OnMethodBegin`/`OnMethodEnd` methods of the contract's
    /// shapes. `Err` says what is missing (no such type, no method of a
    /// known shape); methods with those names but another shape are
    /// listed by [`ignored`](Integration::ignored).
    pub fn read(helper: &MetadataImport, type_name: &str) -> Result<Integration, Error> {
        let typedef = helper
            .find_type_def(type_name, None)
            .map_err(|e| e.context(format!("no integration type {type_name} in the helper")))?;
        let methods = helper
            .methods(typedef)
            .map_err(|e| e.context(format!("cannot list the methods of {type_name}")))?;
        let mut found: Vec<(&'static str, MethodSig, String)> = Vec::new();
        let mut names = BTreeMap::new();
        for m in methods {
            let Ok(props) = helper.method_props(m) else {
                continue;
            };
            let name: &'static str = match props.name.as_str() {
                "OnMethodBegin" => "OnMethodBegin",
                "OnMethodEnd" => "OnMethodEnd",
                "OnAsyncMethodEnd" => "OnAsyncMethodEnd",
                _ => continue,
            };
            // public (6) static (0x10)
            if props.attributes & 0x7 != 0x6 || props.attributes & 0x10 == 0 {
                found.push((
                    name,
                    MethodSig::static_method(TypeSig::Void, vec![]),
                    String::from("not public static"),
                ));
                continue;
            }
            let sig = match MethodSig::decode(props.signature) {
                Ok(sig) => sig,
                Err(e) => {
                    found.push((
                        name,
                        MethodSig::static_method(TypeSig::Void, vec![]),
                        format!("{e}"),
                    ));
                    continue;
                }
            };
            let mut tokens = Vec::new();
            tokens_of(&sig.ret, &mut tokens);
            sig.params.iter().for_each(|p| tokens_of(p, &mut tokens));
            for t in tokens {
                let is_def = t.0 >> 24 == 0x02;
                if let Ok(n) = helper.type_def_or_ref_name(mdToken(t.0)) {
                    names.insert(t.0, (is_def, n));
                }
            }
            found.push((name, sig, String::new()));
        }
        let mut integration = Integration::empty(type_name, names);
        integration.read_continuations(helper);
        for (name, sig, problem) in found {
            let shape = format!(
                "{name}`{}({} parameters)",
                sig.generic_params,
                sig.params.len()
            );
            if !problem.is_empty() {
                integration.ignored.push(format!("{name}: {problem}"));
                continue;
            }
            if !integration.accept(name, &sig) {
                let names = &integration.names;
                let text = sig.format_method(name, &|t| {
                    names
                        .get(&t.0)
                        .map_or_else(|| format!("{t:?}"), |n| n.1.clone())
                });
                integration.ignored.push(format!("{shape}: {text}"));
            }
        }
        if integration.begins.is_empty()
            && integration.end.is_none()
            && integration.end_void.is_none()
            && integration.async_end.is_none()
        {
            return Err(Error::new(
                CLDB_E_RECORD_NOTFOUND,
                format!(
                "integration {type_name} has no OnMethodBegin or OnMethodEnd of the contract's shapes{}",
                if integration.ignored.is_empty() {
                    String::new()
                } else {
                    format!(" (ignored: {})", integration.ignored.join(", "))
                }
            ),
            ));
        }
        Ok(integration)
    }

    /// An integration named `type_name` with no methods yet, whose
    /// signatures' tokens are named by `names`.
    pub(super) fn empty(type_name: &str, names: BTreeMap<u32, (bool, String)>) -> Integration {
        Integration {
            type_name: type_name.into(),
            begins: BTreeMap::new(),
            end: None,
            end_void: None,
            async_end: None,
            continuations: Vec::new(),
            names,
            ignored: Vec::new(),
        }
    }

    /// Reads `CorProf.CallTarget.CallTargetAsync`'s `ContinueTask` and
    /// `ContinueValueTask` (absent from an older helper: async targets then
    /// get `OnMethodEnd` with the task).
    fn read_continuations(&mut self, helper: &MetadataImport) {
        let Ok(typedef) = helper.find_type_def(&format!("{CONTRACT}.CallTargetAsync"), None) else {
            return;
        };
        for m in helper.methods(typedef).unwrap_or_default() {
            let Ok(props) = helper.method_props(m) else {
                continue;
            };
            let name: &'static str = match props.name.as_str() {
                "ContinueTask" => "ContinueTask",
                "ContinueValueTask" => "ContinueValueTask",
                _ => continue,
            };
            let Ok(sig) = MethodSig::decode(props.signature) else {
                continue;
            };
            let mut tokens = Vec::new();
            tokens_of(&sig.ret, &mut tokens);
            sig.params.iter().for_each(|p| tokens_of(p, &mut tokens));
            for t in tokens {
                if let Ok(n) = helper.type_def_or_ref_name(mdToken(t.0)) {
                    self.names.insert(t.0, (t.0 >> 24 == 0x02, n));
                }
            }
            let g = sig.generic_params;
            self.continuations
                .push((name, g, ProbeMethod { name, sig }));
        }
    }

    /// Files `sig` (of method `name`) under its shape; `false` when it has
    /// none of the contract's.
    fn accept(&mut self, name: &'static str, sig: &MethodSig) -> bool {
        let g = sig.generic_params;
        let p = &sig.params;
        if g == 0 || sig.has_this() || p.first().map(TypeSig::unmodified) != Some(&TypeSig::MVar(0))
        {
            return false;
        }
        let method = ProbeMethod {
            name,
            sig: sig.clone(),
        };
        if name == "OnMethodBegin" {
            let n = g as usize;
            let args_ok = (1..n).all(|i| {
                matches!(p.get(i).map(TypeSig::unmodified), Some(TypeSig::ByRef(inner)) if inner.unmodified() == &TypeSig::MVar(i as u32))
            });
            let takes_name = p.len() == n + 1 && p[n].unmodified() == &TypeSig::String;
            if !args_ok
                || !(p.len() == n || takes_name)
                || !is_contract_type(&sig.ret, &self.names, "CallTargetState")
            {
                return false;
            }
            self.begins.insert(g - 1, (method, takes_name));
            return true;
        }
        // `in CallTargetState` is a by-ref (Roslyn); mcs 6.8 compiles `in`
        // as a by-value parameter: both are accepted, and passed so.
        let state_ok = |t: Option<&TypeSig>| match t.map(TypeSig::unmodified) {
            Some(TypeSig::ByRef(inner)) => is_contract_type(inner, &self.names, "CallTargetState"),
            Some(other) => is_contract_type(other, &self.names, "CallTargetState"),
            None => false,
        };
        let exception_ok = |t: Option<&TypeSig>| matches!(t.map(TypeSig::unmodified), Some(TypeSig::Class(e)) if self.names.get(&e.0).map(|(_, n)| n.as_str()) == Some("System.Exception"));
        if name == "OnAsyncMethodEnd" {
            let ok = g == 2
                && p.len() == 4
                && p[1].unmodified() == &TypeSig::MVar(1)
                && exception_ok(p.get(2))
                && state_ok(p.get(3))
                && sig.ret.unmodified() == &TypeSig::MVar(1);
            if ok {
                self.async_end = Some(method);
            }
            return ok;
        }
        match (g, p.len()) {
            (2, 4)
                if p[1].unmodified() == &TypeSig::MVar(1)
                    && exception_ok(p.get(2))
                    && state_ok(p.get(3))
                    && is_contract_type(&sig.ret, &self.names, "CallTargetReturn`1") =>
            {
                self.end = Some(method);
                true
            }
            (1, 3)
                if exception_ok(p.get(1))
                    && state_ok(p.get(2))
                    && is_contract_type(&sig.ret, &self.names, "CallTargetReturn") =>
            {
                self.end_void = Some(method);
                true
            }
            _ => false,
        }
    }

    /// The integration type's full name.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The argument counts `OnMethodBegin` is defined for.
    pub fn begin_arities(&self) -> Vec<u32> {
        self.begins.keys().copied().collect()
    }

    /// Whether `OnMethodEnd<TTarget, TReturn>` (`void_target: false`) or
    /// `OnMethodEnd<TTarget>` (`true`) is defined.
    pub fn has_end(&self, void_target: bool) -> bool {
        if void_target {
            self.end_void.is_some()
        } else {
            self.end.is_some()
        }
    }

    /// The methods named `OnMethodBegin`/`OnMethodEnd` whose shape is not
    /// the contract's (never called), with their generic and parameter
    /// counts.
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An integration over made-up helper tokens: CallTargetState
    /// (0x02000001), CallTargetReturn`1 (0x02000002), CallTargetReturn
    /// (0x02000003), System.Exception (0x01000001).
    fn integration() -> Integration {
        let mut names = BTreeMap::new();
        for (t, def, n) in [
            (0x0200_0001, true, "CorProf.CallTarget.CallTargetState"),
            (0x0200_0002, true, "CorProf.CallTarget.CallTargetReturn`1"),
            (0x0200_0003, true, "CorProf.CallTarget.CallTargetReturn"),
            (0x0100_0001, false, "System.Exception"),
            (0x0200_0004, true, "Other.CallTargetState"),
        ] {
            names.insert(t, (def, String::from(n)));
        }
        Integration::empty("I", names)
    }

    #[test]
    fn integration_methods_are_filed_by_shape() {
        use crate::cil::TypeSig as T;
        let state = T::ValueType(Token(0x0200_0001));
        let exception = T::Class(Token(0x0100_0001));
        let mvar = T::MVar;
        let by_ref = |t: T| T::by_ref(t);
        let generic = |ret: T, params: Vec<T>, g: u32| {
            MethodSig::static_method(ret, params).with_generic_params(g)
        };
        let mut i = integration();
        // OnMethodBegin<TTarget, TArg1, TArg2>(TTarget, ref TArg1, ref TArg2)
        let begin2 = generic(
            state.clone(),
            vec![mvar(0), by_ref(mvar(1)), by_ref(mvar(2))],
            3,
        );
        assert!(i.accept("OnMethodBegin", &begin2));
        // OnMethodBegin<TTarget>(TTarget, string method)
        let named = generic(state.clone(), vec![mvar(0), T::String], 1);
        assert!(i.accept("OnMethodBegin", &named));
        assert_eq!(i.begin_arities(), [0, 2]);
        assert!(
            i.begins[&0].1 && !i.begins[&2].1,
            "only the first takes the name"
        );
        // Not the contract's: by-value arguments, another return type, a
        // CallTargetState of another namespace, an instance method.
        for odd in [
            generic(state.clone(), vec![mvar(0), mvar(1)], 2),
            generic(T::Void, vec![mvar(0)], 1),
            generic(T::ValueType(Token(0x0200_0004)), vec![mvar(0)], 1),
            MethodSig::instance_method(state.clone(), vec![mvar(0)]).with_generic_params(1),
        ] {
            assert!(!i.accept("OnMethodBegin", &odd), "{odd:?}");
        }
        assert_eq!(i.begin_arities(), [0, 2]);
        // OnMethodEnd<TTarget, TReturn>(TTarget, TReturn, Exception, in
        // CallTargetState) -> CallTargetReturn<TReturn>; `in` compiled as a
        // by-ref (Roslyn) or by value (mcs).
        let returned = T::generic_value_type(Token(0x0200_0002), vec![mvar(1)]);
        for state_param in [by_ref(state.clone()), state.clone()] {
            let mut i = integration();
            let end = generic(
                returned.clone(),
                vec![mvar(0), mvar(1), exception.clone(), state_param.clone()],
                2,
            );
            assert!(i.accept("OnMethodEnd", &end));
            assert!(i.has_end(false) && !i.has_end(true));
            let end_void = generic(
                T::ValueType(Token(0x0200_0003)),
                vec![mvar(0), exception.clone(), state_param.clone()],
                1,
            );
            assert!(i.accept("OnMethodEnd", &end_void));
            assert!(i.has_end(true));
            let async_end = generic(
                mvar(1),
                vec![mvar(0), mvar(1), exception.clone(), state_param],
                2,
            );
            assert!(i.accept("OnAsyncMethodEnd", &async_end));
            assert!(i.async_end.is_some());
        }
        // An end whose exception parameter is an object is not the contract's.
        let mut i = integration();
        let wrong = generic(
            returned,
            vec![mvar(0), mvar(1), T::Object, by_ref(state)],
            2,
        );
        assert!(!i.accept("OnMethodEnd", &wrong));
        assert!(!i.has_end(false));
    }
}
