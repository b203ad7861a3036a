//! IMetaDataDispenser and IMetaDataDispenserEx: opening and creating metadata scopes.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::{
    com_interface, DWORD, E_NOTIMPL, HRESULT, LPCWSTR, LPWSTR, REFCLSID, REFGUID, REFIID, ULONG,
};

com_interface! {
    /// Creates new metadata scopes and opens existing ones (from a file or from memory).
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("809C652E-7396-11D2-9771-00A0C9B4D50C")]
    #[vtable(IMetaDataDispenser_Vtbl)]
    #[implement(IMetaDataDispenser_Impl)]
    #[agile]
    pub unsafe interface IMetaDataDispenser: IUnknown {
        /// Creates a new, empty metadata scope and returns it as the interface `riid` asks for.
        fn DefineScope(
            rclsid: REFCLSID,
            dwCreateFlags: DWORD,
            riid: REFIID,
            ppIUnk: *mut *mut c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Opens the metadata of an existing file (`CorOpenFlags` in `dwOpenFlags`); `ppIUnk` receives interface `riid`.
        fn OpenScope(
            szScope: LPCWSTR,
            dwOpenFlags: DWORD,
            riid: REFIID,
            ppIUnk: *mut *mut c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Opens metadata held in memory (`pData`, `cbData` bytes); `ppIUnk` receives interface `riid`.
        fn OpenScopeOnMemory(
            pData: *const c_void,
            cbData: ULONG,
            dwOpenFlags: DWORD,
            riid: REFIID,
            ppIUnk: *mut *mut c_void,
        ) -> HRESULT { E_NOTIMPL }
    }

    /// Extends `IMetaDataDispenser` with options and assembly lookup.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("31BCFCE2-DAFB-11D2-9F81-00C04F79A0A3")]
    #[vtable(IMetaDataDispenserEx_Vtbl)]
    #[implement(IMetaDataDispenserEx_Impl: IMetaDataDispenser_Impl)]
    #[agile]
    pub unsafe interface IMetaDataDispenserEx: IMetaDataDispenser {
        /// Sets a dispenser option (`optionid`) to a value (`value` points to a `VARIANT`).
        fn SetOption(optionid: REFGUID, value: *const c_void) -> HRESULT { E_NOTIMPL }
        /// Gives the value of a dispenser option (`pvalue` points to a `VARIANT`).
        fn GetOption(optionid: REFGUID, pvalue: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Opens a scope on a COM type library's `ITypeInfo` (`pITI`); not supported by CoreCLR.
        fn OpenScopeOnITypeInfo(
            pITI: *mut c_void,
            dwOpenFlags: DWORD,
            riid: REFIID,
            ppIUnk: *mut *mut c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Copies the runtime's system directory into the caller's buffer.
        fn GetCORSystemDirectory(
            szBuffer: LPWSTR,
            cchBuffer: DWORD,
            pchBuffer: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds an assembly's file by name (`szName` is an out-buffer despite its `LPCWSTR` type); not supported by CoreCLR.
        fn FindAssembly(
            szAppBase: LPCWSTR,
            szPrivateBin: LPCWSTR,
            szGlobalBin: LPCWSTR,
            szAssemblyName: LPCWSTR,
            szName: LPCWSTR,
            cchName: ULONG,
            pcName: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Finds a module file of an assembly by name; not supported by CoreCLR.
        fn FindAssemblyModule(
            szAppBase: LPCWSTR,
            szPrivateBin: LPCWSTR,
            szGlobalBin: LPCWSTR,
            szAssemblyName: LPCWSTR,
            szModuleName: LPCWSTR,
            szName: LPWSTR,
            cchName: ULONG,
            pcName: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
    }
}
