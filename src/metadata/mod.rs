//! The metadata API (the runtime's `cor.h`): tokens, the import and emit
//! interfaces, and their types. Names are exactly the header's. Every item has one path, at this module's root
//! (`corprof::metadata::IMetaDataImport`); the files below are private.
//!
//! # The parts, file by file
//!
//! ## `tokens.rs`
//!
//! Metadata tokens (cor.h, corhdr.h): a 32-bit value whose high byte names the metadata table and whose low 24 bits are the row (RID).
//!
//! ## `import.rs`
//!
//! IMetaDataImport and IMetaDataImport2: reading a module's metadata.
//!
//! ## `emit.rs`
//!
//! IMetaDataEmit and IMetaDataEmit2: writing a module's metadata.
//!
//! ## `assembly.rs`
//!
//! IMetaDataAssemblyImport and IMetaDataAssemblyEmit: assembly manifests.
//!
//! ## `tables.rs`
//!
//! IMetaDataTables and IMetaDataTables2: raw access to the metadata tables.
//!
//! ## `dispenser.rs`
//!
//! IMetaDataDispenser and IMetaDataDispenserEx: opening and creating metadata scopes.
//!
//! ## `misc.rs`
//!
//! IMetaDataInfo, IMetaDataFilter, IMetaDataValidate, IMetaDataError, IMapToken and IHostFilter.
//!
//! ## `types.rs`
//!
//! The structs, enums and typedefs the metadata interfaces of cor.h use.
//!
//! ## `errors.rs`
//!
//! The metadata API's status codes from the runtime's corerror.xml: the `CLDB_*` codes of the metadata store and the `META_*` codes of the metadata engine (facility `0x13`, range `0x8013_11xx`), including the two success codes `CLDB_S_TRUNCATION` and `META_S_DUPLICATE`, with their documented meanings.
//!
//! Every code here is also known to [`HRESULT`](crate::HRESULT)'s `Debug`,
//! `Display`, [`name`](crate::HRESULT::name) and
//! [`meaning`](crate::HRESULT::meaning):
//!
//! ```
//! use corprof::metadata::CLDB_E_RECORD_NOTFOUND;
//! assert_eq!(format!("{CLDB_E_RECORD_NOTFOUND:?}"), "CLDB_E_RECORD_NOTFOUND");
//! assert_eq!(CLDB_E_RECORD_NOTFOUND.0 as u32, 0x8013_1130);
//! ```

mod assembly;
mod dispenser;
mod emit;
mod errors;
mod import;
mod misc;
mod tables;
mod tokens;
mod types;

pub use assembly::*;
pub use dispenser::*;
pub use emit::*;
pub use errors::*;
pub use import::*;
pub use misc::*;
pub use tables::*;
pub use tokens::*;
pub use types::*;
