//! The metadata API's status codes from the runtime's corerror.xml: the
//! `CLDB_*` codes of the metadata store and the `META_*` codes of the
//! metadata engine (facility `0x13`, range `0x8013_11xx`), including the two
//! success codes `CLDB_S_TRUNCATION` and `META_S_DUPLICATE`, with their
//! documented meanings.
//!
//! (More in the [`metadata`](crate::metadata) module documentation.)
#![allow(non_upper_case_globals)]

crate::com::hresult::hresult_codes! {
    /// The metadata API's codes.
    CODES;
    /// Success, but a returned value (typically a name) did not fit the caller's buffer and was truncated.
    CLDB_S_TRUNCATION = 0x0013_1106;
    /// Success: the item to define already exists, and the existing one was used.
    META_S_DUPLICATE = 0x0013_1197;
    /// Reading the metadata file failed.
    CLDB_E_FILE_BADREAD = 0x8013_1100;
    /// Writing the metadata file failed.
    CLDB_E_FILE_BADWRITE = 0x8013_1101;
    /// The metadata is in an older format version that is not supported.
    CLDB_E_FILE_OLDVER = 0x8013_1107;
    /// Creating shared memory failed because a mapping with the same name already exists.
    CLDB_E_SMDUPLICATE = 0x8013_110A;
    /// The memory block or stream contains no metadata.
    CLDB_E_NO_DATA = 0x8013_110B;
    /// The importing scope is not compatible with the emitting scope.
    CLDB_E_INCOMPATIBLE = 0x8013_110D;
    /// The metadata file is corrupt.
    CLDB_E_FILE_CORRUPT = 0x8013_110E;
    /// A scope built incrementally cannot be opened for a full update.
    CLDB_E_BADUPDATEMODE = 0x8013_1110;
    /// A metadata index was not found.
    CLDB_E_INDEX_NOTFOUND = 0x8013_1124;
    /// The looked-up record (a name, token or row) was not found.
    CLDB_E_RECORD_NOTFOUND = 0x8013_1130;
    /// A record was emitted out of the required order.
    CLDB_E_RECORD_OUTOFORDER = 0x8013_1135;
    /// A blob or string is too large for the metadata format.
    CLDB_E_TOO_BIG = 0x8013_1154;
    /// A token of the wrong kind was passed to a metadata method.
    META_E_INVALID_TOKEN_TYPE = 0x8013_115F;
    /// Merging found the import scope's metadata inconsistent.
    META_E_BADMETADATA = 0x8013_118A;
    /// A binary signature is malformed.
    META_E_BAD_SIGNATURE = 0x8013_1192;
    /// An input parameter is invalid.
    META_E_BAD_INPUT_PARAMETER = 0x8013_1193;
    /// A TypeRef could not be resolved to its definition.
    META_E_CANNOTRESOLVETYPEREF = 0x8013_1196;
    /// The user-string heap has no room left for more strings.
    META_E_STRINGSPACE_FULL = 0x8013_1198;
    /// UnmarkAll has already been called.
    META_E_HAS_UNMARKALL = 0x8013_119A;
    /// UnmarkAll must be called before tokens can be marked.
    META_E_MUST_CALL_UNMARKALL = 0x8013_119B;
    /// A well-known custom attribute is applied to a target it is not valid on.
    META_E_CA_INVALID_TARGET = 0x8013_11C0;
    /// A well-known custom attribute has an invalid value.
    META_E_CA_INVALID_VALUE = 0x8013_11C1;
    /// A well-known custom attribute's blob is malformed.
    META_E_CA_INVALID_BLOB = 0x8013_11C2;
    /// A well-known custom attribute's blob repeats a named argument.
    META_E_CA_REPEATED_ARG = 0x8013_11C3;
    /// A well-known custom attribute has a named argument that is not recognized.
    META_E_CA_UNKNOWN_ARGUMENT = 0x8013_11C4;
    /// The custom attribute parser met a type it did not expect.
    META_E_CA_UNEXPECTED_TYPE = 0x8013_11C7;
    /// The custom attribute parser handles fields only, not properties.
    META_E_CA_INVALID_ARGTYPE = 0x8013_11C8;
    /// A custom attribute argument is not valid for the item the attribute is applied to.
    META_E_CA_INVALID_ARG_FOR_TYPE = 0x8013_11C9;
    /// A UUID in a custom attribute has an invalid format.
    META_E_CA_INVALID_UUID = 0x8013_11CA;
    /// A MarshalAs attribute sets fields that do not apply to its unmanaged type.
    META_E_CA_INVALID_MARSHALAS_FIELDS = 0x8013_11CB;
    /// The unmanaged type in a MarshalAs attribute is only valid on fields.
    META_E_CA_NT_FIELDONLY = 0x8013_11CC;
    /// A MarshalAs parameter index is negative.
    META_E_CA_NEGATIVE_PARAMINDEX = 0x8013_11CD;
    /// A MarshalAs constant size is negative.
    META_E_CA_NEGATIVE_CONSTSIZE = 0x8013_11CF;
    /// A fixed-length string in a MarshalAs attribute needs a size.
    META_E_CA_FIXEDSTR_SIZE_REQUIRED = 0x8013_11D0;
    /// A custom marshaler in a MarshalAs attribute needs the marshaler's type.
    META_E_CA_CUSTMARSH_TYPE_REQUIRED = 0x8013_11D1;
    /// SaveDelta was called while not in Edit and Continue mode.
    META_E_NOT_IN_ENC_MODE = 0x8013_11D4;
    /// An InternalsVisibleTo attribute may not give a version, culture or processor architecture.
    META_E_CA_BAD_FRIENDS_ARGS = 0x8013_11E5;
    /// A strong-named assembly may only grant friend access to strong-named assemblies.
    META_E_CA_FRIENDS_SN_REQUIRED = 0x8013_11E6;
    /// An internal error occurred in the metadata engine.
    CLDB_E_INTERNALERROR = 0x8013_1FFF;
}
