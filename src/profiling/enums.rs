//! The COR_PRF_* C enums of corprof.idl (reasons, kinds, runtime types).
#![allow(non_camel_case_types, non_upper_case_globals)]
