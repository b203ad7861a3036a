//! The function-pointer typedefs of corprof.idl: enter/leave/tailcall hooks, ID mappers, stack-snapshot and heap-walk callbacks.
#![allow(non_camel_case_types)]
