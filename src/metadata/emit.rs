//! IMetaDataEmit and IMetaDataEmit2: writing a module's metadata.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::metadata::tokens::{
    mdCustomAttribute, mdEvent, mdFieldDef, mdGenericParam, mdMemberRef, mdMethodDef, mdMethodSpec,
    mdModuleRef, mdParamDef, mdPermission, mdProperty, mdSignature, mdString, mdToken, mdTypeDef,
    mdTypeRef, mdTypeSpec,
};
use crate::metadata::types::{
    CorSaveSize, COR_FIELD_OFFSET, COR_SECATTR, PCCOR_SIGNATURE, PCOR_SIGNATURE,
};
use crate::{com_interface, DWORD, E_NOTIMPL, HRESULT, LPCWSTR, ULONG};

com_interface! {
    /// Writes a scope's metadata: defines and changes types, members, references, signatures and attributes.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("BA3FEE4C-ECB9-4E41-83B7-183FA41CD859")]
    #[vtable(IMetaDataEmit_Vtbl)]
    #[implement(IMetaDataEmit_Impl)]
    #[agile]
    pub unsafe interface IMetaDataEmit: IUnknown {
        /// Sets the name of the module the scope describes.
        fn SetModuleProps(szName: LPCWSTR) -> HRESULT { E_NOTIMPL }
        /// Writes the scope's metadata to the file `szFile`.
        fn Save(szFile: LPCWSTR, dwSaveFlags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Writes the scope's metadata to a writable `IStream` (`pIStream`).
        fn SaveToStream(pIStream: *mut c_void, dwSaveFlags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Gives the number of bytes the saved metadata would take (exact or estimated, per `fSave`).
        fn GetSaveSize(fSave: CorSaveSize, pdwSaveSize: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Defines a type (TypeDef) with its flags, base type and nil-terminated array of implemented interfaces.
        fn DefineTypeDef(
            szTypeDef: LPCWSTR,
            dwTypeDefFlags: DWORD,
            tkExtends: mdToken,
            rtkImplements: *mut mdToken,
            ptd: *mut mdTypeDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a type nested in `tdEncloser`.
        fn DefineNestedType(
            szTypeDef: LPCWSTR,
            dwTypeDefFlags: DWORD,
            tkExtends: mdToken,
            rtkImplements: *mut mdToken,
            tdEncloser: mdTypeDef,
            ptd: *mut mdTypeDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Installs the object (an `IMetaDataError` or `IMapToken`, as `IUnknown`) that receives notifications.
        fn SetHandler(pUnk: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Defines a method of `td` with its signature, RVA and flags.
        fn DefineMethod(
            td: mdTypeDef,
            szName: LPCWSTR,
            dwMethodFlags: DWORD,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            ulCodeRVA: ULONG,
            dwImplFlags: DWORD,
            pmd: *mut mdMethodDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Records that method body `tkBody` implements declaration `tkDecl` in `td`.
        fn DefineMethodImpl(
            td: mdTypeDef,
            tkBody: mdToken,
            tkDecl: mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a reference (TypeRef) to a type of another scope, by name.
        fn DefineTypeRefByName(
            tkResolutionScope: mdToken,
            szName: LPCWSTR,
            ptr: *mut mdTypeRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a TypeRef to a TypeDef of another open scope (`pImport` is an `IMetaDataImport`; the assembly pointers are `IMetaDataAssemblyImport`/`IMetaDataAssemblyEmit`).
        fn DefineImportType(
            pAssemImport: *mut c_void,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            pImport: *mut c_void,
            tdImport: mdTypeDef,
            pAssemEmit: *mut c_void,
            ptr: *mut mdTypeRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a reference (MemberRef) to a field or method of `tkImport`, by name and signature.
        fn DefineMemberRef(
            tkImport: mdToken,
            szName: LPCWSTR,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmr: *mut mdMemberRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a MemberRef to a member of another open scope (`pImport` is an `IMetaDataImport`; the assembly pointers are `IMetaDataAssemblyImport`/`IMetaDataAssemblyEmit`).
        fn DefineImportMember(
            pAssemImport: *mut c_void,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            pImport: *mut c_void,
            mbMember: mdToken,
            pAssemEmit: *mut c_void,
            tkParent: mdToken,
            pmr: *mut mdMemberRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines an event of `td` with its accessor methods.
        fn DefineEvent(
            td: mdTypeDef,
            szEvent: LPCWSTR,
            dwEventFlags: DWORD,
            tkEventType: mdToken,
            mdAddOn: mdMethodDef,
            mdRemoveOn: mdMethodDef,
            mdFire: mdMethodDef,
            rmdOtherMethods: *mut mdMethodDef,
            pmdEvent: *mut mdEvent,
        ) -> HRESULT { E_NOTIMPL }
        /// Sets the packing, field offsets (nil-terminated array) and size of `td`.
        fn SetClassLayout(
            td: mdTypeDef,
            dwPackSize: DWORD,
            rFieldOffsets: *mut COR_FIELD_OFFSET,
            ulClassSize: ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Removes the layout information of `td`.
        fn DeleteClassLayout(td: mdTypeDef) -> HRESULT { E_NOTIMPL }
        /// Sets the native marshaling signature of a field or parameter.
        fn SetFieldMarshal(
            tk: mdToken,
            pvNativeType: PCCOR_SIGNATURE,
            cbNativeType: ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Removes the marshaling signature of a field or parameter.
        fn DeleteFieldMarshal(tk: mdToken) -> HRESULT { E_NOTIMPL }
        /// Attaches a declarative security permission set to `tk`.
        fn DefinePermissionSet(
            tk: mdToken,
            dwAction: DWORD,
            pvPermission: *const c_void,
            cbPermission: ULONG,
            ppm: *mut mdPermission,
        ) -> HRESULT { E_NOTIMPL }
        /// Sets the relative virtual address of a method's body.
        fn SetRVA(md: mdMethodDef, ulRVA: ULONG) -> HRESULT { E_NOTIMPL }
        /// Gets the StandAloneSig token of a signature, defining it if needed.
        fn GetTokenFromSig(
            pvSig: PCCOR_SIGNATURE,
            cbSig: ULONG,
            pmsig: *mut mdSignature,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a reference to another module (ModuleRef), by name.
        fn DefineModuleRef(szName: LPCWSTR, pmur: *mut mdModuleRef) -> HRESULT { E_NOTIMPL }
        /// Sets the parent (class or module) of a MemberRef.
        fn SetParent(mr: mdMemberRef, tk: mdToken) -> HRESULT { E_NOTIMPL }
        /// Gets the TypeSpec token of a type signature, defining it if needed.
        fn GetTokenFromTypeSpec(
            pvSig: PCCOR_SIGNATURE,
            cbSig: ULONG,
            ptypespec: *mut mdTypeSpec,
        ) -> HRESULT { E_NOTIMPL }
        /// Writes the scope's metadata to the caller's buffer (`cbData` bytes).
        fn SaveToMemory(pbData: *mut c_void, cbData: ULONG) -> HRESULT { E_NOTIMPL }
        /// Stores a string literal (`cchString` UTF-16 units) in the user-string heap; `pstk` receives its `ldstr` token.
        fn DefineUserString(
            szString: LPCWSTR,
            cchString: ULONG,
            pstk: *mut mdString,
        ) -> HRESULT { E_NOTIMPL }
        /// Deletes the metadata row of `tkObj`.
        fn DeleteToken(tkObj: mdToken) -> HRESULT { E_NOTIMPL }
        /// Changes the flags, RVA and implementation flags of a method.
        fn SetMethodProps(
            md: mdMethodDef,
            dwMethodFlags: DWORD,
            ulCodeRVA: ULONG,
            dwImplFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the flags, base type and implemented interfaces of a type.
        fn SetTypeDefProps(
            td: mdTypeDef,
            dwTypeDefFlags: DWORD,
            tkExtends: mdToken,
            rtkImplements: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the flags, type and accessor methods of an event.
        fn SetEventProps(
            ev: mdEvent,
            dwEventFlags: DWORD,
            tkEventType: mdToken,
            mdAddOn: mdMethodDef,
            mdRemoveOn: mdMethodDef,
            mdFire: mdMethodDef,
            rmdOtherMethods: *mut mdMethodDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the permission blob of the permission set of `tk` for `dwAction`.
        fn SetPermissionSetProps(
            tk: mdToken,
            dwAction: DWORD,
            pvPermission: *const c_void,
            cbPermission: ULONG,
            ppm: *mut mdPermission,
        ) -> HRESULT { E_NOTIMPL }
        /// Declares `tk` as a P/Invoke of `szImportName` in module `mrImportDLL`.
        fn DefinePinvokeMap(
            tk: mdToken,
            dwMappingFlags: DWORD,
            szImportName: LPCWSTR,
            mrImportDLL: mdModuleRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the P/Invoke mapping of `tk`.
        fn SetPinvokeMap(
            tk: mdToken,
            dwMappingFlags: DWORD,
            szImportName: LPCWSTR,
            mrImportDLL: mdModuleRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Removes the P/Invoke mapping of `tk`.
        fn DeletePinvokeMap(tk: mdToken) -> HRESULT { E_NOTIMPL }
        /// Attaches a custom attribute (constructor `tkCtor`, value blob) to `tkOwner`.
        fn DefineCustomAttribute(
            tkOwner: mdToken,
            tkCtor: mdToken,
            pCustomAttribute: *const c_void,
            cbCustomAttribute: ULONG,
            pcv: *mut mdCustomAttribute,
        ) -> HRESULT { E_NOTIMPL }
        /// Replaces the value blob of a custom attribute.
        fn SetCustomAttributeValue(
            pcv: mdCustomAttribute,
            pCustomAttribute: *const c_void,
            cbCustomAttribute: ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a field of `td` with its signature, flags and optional constant value.
        fn DefineField(
            td: mdTypeDef,
            szName: LPCWSTR,
            dwFieldFlags: DWORD,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
            pmd: *mut mdFieldDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a property of `td` with its signature, accessors and optional default value.
        fn DefineProperty(
            td: mdTypeDef,
            szProperty: LPCWSTR,
            dwPropFlags: DWORD,
            pvSig: PCCOR_SIGNATURE,
            cbSig: ULONG,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
            mdSetter: mdMethodDef,
            mdGetter: mdMethodDef,
            rmdOtherMethods: *mut mdMethodDef,
            pmdProp: *mut mdProperty,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines parameter `ulParamSeq` of method `md` (0 = return value), with name, flags and default.
        fn DefineParam(
            md: mdMethodDef,
            ulParamSeq: ULONG,
            szName: LPCWSTR,
            dwParamFlags: DWORD,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
            ppd: *mut mdParamDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the flags and constant value of a field.
        fn SetFieldProps(
            fd: mdFieldDef,
            dwFieldFlags: DWORD,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the flags, default value and accessors of a property.
        fn SetPropertyProps(
            pr: mdProperty,
            dwPropFlags: DWORD,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
            mdSetter: mdMethodDef,
            mdGetter: mdMethodDef,
            rmdOtherMethods: *mut mdMethodDef,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the name, flags and default value of a parameter.
        fn SetParamProps(
            pd: mdParamDef,
            szName: LPCWSTR,
            dwParamFlags: DWORD,
            dwCPlusTypeFlag: DWORD,
            pValue: *const c_void,
            cchValue: ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Attaches an array of security custom attributes to `tkObj`.
        fn DefineSecurityAttributeSet(
            tkObj: mdToken,
            rSecAttrs: *mut COR_SECATTR,
            cSecAttrs: ULONG,
            pulErrorAttr: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Applies an Edit and Continue delta (`pImport`, the delta's metadata) to the scope.
        fn ApplyEditAndContinue(pImport: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Copies a signature of another scope into this one, translating its tokens (`import`/`emit` are `IMetaDataImport`/`IMetaDataEmit`).
        fn TranslateSigWithScope(
            pAssemImport: *mut c_void,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            import: *mut c_void,
            pbSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pAssemEmit: *mut c_void,
            emit: *mut c_void,
            pvTranslatedSig: PCOR_SIGNATURE,
            cbTranslatedSigMax: ULONG,
            pcbTranslatedSig: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the implementation flags (`CorMethodImpl`) of a method.
        fn SetMethodImplFlags(md: mdMethodDef, dwImplFlags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Sets the relative virtual address of a field's initial data.
        fn SetFieldRVA(fd: mdFieldDef, ulRVA: ULONG) -> HRESULT { E_NOTIMPL }
        /// Queues the scope `pImport` (an `IMetaDataImport`) for merging into this one; `pHostMapToken` is an `IMapToken`.
        fn Merge(
            pImport: *mut c_void,
            pHostMapToken: *mut c_void,
            pHandler: *mut c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Merges every scope queued with `Merge`.
        fn MergeEnd() -> HRESULT { E_NOTIMPL }
    }

    /// Extends `IMetaDataEmit` with generics (generic parameters, method instantiations) and Edit and Continue deltas.
    ///
    /// Introduced in .NET Framework 2.0.
    #[iid("F5DD9950-F693-42E6-830E-7B833E8146A9")]
    #[vtable(IMetaDataEmit2_Vtbl)]
    #[implement(IMetaDataEmit2_Impl: IMetaDataEmit_Impl)]
    #[agile]
    pub unsafe interface IMetaDataEmit2: IMetaDataEmit {
        /// Defines an instantiation (MethodSpec) of generic method `tkParent`.
        fn DefineMethodSpec(
            tkParent: mdToken,
            pvSigBlob: PCCOR_SIGNATURE,
            cbSigBlob: ULONG,
            pmi: *mut mdMethodSpec,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the size of the Edit and Continue delta `SaveDelta` would write.
        fn GetDeltaSaveSize(fSave: CorSaveSize, pdwSaveSize: *mut DWORD) -> HRESULT { E_NOTIMPL }
        /// Writes the changes since the last save (an Edit and Continue delta) to a file.
        fn SaveDelta(szFile: LPCWSTR, dwSaveFlags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Writes the Edit and Continue delta to an `IStream` (`pIStream`).
        fn SaveDeltaToStream(pIStream: *mut c_void, dwSaveFlags: DWORD) -> HRESULT { E_NOTIMPL }
        /// Writes the Edit and Continue delta to the caller's buffer.
        fn SaveDeltaToMemory(pbData: *mut c_void, cbData: ULONG) -> HRESULT { E_NOTIMPL }
        /// Defines generic parameter `ulParamSeq` of a type or method, with its constraints.
        fn DefineGenericParam(
            tk: mdToken,
            ulParamSeq: ULONG,
            dwParamFlags: DWORD,
            szname: LPCWSTR,
            reserved: DWORD,
            rtkConstraints: *mut mdToken,
            pgp: *mut mdGenericParam,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the flags, name and constraints of a generic parameter.
        fn SetGenericParamProps(
            gp: mdGenericParam,
            dwParamFlags: DWORD,
            szName: LPCWSTR,
            reserved: DWORD,
            rtkConstraints: *mut mdToken,
        ) -> HRESULT { E_NOTIMPL }
        /// Clears the Edit and Continue change log.
        fn ResetENCLog() -> HRESULT { E_NOTIMPL }
    }
}
