//! [`IlEdit`]: small edits of a method's IL that keep a valid body valid,
//! so that the library can install them without `unsafe` in the caller's
//! code; [`ConstantPatch`], the edit a live patch makes to one method named
//! by text.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use super::calltarget::MethodTarget;
use super::rejit::RejitBodies;
use crate::cil::{Label, MethodBody, MethodSig, OpCode, Operand, StackSig, Token, TypeSig};
use crate::facade::{MetadataImport, ProfilerInfo};
use crate::metadata::{mdMethodDef, mdtMethodDef};
use crate::profiling::ModuleID;
use crate::{Error, E_FAIL, E_INVALIDARG, E_NOINTERFACE};

/// An edit of a method's IL that turns a valid body into a valid body, so
/// that [`install`](IlEdit::install) and
/// [`prepare_rejit`](IlEdit::prepare_rejit) hand the result to the runtime
/// themselves (no `unsafe` for the caller). For edits of your own, decode
/// the body with [`MethodBody`] and install it with the `unsafe`
/// [`ProfilerInfo::set_il_function_body`].
///
/// Every edit decodes the method's IL, edits it with labels (branches and
/// exception clauses follow the instructions), recomputes max stack from
/// the module's signatures ([`MetadataImport::stack_sig`]), encodes it and
/// decodes the bytes again as the JIT will read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IlEdit {
    /// The first instruction that loads the 32-bit constant `old` (any
    /// `ldc.i4` form) loads `new` instead, in the shortest form
    /// ([`OpCode::ldc_i4`]): the same stack effect. A body without such a
    /// load is an `E_INVALIDARG` error (``no `ldc.i4 41` ``).
    ReplaceConstant {
        /// The constant the body loads now.
        old: i32,
        /// The constant it loads after the edit.
        new: i32,
    },
    /// A `call` of this method before the first instruction. It must be a
    /// `static void ()` method of the edited method's module, of a
    /// non-generic type (checked: else `E_INVALIDARG`), so the call leaves
    /// the stack as it was.
    CallAtEntry(mdMethodDef),
}

/// What an [`IlEdit`] made: the new IL and the bodies before and after.
///
/// Its `Display` is a one-line account: what changed, the code size
/// before and after, the new max stack and the exception clauses, with how
/// far their boundaries moved (`call E2E.Rewrite.Counter.Hit at entry;
/// code 4 -> 9 bytes; max stack 8; EH clauses: 2, boundaries moved by
/// +5`). The max stack is the one computed (a tiny header, which has no
/// field for it, reads as 8).
#[derive(Clone, Debug)]
pub struct Edited {
    il: Vec<u8>,
    before: MethodBody,
    after: MethodBody,
    what: String,
    max_stack: u16,
}

impl Edited {
    /// The new IL (header, code and exception sections).
    pub fn il(&self) -> &[u8] {
        &self.il
    }

    /// The body as it was.
    pub fn before(&self) -> &MethodBody {
        &self.before
    }

    /// The new body, decoded from [`il`](Self::il).
    pub fn after(&self) -> &MethodBody {
        &self.after
    }

    /// How far each exception-clause boundary moved, in bytes, ascending
    /// and without repeats (empty for a body without clauses).
    pub fn clause_shifts(&self) -> Vec<i64> {
        let before = clause_offsets(&self.before);
        let after = clause_offsets(&self.after);
        let mut shifts: Vec<i64> = before
            .iter()
            .zip(&after)
            .map(|(&old, &new)| i64::from(new) - i64::from(old))
            .collect();
        shifts.sort_unstable();
        shifts.dedup();
        shifts
    }
}

impl fmt::Display for Edited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; code {} -> {} bytes; max stack {}; EH clauses: {}",
            self.what,
            self.before.header().code_size(),
            self.after.header().code_size(),
            self.max_stack,
            self.after.clauses().len()
        )?;
        let shifts = self.clause_shifts();
        if !shifts.is_empty() {
            f.write_str(", boundaries moved by")?;
            for shift in shifts {
                write!(f, " {shift:+}")?;
            }
        }
        Ok(())
    }
}

/// The offsets of every exception-clause boundary of a body, in order.
fn clause_offsets(body: &MethodBody) -> Vec<u32> {
    let offset = |label: Label| {
        body.get(label)
            .map_or(body.header().code_size(), |ins| ins.offset())
    };
    body.clauses()
        .iter()
        .flat_map(|c| [c.try_start, c.try_end, c.handler_start, c.handler_end])
        .map(offset)
        .collect()
}

/// The callee of [`IlEdit::CallAtEntry`] as the module's metadata
/// describes it.
struct Callee<'a> {
    name: String,
    signature: &'a [u8],
    generic_type: bool,
}

fn codec(what: &str) -> impl FnOnce(crate::cil::Error) -> Error + '_ {
    move |e| Error::new(E_FAIL, format!("{what}: {e}"))
}

/// The edit itself, without metadata: `callee` describes the method of
/// `CallAtEntry`, `stack` resolves call-site tokens for max stack.
fn edit_body(
    original: &[u8],
    edit: IlEdit,
    callee: Option<Callee<'_>>,
    stack: impl FnMut(Token) -> Option<StackSig>,
) -> Result<Edited, Error> {
    let before = MethodBody::decode(original).map_err(codec("decode"))?;
    let mut body = before.clone();
    let what = match edit {
        IlEdit::ReplaceConstant { old, new } => {
            // The instruction as it was (`ldc.i4.s 41`, `ldc.i4.1`, ...).
            let seen = body
                .instructions()
                .iter()
                .find(|ins| ins.i4_constant() == Some(old))
                .map(|ins| ins.opcode());
            let at = body
                .find(|ins| ins.i4_constant() == Some(old))
                .ok_or_else(|| Error::new(E_INVALIDARG, format!("no `ldc.i4 {old}`")))?;
            let (opcode, operand) = OpCode::ldc_i4(new);
            body.replace(at, opcode, operand)
                .map_err(codec("replace"))?;
            format!("{} -> {}", ldc(seen, old), ldc(Some(opcode), new))
        }
        IlEdit::CallAtEntry(method) => {
            let callee = callee.ok_or_else(|| Error::new(E_INVALIDARG, "no callee"))?;
            let void = MethodSig::static_method(TypeSig::Void, vec![]);
            let ok = MethodSig::decode(callee.signature).is_ok_and(|sig| sig == void);
            let method_def = method.token().token_type() == mdtMethodDef;
            if !ok || !method_def || callee.generic_type {
                return Err(Error::new(
                    E_INVALIDARG,
                    format!(
                        "{} is not a `static void ()` method of a non-generic type",
                        callee.name
                    ),
                ));
            }
            body.insert(0, OpCode::CALL, Operand::Token(Token(method.0)))
                .map_err(codec("insert"))?;
            format!("call {} at entry", callee.name)
        }
    };
    let max_stack = body.update_max_stack(stack).map_err(codec("max stack"))?;
    let il = body.encode().map_err(codec("encode"))?;
    let after = MethodBody::decode(&il).map_err(codec("re-decode"))?;
    if after.clauses().len() != before.clauses().len() {
        return Err(Error::new(
            E_FAIL,
            format!(
                "{} exception clauses became {}",
                before.clauses().len(),
                after.clauses().len()
            ),
        ));
    }
    Ok(Edited {
        il,
        before,
        after,
        what,
        max_stack,
    })
}

/// An `ldc.i4` form as written: `ldc.i4.s 41`, `ldc.i4 100000`, and the
/// forms whose value is in the name alone (`ldc.i4.1`, `ldc.i4.m1`).
fn ldc(opcode: Option<OpCode>, value: i32) -> String {
    match opcode {
        Some(op) if op == OpCode::LDC_I4 || op == OpCode::LDC_I4_S => format!("{op} {value}"),
        Some(op) => format!("{op}"),
        None => format!("ldc.i4 {value}"),
    }
}

/// The metadata of `module`, or an error saying it has none.
fn metadata(info: &ProfilerInfo, module: ModuleID) -> Result<MetadataImport, Error> {
    info.module_metadata(module)
        .map_err(|e| e.context("metadata"))?
        .ok_or_else(|| Error::new(E_NOINTERFACE, "the module has no metadata"))
}

impl IlEdit {
    /// Edits `original` (a method body of the module `import` reads, as
    /// [`ProfilerInfo::il_function_body`] answers it). `Err` says what
    /// could not be done; nothing is installed.
    pub fn apply(&self, original: &[u8], import: &MetadataImport) -> Result<Edited, Error> {
        let callee = match *self {
            IlEdit::CallAtEntry(method) => {
                let props = import
                    .method_props(method)
                    .map_err(|e| e.context("the callee"))?;
                let generic_type = !import
                    .generic_params(props.declaring_type.token())
                    .map_err(|e| e.context("the callee's type"))?
                    .is_empty();
                let name = import
                    .method_name(method)
                    .map_err(|e| e.context("the callee's name"))?
                    .to_string();
                Some(Callee {
                    name,
                    signature: props.signature,
                    generic_type,
                })
            }
            IlEdit::ReplaceConstant { .. } => None,
        };
        edit_body(original, *self, callee, |token| import.stack_sig(token))
    }

    /// Edits `method` of `module` and installs the result for its JIT
    /// compilation ([`ProfilerInfo::set_il_function_body`]; call it from
    /// `jit_compilation_started` or `module_load_finished`). Like that
    /// method, once per method: a method whose IL was set before is
    /// refused with `CORPROF_E_UNSUPPORTED_CALL_SEQUENCE` (ask
    /// [`ProfilerInfo::il_function_body_was_set`] first).
    pub fn install(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> Result<Edited, Error> {
        let edited = self.edit(info, module, method)?;
        // SAFETY: `edited.il` is this method's own IL, decoded, edited by
        // an `IlEdit` (a constant load for a constant load, or a call of a
        // checked `static void ()` MethodDef of this module: the stack as it
        // was), given a recomputed max stack, encoded and decoded again.
        unsafe { info.set_il_function_body(module, method, &edited.il) }
            .map_err(|e| e.context("SetILFunctionBody"))?;
        Ok(edited)
    }

    /// Edits `method` of `module` and keeps the result in `bodies` with
    /// the note `note` makes of it, for the runtime to take in
    /// `get_rejit_parameters` once a ReJIT of the method is requested
    /// ([`RejitBodies::set_il`], [`RejitBodies::request_rejit`]).
    pub fn prepare_rejit<T>(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
        bodies: &RejitBodies<T>,
        note: impl FnOnce(&Edited) -> T,
    ) -> Result<Edited, Error> {
        let edited = self.edit(info, module, method)?;
        let note = note(&edited);
        // SAFETY: as in `install`: the method's own IL, edited by an
        // `IlEdit`, re-encoded and checked.
        unsafe { bodies.insert(module, method, edited.il.clone(), note) };
        Ok(edited)
    }

    fn edit(
        &self,
        info: &ProfilerInfo,
        module: ModuleID,
        method: mdMethodDef,
    ) -> Result<Edited, Error> {
        let import = metadata(info, module)?;
        let original = info
            .il_function_body(module, method)
            .map_err(|e| e.context("GetILFunctionBody"))?;
        self.apply(&original, &import)
    }
}

/// A live patch of one constant of one method: the method is named by
/// text, found among the loaded modules, and its first load of `old`
/// loads `new` ([`IlEdit::ReplaceConstant`]), by ReJIT.
///
/// `Display` writes it as [`parse`](ConstantPatch::parse) reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConstantPatch {
    /// The method (one overload only).
    pub target: MethodTarget,
    /// The constant it loads now.
    pub old: i32,
    /// The constant it loads after the patch.
    pub new: i32,
}

impl ConstantPatch {
    /// A patch of `target`'s first load of `old`.
    pub fn new(target: MethodTarget, old: i32, new: i32) -> ConstantPatch {
        ConstantPatch { target, old, new }
    }

    /// Reads `Assembly!Namespace.Type::Method OLD NEW` (words separated by
    /// whitespace; `OLD` and `NEW` 32-bit integers). `E_INVALIDARG` with
    /// the reason for anything else.
    pub fn parse(text: &str) -> Result<ConstantPatch, Error> {
        let bad = |why: String| Error::new(E_INVALIDARG, why);
        let words: Vec<&str> = text.split_whitespace().collect();
        let [target, old, new] = words.as_slice() else {
            return Err(bad(format!("{} words instead of 3", words.len())));
        };
        let int = |word: &str| {
            word.parse::<i32>()
                .map_err(|_| bad(format!("{word:?} is not a 32-bit integer")))
        };
        let target = MethodTarget::parse(target).map_err(|e| bad(e.message().to_string()))?;
        Ok(ConstantPatch::new(target, int(old)?, int(new)?))
    }

    /// The edit.
    pub fn edit(&self) -> IlEdit {
        IlEdit::ReplaceConstant {
            old: self.old,
            new: self.new,
        }
    }

    /// Finds the method among the loaded modules
    /// ([`MethodTarget::find_loaded`]; it must not be overloaded), patches
    /// its IL and keeps it in `bodies` with the note `note` makes
    /// ([`IlEdit::prepare_rejit`]): then request its ReJIT
    /// ([`RejitBodies::request_rejit`]). `Err` says what is missing: no
    /// such assembly, type or method, or no such constant.
    pub fn prepare_rejit<T>(
        &self,
        info: &ProfilerInfo,
        bodies: &RejitBodies<T>,
        note: impl FnOnce(&Edited) -> T,
    ) -> Result<(ModuleID, mdMethodDef, Edited), Error> {
        let (module, methods) = self.target.find_loaded(info)?;
        let [method] = methods.as_slice() else {
            return Err(Error::new(
                E_INVALIDARG,
                format!("{} is overloaded ({} methods)", self.target, methods.len()),
            ));
        };
        let edited = self
            .edit()
            .prepare_rejit(info, module, *method, bodies, note)
            .map_err(|e| Error::new(e.code(), format!("{} in {}", e.message(), self.target)))?;
        Ok((module, *method, edited))
    }
}

impl fmt::Display for ConstantPatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.target, self.old, self.new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cil::{ClauseKind, ExceptionClause, OpCode};

    /// `ldc.i4.s 41; ret`.
    fn answer() -> Vec<u8> {
        let mut body = MethodBody::new();
        let (opcode, operand) = OpCode::ldc_i4(41);
        body.push(opcode, operand).unwrap();
        body.push(OpCode::RET, Operand::None).unwrap();
        body.encode().unwrap()
    }

    fn no_calls(_: Token) -> Option<StackSig> {
        None
    }

    const HIT: mdMethodDef = mdMethodDef(0x0600_0007);

    fn hit(signature: &[u8]) -> Option<Callee<'_>> {
        Some(Callee {
            name: "E2E.Counter.Hit".into(),
            signature,
            generic_type: false,
        })
    }

    #[test]
    fn a_constant_is_replaced_in_the_shortest_form() {
        for (new, size) in [(42, 3), (100_000, 6), (-1, 2)] {
            let edit = IlEdit::ReplaceConstant { old: 41, new };
            let edited = edit_body(&answer(), edit, None, no_calls).unwrap();
            let after = MethodBody::decode(edited.il()).unwrap();
            assert_eq!(after.instructions()[0].i4_constant(), Some(new));
            assert_eq!(after.header().code_size(), size, "{new}");
            assert_eq!(edited.before().instructions()[0].i4_constant(), Some(41));
        }
        let edited = edit_body(
            &answer(),
            IlEdit::ReplaceConstant { old: 41, new: 42 },
            None,
            no_calls,
        )
        .unwrap();
        assert_eq!(
            edited.to_string(),
            "ldc.i4.s 41 -> ldc.i4.s 42; code 3 -> 3 bytes; max stack 1; EH clauses: 0"
        );
        // The instruction seen is named as it was written, whatever its form.
        for (new, what) in [
            (1, "ldc.i4.s 41 -> ldc.i4.1"),
            (100_000, "ldc.i4.s 41 -> ldc.i4 100000"),
        ] {
            let edit = IlEdit::ReplaceConstant { old: 41, new };
            let edited = edit_body(&answer(), edit, None, no_calls).unwrap();
            assert!(
                edited.to_string().starts_with(&format!("{what};")),
                "{edited}"
            );
        }
    }

    #[test]
    fn a_missing_constant_or_bad_il_is_an_error() {
        let edit = IlEdit::ReplaceConstant { old: 99, new: 1 };
        let error = edit_body(&answer(), edit, None, no_calls).unwrap_err();
        assert_eq!(error.code(), E_INVALIDARG);
        assert_eq!(error.message(), "no `ldc.i4 99`");
        let error = edit_body(&[0xFF, 0x00], edit, None, no_calls).unwrap_err();
        assert!(error.message().starts_with("decode: "), "{error}");
    }

    #[test]
    fn a_call_at_entry_moves_the_exception_clauses() {
        // try { nop; leave END } finally { endfinally } END: ldc.i4.0; ret
        let mut body = MethodBody::new();
        let start = body.push(OpCode::NOP, Operand::None).unwrap();
        let leave = body.push(OpCode::NOP, Operand::None).unwrap();
        let handler = body.push(OpCode::ENDFINALLY, Operand::None).unwrap();
        let end = body.push(OpCode::LDC_I4_0, Operand::None).unwrap();
        body.push(OpCode::RET, Operand::None).unwrap();
        body.replace(leave, OpCode::LEAVE_S, Operand::Branch(end))
            .unwrap();
        body.clauses_mut().push(ExceptionClause::new(
            ClauseKind::Finally,
            start,
            handler,
            handler,
            end,
        ));
        let original = body.encode().unwrap();
        let sig = [0x00, 0x00, 0x01]; // static void ()
        let edited = edit_body(&original, IlEdit::CallAtEntry(HIT), hit(&sig), |_| {
            Some(MethodSig::static_method(TypeSig::Void, vec![]).stack_sig())
        })
        .unwrap();
        assert_eq!(edited.clause_shifts(), [5]);
        let text = edited.to_string();
        assert!(
            text.starts_with("call E2E.Counter.Hit at entry; code 6 -> 11 bytes;"),
            "{text}"
        );
        assert!(
            text.ends_with("EH clauses: 1, boundaries moved by +5"),
            "{text}"
        );
        let first = &edited.after().instructions()[0];
        assert_eq!(first.opcode(), OpCode::CALL);
        assert_eq!(first.operand(), &Operand::Token(Token(HIT.0)));
    }

    #[test]
    fn a_call_at_entry_needs_a_static_void_method_of_a_plain_type() {
        let edit = IlEdit::CallAtEntry(HIT);
        let int_int = [0x00, 0x01, 0x08, 0x08]; // static int (int)
        let error = edit_body(&answer(), edit, hit(&int_int), no_calls).unwrap_err();
        assert_eq!(error.code(), E_INVALIDARG);
        assert!(
            error.message().contains("E2E.Counter.Hit is not"),
            "{error}"
        );
        let instance = [0x20, 0x00, 0x01]; // instance void ()
        assert!(edit_body(&answer(), edit, hit(&instance), no_calls).is_err());
        let generic = Callee {
            generic_type: true,
            ..hit(&[0x00, 0x00, 0x01]).unwrap()
        };
        assert!(edit_body(&answer(), edit, Some(generic), no_calls).is_err());
        // A token of another table (a MemberRef) is refused.
        let member_ref = IlEdit::CallAtEntry(mdMethodDef(0x0A00_0001));
        let void = [0x00, 0x00, 0x01];
        assert!(edit_body(&answer(), member_ref, hit(&void), no_calls).is_err());
        let void_stack = |_| Some(MethodSig::static_method(TypeSig::Void, vec![]).stack_sig());
        assert!(edit_body(&answer(), edit, hit(&void), void_stack).is_ok());
        assert!(edit_body(&answer(), edit, None, no_calls).is_err());
    }

    #[test]
    fn a_constant_patch_parses_and_prints_back() {
        let patch = ConstantPatch::parse("Attach!E2E.Attach.Program::Value 41 -100000").unwrap();
        assert_eq!(patch.target.assembly, "Attach");
        assert_eq!(patch.target.type_name, "E2E.Attach.Program");
        assert_eq!(patch.target.method, "Value");
        assert_eq!((patch.old, patch.new), (41, -100_000));
        assert_eq!(
            patch.edit(),
            IlEdit::ReplaceConstant {
                old: 41,
                new: -100_000
            }
        );
        assert_eq!(
            patch.to_string(),
            "Attach!E2E.Attach.Program::Value 41 -100000"
        );
        for bad in [
            "",
            "A!T::M 1",
            "A!T::M 1 2 3",
            "AT::M 1 2",
            "A!TM 1 2",
            "!T::M 1 2",
            "A!T:: 1 2",
            "A!T::M x 2",
            "A!T::M 1 99999999999",
        ] {
            let error = ConstantPatch::parse(bad).unwrap_err();
            assert_eq!(error.code(), E_INVALIDARG, "{bad:?}");
            assert!(!error.message().is_empty(), "{bad:?}");
        }
    }
}
