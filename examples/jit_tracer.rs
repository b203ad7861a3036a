//! A JIT tracer: prints the name of every method as the runtime
//! JIT-compiles it (the profiler of "Implementing the .NET Profiling API in
//! Rust", with no `unsafe`).
//!
//! Build it with `cargo build --example jit_tracer` and load it into any
//! .NET program:
//!
//! ```sh
//! CORECLR_ENABLE_PROFILING=1 \
//! CORECLR_PROFILER={DF63A541-5A33-4611-8829-F4E495985EE3} \
//! CORECLR_PROFILER_PATH=$PWD/target/debug/examples/libjit_tracer.so \
//! dotnet MyApp.dll
//! ```
//!
//! Names go to stderr, or to the file named by `JIT_TRACER_OUTPUT`.

use std::fs::File;
use std::io::{self, LineWriter, Write};
use std::sync::Mutex;

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::profiling::{FunctionID, COR_PRF_HIGH_MONITOR, COR_PRF_MONITOR_JIT_COMPILATION};

struct JitTracer {
    out: Mutex<Box<dyn Write + Send>>,
}

impl Default for JitTracer {
    fn default() -> Self {
        let out: Box<dyn Write + Send> = match std::env::var_os("JIT_TRACER_OUTPUT") {
            Some(path) => match File::create(&path) {
                Ok(file) => Box::new(LineWriter::new(file)),
                Err(error) => {
                    eprintln!("jit_tracer: cannot create {path:?} ({error}); writing to stderr");
                    Box::new(io::stderr())
                }
            },
            None => Box::new(io::stderr()),
        };
        JitTracer {
            out: Mutex::new(out),
        }
    }
}

impl JitTracer {
    fn line(&self, text: std::fmt::Arguments<'_>) {
        let mut out = self
            .out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // A tracer must never take the program down: write errors are ignored.
        let _ = out.write_fmt(text);
        let _ = out.write_all(b"\n");
    }
}

impl Profiler for JitTracer {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.set_event_mask(
            COR_PRF_MONITOR_JIT_COMPILATION,
            COR_PRF_HIGH_MONITOR::empty(),
        )?;
        self.line(format_args!(
            "initialize: ICorProfilerInfo{}",
            info.version()
        ));
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        match info.function_name(function) {
            Ok(name) => self.line(format_args!("jit: {name}")),
            Err(error) => self.line(format_args!("jit: {function:?} (no name: {error})")),
        }
        Ok(())
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        self.line(format_args!("shutdown"));
        let _ = self.out.lock().map(|mut out| out.flush());
        Ok(())
    }
}

corprof::profiler!(JitTracer, "DF63A541-5A33-4611-8829-F4E495985EE3");
