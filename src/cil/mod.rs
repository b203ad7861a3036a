//! The codec covers ECMA-335 method headers and exception sections
//! (II.25.4), the instruction set (Partition III) and signature blobs
//! (II.23.2), with label-based editing for IL rewriting. (The one-line
//! summary is the doc comment on `pub mod cil` in `lib.rs`.)
//!
//! Pure safe Rust on `core` and `alloc`; no metadata access. Where the codec
//! needs metadata (the stack effect of a call), the caller supplies it
//! through a resolver closure, which a decoded [`MethodSig`][MS] can feed
//! via [`MethodSig::stack_sig`][MS_stack].
//!
//! * [`MethodBody::decode`][MB_decode] reads a body (tiny or fat header,
//!   code, small or fat exception sections) into [`Instruction`][I]s that
//!   refer to each other by [`Label`][L], and
//!   [`MethodBody::encode`][MB_encode] writes it back, byte-identical when
//!   unedited.
//! * [`insert`][MB_insert], [`replace`][MB_replace] and
//!   [`remove`][MB_remove] edit the code; branches and exception clauses
//!   follow their instructions. Encoding widens short branches that no
//!   longer reach, promotes a tiny header to fat and a small exception
//!   section to fat when needed.
//!   [`update_max_stack`][MB_ums] recomputes max stack by
//!   stack-effect analysis over the control flow.
//! * [`OpCode`][OC] and [`OpCodeInfo`][OCI] hold the complete ECMA-335
//!   opcode table.
//! * [`sig`][S] decodes, builds and encodes signature blobs.
//!
//! [MS]: crate::cil::MethodSig
//! [I]: crate::cil::Instruction
//! [L]: crate::cil::Label
//! [OC]: crate::cil::OpCode
//! [OCI]: crate::cil::OpCodeInfo
//! [S]: crate::cil::TypeSig
//! [MS_stack]: crate::cil::MethodSig::stack_sig
//! [MB_decode]: crate::cil::MethodBody::decode
//! [MB_encode]: crate::cil::MethodBody::encode
//! [MB_insert]: crate::cil::MethodBody::insert
//! [MB_replace]: crate::cil::MethodBody::replace
//! [MB_remove]: crate::cil::MethodBody::remove
//! [MB_ums]: crate::cil::MethodBody::update_max_stack
//!
//! # Example: instrument a method the way a profiler would
//!
//! ```
//! use corprof::cil::{MethodBody, OpCode, Operand, StackSig, Token};
//!
//! // Bytes as returned by GetILFunctionBody for `static int F() => 41;`:
//! // tiny header 0x0E = (3 << 2) | 2 (3 bytes of code), `ldc.i4.s 41`, `ret`.
//! let original = [0x0E, 0x1F, 41, 0x2A];
//! let mut body = MethodBody::decode(&original)?;
//! assert_eq!(body.encode()?, original); // unedited: byte-identical
//!
//! // Insert `call 0x0A000001` (a void, parameterless probe) at entry.
//! body.insert(0, OpCode::CALL, Operand::Token(Token(0x0A00_0001)))?;
//! // Replace `ldc.i4.s 41` with `ldc.i4.s 42`.
//! let at = body
//!     .find(|i| i.opcode() == OpCode::LDC_I4_S && *i.operand() == Operand::I8(41))
//!     .unwrap();
//! body.replace(at, OpCode::LDC_I4_S, Operand::I8(42))?;
//! // Recompute max stack; the resolver knows the probe's signature.
//! body.update_max_stack(|tok| {
//!     (tok == Token(0x0A00_0001)).then_some(StackSig {
//!         params: 0,
//!         has_this: false,
//!         returns_value: false,
//!     })
//! })?;
//! let bytes = body.encode()?; // copy these into IMethodMalloc memory
//! assert_eq!(
//!     bytes,
//!     [0x22, 0x28, 0x01, 0x00, 0x00, 0x0A, 0x1F, 42, 0x2A] // tiny, 8 bytes of code
//! );
//! assert_eq!(
//!     body.to_string(),
//!     "IL_0000: call 0x0A000001\nIL_0005: ldc.i4.s 42\nIL_0007: ret\n"
//! );
//! # Ok::<(), corprof::cil::Error>(())
//! ```

#![forbid(unsafe_code)]

mod body;
mod eh;
mod error;
mod header;
mod instruction;
mod opcode;
mod sig;
mod stack;

pub use body::MethodBody;
pub use eh::{ClauseKind, ExceptionClause};
pub use error::{Error, ErrorKind};
pub use header::MethodHeader;
pub use instruction::{Instruction, Label, Operand, Token};
#[cfg(feature = "coverage")]
pub(crate) use opcode::LDC_I4_SHORT;
pub use opcode::{FlowControl, OpCode, OpCodeInfo, OperandKind, StackEffect};
pub use sig::{
    calling_convention, decode_compressed_i32, decode_compressed_u32, decode_type_def_or_ref,
    element_type, encode_compressed_i32, encode_compressed_u32, encode_type_def_or_ref, ArrayShape,
    FieldSig, LocalVarSig, MethodSig, MethodSpecSig, PropertySig, TypeSig, MAX_SIG_DEPTH,
};
pub use stack::StackSig;
