//! Names written straight to a `fmt::Write`: the per-event naming of a
//! tracer with no allocation in the common case (see docs/performance.md).

use core::fmt;

use crate::facade::info::{ProfilerInfo, Result};
use crate::profiling::FunctionID;

impl ProfilerInfo {
    /// Writes a function's name as [`function_name`](ProfilerInfo::function_name)
    /// displays it (`Program.Fib`, `Outer+Inner.Method`) to `out`, without
    /// allocating for names of up to 256 characters of types that are not
    /// nested: the names are read into stack buffers and converted to UTF-8
    /// as they are written. For a tracer that only formats the name.
    ///
    /// Every runtime call is made before anything is written: on a failure
    /// of the runtime nothing has been written and its `HRESULT` is
    /// returned; a failure of `out` itself is `E_FAIL`. The metadata comes
    /// from the same per-module cache as `function_name`'s.
    pub fn write_function_name(
        &self,
        function: FunctionID,
        out: &mut impl fmt::Write,
    ) -> Result<()> {
        let (import, token) = self.function_import(function)?;
        import.write_method_name(token, out)
    }
}
