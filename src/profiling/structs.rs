//! The `#[repr(C)]` structs of corprof.idl.
#![allow(non_camel_case_types, non_snake_case)]
