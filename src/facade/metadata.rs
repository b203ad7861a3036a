//! [`MetadataImport`]: names of types and methods, read from a module's
//! metadata (`IMetaDataImport`).

use alloc::string::String;
use core::fmt;

use super::info::Result;
use super::strings::read_utf16;
use crate::metadata::{mdMethodDef, mdToken, mdTypeDef, IMetaDataImport, PCCOR_SIGNATURE};
use crate::E_FAIL;

/// A module's metadata, for reading names. Derefs to the raw
/// [`IMetaDataImport`] invoker for everything else.
#[derive(Clone, Debug)]
pub struct MetadataImport {
    raw: IMetaDataImport,
}

/// A method's name and its declaring type's full name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodName {
    /// The declaring type's full name: namespace, enclosing types joined
    /// with `+` (`Program`, `MyApp.Outer+Inner`).
    pub type_name: String,
    /// The method's own name (`Fib`, `.ctor`).
    pub method_name: String,
}

impl fmt::Display for MethodName {
    /// `Type.Method`, as ildasm and stack traces print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.type_name.is_empty() {
            f.write_str(&self.method_name)
        } else {
            write!(f, "{}.{}", self.type_name, self.method_name)
        }
    }
}

/// A method's properties: what `GetMethodProps` answers.
#[derive(Clone, Debug)]
pub struct MethodProps<'a> {
    /// The method's name.
    pub name: String,
    /// The type that declares it.
    pub declaring_type: mdTypeDef,
    /// `CorMethodAttr` flags.
    pub attributes: u32,
    /// `CorMethodImpl` flags.
    pub impl_flags: u32,
    /// The relative virtual address of its body (0 for abstract/extern).
    pub code_rva: u32,
    /// Its signature blob (decode it with [`crate::cil::sig::MethodSig::decode`]).
    pub signature: &'a [u8],
}

impl MetadataImport {
    /// Wraps a raw invoker.
    pub fn new(raw: IMetaDataImport) -> MetadataImport {
        MetadataImport { raw }
    }

    /// The raw invoker.
    pub fn raw(&self) -> &IMetaDataImport {
        &self.raw
    }

    /// A method's properties (`GetMethodProps`).
    pub fn method_props(&self, method: mdMethodDef) -> Result<MethodProps<'_>> {
        let mut class = mdTypeDef(0);
        let (mut attributes, mut impl_flags, mut code_rva, mut sig_len) = (0, 0, 0, 0);
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        let name = read_utf16(|cap, needed, buf| {
            // SAFETY: `read_utf16` passes a buffer of `cap` characters; the
            // other out-pointers are locals.
            unsafe {
                self.raw.GetMethodProps(
                    method,
                    &mut class,
                    buf,
                    cap,
                    needed,
                    &mut attributes,
                    &mut sig,
                    &mut sig_len,
                    &mut code_rva,
                    &mut impl_flags,
                )
            }
        })?;
        let signature = if sig.is_null() {
            &[][..]
        } else {
            // SAFETY: the runtime answered `sig_len` bytes at `sig`, owned by
            // the metadata scope, which lives at least as long as `self`.
            unsafe { core::slice::from_raw_parts(sig, sig_len as usize) }
        };
        Ok(MethodProps {
            name,
            declaring_type: class,
            attributes,
            impl_flags,
            code_rva,
            signature,
        })
    }

    /// A type's full name: namespace and name (`GetTypeDefProps`), prefixed
    /// by its enclosing types for nested types (`Outer+Inner`).
    pub fn type_name(&self, typedef: mdTypeDef) -> Result<String> {
        let mut name = self.type_def_name(typedef)?;
        let mut current = typedef;
        for _ in 0..32 {
            let mut enclosing = mdTypeDef(0);
            // SAFETY: a valid out-pointer. A type that is not nested answers
            // a failure code, which ends the walk.
            let hr = unsafe { self.raw.GetNestedClassProps(current, &mut enclosing) };
            if hr.is_err() || enclosing.is_nil() {
                break;
            }
            let outer = self.type_def_name(enclosing)?;
            name = alloc::format!("{outer}+{name}");
            current = enclosing;
        }
        Ok(name)
    }

    fn type_def_name(&self, typedef: mdTypeDef) -> Result<String> {
        let (mut flags, mut extends) = (0, mdToken(0));
        read_utf16(|cap, needed, buf| {
            // SAFETY: as in `method_props`.
            unsafe {
                self.raw
                    .GetTypeDefProps(typedef, buf, cap, needed, &mut flags, &mut extends)
            }
        })
    }

    /// A method's name and its declaring type's full name.
    pub fn method_name(&self, method: mdMethodDef) -> Result<MethodName> {
        let props = self.method_props(method)?;
        let type_name = if props.declaring_type.is_nil() {
            String::new()
        } else {
            self.type_name(props.declaring_type).map_err(|_| E_FAIL)?
        };
        Ok(MethodName {
            type_name,
            method_name: props.name,
        })
    }
}

impl core::ops::Deref for MetadataImport {
    type Target = IMetaDataImport;
    fn deref(&self) -> &IMetaDataImport {
        &self.raw
    }
}
