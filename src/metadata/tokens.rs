//! Metadata tokens (cor.h, corhdr.h): a 32-bit value whose high byte names
//! the metadata table and whose low 24 bits are the row (RID).
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)
#![allow(non_camel_case_types, non_upper_case_globals)]

use core::fmt;

crate::ctypes::c_enum! {
    /// The table a token belongs to: its high byte (`CorTokenType`).
    pub struct CorTokenType(u32);
    /// Module.
    mdtModule = 0x0000_0000;
    /// TypeRef.
    mdtTypeRef = 0x0100_0000;
    /// TypeDef.
    mdtTypeDef = 0x0200_0000;
    /// FieldDef.
    mdtFieldDef = 0x0400_0000;
    /// MethodDef.
    mdtMethodDef = 0x0600_0000;
    /// ParamDef.
    mdtParamDef = 0x0800_0000;
    /// InterfaceImpl.
    mdtInterfaceImpl = 0x0900_0000;
    /// MemberRef.
    mdtMemberRef = 0x0a00_0000;
    /// CustomAttribute.
    mdtCustomAttribute = 0x0c00_0000;
    /// Permission (DeclSecurity).
    mdtPermission = 0x0e00_0000;
    /// StandAloneSig.
    mdtSignature = 0x1100_0000;
    /// Event.
    mdtEvent = 0x1400_0000;
    /// Property.
    mdtProperty = 0x1700_0000;
    /// ModuleRef.
    mdtModuleRef = 0x1a00_0000;
    /// TypeSpec.
    mdtTypeSpec = 0x1b00_0000;
    /// Assembly.
    mdtAssembly = 0x2000_0000;
    /// AssemblyRef.
    mdtAssemblyRef = 0x2300_0000;
    /// File.
    mdtFile = 0x2600_0000;
    /// ExportedType.
    mdtExportedType = 0x2700_0000;
    /// ManifestResource.
    mdtManifestResource = 0x2800_0000;
    /// GenericParam.
    mdtGenericParam = 0x2a00_0000;
    /// MethodSpec.
    mdtMethodSpec = 0x2b00_0000;
    /// GenericParamConstraint.
    mdtGenericParamConstraint = 0x2c00_0000;
    /// A user string in the #US heap (`ldstr`).
    mdtString = 0x7000_0000;
    /// A name (not a table).
    mdtName = 0x7100_0000;
    /// A base type (not a table).
    mdtBaseType = 0x7200_0000;
}

/// Any metadata token (`mdToken`, a `ULONG32`).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct mdToken(pub u32);

/// `mdTokenNil`: the nil token (0).
pub const mdTokenNil: mdToken = mdToken(0);

impl mdToken {
    /// `TokenFromRid`: a token of `table` at row `rid` (`rid` keeps 24 bits).
    #[inline]
    pub const fn from_parts(table: CorTokenType, rid: u32) -> mdToken {
        mdToken(table.0 | (rid & 0x00FF_FFFF))
    }
    /// `TypeFromToken`: the table this token belongs to.
    #[inline]
    pub const fn token_type(self) -> CorTokenType {
        CorTokenType(self.0 & 0xFF00_0000)
    }
    /// `RidFromToken`: the row number (1-based; 0 means nil).
    #[inline]
    pub const fn rid(self) -> u32 {
        self.0 & 0x00FF_FFFF
    }
    /// `IsNilToken`: `true` when the row number is 0.
    #[inline]
    pub const fn is_nil(self) -> bool {
        self.rid() == 0
    }
}

impl fmt::Debug for mdToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mdToken({:#010x})", self.0)
    }
}

// SAFETY: #[repr(transparent)] over u32.
unsafe impl crate::AbiParam for mdToken {}

/// A token that is known to belong to one table.
macro_rules! typed_tokens {
    ($( $(#[$attr:meta])* $name:ident => $table:ident; )*) => {$(
        $(#[$attr])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $name {
            /// The table tokens of this kind belong to.
            pub const TABLE: CorTokenType = $table;

            /// The token of this kind at row `rid` (`rid` keeps 24 bits).
            #[inline]
            pub const fn from_rid(rid: u32) -> $name {
                $name(mdToken::from_parts($table, rid).0)
            }
            /// The row number (1-based; 0 means nil).
            #[inline]
            pub const fn rid(self) -> u32 {
                self.token().rid()
            }
            /// `true` when the row number is 0.
            #[inline]
            pub const fn is_nil(self) -> bool {
                self.token().is_nil()
            }
            /// The table this token's high byte names (normally [`Self::TABLE`];
            /// a token received from native code is not checked).
            #[inline]
            pub const fn token_type(self) -> CorTokenType {
                self.token().token_type()
            }
            /// The untyped token.
            #[inline]
            pub const fn token(self) -> mdToken {
                mdToken(self.0)
            }
        }

        impl ::core::convert::From<$name> for mdToken {
            #[inline]
            fn from(token: $name) -> mdToken {
                mdToken(token.0)
            }
        }

        impl ::core::convert::TryFrom<mdToken> for $name {
            type Error = mdToken;
            /// Succeeds when the token belongs to this kind's table; gives the
            /// token back otherwise.
            #[inline]
            fn try_from(token: mdToken) -> ::core::result::Result<$name, mdToken> {
                if token.token_type() == $table {
                    Ok($name(token.0))
                } else {
                    Err(token)
                }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:#010x})", ::core::stringify!($name), self.0)
            }
        }

        // SAFETY: #[repr(transparent)] over u32.
        unsafe impl crate::AbiParam for $name {}
    )*};
}

typed_tokens! {
    /// A Module token.
    mdModule => mdtModule;
    /// A TypeRef token: a type defined in another module.
    mdTypeRef => mdtTypeRef;
    /// A TypeDef token: a type defined in this module.
    mdTypeDef => mdtTypeDef;
    /// A FieldDef token.
    mdFieldDef => mdtFieldDef;
    /// A MethodDef token: a method defined in this module.
    mdMethodDef => mdtMethodDef;
    /// A ParamDef token.
    mdParamDef => mdtParamDef;
    /// An InterfaceImpl token.
    mdInterfaceImpl => mdtInterfaceImpl;
    /// A MemberRef token: a field or method of another type or module.
    mdMemberRef => mdtMemberRef;
    /// A CustomAttribute token.
    mdCustomAttribute => mdtCustomAttribute;
    /// A Permission (DeclSecurity) token.
    mdPermission => mdtPermission;
    /// A StandAloneSig token (local variable or `calli` signatures).
    mdSignature => mdtSignature;
    /// An Event token.
    mdEvent => mdtEvent;
    /// A Property token.
    mdProperty => mdtProperty;
    /// A ModuleRef token.
    mdModuleRef => mdtModuleRef;
    /// A TypeSpec token: a constructed type (generic instance, array, ...).
    mdTypeSpec => mdtTypeSpec;
    /// An Assembly token.
    mdAssembly => mdtAssembly;
    /// An AssemblyRef token.
    mdAssemblyRef => mdtAssemblyRef;
    /// A File token.
    mdFile => mdtFile;
    /// An ExportedType token.
    mdExportedType => mdtExportedType;
    /// A ManifestResource token.
    mdManifestResource => mdtManifestResource;
    /// A GenericParam token.
    mdGenericParam => mdtGenericParam;
    /// A MethodSpec token: a generic method instantiation.
    mdMethodSpec => mdtMethodSpec;
    /// A GenericParamConstraint token.
    mdGenericParamConstraint => mdtGenericParamConstraint;
    /// A user-string token (`ldstr` operand).
    mdString => mdtString;
}
