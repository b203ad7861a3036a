//! The structs, enums and typedefs the metadata interfaces of cor.h use.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]
