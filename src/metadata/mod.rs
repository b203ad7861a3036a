//! The metadata API (the runtime's `cor.h`): tokens, the import and emit
//! interfaces, and their types. Names are exactly the header's; everything is
//! also re-exported at this module's root.

pub mod assembly;
pub mod dispenser;
pub mod emit;
pub mod errors;
pub mod import;
pub mod misc;
pub mod tables;
pub mod tokens;
pub mod types;

pub use assembly::*;
pub use dispenser::*;
pub use emit::*;
pub use errors::*;
pub use import::*;
pub use misc::*;
pub use tables::*;
pub use tokens::*;
pub use types::*;
