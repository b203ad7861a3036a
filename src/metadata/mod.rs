//! The metadata API (the runtime's `cor.h`): tokens, the import/emit
//! interfaces, and their types. Names are exactly the header's.

mod tokens;

pub use tokens::*;
