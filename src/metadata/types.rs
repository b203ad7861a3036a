//! The structs, enums and typedefs the metadata interfaces of cor.h use.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

use core::ffi::c_void;

use crate::ctypes::{c_enum, c_flags};
use crate::metadata::tokens::{mdFieldDef, mdMemberRef};
use crate::{DWORD, GUID, LPWSTR, ULONG, USHORT};

/// `HCORENUM`: an opaque enumerator handle. Start with null, pass its address
/// to an `Enum*` method repeatedly, then free it with `CloseEnum`.
pub type HCORENUM = *mut c_void;

/// `COR_SIGNATURE`: one byte of a metadata signature blob.
pub type COR_SIGNATURE = u8;
/// `PCOR_SIGNATURE`: a writable signature blob.
pub type PCOR_SIGNATURE = *mut COR_SIGNATURE;
/// `PCCOR_SIGNATURE`: a read-only signature blob.
pub type PCCOR_SIGNATURE = *const COR_SIGNATURE;

/// `MDUTF8CSTR`: a NUL-terminated UTF-8 string in a metadata heap (C `const char *`).
pub type MDUTF8CSTR = *const u8;
/// `MDUTF8STR`: a writable NUL-terminated UTF-8 string (C `char *`).
pub type MDUTF8STR = *mut u8;

/// `UVCP_CONSTANT`: a pointer to a constant's value, possibly unaligned.
pub type UVCP_CONSTANT = *const c_void;

/// `RID`: a row number in a metadata table (1-based; 0 means nil).
pub type RID = u32;

c_enum! {
    /// `CorSaveSize`: how `GetSaveSize` computes the size of the saved metadata.
    pub struct CorSaveSize(u32);
    /// The exact size; slower.
    cssAccurate = 0x0000;
    /// An estimate that may be padded; faster.
    cssQuick = 0x0001;
    /// Leave out the custom attributes of discardable types.
    cssDiscardTransientCAs = 0x0002;
}

/// `COR_SECATTR`: one security custom attribute, for
/// `IMetaDataEmit::DefineSecurityAttributeSet`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct COR_SECATTR {
    /// The MemberRef of the attribute's constructor.
    pub tkCtor: mdMemberRef,
    /// The blob of constructor arguments and named field/property values.
    pub pCustomAttribute: *const c_void,
    /// The size of that blob, in bytes.
    pub cbCustomAttribute: u32,
}

c_enum! {
    /// `CorElementType`: the element type codes of signatures (ECMA-335 II.23.1.16).
    pub struct CorElementType(u32);
    /// Marks the end of a list.
    ELEMENT_TYPE_END = 0x00;
    /// `void`.
    ELEMENT_TYPE_VOID = 0x01;
    /// `bool`.
    ELEMENT_TYPE_BOOLEAN = 0x02;
    /// `char` (UTF-16 code unit).
    ELEMENT_TYPE_CHAR = 0x03;
    /// `sbyte`.
    ELEMENT_TYPE_I1 = 0x04;
    /// `byte`.
    ELEMENT_TYPE_U1 = 0x05;
    /// `short`.
    ELEMENT_TYPE_I2 = 0x06;
    /// `ushort`.
    ELEMENT_TYPE_U2 = 0x07;
    /// `int`.
    ELEMENT_TYPE_I4 = 0x08;
    /// `uint`.
    ELEMENT_TYPE_U4 = 0x09;
    /// `long`.
    ELEMENT_TYPE_I8 = 0x0a;
    /// `ulong`.
    ELEMENT_TYPE_U8 = 0x0b;
    /// `float`.
    ELEMENT_TYPE_R4 = 0x0c;
    /// `double`.
    ELEMENT_TYPE_R8 = 0x0d;
    /// `string`.
    ELEMENT_TYPE_STRING = 0x0e;
    /// Unmanaged pointer, followed by the pointee type.
    ELEMENT_TYPE_PTR = 0x0f;
    /// Managed reference, followed by the referenced type.
    ELEMENT_TYPE_BYREF = 0x10;
    /// Value type, followed by its TypeDef/TypeRef/TypeSpec token (compressed).
    ELEMENT_TYPE_VALUETYPE = 0x11;
    /// Reference type, followed by its TypeDef/TypeRef/TypeSpec token (compressed).
    ELEMENT_TYPE_CLASS = 0x12;
    /// A type's generic parameter, followed by its index.
    ELEMENT_TYPE_VAR = 0x13;
    /// Multi-dimensional array: element type, rank, sizes and lower bounds.
    ELEMENT_TYPE_ARRAY = 0x14;
    /// Generic instantiation: the generic type, the argument count, the arguments.
    ELEMENT_TYPE_GENERICINST = 0x15;
    /// `TypedReference`.
    ELEMENT_TYPE_TYPEDBYREF = 0x16;
    /// `nint` (native-sized integer).
    ELEMENT_TYPE_I = 0x18;
    /// `nuint` (native-sized unsigned integer).
    ELEMENT_TYPE_U = 0x19;
    /// Function pointer, followed by a full method signature.
    ELEMENT_TYPE_FNPTR = 0x1b;
    /// `object`.
    ELEMENT_TYPE_OBJECT = 0x1c;
    /// Single-dimension, zero-based array, followed by the element type.
    ELEMENT_TYPE_SZARRAY = 0x1d;
    /// A method's generic parameter, followed by its index.
    ELEMENT_TYPE_MVAR = 0x1e;
    /// Required custom modifier, followed by a type token.
    ELEMENT_TYPE_CMOD_REQD = 0x1f;
    /// Optional custom modifier, followed by a type token.
    ELEMENT_TYPE_CMOD_OPT = 0x20;
    /// Runtime-internal: followed by a type handle (never in persisted metadata).
    ELEMENT_TYPE_INTERNAL = 0x21;
    /// The first invalid base element type.
    ELEMENT_TYPE_MAX = 0x22;
    /// The bit that marks modifier element types.
    ELEMENT_TYPE_MODIFIER = 0x40;
    /// Sentinel: the start of the variable part of a vararg call site signature.
    ELEMENT_TYPE_SENTINEL = 0x41;
    /// Pinned local variable, followed by its type.
    ELEMENT_TYPE_PINNED = 0x45;
}

c_flags! {
    /// `CorTypeAttr`: the flags of a TypeDef or ExportedType (ECMA-335 II.23.1.15).
    /// Several fields are multi-bit: compare `flags & mask` with a value.
    pub struct CorTypeAttr(u32);
    /// Mask of the visibility field.
    tdVisibilityMask = 0x0000_0007;
    /// Visibility: not public (internal).
    tdNotPublic = 0x0000_0000;
    /// Visibility: public.
    tdPublic = 0x0000_0001;
    /// Visibility: nested, public.
    tdNestedPublic = 0x0000_0002;
    /// Visibility: nested, private.
    tdNestedPrivate = 0x0000_0003;
    /// Visibility: nested, family (protected).
    tdNestedFamily = 0x0000_0004;
    /// Visibility: nested, assembly (internal).
    tdNestedAssembly = 0x0000_0005;
    /// Visibility: nested, family and assembly (private protected).
    tdNestedFamANDAssem = 0x0000_0006;
    /// Visibility: nested, family or assembly (protected internal).
    tdNestedFamORAssem = 0x0000_0007;
    /// Mask of the layout field.
    tdLayoutMask = 0x0000_0018;
    /// Layout: automatic.
    tdAutoLayout = 0x0000_0000;
    /// Layout: sequential.
    tdSequentialLayout = 0x0000_0008;
    /// Layout: explicit field offsets.
    tdExplicitLayout = 0x0000_0010;
    /// Mask of the class-semantics field.
    tdClassSemanticsMask = 0x0000_0020;
    /// Semantics: a class.
    tdClass = 0x0000_0000;
    /// Semantics: an interface.
    tdInterface = 0x0000_0020;
    /// Abstract.
    tdAbstract = 0x0000_0080;
    /// Sealed: cannot be derived from.
    tdSealed = 0x0000_0100;
    /// The name has a special meaning.
    tdSpecialName = 0x0000_0400;
    /// Imported (COM interop).
    tdImport = 0x0000_1000;
    /// Serializable.
    tdSerializable = 0x0000_2000;
    /// A Windows Runtime type.
    tdWindowsRuntime = 0x0000_4000;
    /// Mask of the string-format field (native interop).
    tdStringFormatMask = 0x0003_0000;
    /// String format: ANSI.
    tdAnsiClass = 0x0000_0000;
    /// String format: Unicode.
    tdUnicodeClass = 0x0001_0000;
    /// String format: automatic.
    tdAutoClass = 0x0002_0000;
    /// String format: custom (see `tdCustomFormatMask`).
    tdCustomFormatClass = 0x0003_0000;
    /// Mask of the non-standard string encoding bits.
    tdCustomFormatMask = 0x00C0_0000;
    /// The type initializer may run any time before the first static field access.
    tdBeforeFieldInit = 0x0010_0000;
    /// An ExportedType that forwards to another assembly.
    tdForwarder = 0x0020_0000;
    /// Mask of the bits reserved for the runtime.
    tdReservedMask = 0x0004_0800;
    /// The runtime checks the name's encoding.
    tdRTSpecialName = 0x0000_0800;
    /// Has declarative security.
    tdHasSecurity = 0x0004_0000;
}

c_flags! {
    /// `CorMethodAttr`: the flags of a MethodDef (ECMA-335 II.23.1.10).
    /// The access field is multi-bit: compare `flags & mdMemberAccessMask` with a value.
    pub struct CorMethodAttr(u32);
    /// Mask of the member-access field.
    mdMemberAccessMask = 0x0007;
    /// Access: compiler-controlled, not referenceable.
    mdPrivateScope = 0x0000;
    /// Access: private.
    mdPrivate = 0x0001;
    /// Access: family and assembly (private protected).
    mdFamANDAssem = 0x0002;
    /// Access: assembly (internal).
    mdAssem = 0x0003;
    /// Access: family (protected).
    mdFamily = 0x0004;
    /// Access: family or assembly (protected internal).
    mdFamORAssem = 0x0005;
    /// Access: public.
    mdPublic = 0x0006;
    /// Static (defined on the type, not per instance).
    mdStatic = 0x0010;
    /// Cannot be overridden.
    mdFinal = 0x0020;
    /// Virtual.
    mdVirtual = 0x0040;
    /// Hides by name and signature, not by name only.
    mdHideBySig = 0x0080;
    /// Mask of the vtable-layout field.
    mdVtableLayoutMask = 0x0100;
    /// Vtable layout: reuse the slot of the overridden method (the default).
    mdReuseSlot = 0x0000;
    /// Vtable layout: always a new slot.
    mdNewSlot = 0x0100;
    /// Can be overridden only where it is accessible.
    mdCheckAccessOnOverride = 0x0200;
    /// Abstract: no implementation.
    mdAbstract = 0x0400;
    /// The name has a special meaning.
    mdSpecialName = 0x0800;
    /// Implemented through P/Invoke.
    mdPinvokeImpl = 0x2000;
    /// Exported to unmanaged code through a thunk.
    mdUnmanagedExport = 0x0008;
    /// Mask of the bits reserved for the runtime.
    mdReservedMask = 0xd000;
    /// The runtime checks the name's encoding.
    mdRTSpecialName = 0x1000;
    /// Has declarative security.
    mdHasSecurity = 0x4000;
    /// Calls a method that contains security code.
    mdRequireSecObject = 0x8000;
}

c_flags! {
    /// `CorOpenFlags`: how `IMetaDataDispenser::OpenScope` opens a scope.
    pub struct CorOpenFlags(u32);
    /// Open for reading.
    ofRead = 0x0000_0000;
    /// Open for writing.
    ofWrite = 0x0000_0001;
    /// Mask of the read/write bit.
    ofReadWriteMask = 0x0000_0001;
    /// Copy the memory passed to `OpenScopeOnMemory`.
    ofCopyMemory = 0x0000_0002;
    /// Read only: the scope cannot be cast to `IMetaDataEmit`.
    ofReadOnly = 0x0000_0010;
    /// The memory was allocated with `CoTaskMemAlloc`; the engine frees it.
    ofTakeOwnership = 0x0000_0020;
    /// Do not open type libraries.
    ofNoTypeLib = 0x0000_0080;
    /// Do not transform `.winmd` files.
    ofNoTransform = 0x0000_1000;
    /// Reserved for internal use.
    ofReserved1 = 0x0000_0100;
    /// Reserved for internal use.
    ofReserved2 = 0x0000_0200;
    /// Reserved for internal use.
    ofReserved3 = 0x0000_0400;
    /// Every reserved bit.
    ofReserved = 0xffff_ef40;
}

c_enum! {
    /// `CorFileMapping`: how a scope's file is mapped, from `IMetaDataInfo::GetFileMapping`.
    pub struct CorFileMapping(u32);
    /// Mapped as a flat data file.
    fmFlat = 0;
    /// Mapped as an executable image (sections at their RVAs).
    fmExecutableImage = 1;
}

c_flags! {
    /// `CorPEKind`: the PE kind bits from `IMetaDataImport2::GetPEKind`.
    pub struct CorPEKind(u32);
    /// Not a PE file.
    peNot = 0x0000_0000;
    /// IL only.
    peILonly = 0x0000_0001;
    /// Requires a 32-bit process.
    pe32BitRequired = 0x0000_0002;
    /// PE32+ (64-bit).
    pe32Plus = 0x0000_0004;
    /// PE32 without a CLR header.
    pe32Unmanaged = 0x0000_0008;
    /// Prefers a 32-bit process.
    pe32BitPreferred = 0x0000_0010;
}

c_enum! {
    /// `CorValidatorModuleType`: the module kind for `IMetaDataValidate::ValidatorInit`.
    pub struct CorValidatorModuleType(u32);
    /// Invalid.
    ValidatorModuleTypeInvalid = 0x0;
    /// The lowest valid value.
    ValidatorModuleTypeMin = 0x1;
    /// A PE file.
    ValidatorModuleTypePE = 0x1;
    /// An object (`.obj`) file.
    ValidatorModuleTypeObj = 0x2;
    /// An Edit and Continue delta.
    ValidatorModuleTypeEnc = 0x3;
    /// An incremental compilation.
    ValidatorModuleTypeIncr = 0x4;
    /// The highest valid value.
    ValidatorModuleTypeMax = 0x4;
}

/// `CLSID_CorMetaDataDispenser`: the class of the metadata dispenser
/// (`IMetaDataDispenser`, `IMetaDataDispenserEx`).
pub const CLSID_CorMetaDataDispenser: GUID = GUID::parse("E5CB7A31-7512-11D2-89CE-0080C792E5D8");
/// `CLSID_CLR_v1_MetaData`: `DefineScope` version for .NET Framework 1.x metadata.
pub const CLSID_CLR_v1_MetaData: GUID = GUID::parse("005023CA-72B1-11D3-9FC4-00C04F79A0A3");
/// `CLSID_CLR_v2_MetaData`: `DefineScope` version for current (2.0 and later) metadata.
pub const CLSID_CLR_v2_MetaData: GUID = GUID::parse("EFEA471A-44FD-4862-9292-0C58D46E1F3A");
/// `CLSID_CorMetaDataRuntime`: the latest metadata version (same as `CLSID_CLR_v2_MetaData`).
pub const CLSID_CorMetaDataRuntime: GUID = CLSID_CLR_v2_MetaData;

// ---------------------------------------------------------------------------
// Structs of cor.h that the profiling API uses too
// ---------------------------------------------------------------------------

/// An operating system an assembly targets (`OSINFO`, from cor.h;
/// [`ASSEMBLYMETADATA`] points to it). Obsolete: assemblies no
/// longer record OS information.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OSINFO {
    /// The platform ID.
    pub dwOSPlatformId: DWORD,
    /// The OS major version.
    pub dwOSMajorVersion: DWORD,
    /// The OS minor version.
    pub dwOSMinorVersion: DWORD,
}

/// Version, culture and platform of an assembly (`ASSEMBLYMETADATA`, from
/// cor.h), used by `IMetaDataAssemblyImport`/`Emit`; the profiling API's
/// [`COR_PRF_ASSEMBLY_REFERENCE_INFO`](crate::profiling::COR_PRF_ASSEMBLY_REFERENCE_INFO)
/// points to one too.
///
/// The three array fields are caller-allocated buffers with an in/out
/// count: on input the buffer's capacity, on output the number filled in.
/// The `Default` value (null buffers, zero counts) asks only for the version.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ASSEMBLYMETADATA {
    /// The major version.
    pub usMajorVersion: USHORT,
    /// The minor version.
    pub usMinorVersion: USHORT,
    /// The build number.
    pub usBuildNumber: USHORT,
    /// The revision number.
    pub usRevisionNumber: USHORT,
    /// The culture name (UTF-16), a buffer of `cbLocale` wide characters.
    pub szLocale: LPWSTR,
    /// In: capacity of `szLocale` in wide characters; out: characters written.
    pub cbLocale: ULONG,
    /// Array of processor IDs (obsolete).
    pub rProcessor: *mut DWORD,
    /// In: capacity of `rProcessor`; out: entries filled in.
    pub ulProcessor: ULONG,
    /// Array of [`OSINFO`] (obsolete).
    pub rOS: *mut OSINFO,
    /// In: capacity of `rOS`; out: entries filled in.
    pub ulOS: ULONG,
}

impl Default for ASSEMBLYMETADATA {
    fn default() -> Self {
        ASSEMBLYMETADATA {
            usMajorVersion: 0,
            usMinorVersion: 0,
            usBuildNumber: 0,
            usRevisionNumber: 0,
            szLocale: core::ptr::null_mut(),
            cbLocale: 0,
            rProcessor: core::ptr::null_mut(),
            ulProcessor: 0,
            rOS: core::ptr::null_mut(),
            ulOS: 0,
        }
    }
}

/// The offset of one instance field inside an object, from
/// `ICorProfilerInfo2::GetClassLayout` (`COR_FIELD_OFFSET`; defined in both
/// cor.h and corprof.idl, declared once here for both APIs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct COR_FIELD_OFFSET {
    /// The field's FieldDef token.
    pub ridOfField: mdFieldDef,
    /// Its offset in bytes from the `ObjectID` pointer.
    pub ulOffset: ULONG,
}
