//! IMetaDataAssemblyImport and IMetaDataAssemblyEmit: assembly manifests.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::metadata::tokens::{
    mdAssembly, mdAssemblyRef, mdExportedType, mdFile, mdManifestResource, mdToken, mdTypeDef,
};
use crate::metadata::types::{ASSEMBLYMETADATA, HCORENUM};
use crate::{com_interface, DWORD, E_NOTIMPL, HRESULT, LPCWSTR, LPWSTR, ULONG};

com_interface! {
    /// Writes an assembly manifest: the assembly, assembly references, files, exported types and resources.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("211EF15B-5317-4438-B196-DEC87B887693")]
    #[vtable(IMetaDataAssemblyEmit_Vtbl)]
    #[implement(IMetaDataAssemblyEmit_Impl)]
    #[agile]
    pub unsafe interface IMetaDataAssemblyEmit: IUnknown {
        /// Defines the scope's assembly manifest: public key, hash algorithm, name, version data and flags.
        fn DefineAssembly(
            pbPublicKey: *const c_void,
            cbPublicKey: ULONG,
            ulHashAlgId: ULONG,
            szName: LPCWSTR,
            pMetaData: *const ASSEMBLYMETADATA,
            dwAssemblyFlags: DWORD,
            pma: *mut mdAssembly,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a reference (AssemblyRef) to another assembly.
        fn DefineAssemblyRef(
            pbPublicKeyOrToken: *const c_void,
            cbPublicKeyOrToken: ULONG,
            szName: LPCWSTR,
            pMetaData: *const ASSEMBLYMETADATA,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            dwAssemblyRefFlags: DWORD,
            pmdar: *mut mdAssemblyRef,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a File row: another file of the assembly.
        fn DefineFile(
            szName: LPCWSTR,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            dwFileFlags: DWORD,
            pmdf: *mut mdFile,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines an ExportedType: a type the assembly exposes from another file or forwards.
        fn DefineExportedType(
            szName: LPCWSTR,
            tkImplementation: mdToken,
            tkTypeDef: mdTypeDef,
            dwExportedTypeFlags: DWORD,
            pmdct: *mut mdExportedType,
        ) -> HRESULT { E_NOTIMPL }
        /// Defines a ManifestResource: a resource of the assembly.
        fn DefineManifestResource(
            szName: LPCWSTR,
            tkImplementation: mdToken,
            dwOffset: DWORD,
            dwResourceFlags: DWORD,
            pmdmr: *mut mdManifestResource,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the properties of the assembly manifest.
        fn SetAssemblyProps(
            pma: mdAssembly,
            pbPublicKey: *const c_void,
            cbPublicKey: ULONG,
            ulHashAlgId: ULONG,
            szName: LPCWSTR,
            pMetaData: *const ASSEMBLYMETADATA,
            dwAssemblyFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the properties of an AssemblyRef.
        fn SetAssemblyRefProps(
            ar: mdAssemblyRef,
            pbPublicKeyOrToken: *const c_void,
            cbPublicKeyOrToken: ULONG,
            szName: LPCWSTR,
            pMetaData: *const ASSEMBLYMETADATA,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            dwAssemblyRefFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the hash and flags of a File row.
        fn SetFileProps(
            file: mdFile,
            pbHashValue: *const c_void,
            cbHashValue: ULONG,
            dwFileFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the implementation, TypeDef and flags of an ExportedType.
        fn SetExportedTypeProps(
            ct: mdExportedType,
            tkImplementation: mdToken,
            tkTypeDef: mdTypeDef,
            dwExportedTypeFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Changes the implementation, offset and flags of a ManifestResource.
        fn SetManifestResourceProps(
            mr: mdManifestResource,
            tkImplementation: mdToken,
            dwOffset: DWORD,
            dwResourceFlags: DWORD,
        ) -> HRESULT { E_NOTIMPL }
    }

    /// Reads an assembly manifest: the assembly, assembly references, files, exported types and resources.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("EE62470B-E94B-424E-9B7C-2F00C9249F93")]
    #[vtable(IMetaDataAssemblyImport_Vtbl)]
    #[implement(IMetaDataAssemblyImport_Impl)]
    #[agile]
    pub unsafe interface IMetaDataAssemblyImport: IUnknown {
        /// Gives the public key, hash algorithm, name, version data and flags of the assembly.
        fn GetAssemblyProps(
            mda: mdAssembly,
            ppbPublicKey: *mut *const c_void,
            pcbPublicKey: *mut ULONG,
            pulHashAlgId: *mut ULONG,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            pMetaData: *mut ASSEMBLYMETADATA,
            pdwAssemblyFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the public key or token, name, version data, hash and flags of an AssemblyRef.
        fn GetAssemblyRefProps(
            mdar: mdAssemblyRef,
            ppbPublicKeyOrToken: *mut *const c_void,
            pcbPublicKeyOrToken: *mut ULONG,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            pMetaData: *mut ASSEMBLYMETADATA,
            ppbHashValue: *mut *const c_void,
            pcbHashValue: *mut ULONG,
            pdwAssemblyRefFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the name, hash and flags of a File row.
        fn GetFileProps(
            mdf: mdFile,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            ppbHashValue: *mut *const c_void,
            pcbHashValue: *mut ULONG,
            pdwFileFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the name, implementation, TypeDef and flags of an ExportedType.
        fn GetExportedTypeProps(
            mdct: mdExportedType,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            ptkImplementation: *mut mdToken,
            ptkTypeDef: *mut mdTypeDef,
            pdwExportedTypeFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the name, implementation, offset and flags of a ManifestResource.
        fn GetManifestResourceProps(
            mdmr: mdManifestResource,
            szName: LPWSTR,
            cchName: ULONG,
            pchName: *mut ULONG,
            ptkImplementation: *mut mdToken,
            pdwOffset: *mut DWORD,
            pdwResourceFlags: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the AssemblyRefs of the manifest.
        fn EnumAssemblyRefs(
            phEnum: *mut HCORENUM,
            rAssemblyRefs: *mut mdAssemblyRef,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the File rows of the manifest.
        fn EnumFiles(
            phEnum: *mut HCORENUM,
            rFiles: *mut mdFile,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the ExportedTypes of the manifest.
        fn EnumExportedTypes(
            phEnum: *mut HCORENUM,
            rExportedTypes: *mut mdExportedType,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Enumerates the ManifestResources of the manifest.
        fn EnumManifestResources(
            phEnum: *mut HCORENUM,
            rManifestResources: *mut mdManifestResource,
            cMax: ULONG,
            pcTokens: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the Assembly token of the scope.
        fn GetAssemblyFromScope(ptkAssembly: *mut mdAssembly) -> HRESULT { E_NOTIMPL }
        /// Finds an ExportedType by name (and enclosing ExportedType, for nested types).
        fn FindExportedTypeByName(
            szName: LPCWSTR,
            mdtExportedType: mdToken,
            ptkExportedType: *mut mdExportedType,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a ManifestResource by name.
        fn FindManifestResourceByName(
            szName: LPCWSTR,
            ptkManifestResource: *mut mdManifestResource,
        ) -> HRESULT { E_NOTIMPL }
        /// Frees an enumerator returned by one of the `Enum*` methods.
        fn CloseEnum(hEnum: HCORENUM) {}
        /// Finds assemblies by name; `ppIUnk` receives `IMetaDataAssemblyImport` pointers (not supported by CoreCLR).
        fn FindAssembliesByName(
            szAppBase: LPCWSTR,
            szPrivateBin: LPCWSTR,
            szAssemblyName: LPCWSTR,
            ppIUnk: *mut *mut c_void,
            cMax: ULONG,
            pcAssemblies: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
    }
}
