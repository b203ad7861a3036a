//! The COR_PRF_* flag sets of corprof.idl (event masks, module flags, ...).
#![allow(non_camel_case_types, non_upper_case_globals)]
