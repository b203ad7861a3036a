//! IMetaDataInfo, IMetaDataFilter, IMetaDataValidate, IMetaDataError, IMapToken and IHostFilter.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::metadata::tokens::mdToken;
use crate::{com_interface, BOOL, DWORD, E_NOTIMPL, HRESULT, ULONGLONG};

com_interface! {
    /// The error callback the metadata engine reports to during merges and validation (set with `IMetaDataEmit::SetHandler`).
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("B81FF171-20F3-11D2-8DCC-00A0C9B09C19")]
    #[vtable(IMetaDataError_Vtbl)]
    #[implement(IMetaDataError_Impl)]
    #[agile]
    pub unsafe interface IMetaDataError: IUnknown {
        /// Reports an error (`hrError`) the engine hit, with the token it concerns.
        fn OnError(hrError: HRESULT, token: mdToken) -> HRESULT { E_NOTIMPL }
    }

    /// The callback told how tokens move when scopes are merged or reordered.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("06A3EA8B-0225-11D1-BF72-00C04FC31E12")]
    #[vtable(IMapToken_Vtbl)]
    #[implement(IMapToken_Impl)]
    #[agile]
    pub unsafe interface IMapToken: IUnknown {
        /// Reports that token `tkImp` of the imported scope became `tkEmit` in the emit scope.
        fn Map(tkImp: mdToken, tkEmit: mdToken) -> HRESULT { E_NOTIMPL }
    }

    /// Marks the tokens of a scope so that unmarked ones can be left out.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("D0E80DD1-12D4-11D3-B39D-00C04FF81795")]
    #[vtable(IMetaDataFilter_Vtbl)]
    #[implement(IMetaDataFilter_Impl)]
    #[agile]
    pub unsafe interface IMetaDataFilter: IUnknown {
        /// Clears every mark in the scope.
        fn UnmarkAll() -> HRESULT { E_NOTIMPL }
        /// Marks a token (to keep it when the scope is filtered).
        fn MarkToken(tk: mdToken) -> HRESULT { E_NOTIMPL }
        /// Tells whether a token is marked.
        fn IsTokenMarked(tk: mdToken, pIsMarked: *mut BOOL) -> HRESULT { E_NOTIMPL }
    }

    /// The host's callback told which tokens the metadata engine marked.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("D0E80DD3-12D4-11D3-B39D-00C04FF81795")]
    #[vtable(IHostFilter_Vtbl)]
    #[implement(IHostFilter_Impl)]
    #[agile]
    pub unsafe interface IHostFilter: IUnknown {
        /// Receives a token the metadata engine marked.
        fn MarkToken(tk: mdToken) -> HRESULT { E_NOTIMPL }
    }

    /// Checks a scope's metadata for consistency, reporting problems to a handler.
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("4709C9C6-81FF-11D3-9FC7-00C04F79A0A3")]
    #[vtable(IMetaDataValidate_Vtbl)]
    #[implement(IMetaDataValidate_Impl)]
    #[agile]
    pub unsafe interface IMetaDataValidate: IUnknown {
        /// Prepares validation for a module kind (`CorValidatorModuleType`), with an error handler.
        fn ValidatorInit(dwModuleType: DWORD, pUnk: *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Validates the scope's metadata, reporting errors to the handler.
        fn ValidateMetaData() -> HRESULT { E_NOTIMPL }
    }

    /// Tells where and how the file of a scope opened from disk is mapped in memory.
    ///
    /// Introduced in .NET Framework 4.
    #[iid("7998EA64-7F95-48B8-86FC-17CAF48BF5CB")]
    #[vtable(IMetaDataInfo_Vtbl)]
    #[implement(IMetaDataInfo_Impl)]
    #[agile]
    pub unsafe interface IMetaDataInfo: IUnknown {
        /// Gives the address, size and kind (`CorFileMapping`) of the memory the scope's file is mapped into.
        fn GetFileMapping(
            ppvData: *mut *const c_void,
            pcbData: *mut ULONGLONG,
            pdwMappingType: *mut DWORD,
        ) -> HRESULT { E_NOTIMPL }
    }
}
