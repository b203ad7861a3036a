//! IMetaDataTables and IMetaDataTables2: raw access to the metadata tables.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)

use core::ffi::c_void;

use crate::{com_interface, E_NOTIMPL, GUID, HRESULT, ULONG};

com_interface! {
    /// Raw, read-only access to the metadata tables and heaps (little-endian, as stored).
    ///
    /// Introduced in .NET Framework 1.0.
    #[iid("D8F579AB-402D-4B8E-82D9-5D63B1065C68")]
    #[vtable(IMetaDataTables_Vtbl)]
    #[implement(IMetaDataTables_Impl)]
    #[agile]
    pub unsafe interface IMetaDataTables: IUnknown {
        /// Gives the size of the string heap, in bytes.
        fn GetStringHeapSize(pcbStrings: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the size of the blob heap, in bytes.
        fn GetBlobHeapSize(pcbBlobs: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the size of the GUID heap, in bytes.
        fn GetGuidHeapSize(pcbGuids: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the size of the user-string heap, in bytes.
        fn GetUserStringHeapSize(pcbBlobs: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the number of metadata tables.
        fn GetNumTables(pcTables: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the table index a token's type belongs to.
        fn GetTableIndex(token: ULONG, pixTbl: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the row size, row count, column count, key column and name of a table.
        fn GetTableInfo(
            ixTbl: ULONG,
            pcbRow: *mut ULONG,
            pcRows: *mut ULONG,
            pcCols: *mut ULONG,
            piKey: *mut ULONG,
            ppName: *mut *const u8,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the offset, size, type and name of a table column.
        fn GetColumnInfo(
            ixTbl: ULONG,
            ixCol: ULONG,
            poCol: *mut ULONG,
            pcbCol: *mut ULONG,
            pType: *mut ULONG,
            ppName: *mut *const u8,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the token types and name of a coded-token kind.
        fn GetCodedTokenInfo(
            ixCdTkn: ULONG,
            pcTokens: *mut ULONG,
            ppTokens: *mut *mut ULONG,
            ppName: *mut *const u8,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives a pointer to row `rid` of table `ixTbl`.
        fn GetRow(ixTbl: ULONG, rid: ULONG, ppRow: *mut *mut c_void) -> HRESULT { E_NOTIMPL }
        /// Gives the value of one column of one row.
        fn GetColumn(
            ixTbl: ULONG,
            ixCol: ULONG,
            rid: ULONG,
            pVal: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives a pointer to the UTF-8 string at an index of the string heap.
        fn GetString(ixString: ULONG, ppString: *mut *const u8) -> HRESULT { E_NOTIMPL }
        /// Gives the size and a pointer to the blob at an index of the blob heap.
        fn GetBlob(
            ixBlob: ULONG,
            pcbData: *mut ULONG,
            ppData: *mut *const c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives a pointer to the GUID at an index of the GUID heap.
        fn GetGuid(ixGuid: ULONG, ppGUID: *mut *const GUID) -> HRESULT { E_NOTIMPL }
        /// Gives the size and a pointer to the string at an index of the user-string heap.
        fn GetUserString(
            ixUserString: ULONG,
            pcbData: *mut ULONG,
            ppData: *mut *const c_void,
        ) -> HRESULT { E_NOTIMPL }
        /// Gives the index of the string after the one at `ixString`.
        fn GetNextString(ixString: ULONG, pNext: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the index of the blob after the one at `ixBlob`.
        fn GetNextBlob(ixBlob: ULONG, pNext: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the index of the GUID after the one at `ixGuid`.
        fn GetNextGuid(ixGuid: ULONG, pNext: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the index of the user string after the one at `ixUserString`.
        fn GetNextUserString(ixUserString: ULONG, pNext: *mut ULONG) -> HRESULT { E_NOTIMPL }
    }

    /// Extends `IMetaDataTables` with access to the metadata section and its streams.
    ///
    /// Introduced in .NET Framework 2.0.
    #[iid("BADB5F70-58DA-43A9-A1C6-D74819F19B15")]
    #[vtable(IMetaDataTables2_Vtbl)]
    #[implement(IMetaDataTables2_Impl: IMetaDataTables_Impl)]
    #[agile]
    pub unsafe interface IMetaDataTables2: IMetaDataTables {
        /// Gives a pointer to and the size of the whole metadata section (it starts with `BSJB`).
        fn GetMetaDataStorage(ppvMd: *mut *const c_void, pcbMd: *mut ULONG) -> HRESULT { E_NOTIMPL }
        /// Gives the name, location and size of metadata stream `ix`.
        fn GetMetaDataStreamInfo(
            ix: ULONG,
            ppchName: *mut *const u8,
            ppv: *mut *const c_void,
            pcb: *mut ULONG,
        ) -> HRESULT { E_NOTIMPL }
    }
}
