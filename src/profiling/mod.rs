//! The .NET profiling API (the runtime's `corprof.idl`): the callback
//! interfaces a profiler implements, the info interfaces it calls, and every
//! type they use. Names are exactly the IDL's, so Microsoft's documentation
//! applies as is; everything is also re-exported at this module's root.

pub mod callback;
mod elt;
pub mod enumerators;
pub mod enums;
pub mod errors;
pub mod flags;
pub mod hooks;
pub mod ids;
pub mod info;
pub mod misc;
pub mod structs;

pub use callback::*;
pub use elt::*;
pub use enumerators::*;
pub use enums::*;
pub use errors::*;
pub use flags::*;
pub use hooks::*;
pub use ids::*;
pub use info::*;
pub use misc::*;
pub use structs::*;
