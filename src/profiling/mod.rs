//! The .NET profiling API (the runtime's `corprof.idl`): the callback
//! interfaces a profiler implements, the info interfaces it calls, and every
//! type they use. Names are exactly the IDL's.

mod ids;

pub use ids::*;
