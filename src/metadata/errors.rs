//! The metadata error codes (CLDB_E_*, META_E_*), with their documented meanings.
#![allow(non_upper_case_globals)]

crate::com::hresult::hresult_codes! {
    /// The metadata API's codes.
    CODES;
}
