//! IMetaDataImport and IMetaDataImport2: reading a module's metadata.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::metadata::tokens::{
    mdCustomAttribute, mdEvent, mdFieldDef, mdGenericParam, mdGenericParamConstraint,
    mdInterfaceImpl, mdMemberRef, mdMethodDef, mdMethodSpec, mdModule, mdModuleRef, mdParamDef,
    mdPermission, mdProperty, mdSignature, mdString, mdToken, mdTypeDef, mdTypeRef, mdTypeSpec,
};
use crate::metadata::types::{
    COR_FIELD_OFFSET, HCORENUM, MDUTF8CSTR, PCCOR_SIGNATURE, UVCP_CONSTANT,
};
use crate::{
    com_interface, BOOL, DWORD, E_NOTIMPL, FALSE, GUID, HRESULT, INT, LPCWSTR, LPWSTR, REFIID,
    ULONG,
};

com_interface! {
    /// Reads a scope's metadata: enumerates and looks up types, members, references, signatures and attributes.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("7DAC8207-D3AE-4C75-9B67-92801A497D44")]
    #[vtable(IMetaDataImport_Vtbl)]
    #[implement(IMetaDataImport_Impl)]
    #[agile]
    pub unsafe interface IMetaDataImport: IUnknown {
        /// Frees an enumerator returned by one of the `Enum*` methods.
        fn CloseEnum(hEnum: HCORENUM) {}
        /// Gives the number of items an enumerator covers.
        fn CountEnum(hEnum: HCORENUM, pulCount: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Moves an enumerator to position `ulPos`.
        fn ResetEnum(hEnum: HCORENUM, ulPos: ULONG) -> HRESULT { E_NOTIMPL }
        /// Enumerates the types defined in the scope.
        fn EnumTypeDefs(
            phEnum: *mut HCORENUM,
            rTypeDefs: *mut mdTypeDef,
            cMax: ULONG,
            pcTypeDefs: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the interface implementations of `td`.
        fn EnumInterfaceImpls(
            phEnum: *mut HCORENUM,
            td: mdTypeDef,
            rImpls: *mut mdInterfaceImpl,
            cMax: ULONG,
            pcImpls: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the type references of the scope.
        fn EnumTypeRefs(
            phEnum: *mut HCORENUM,
            rTypeRefs: *mut mdTypeRef,
            cMax: ULONG,
            pcTypeRefs: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a type by its full name (and enclosing type, for nested types).
        fn FindTypeDefByName(
            szTypeDef: LPCWSTR,
            tkEnclosingClass: mdToken,
            ptd: *mut mdTypeDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the scope's module name and MVID.
        fn GetScopeProps(
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            pmvid: *mut GUID,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the Module token of the scope.
        fn GetModuleFromScope(pmd: *mut mdModule) -> HRESULT { E_NOTIMPL }
        /// Gives the name, flags and base type of a TypeDef.
        fn GetTypeDefProps(
            td: mdTypeDef,
            szTypeDef: LPWSTR,
            cchTypeDef: ULONG,
            pchTypeDef: *mut ULONG,
            pdwTypeDefFlags: *mut DWORD,
            ptkExtends: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the implementing class and the interface of an InterfaceImpl.
        fn GetInterfaceImplProps(
            iiImpl: mdInterfaceImpl,
            pClass: *mut mdTypeDef,
            ptkIface: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the resolution scope and name of a TypeRef.
        fn GetTypeRefProps(
            tr: mdTypeRef,
            ptkResolutionScope: *mut mdToken,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Resolves a TypeRef to its TypeDef and the scope (interface `riid`) that defines it.
        fn ResolveTypeRef(
            tr: mdTypeRef,
            riid: REFIID,
            ppIScope: *mut *mut c_void,
            ptd: *mut mdTypeDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the fields and methods of `cl`.
        fn EnumMembers(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            rMembers: *mut mdToken,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the fields and methods of `cl` that have a given name.
        fn EnumMembersWithName(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            szName: LPCWSTR,
            rMembers: *mut mdToken,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the methods of `cl`.
        fn EnumMethods(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            rMethods: *mut mdMethodDef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the methods of `cl` that have a given name.
        fn EnumMethodsWithName(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            szName: LPCWSTR,
            rMethods: *mut mdMethodDef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the fields of `cl`.
        fn EnumFields(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            rFields: *mut mdFieldDef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the fields of `cl` that have a given name.
        fn EnumFieldsWithName(
            phEnum: *mut HCORENUM,
            cl: mdTypeDef,
            szName: LPCWSTR,
            rFields: *mut mdFieldDef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the parameter rows of method `mb`.
        fn EnumParams(
            phEnum: *mut HCORENUM,
            mb: mdMethodDef,
            rParams: *mut mdParamDef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the MemberRefs whose parent is `tkParent`.
        fn EnumMemberRefs(
            phEnum: *mut HCORENUM,
            tkParent: mdToken,
            rMemberRefs: *mut mdMemberRef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the method overrides (body and declaration tokens) of `td`.
        fn EnumMethodImpls(
            phEnum: *mut HCORENUM,
            td: mdTypeDef,
            rMethodBody: *mut mdToken,
            rMethodDecl: *mut mdToken,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the permission sets of `tk`, optionally only those for `dwActions`.
        fn EnumPermissionSets(
            phEnum: *mut HCORENUM,
            tk: mdToken,
            dwActions: DWORD,
            rPermission: *mut mdPermission,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a field or method of `td` by name and signature.
        fn FindMember(
            td: mdTypeDef,
            szName: LPCWSTR,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmb: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a method of `td` by name and signature.
        fn FindMethod(
            td: mdTypeDef,
            szName: LPCWSTR,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmb: *mut mdMethodDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a field of `td` by name and signature.
        fn FindField(
            td: mdTypeDef,
            szName: LPCWSTR,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmb: *mut mdFieldDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a MemberRef of `td` by name and signature.
        fn FindMemberRef(
            td: mdTypeRef,
            szName: LPCWSTR,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmr: *mut mdMemberRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the class, name, flags, signature, RVA and implementation flags of a method.
        fn GetMethodProps(
            mb: mdMethodDef,
            pClass: *mut mdTypeDef,
            szMethod: LPWSTR,
            cchMethod: ULONG,
            pchMethod: *mut ULONG,
            pdwAttr: *mut DWORD,
            ppvSigBlob: *mut PCCOR_SIGNATURE,
            pcbSigBlob: *mut ULONG,
            pulCodeRVA: *mut ULONG,
            pdwImplFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the parent, name and signature of a MemberRef.
        fn GetMemberRefProps(
            mr: mdMemberRef,
            ptk: *mut mdToken,
            szMember: LPWSTR,
            cchMember: ULONG,
            pchMember: *mut ULONG,
            ppvSigBlob: *mut PCCOR_SIGNATURE,
            pbSig: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the properties of `td`.
        fn EnumProperties(
            phEnum: *mut HCORENUM,
            td: mdTypeDef,
            rProperties: *mut mdProperty,
            cMax: ULONG,
            pcProperties: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the events of `td`.
        fn EnumEvents(
            phEnum: *mut HCORENUM,
            td: mdTypeDef,
            rEvents: *mut mdEvent,
            cMax: ULONG,
            pcEvents: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the class, name, flags, type and accessor methods of an event (`szEvent` is an out-buffer despite its `LPCWSTR` type).
        fn GetEventProps(
            ev: mdEvent,
            pClass: *mut mdTypeDef,
            szEvent: LPCWSTR,
            cchEvent: ULONG,
            pchEvent: *mut ULONG,
            pdwEventFlags: *mut DWORD,
            ptkEventType: *mut mdToken,
            pmdAddOn: *mut mdMethodDef,
            pmdRemoveOn: *mut mdMethodDef,
            pmdFire: *mut mdMethodDef,
            rmdOtherMethod: *mut mdMethodDef,
            cMax: ULONG,
            pcOtherMethod: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the properties and events method `mb` is an accessor of.
        fn EnumMethodSemantics(
            phEnum: *mut HCORENUM,
            mb: mdMethodDef,
            rEventProp: *mut mdToken,
            cMax: ULONG,
            pcEventProp: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the role (`CorMethodSemanticsAttr`) of method `mb` for a property or event.
        fn GetMethodSemantics(
            mb: mdMethodDef,
            tkEventProp: mdToken,
            pdwSemanticsFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the packing, field offsets and size of `td`.
        fn GetClassLayout(
            td: mdTypeDef,
            pdwPackSize: *mut DWORD,
            rFieldOffset: *mut COR_FIELD_OFFSET,
            cMax: ULONG,
            pcFieldOffset: *mut ULONG,
            pulClassSize: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the native marshaling signature of a field or parameter.
        fn GetFieldMarshal(
            tk: mdToken,
            ppvNativeType: *mut PCCOR_SIGNATURE,
            pcbNativeType: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the RVA and implementation flags of a method or field.
        fn GetRVA(
            tk: mdToken,
            pulCodeRVA: *mut ULONG,
            pdwImplFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the action and permission blob of a permission set.
        fn GetPermissionSetProps(
            pm: mdPermission,
            pdwAction: *mut DWORD,
            ppvPermission: *mut *const c_void,
            pcbPermission: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the signature blob of a StandAloneSig token.
        fn GetSigFromToken(
            mdSig: mdSignature,
            ppvSig: *mut PCCOR_SIGNATURE,
            pcbSig: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the name of a ModuleRef.
        fn GetModuleRefProps(
            mur: mdModuleRef,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the ModuleRefs of the scope.
        fn EnumModuleRefs(
            phEnum: *mut HCORENUM,
            rModuleRefs: *mut mdModuleRef,
            cmax: ULONG,
            pcModuleRefs: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the signature blob of a TypeSpec token.
        fn GetTypeSpecFromToken(
            typespec: mdTypeSpec,
            ppvSig: *mut PCCOR_SIGNATURE,
            pcbSig: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives a pointer to the UTF-8 name of a token in the string heap (deprecated by the runtime).
        fn GetNameFromToken(tk: mdToken, pszUtf8NamePtr: *mut MDUTF8CSTR) -> HRESULT { E_NOTIMPL }
        /// Enumerates the methods and MemberRefs with no implementation in the scope.
        fn EnumUnresolvedMethods(
            phEnum: *mut HCORENUM,
            rMethods: *mut mdToken,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Copies the string literal of a user-string token into the caller's buffer.
        fn GetUserString(
            stk: mdString,
            szString: LPWSTR,
            cchString: ULONG,
            pchString: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the P/Invoke flags, entry-point name and target module of `tk`.
        fn GetPinvokeMap(
            tk: mdToken,
            pdwMappingFlags: *mut DWORD,
            szImportName: LPWSTR,
            cchImportName: ULONG,
            pchImportName: *mut ULONG,
            pmrImportDLL: *mut mdModuleRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the StandAloneSig tokens of the scope.
        fn EnumSignatures(
            phEnum: *mut HCORENUM,
            rSignatures: *mut mdSignature,
            cmax: ULONG,
            pcSignatures: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the TypeSpec tokens of the scope.
        fn EnumTypeSpecs(
            phEnum: *mut HCORENUM,
            rTypeSpecs: *mut mdTypeSpec,
            cmax: ULONG,
            pcTypeSpecs: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the user-string tokens of the scope.
        fn EnumUserStrings(
            phEnum: *mut HCORENUM,
            rStrings: *mut mdString,
            cmax: ULONG,
            pcStrings: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the ParamDef of parameter `ulParamSeq` of method `md`.
        fn GetParamForMethodIndex(
            md: mdMethodDef,
            ulParamSeq: ULONG,
            ppd: *mut mdParamDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the custom attributes of `tk` (0 = all), optionally of type `tkType` only.
        fn EnumCustomAttributes(
            phEnum: *mut HCORENUM,
            tk: mdToken,
            tkType: mdToken,
            rCustomAttributes: *mut mdCustomAttribute,
            cMax: ULONG,
            pcCustomAttributes: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the owner, attribute type and value blob of a custom attribute.
        fn GetCustomAttributeProps(
            cv: mdCustomAttribute,
            ptkObj: *mut mdToken,
            ptkType: *mut mdToken,
            ppBlob: *mut *const c_void,
            pcbSize: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a TypeRef by resolution scope and name.
        fn FindTypeRef(
            tkResolutionScope: mdToken,
            szName: LPCWSTR,
            ptr: *mut mdTypeRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the properties of a field or method: class, name, flags, signature, RVA and constant value.
        fn GetMemberProps(
            mb: mdToken,
            pClass: *mut mdTypeDef,
            szMember: LPWSTR,
            cchMember: ULONG,
            pchMember: *mut ULONG,
            pdwAttr: *mut DWORD,
            ppvSigBlob: *mut PCCOR_SIGNATURE,
            pcbSigBlob: *mut ULONG,
            pulCodeRVA: *mut ULONG,
            pdwImplFlags: *mut DWORD,
            pdwCPlusTypeFlag: *mut DWORD,
            ppValue: *mut UVCP_CONSTANT,
            pcchValue: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the class, name, flags, signature and constant value of a field.
        fn GetFieldProps(
            mb: mdFieldDef,
            pClass: *mut mdTypeDef,
            szField: LPWSTR,
            cchField: ULONG,
            pchField: *mut ULONG,
            pdwAttr: *mut DWORD,
            ppvSigBlob: *mut PCCOR_SIGNATURE,
            pcbSigBlob: *mut ULONG,
            pdwCPlusTypeFlag: *mut DWORD,
            ppValue: *mut UVCP_CONSTANT,
            pcchValue: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the class, name, flags, signature, default value and accessors of a property (`szProperty` is an out-buffer despite its `LPCWSTR` type).
        fn GetPropertyProps(
            prop: mdProperty,
            pClass: *mut mdTypeDef,
            szProperty: LPCWSTR,
            cchProperty: ULONG,
            pchProperty: *mut ULONG,
            pdwPropFlags: *mut DWORD,
            ppvSig: *mut PCCOR_SIGNATURE,
            pbSig: *mut ULONG,
            pdwCPlusTypeFlag: *mut DWORD,
            ppDefaultValue: *mut UVCP_CONSTANT,
            pcchDefaultValue: *mut ULONG,
            pmdSetter: *mut mdMethodDef,
            pmdGetter: *mut mdMethodDef,
            rmdOtherMethod: *mut mdMethodDef,
            cMax: ULONG,
            pcOtherMethod: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the method, sequence number, name, flags and default value of a parameter.
        fn GetParamProps(
            tk: mdParamDef,
            pmd: *mut mdMethodDef,
            pulSequence: *mut ULONG,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            pdwAttr: *mut DWORD,
            pdwCPlusTypeFlag: *mut DWORD,
            ppValue: *mut UVCP_CONSTANT,
            pcchValue: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the value blob of the custom attribute of `tkObj` whose type has a given name.
        fn GetCustomAttributeByName(
            tkObj: mdToken,
            szName: LPCWSTR,
            ppData: *mut *const c_void,
            pcbData: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Tells whether `tk` is a valid token of this scope (`TRUE`/`FALSE`).
        fn IsValidToken(tk: mdToken) -> BOOL { FALSE }
        /// Gives the enclosing type of a nested type.
        fn GetNestedClassProps(
            tdNestedClass: mdTypeDef,
            ptdEnclosingClass: *mut mdTypeDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the native calling convention a signature's modifiers specify.
        fn GetNativeCallConvFromSig(
            pvSig: *const c_void,
            cbSig: ULONG,
            pCallConv: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Tells whether a type, field or method is global (module-level): 1 or 0 in `pbGlobal`.
        fn IsGlobal(pd: mdToken, pbGlobal: *mut INT) -> HRESULT { E_NOTIMPL }
    }

    /// Extends `IMetaDataImport` with generics (generic parameters, constraints, method instantiations), the PE kind and the version string.
    ///
    /// Introduced in .NET Framework 2.0.
    #[iid("FCE5EFA0-8BBA-4F8E-A036-8F2022B08466")]
    #[vtable(IMetaDataImport2_Vtbl)]
    #[implement(IMetaDataImport2_Impl: IMetaDataImport_Impl)]
    #[agile]
    pub unsafe interface IMetaDataImport2: IMetaDataImport {
        /// Enumerates the generic parameters of a type or method.
        fn EnumGenericParams(
            phEnum: *mut HCORENUM,
            tk: mdToken,
            rGenericParams: *mut mdGenericParam,
            cMax: ULONG,
            pcGenericParams: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the index, flags, owner and name of a generic parameter.
        fn GetGenericParamProps(
            gp: mdGenericParam,
            pulParamSeq: *mut ULONG,
            pdwParamFlags: *mut DWORD,
            ptOwner: *mut mdToken,
            reserved: *mut DWORD,
            wzname: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the generic method and instantiation signature of a MethodSpec.
        fn GetMethodSpecProps(
            mi: mdMethodSpec,
            tkParent: *mut mdToken,
            ppvSigBlob: *mut PCCOR_SIGNATURE,
            pcbSigBlob: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the constraints of a generic parameter.
        fn EnumGenericParamConstraints(
            phEnum: *mut HCORENUM,
            tk: mdGenericParam,
            rGenericParamConstraints: *mut mdGenericParamConstraint,
            cMax: ULONG,
            pcGenericParamConstraints: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the generic parameter and constraint type of a GenericParamConstraint.
        fn GetGenericParamConstraintProps(
            gpc: mdGenericParamConstraint,
            ptGenericParam: *mut mdGenericParam,
            ptkConstraintType: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the PE kind (`CorPEKind`) and target machine of the module.
        fn GetPEKind(pdwPEKind: *mut DWORD, pdwMAchine: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Copies the runtime version string the metadata was built for into the caller's buffer.
        fn GetVersionString(
            pwzBuf: LPWSTR,
            ccBufSize: DWORD,
            pccBufSize: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the MethodSpecs (instantiations) of a method.
        fn EnumMethodSpecs(
            phEnum: *mut HCORENUM,
            tk: mdToken,
            rMethodSpecs: *mut mdMethodSpec,
            cMax: ULONG,
            pcMethodSpecs: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
    }
}
