//! Static fields, for naming what a heap snapshot's objects are held by:
//! the TypeDefs and fields of a module's metadata (`EnumTypeDefs`,
//! `EnumFields`, `GetFieldProps`), a loaded class's token
//! (`GetClassIDInfo2`), what kind of static a field is
//! (`GetStaticFieldInfo`) and, under a suspension, the object a static of
//! reference type holds (`GetAppDomainStaticAddress`, then the slot read).

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;

use super::info::{ProfilerInfo, Result};
use super::metadata::{blob, enumerate, MetadataImport};
use super::strings::Utf16Buf;
use super::suspend::SuspendedRuntime;
use crate::metadata::{mdFieldDef, mdTypeDef, PCCOR_SIGNATURE};
use crate::profiling::{AppDomainID, ClassID, ModuleID, ObjectID, COR_PRF_STATIC_TYPE};

/// `fdStatic` of `CorFieldAttr` (corhdr.h).
pub const FD_STATIC: u32 = 0x0010;
/// `fdLiteral` of `CorFieldAttr` (corhdr.h): a constant, with no storage.
pub const FD_LITERAL: u32 = 0x0040;

/// A field's name, attributes and signature (`GetFieldProps`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldProps<'a> {
    /// The field's name.
    pub name: String,
    /// Its `CorFieldAttr` flags ([`FD_STATIC`], [`FD_LITERAL`], ...).
    pub attributes: u32,
    /// Its signature blob (`FIELD`, custom modifiers, the type).
    pub signature: &'a [u8],
}

impl FieldProps<'_> {
    /// Whether the field's type is a reference type (a class, a string,
    /// `object`, an array or a generic class instance) by its signature
    /// (ECMA-335 II.23.2.4): the slot of such a static holds an object
    /// reference. Generic parameters (`VAR`) and value types are not.
    pub fn is_reference(&self) -> bool {
        let mut sig = self.signature;
        if sig.first() != Some(&0x06) {
            return false;
        }
        sig = &sig[1..];
        // Custom modifiers: CMOD_REQD/CMOD_OPT then a compressed token.
        while let Some(&(0x1f | 0x20)) = sig.first() {
            let len = match sig.get(1) {
                Some(b) if b & 0x80 == 0 => 1,
                Some(b) if b & 0xc0 == 0x80 => 2,
                Some(_) => 4,
                None => return false,
            };
            sig = sig.get(1 + len..).unwrap_or(&[]);
        }
        match sig {
            // CLASS, STRING, OBJECT, SZARRAY, ARRAY.
            [0x12 | 0x0e | 0x1c | 0x1d | 0x14, ..] => true,
            // GENERICINST CLASS.
            [0x15, 0x12, ..] => true,
            _ => false,
        }
    }
}

impl MetadataImport {
    /// The TypeDefs of the module, in metadata order (`EnumTypeDefs`).
    pub fn type_defs(&self) -> Result<Vec<mdTypeDef>> {
        let raw = self.raw();
        // SAFETY: the enumerate contract: a valid handle, a buffer of `max`.
        enumerate(raw, |h, out, max, n| unsafe {
            raw.EnumTypeDefs(h, out, max, n)
        })
    }

    /// The fields of `typedef`, in metadata order (`EnumFields`).
    pub fn fields(&self, typedef: mdTypeDef) -> Result<Vec<mdFieldDef>> {
        let raw = self.raw();
        // SAFETY: the enumerate contract.
        enumerate(raw, |h, out, max, n| unsafe {
            raw.EnumFields(h, typedef, out, max, n)
        })
    }

    /// A field's name, attributes and signature (`GetFieldProps`).
    pub fn field_props(&self, field: mdFieldDef) -> Result<FieldProps<'_>> {
        let mut name = Utf16Buf::new();
        let mut class = mdTypeDef(0);
        let (mut attributes, mut sig_len, mut cplus, mut value_len) = (0, 0, 0, 0);
        let mut sig: PCCOR_SIGNATURE = core::ptr::null();
        let mut value = core::ptr::null();
        name.read(|cap, needed, buf| {
            // SAFETY: `read` passes a buffer of `cap` characters; the other
            // out-pointers are locals.
            unsafe {
                self.raw().GetFieldProps(
                    field,
                    &mut class,
                    buf,
                    cap,
                    needed,
                    &mut attributes,
                    &mut sig,
                    &mut sig_len,
                    &mut cplus,
                    &mut value,
                    &mut value_len,
                )
            }
        })?;
        // SAFETY: the runtime answered `sig_len` bytes at `sig` (or null),
        // owned by the metadata scope, which lives at least as long as `self`.
        let signature = unsafe { blob(sig, sig_len) };
        Ok(FieldProps {
            name: name.to_string_lossy(),
            attributes,
            signature,
        })
    }
}

impl ProfilerInfo {
    /// The module and TypeDef of a loaded class (`GetClassIDInfo2`,
    /// `ICorProfilerInfo2`; for an instantiation, its generic type's).
    pub fn class_token(&self, class: ClassID) -> Result<(ModuleID, mdTypeDef)> {
        let v2 = self.live_v2()?;
        let (mut module, mut typedef, mut parent) = (ModuleID::NULL, mdTypeDef(0), ClassID::NULL);
        let mut count = 0;
        // SAFETY: valid out-pointers; a zero-capacity type-argument buffer
        // asks for the count only.
        unsafe {
            v2.GetClassIDInfo2(
                class,
                &mut module,
                &mut typedef,
                &mut parent,
                0,
                &mut count,
                core::ptr::null_mut(),
            )
        }
        .ok_with("GetClassIDInfo2")?;
        Ok((module, typedef))
    }

    /// What kind of static `field` of `class` is (`GetStaticFieldInfo`,
    /// `ICorProfilerInfo2`).
    pub fn static_field_info(
        &self,
        class: ClassID,
        field: mdFieldDef,
    ) -> Result<COR_PRF_STATIC_TYPE> {
        let v2 = self.live_v2()?;
        let mut kind = COR_PRF_STATIC_TYPE::default();
        // SAFETY: a valid out-pointer; the runtime checks the IDs.
        unsafe { v2.GetStaticFieldInfo(class, field, &mut kind) }.ok_with("GetStaticFieldInfo")?;
        Ok(kind)
    }
}

impl SuspendedRuntime<'_> {
    /// The object an application-domain static of reference type holds now
    /// (`ObjectID::NULL` when it holds none): its address from
    /// `GetAppDomainStaticAddress` (`ICorProfilerInfo2`), then the slot
    /// read, the runtime being suspended so that neither the slot nor the
    /// object moves. `CORPROF_E_DATA_INCOMPLETE` when the class's statics
    /// are not allocated yet.
    ///
    /// # Safety
    ///
    /// `field` must be a static field of `class` whose type is a reference
    /// type ([`FieldProps::is_reference`]) and an application-domain static
    /// ([`ProfilerInfo::static_field_info`]): the slot is read as an object
    /// reference, and a field of another type may be smaller than one.
    pub unsafe fn static_object(
        &self,
        class: ClassID,
        field: mdFieldDef,
        app_domain: AppDomainID,
    ) -> Result<ObjectID> {
        let v2 = self.info().live_v2()?;
        let mut address: *mut c_void = core::ptr::null_mut();
        // SAFETY: a valid out-pointer; the runtime checks the IDs.
        unsafe { v2.GetAppDomainStaticAddress(class, field, app_domain, &mut address) }
            .ok_with("GetAppDomainStaticAddress")?;
        if address.is_null() || address as usize % core::mem::align_of::<ObjectID>() != 0 {
            return Err(crate::E_UNEXPECTED.into());
        }
        // SAFETY: the runtime's address of the slot of a static of reference
        // type (this function's contract): an aligned object reference,
        // which the suspension keeps from being written or moved.
        Ok(unsafe { core::ptr::read_volatile(address as *const ObjectID) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(signature: &[u8]) -> FieldProps<'_> {
        FieldProps {
            name: String::new(),
            attributes: FD_STATIC,
            signature,
        }
    }

    #[test]
    fn reference_types_by_signature() {
        // CLASS, STRING, OBJECT, SZARRAY of I4, GENERICINST CLASS.
        for sig in [
            &[0x06, 0x12, 0x08][..],
            &[0x06, 0x0e],
            &[0x06, 0x1c],
            &[0x06, 0x1d, 0x08],
            &[0x06, 0x15, 0x12, 0x08, 0x01, 0x0e],
            // A custom modifier (volatile) before a class.
            &[0x06, 0x1f, 0x49, 0x12, 0x08],
        ] {
            assert!(field(sig).is_reference(), "{sig:x?}");
        }
        // I4, VALUETYPE, GENERICINST VALUETYPE, VAR, not a field, empty,
        // a modifier cut short.
        for sig in [
            &[0x06, 0x08][..],
            &[0x06, 0x11, 0x08],
            &[0x06, 0x15, 0x11, 0x08, 0x01, 0x0e],
            &[0x06, 0x13, 0x00],
            &[0x07, 0x12, 0x08],
            &[],
            &[0x06, 0x1f],
        ] {
            assert!(!field(sig).is_reference(), "{sig:x?}");
        }
    }
}
