//! The CORPROF_E_* codes of the profiling API, with their documented meanings.
#![allow(non_upper_case_globals)]

crate::com::hresult::hresult_codes! {
    /// The profiling API's codes.
    CODES;
}
