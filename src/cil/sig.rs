//! Signature blobs (ECMA-335 II.23.2): compressed integers, element types,
//! and method, field, property, local-variable and type signatures, decoded
//! into a type tree and encoded back byte-identically.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use super::error::{Error, ErrorKind, Reader};
use super::instruction::Token;
use super::stack::StackSig;

/// The deepest nesting of types the decoder accepts (guards the stack).
pub const MAX_SIG_DEPTH: u32 = 64;

/// The largest array rank the runtime supports; higher ranks are formatted
/// as `[rank N]`.
const MAX_RANK: u32 = 32;

/// Element type constants (`ELEMENT_TYPE_*`, II.23.1.16).
pub mod element_type {
    /// `ELEMENT_TYPE_END`
    pub const END: u8 = 0x00;
    /// `ELEMENT_TYPE_VOID`
    pub const VOID: u8 = 0x01;
    /// `ELEMENT_TYPE_BOOLEAN`
    pub const BOOLEAN: u8 = 0x02;
    /// `ELEMENT_TYPE_CHAR`
    pub const CHAR: u8 = 0x03;
    /// `ELEMENT_TYPE_I1`
    pub const I1: u8 = 0x04;
    /// `ELEMENT_TYPE_U1`
    pub const U1: u8 = 0x05;
    /// `ELEMENT_TYPE_I2`
    pub const I2: u8 = 0x06;
    /// `ELEMENT_TYPE_U2`
    pub const U2: u8 = 0x07;
    /// `ELEMENT_TYPE_I4`
    pub const I4: u8 = 0x08;
    /// `ELEMENT_TYPE_U4`
    pub const U4: u8 = 0x09;
    /// `ELEMENT_TYPE_I8`
    pub const I8: u8 = 0x0A;
    /// `ELEMENT_TYPE_U8`
    pub const U8: u8 = 0x0B;
    /// `ELEMENT_TYPE_R4`
    pub const R4: u8 = 0x0C;
    /// `ELEMENT_TYPE_R8`
    pub const R8: u8 = 0x0D;
    /// `ELEMENT_TYPE_STRING`
    pub const STRING: u8 = 0x0E;
    /// `ELEMENT_TYPE_PTR`
    pub const PTR: u8 = 0x0F;
    /// `ELEMENT_TYPE_BYREF`
    pub const BYREF: u8 = 0x10;
    /// `ELEMENT_TYPE_VALUETYPE`
    pub const VALUETYPE: u8 = 0x11;
    /// `ELEMENT_TYPE_CLASS`
    pub const CLASS: u8 = 0x12;
    /// `ELEMENT_TYPE_VAR`
    pub const VAR: u8 = 0x13;
    /// `ELEMENT_TYPE_ARRAY`
    pub const ARRAY: u8 = 0x14;
    /// `ELEMENT_TYPE_GENERICINST`
    pub const GENERICINST: u8 = 0x15;
    /// `ELEMENT_TYPE_TYPEDBYREF`
    pub const TYPEDBYREF: u8 = 0x16;
    /// `ELEMENT_TYPE_I`
    pub const I: u8 = 0x18;
    /// `ELEMENT_TYPE_U`
    pub const U: u8 = 0x19;
    /// `ELEMENT_TYPE_FNPTR`
    pub const FNPTR: u8 = 0x1B;
    /// `ELEMENT_TYPE_OBJECT`
    pub const OBJECT: u8 = 0x1C;
    /// `ELEMENT_TYPE_SZARRAY`
    pub const SZARRAY: u8 = 0x1D;
    /// `ELEMENT_TYPE_MVAR`
    pub const MVAR: u8 = 0x1E;
    /// `ELEMENT_TYPE_CMOD_REQD`
    pub const CMOD_REQD: u8 = 0x1F;
    /// `ELEMENT_TYPE_CMOD_OPT`
    pub const CMOD_OPT: u8 = 0x20;
    /// `ELEMENT_TYPE_SENTINEL`
    pub const SENTINEL: u8 = 0x41;
    /// `ELEMENT_TYPE_PINNED`
    pub const PINNED: u8 = 0x45;
}

/// Calling-convention byte values (II.23.2.1-II.23.2.3).
pub mod calling_convention {
    /// `DEFAULT`
    pub const DEFAULT: u8 = 0x0;
    /// `C` (unmanaged cdecl)
    pub const C: u8 = 0x1;
    /// `STDCALL`
    pub const STDCALL: u8 = 0x2;
    /// `THISCALL`
    pub const THISCALL: u8 = 0x3;
    /// `FASTCALL`
    pub const FASTCALL: u8 = 0x4;
    /// `VARARG`
    pub const VARARG: u8 = 0x5;
    /// `FIELD`
    pub const FIELD: u8 = 0x6;
    /// `LOCAL_SIG`
    pub const LOCAL_SIG: u8 = 0x7;
    /// `PROPERTY`
    pub const PROPERTY: u8 = 0x8;
    /// `UNMANAGED` (extended unmanaged calling convention)
    pub const UNMANAGED: u8 = 0x9;
    /// `GENERICINST` (MethodSpec blob)
    pub const GENERICINST: u8 = 0xA;
    /// `GENERIC`: generic parameter count follows.
    pub const GENERIC: u8 = 0x10;
    /// `HASTHIS`
    pub const HASTHIS: u8 = 0x20;
    /// `EXPLICITTHIS`
    pub const EXPLICITTHIS: u8 = 0x40;
}

use calling_convention as cc;
use element_type as et;

// ---------------------------------------------------------------------------
// Compressed integers

/// Decodes a compressed unsigned integer (II.23.2) from the start of `bytes`;
/// returns the value and the number of bytes read.
pub fn decode_compressed_u32(bytes: &[u8]) -> Result<(u32, usize), Error> {
    let mut r = Reader::new(bytes, 0);
    let v = r.compressed_u32()?;
    Ok((v, r.pos()))
}

/// Decodes a compressed signed integer (II.23.2) from the start of `bytes`;
/// returns the value and the number of bytes read.
pub fn decode_compressed_i32(bytes: &[u8]) -> Result<(i32, usize), Error> {
    let mut r = Reader::new(bytes, 0);
    let v = r.compressed_i32()?;
    Ok((v, r.pos()))
}

/// Appends the compressed form of `v` (at most `0x1FFF_FFFF`).
pub fn encode_compressed_u32(out: &mut Vec<u8>, v: u32) -> Result<(), Error> {
    if v <= 0x7F {
        out.push(v as u8);
    } else if v <= 0x3FFF {
        out.extend_from_slice(&[0x80 | (v >> 8) as u8, v as u8]);
    } else if v <= 0x1FFF_FFFF {
        out.extend_from_slice(&(0xC000_0000 | v).to_be_bytes());
    } else {
        return Err(Error::new(out.len(), ErrorKind::InvalidCompressedInt));
    }
    Ok(())
}

/// Appends the compressed signed form of `v` (in `-2^28..2^28`).
pub fn encode_compressed_i32(out: &mut Vec<u8>, v: i32) -> Result<(), Error> {
    let (bits, tag_len) = if (-64..64).contains(&v) {
        (7u32, 1)
    } else if (-8192..8192).contains(&v) {
        (14, 2)
    } else if (-(1 << 28)..(1 << 28)).contains(&v) {
        (29, 4)
    } else {
        return Err(Error::new(out.len(), ErrorKind::InvalidCompressedInt));
    };
    let mask = (1u32 << bits) - 1;
    let y = (v as u32) & mask;
    let rotated = ((y << 1) | (y >> (bits - 1))) & mask;
    match tag_len {
        1 => out.push(rotated as u8),
        2 => out.extend_from_slice(&[0x80 | (rotated >> 8) as u8, rotated as u8]),
        _ => out.extend_from_slice(&(0xC000_0000 | rotated).to_be_bytes()),
    }
    Ok(())
}

/// Decodes a compressed TypeDefOrRefOrSpec coded index (II.23.2.8) into a
/// token (`0x02` TypeDef, `0x01` TypeRef, `0x1B` TypeSpec).
pub fn decode_type_def_or_ref(bytes: &[u8]) -> Result<(Token, usize), Error> {
    let mut r = Reader::new(bytes, 0);
    let t = read_tdor(&mut r)?;
    Ok((t, r.pos()))
}

/// Appends the compressed TypeDefOrRefOrSpec coded index for `token`.
pub fn encode_type_def_or_ref(out: &mut Vec<u8>, token: Token) -> Result<(), Error> {
    let tag = match token.table() {
        0x02 => 0,
        0x01 => 1,
        0x1B => 2,
        _ => {
            return Err(Error::new(
                out.len(),
                ErrorKind::InvalidSignature("token is not a TypeDef, TypeRef or TypeSpec"),
            ))
        }
    };
    encode_compressed_u32(out, (token.row() << 2) | tag)
}

fn read_tdor(r: &mut Reader<'_>) -> Result<Token, Error> {
    let at = r.abs();
    let v = r.compressed_u32()?;
    let table = match v & 3 {
        0 => 0x02,
        1 => 0x01,
        2 => 0x1B,
        _ => {
            return Err(Error::new(
                at,
                ErrorKind::InvalidSignature("TypeDefOrRef tag 3 is invalid"),
            ))
        }
    };
    if v >> 2 > 0x00FF_FFFF {
        return Err(Error::new(
            at,
            ErrorKind::InvalidSignature("TypeDefOrRef row over 24 bits"),
        ));
    }
    Ok(Token((table << 24) | (v >> 2)))
}

// ---------------------------------------------------------------------------
// Type tree

/// The shape of a general array (II.23.2.13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayShape {
    /// Number of dimensions.
    pub rank: u32,
    /// Sizes of the leading dimensions that have one.
    pub sizes: Vec<u32>,
    /// Lower bounds of the leading dimensions that have one.
    pub lower_bounds: Vec<i32>,
}

/// A type in a signature (II.23.2.12 and II.23.2.14).
///
/// Custom modifiers, `BYREF` and `PINNED` are nodes wrapping the type they
/// precede, so the tree re-encodes to the same bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeSig {
    /// `void`
    Void,
    /// `bool`
    Boolean,
    /// `char`
    Char,
    /// `sbyte`
    I1,
    /// `byte`
    U1,
    /// `short`
    I2,
    /// `ushort`
    U2,
    /// `int`
    I4,
    /// `uint`
    U4,
    /// `long`
    I8,
    /// `ulong`
    U8,
    /// `float`
    R4,
    /// `double`
    R8,
    /// `string`
    String,
    /// `object`
    Object,
    /// `nint`
    I,
    /// `nuint`
    U,
    /// `TypedReference`
    TypedByRef,
    /// `VALUETYPE TypeDefOrRef`
    ValueType(Token),
    /// `CLASS TypeDefOrRef`
    Class(Token),
    /// `VAR n`: a type's generic parameter.
    Var(u32),
    /// `MVAR n`: a method's generic parameter.
    MVar(u32),
    /// `PTR type` (the type may be `Void`).
    Ptr(Box<TypeSig>),
    /// `BYREF type`
    ByRef(Box<TypeSig>),
    /// `PINNED type` (local variables only)
    Pinned(Box<TypeSig>),
    /// `SZARRAY type`: a single-dimensional zero-based array.
    SzArray(Box<TypeSig>),
    /// `ARRAY type shape`: a general array.
    Array(Box<TypeSig>, ArrayShape),
    /// `GENERICINST (CLASS|VALUETYPE) TypeDefOrRef count type*`
    GenericInst {
        /// `VALUETYPE` (true) or `CLASS` (false).
        value_type: bool,
        /// The generic type definition.
        ty: Token,
        /// The type arguments.
        args: Vec<TypeSig>,
    },
    /// `FNPTR MethodDefSig|MethodRefSig`
    FnPtr(Box<MethodSig>),
    /// `CMOD_REQD`/`CMOD_OPT TypeDefOrRef type`: a custom modifier applied
    /// to the following type.
    Modified {
        /// `modreq` (true) or `modopt` (false).
        required: bool,
        /// The modifier type.
        modifier: Token,
        /// The modified type.
        ty: Box<TypeSig>,
    },
}

/// A method signature: MethodDefSig, MethodRefSig (with a vararg sentinel)
/// or StandAloneMethodSig (II.23.2.1-II.23.2.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodSig {
    /// The calling-convention byte, flags included (see [`calling_convention`]).
    pub calling_convention: u8,
    /// Generic parameter count (present when the `GENERIC` flag is set).
    pub generic_params: u32,
    /// The return type.
    pub ret: TypeSig,
    /// The parameters, vararg extras included.
    pub params: Vec<TypeSig>,
    /// For a vararg call site, the index in `params` where the `SENTINEL` stood.
    pub sentinel: Option<usize>,
}

/// A field signature (II.23.2.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldSig {
    /// The field type (custom modifiers included as [`TypeSig::Modified`]).
    pub ty: TypeSig,
}

/// A property signature (II.23.2.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertySig {
    /// The `HASTHIS` flag.
    pub has_this: bool,
    /// The property type.
    pub ty: TypeSig,
    /// Indexer parameters.
    pub params: Vec<TypeSig>,
}

/// A local variable signature (II.23.2.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalVarSig {
    /// The locals, in order (with `PINNED`, `BYREF`, modifiers as tree nodes).
    pub locals: Vec<TypeSig>,
}

/// A MethodSpec instantiation blob (II.23.2.15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodSpecSig {
    /// The generic arguments.
    pub args: Vec<TypeSig>,
}

fn sig_err(r: &Reader<'_>, s: &'static str) -> Error {
    r.err(ErrorKind::InvalidSignature(s))
}

fn finish(r: &Reader<'_>) -> Result<(), Error> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(r.err(ErrorKind::TrailingBytes))
    }
}

/// The first byte of a signature, which must be `kind` (`why` says so).
fn expect_kind(r: &mut Reader<'_>, kind: u8, why: &'static str) -> Result<(), Error> {
    if r.u8()? != kind {
        return Err(Error::new(0, ErrorKind::InvalidSignature(why)));
    }
    Ok(())
}

/// `count` types at `depth`. The count comes from the blob: nothing is
/// reserved for it, each type read must be there.
fn read_types(r: &mut Reader<'_>, count: u32, depth: u32) -> Result<Vec<TypeSig>, Error> {
    let mut types = Vec::new();
    for _ in 0..count {
        types.push(read_type(r, depth)?);
    }
    Ok(types)
}

/// A compressed count, then that many types at `depth`.
fn read_counted_types(r: &mut Reader<'_>, depth: u32) -> Result<Vec<TypeSig>, Error> {
    let count = r.compressed_u32()?;
    read_types(r, count, depth)
}

/// The inverse of [`read_counted_types`].
fn write_counted_types(out: &mut Vec<u8>, types: &[TypeSig]) -> Result<(), Error> {
    encode_compressed_u32(out, len_u32(types.len())?)?;
    for t in types {
        write_type(out, t)?;
    }
    Ok(())
}

fn read_type(r: &mut Reader<'_>, depth: u32) -> Result<TypeSig, Error> {
    if depth >= MAX_SIG_DEPTH {
        return Err(r.err(ErrorKind::TooDeep));
    }
    let d = depth + 1;
    let at = r.abs();
    let b = r.u8()?;
    Ok(match b {
        et::VOID => TypeSig::Void,
        et::BOOLEAN => TypeSig::Boolean,
        et::CHAR => TypeSig::Char,
        et::I1 => TypeSig::I1,
        et::U1 => TypeSig::U1,
        et::I2 => TypeSig::I2,
        et::U2 => TypeSig::U2,
        et::I4 => TypeSig::I4,
        et::U4 => TypeSig::U4,
        et::I8 => TypeSig::I8,
        et::U8 => TypeSig::U8,
        et::R4 => TypeSig::R4,
        et::R8 => TypeSig::R8,
        et::STRING => TypeSig::String,
        et::OBJECT => TypeSig::Object,
        et::I => TypeSig::I,
        et::U => TypeSig::U,
        et::TYPEDBYREF => TypeSig::TypedByRef,
        et::VALUETYPE => TypeSig::ValueType(read_tdor(r)?),
        et::CLASS => TypeSig::Class(read_tdor(r)?),
        et::VAR => TypeSig::Var(r.compressed_u32()?),
        et::MVAR => TypeSig::MVar(r.compressed_u32()?),
        et::PTR => TypeSig::Ptr(Box::new(read_type(r, d)?)),
        et::BYREF => TypeSig::ByRef(Box::new(read_type(r, d)?)),
        et::PINNED => TypeSig::Pinned(Box::new(read_type(r, d)?)),
        et::SZARRAY => TypeSig::SzArray(Box::new(read_type(r, d)?)),
        et::ARRAY => {
            let elem = read_type(r, d)?;
            let rank = r.compressed_u32()?;
            let nsizes = r.compressed_u32()?;
            let mut sizes = Vec::new();
            for _ in 0..nsizes {
                sizes.push(r.compressed_u32()?);
            }
            let nlo = r.compressed_u32()?;
            let mut lower_bounds = Vec::new();
            for _ in 0..nlo {
                lower_bounds.push(r.compressed_i32()?);
            }
            TypeSig::Array(
                Box::new(elem),
                ArrayShape {
                    rank,
                    sizes,
                    lower_bounds,
                },
            )
        }
        et::GENERICINST => {
            let kind = r.u8()?;
            let value_type = match kind {
                et::VALUETYPE => true,
                et::CLASS => false,
                _ => return Err(sig_err(r, "GENERICINST not followed by CLASS or VALUETYPE")),
            };
            let ty = read_tdor(r)?;
            let args = read_counted_types(r, d)?;
            TypeSig::GenericInst {
                value_type,
                ty,
                args,
            }
        }
        et::FNPTR => TypeSig::FnPtr(Box::new(read_method(r, d)?)),
        et::CMOD_REQD | et::CMOD_OPT => {
            let modifier = read_tdor(r)?;
            TypeSig::Modified {
                required: b == et::CMOD_REQD,
                modifier,
                ty: Box::new(read_type(r, d)?),
            }
        }
        et::SENTINEL => {
            return Err(Error::new(
                at,
                ErrorKind::InvalidSignature("SENTINEL outside a method parameter list"),
            ))
        }
        _ => {
            return Err(Error::new(
                at,
                ErrorKind::InvalidSignature("unknown element type"),
            ))
        }
    })
}

fn read_method(r: &mut Reader<'_>, depth: u32) -> Result<MethodSig, Error> {
    if depth >= MAX_SIG_DEPTH {
        return Err(r.err(ErrorKind::TooDeep));
    }
    let at = r.abs();
    let conv = r.u8()?;
    if conv & 0x0F > cc::UNMANAGED
        || matches!(conv & 0x0F, cc::FIELD | cc::LOCAL_SIG | cc::PROPERTY)
        || conv & 0x80 != 0
    {
        return Err(Error::new(
            at,
            ErrorKind::InvalidSignature("not a method calling convention"),
        ));
    }
    let generic_params = if conv & cc::GENERIC != 0 {
        r.compressed_u32()?
    } else {
        0
    };
    let count = r.compressed_u32()?;
    let ret = read_type(r, depth + 1)?;
    let mut params = Vec::new();
    let mut sentinel = None;
    for _ in 0..count {
        if r.peek_u8()? == et::SENTINEL {
            if sentinel.is_some() {
                return Err(sig_err(r, "more than one SENTINEL"));
            }
            r.u8()?;
            sentinel = Some(params.len());
        }
        params.push(read_type(r, depth + 1)?);
    }
    Ok(MethodSig {
        calling_convention: conv,
        generic_params,
        ret,
        params,
        sentinel,
    })
}

fn write_type(out: &mut Vec<u8>, t: &TypeSig) -> Result<(), Error> {
    match t {
        TypeSig::Void => out.push(et::VOID),
        TypeSig::Boolean => out.push(et::BOOLEAN),
        TypeSig::Char => out.push(et::CHAR),
        TypeSig::I1 => out.push(et::I1),
        TypeSig::U1 => out.push(et::U1),
        TypeSig::I2 => out.push(et::I2),
        TypeSig::U2 => out.push(et::U2),
        TypeSig::I4 => out.push(et::I4),
        TypeSig::U4 => out.push(et::U4),
        TypeSig::I8 => out.push(et::I8),
        TypeSig::U8 => out.push(et::U8),
        TypeSig::R4 => out.push(et::R4),
        TypeSig::R8 => out.push(et::R8),
        TypeSig::String => out.push(et::STRING),
        TypeSig::Object => out.push(et::OBJECT),
        TypeSig::I => out.push(et::I),
        TypeSig::U => out.push(et::U),
        TypeSig::TypedByRef => out.push(et::TYPEDBYREF),
        TypeSig::ValueType(tok) => {
            out.push(et::VALUETYPE);
            encode_type_def_or_ref(out, *tok)?;
        }
        TypeSig::Class(tok) => {
            out.push(et::CLASS);
            encode_type_def_or_ref(out, *tok)?;
        }
        TypeSig::Var(n) => {
            out.push(et::VAR);
            encode_compressed_u32(out, *n)?;
        }
        TypeSig::MVar(n) => {
            out.push(et::MVAR);
            encode_compressed_u32(out, *n)?;
        }
        TypeSig::Ptr(t) => {
            out.push(et::PTR);
            write_type(out, t)?;
        }
        TypeSig::ByRef(t) => {
            out.push(et::BYREF);
            write_type(out, t)?;
        }
        TypeSig::Pinned(t) => {
            out.push(et::PINNED);
            write_type(out, t)?;
        }
        TypeSig::SzArray(t) => {
            out.push(et::SZARRAY);
            write_type(out, t)?;
        }
        TypeSig::Array(t, shape) => {
            out.push(et::ARRAY);
            write_type(out, t)?;
            encode_compressed_u32(out, shape.rank)?;
            encode_compressed_u32(out, len_u32(shape.sizes.len())?)?;
            for s in &shape.sizes {
                encode_compressed_u32(out, *s)?;
            }
            encode_compressed_u32(out, len_u32(shape.lower_bounds.len())?)?;
            for b in &shape.lower_bounds {
                encode_compressed_i32(out, *b)?;
            }
        }
        TypeSig::GenericInst {
            value_type,
            ty,
            args,
        } => {
            out.push(et::GENERICINST);
            out.push(if *value_type {
                et::VALUETYPE
            } else {
                et::CLASS
            });
            encode_type_def_or_ref(out, *ty)?;
            write_counted_types(out, args)?;
        }
        TypeSig::FnPtr(m) => {
            out.push(et::FNPTR);
            write_method(out, m)?;
        }
        TypeSig::Modified {
            required,
            modifier,
            ty,
        } => {
            out.push(if *required {
                et::CMOD_REQD
            } else {
                et::CMOD_OPT
            });
            encode_type_def_or_ref(out, *modifier)?;
            write_type(out, ty)?;
        }
    }
    Ok(())
}

fn len_u32(n: usize) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| Error::new(0, ErrorKind::InvalidCompressedInt))
}

fn write_method(out: &mut Vec<u8>, m: &MethodSig) -> Result<(), Error> {
    out.push(m.calling_convention);
    if m.calling_convention & cc::GENERIC != 0 {
        encode_compressed_u32(out, m.generic_params)?;
    }
    encode_compressed_u32(out, len_u32(m.params.len())?)?;
    write_type(out, &m.ret)?;
    for (i, p) in m.params.iter().enumerate() {
        if m.sentinel == Some(i) {
            out.push(et::SENTINEL);
        }
        write_type(out, p)?;
    }
    Ok(())
}

impl TypeSig {
    /// Decodes a type blob (such as a TypeSpec) that must fill `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<TypeSig, Error> {
        let mut r = Reader::new(bytes, 0);
        let t = read_type(&mut r, 0)?;
        finish(&r)?;
        Ok(t)
    }

    /// Encodes the type.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        write_type(&mut out, self)?;
        Ok(out)
    }

    /// The type with custom modifiers stripped.
    pub fn unmodified(&self) -> &TypeSig {
        let mut t = self;
        while let TypeSig::Modified { ty, .. } = t {
            t = ty;
        }
        t
    }

    /// A C#-like name (`int`, `List<string>[]`, `ref int`), using `names`
    /// for type tokens.
    pub fn format(&self, names: &dyn Fn(Token) -> String) -> String {
        let mut s = String::new();
        fmt_type(&mut s, self, names);
        s
    }
}

fn fmt_type(s: &mut String, t: &TypeSig, names: &dyn Fn(Token) -> String) {
    let simple = match t {
        TypeSig::Void => "void",
        TypeSig::Boolean => "bool",
        TypeSig::Char => "char",
        TypeSig::I1 => "sbyte",
        TypeSig::U1 => "byte",
        TypeSig::I2 => "short",
        TypeSig::U2 => "ushort",
        TypeSig::I4 => "int",
        TypeSig::U4 => "uint",
        TypeSig::I8 => "long",
        TypeSig::U8 => "ulong",
        TypeSig::R4 => "float",
        TypeSig::R8 => "double",
        TypeSig::String => "string",
        TypeSig::Object => "object",
        TypeSig::I => "nint",
        TypeSig::U => "nuint",
        TypeSig::TypedByRef => "TypedReference",
        _ => "",
    };
    if !simple.is_empty() {
        s.push_str(simple);
        return;
    }
    match t {
        TypeSig::ValueType(tok) | TypeSig::Class(tok) => s.push_str(&names(*tok)),
        TypeSig::Var(n) => {
            let _ = write!(s, "!{n}");
        }
        TypeSig::MVar(n) => {
            let _ = write!(s, "!!{n}");
        }
        TypeSig::Ptr(t) => {
            fmt_type(s, t, names);
            s.push('*');
        }
        TypeSig::ByRef(t) => {
            s.push_str("ref ");
            fmt_type(s, t, names);
        }
        TypeSig::Pinned(t) => {
            fmt_type(s, t, names);
            s.push_str(" pinned");
        }
        TypeSig::SzArray(t) => {
            fmt_type(s, t, names);
            s.push_str("[]");
        }
        TypeSig::Array(t, shape) => {
            fmt_type(s, t, names);
            // The rank comes from the blob: spell out commas only for real ranks.
            if shape.rank <= MAX_RANK {
                s.push('[');
                for _ in 1..shape.rank {
                    s.push(',');
                }
                s.push(']');
            } else {
                let _ = write!(s, "[rank {}]", shape.rank);
            }
        }
        TypeSig::GenericInst { ty, args, .. } => {
            s.push_str(&names(*ty));
            s.push('<');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                fmt_type(s, a, names);
            }
            s.push('>');
        }
        TypeSig::FnPtr(m) => {
            s.push_str("delegate*<");
            for p in &m.params {
                fmt_type(s, p, names);
                s.push_str(", ");
            }
            fmt_type(s, &m.ret, names);
            s.push('>');
        }
        TypeSig::Modified {
            required,
            modifier,
            ty,
        } => {
            fmt_type(s, ty, names);
            s.push_str(if *required { " modreq(" } else { " modopt(" });
            s.push_str(&names(*modifier));
            s.push(')');
        }
        _ => {}
    }
}

impl MethodSig {
    /// Decodes a MethodDefSig, MethodRefSig or StandAloneMethodSig that must fill `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<MethodSig, Error> {
        let mut r = Reader::new(bytes, 0);
        let m = read_method(&mut r, 0)?;
        finish(&r)?;
        Ok(m)
    }

    /// Encodes the signature.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        write_method(&mut out, self)?;
        Ok(out)
    }

    /// The `HASTHIS` flag.
    pub fn has_this(&self) -> bool {
        self.calling_convention & cc::HASTHIS != 0
    }

    /// The `EXPLICITTHIS` flag (`this` is the first listed parameter).
    pub fn explicit_this(&self) -> bool {
        self.calling_convention & cc::EXPLICITTHIS != 0
    }

    /// The calling-convention kind (low 4 bits: `DEFAULT`, `VARARG`, ...).
    pub fn kind(&self) -> u8 {
        self.calling_convention & 0x0F
    }

    /// What stack analysis needs to know to simulate a call to this signature.
    pub fn stack_sig(&self) -> StackSig {
        StackSig {
            params: self.params.len() as u32,
            has_this: self.has_this() && !self.explicit_this(),
            returns_value: *self.ret.unmodified() != TypeSig::Void,
        }
    }

    /// A C#-like description of a method with this signature, e.g.
    /// `int Program::Fib(int)`; `name` is the qualified method name and
    /// `names` names type tokens. Like C#, it does not say whether the method
    /// is static (see [`has_this`](MethodSig::has_this)). Method generic
    /// parameters show as `!!0`; vararg extras follow `...`.
    pub fn format_method(&self, name: &str, names: &dyn Fn(Token) -> String) -> String {
        let mut s = String::new();
        fmt_type(&mut s, &self.ret, names);
        s.push(' ');
        s.push_str(name);
        // The count comes from the blob: never write more than a few names.
        match self.generic_params {
            0 => {}
            n @ 1..=8 => {
                s.push('<');
                for i in 0..n {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    let _ = write!(s, "!!{i}");
                }
                s.push('>');
            }
            n => {
                let _ = write!(s, "<!!0, ..., !!{}>", n - 1);
            }
        }
        s.push('(');
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            if self.sentinel == Some(i) {
                s.push_str("..., ");
            }
            fmt_type(&mut s, p, names);
        }
        if self.kind() == cc::VARARG && self.sentinel.is_none() {
            if !self.params.is_empty() {
                s.push_str(", ");
            }
            s.push_str("...");
        }
        s.push(')');
        s
    }
}

impl FieldSig {
    /// Decodes a field signature (`0x06 CustomMod* Type`) that must fill `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<FieldSig, Error> {
        let mut r = Reader::new(bytes, 0);
        expect_kind(&mut r, cc::FIELD, "field signature must start with 0x06")?;
        let ty = read_type(&mut r, 0)?;
        finish(&r)?;
        Ok(FieldSig { ty })
    }

    /// Encodes the signature.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = alloc::vec![cc::FIELD];
        write_type(&mut out, &self.ty)?;
        Ok(out)
    }
}

impl PropertySig {
    /// Decodes a property signature (`0x08|HASTHIS count CustomMod* Type Param*`).
    pub fn decode(bytes: &[u8]) -> Result<PropertySig, Error> {
        let mut r = Reader::new(bytes, 0);
        let b = r.u8()?;
        if b & !cc::HASTHIS != cc::PROPERTY {
            return Err(Error::new(
                0,
                ErrorKind::InvalidSignature("property signature must start with 0x08 or 0x28"),
            ));
        }
        let count = r.compressed_u32()?;
        let ty = read_type(&mut r, 0)?;
        let params = read_types(&mut r, count, 0)?;
        finish(&r)?;
        Ok(PropertySig {
            has_this: b & cc::HASTHIS != 0,
            ty,
            params,
        })
    }

    /// Encodes the signature.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        out.push(cc::PROPERTY | if self.has_this { cc::HASTHIS } else { 0 });
        encode_compressed_u32(&mut out, len_u32(self.params.len())?)?;
        write_type(&mut out, &self.ty)?;
        for p in &self.params {
            write_type(&mut out, p)?;
        }
        Ok(out)
    }
}

impl LocalVarSig {
    /// Decodes a local variable signature (`0x07 count local*`).
    pub fn decode(bytes: &[u8]) -> Result<LocalVarSig, Error> {
        let mut r = Reader::new(bytes, 0);
        expect_kind(
            &mut r,
            cc::LOCAL_SIG,
            "local signature must start with 0x07",
        )?;
        let locals = read_counted_types(&mut r, 0)?;
        finish(&r)?;
        Ok(LocalVarSig { locals })
    }

    /// Encodes the signature.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = alloc::vec![cc::LOCAL_SIG];
        write_counted_types(&mut out, &self.locals)?;
        Ok(out)
    }
}

impl MethodSpecSig {
    /// Decodes a MethodSpec instantiation (`0x0A count type*`).
    pub fn decode(bytes: &[u8]) -> Result<MethodSpecSig, Error> {
        let mut r = Reader::new(bytes, 0);
        expect_kind(&mut r, cc::GENERICINST, "method spec must start with 0x0A")?;
        let args = read_counted_types(&mut r, 0)?;
        finish(&r)?;
        Ok(MethodSpecSig { args })
    }

    /// Encodes the signature.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let mut out = alloc::vec![cc::GENERICINST];
        write_counted_types(&mut out, &self.args)?;
        Ok(out)
    }
}

// ---------------------------------------------------------------------------
// Building signatures

impl TypeSig {
    /// `SZARRAY elem`: `elem[]`.
    pub fn sz_array(elem: TypeSig) -> TypeSig {
        TypeSig::SzArray(Box::new(elem))
    }

    /// `BYREF ty`: `ref ty` (also `out ty`).
    pub fn by_ref(ty: TypeSig) -> TypeSig {
        TypeSig::ByRef(Box::new(ty))
    }

    /// A generic class instantiation, `ty<args>` (`GENERICINST CLASS ty
    /// count args`).
    pub fn generic_class(ty: Token, args: Vec<TypeSig>) -> TypeSig {
        TypeSig::GenericInst {
            value_type: false,
            ty,
            args,
        }
    }

    /// A generic value-type instantiation, `ty<args>` (`GENERICINST
    /// VALUETYPE ty count args`).
    pub fn generic_value_type(ty: Token, args: Vec<TypeSig>) -> TypeSig {
        TypeSig::GenericInst {
            value_type: true,
            ty,
            args,
        }
    }

    /// Whether a value of this type is an object reference, so that it
    /// needs no `box` to be passed as `object`: `string`, `object`, a class,
    /// an array or a generic class instantiation. `false` for value types,
    /// generic parameters (`VAR`/`MVAR`, which may be either), pointers,
    /// by-refs and `TypedReference`. Custom modifiers are looked through.
    pub fn is_reference_type(&self) -> bool {
        matches!(
            self.unmodified(),
            TypeSig::String
                | TypeSig::Object
                | TypeSig::Class(_)
                | TypeSig::SzArray(_)
                | TypeSig::Array(..)
                | TypeSig::GenericInst {
                    value_type: false,
                    ..
                }
        )
    }
}

impl MethodSig {
    /// A static method's signature (`DEFAULT` calling convention):
    /// `MethodSig::static_method(TypeSig::Void, vec![TypeSig::String])` is
    /// `static void (string)`, bytes `00 01 01 0E`.
    pub fn static_method(ret: TypeSig, params: Vec<TypeSig>) -> MethodSig {
        MethodSig {
            calling_convention: cc::DEFAULT,
            generic_params: 0,
            ret,
            params,
            sentinel: None,
        }
    }

    /// An instance method's signature (`HASTHIS`): `instance ret (params)`.
    pub fn instance_method(ret: TypeSig, params: Vec<TypeSig>) -> MethodSig {
        MethodSig {
            calling_convention: cc::HASTHIS,
            ..MethodSig::static_method(ret, params)
        }
    }

    /// Makes this a generic method's signature with `count` type
    /// parameters (`GENERIC` flag and count); `count == 0` removes both.
    pub fn with_generic_params(mut self, count: u32) -> MethodSig {
        if count == 0 {
            self.calling_convention &= !cc::GENERIC;
        } else {
            self.calling_convention |= cc::GENERIC;
        }
        self.generic_params = count;
        self
    }

    /// `static void (string)`: bytes `00 01 01 0E`.
    pub fn static_void_string() -> MethodSig {
        MethodSig::static_method(TypeSig::Void, alloc::vec![TypeSig::String])
    }

    /// `static object (object[])`: bytes `00 01 1C 1D 1C`.
    pub fn static_object_object_array() -> MethodSig {
        MethodSig::static_method(
            TypeSig::Object,
            alloc::vec![TypeSig::sz_array(TypeSig::Object)],
        )
    }
}

impl MethodSpecSig {
    /// The instantiation `<args>` of a generic method.
    pub fn new(args: Vec<TypeSig>) -> MethodSpecSig {
        MethodSpecSig { args }
    }
}

impl LocalVarSig {
    /// Appends `locals` and returns the index of the first one (the number
    /// of locals before). Fails when the total would not fit the 16-bit
    /// local index of `ldloc`/`stloc` (at most 65535 locals; ECMA-335
    /// III.3.43).
    pub fn push_locals(&mut self, locals: impl IntoIterator<Item = TypeSig>) -> Result<u16, Error> {
        let first = u16::try_from(self.locals.len())
            .map_err(|_| Error::new(0, ErrorKind::Unencodable("more than 65535 locals")))?;
        self.locals.extend(locals);
        if self.locals.len() > 0xFFFF {
            self.locals.truncate(usize::from(first));
            return Err(Error::new(
                0,
                ErrorKind::Unencodable("more than 65535 locals"),
            ));
        }
        Ok(first)
    }

    /// Decodes an existing local signature (empty `existing`: a method with
    /// no locals), appends `locals` and encodes the result; returns the new
    /// blob and the index of the first appended local. Give the blob to
    /// `IMetaDataEmit::GetTokenFromSig` and the token to the method header.
    pub fn append(existing: &[u8], locals: &[TypeSig]) -> Result<(Vec<u8>, u16), Error> {
        let mut sig = if existing.is_empty() {
            LocalVarSig { locals: Vec::new() }
        } else {
            LocalVarSig::decode(existing)?
        };
        let first = sig.push_locals(locals.iter().cloned())?;
        Ok((sig.encode()?, first))
    }
}
