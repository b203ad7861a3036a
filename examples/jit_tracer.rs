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
//!
//! `JIT_TRACER_NOTIFICATION_ONLY=1` makes it answer `LoadAsNotificationOnly`
//! with `true` (and `0` with `false`; either way it writes the answer):
//! listed in `CORECLR_NOTIFICATION_PROFILERS` (.NET 7+, with
//! `CORECLR_ENABLE_NOTIFICATION_PROFILERS=1`), it then runs beside the main
//! profiler as a notification-only one.

use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::{Mutex, MutexGuard};

use corprof::facade::{Profiler, ProfilerInfo, Result};
use corprof::profiling::{FunctionID, COR_PRF_MONITOR_JIT_COMPILATION};

/// Lines are buffered (64 KiB) and written whole; the buffer is flushed at
/// shutdown.
struct JitTracer {
    out: Mutex<BufWriter<Box<dyn Write + Send>>>,
}

impl Default for JitTracer {
    fn default() -> Self {
        let out: Box<dyn Write + Send> = match std::env::var_os("JIT_TRACER_OUTPUT") {
            Some(path) => match File::create(&path) {
                Ok(file) => Box::new(file),
                Err(error) => {
                    eprintln!("jit_tracer: cannot create {path:?} ({error}); writing to stderr");
                    Box::new(io::stderr())
                }
            },
            None => Box::new(io::stderr()),
        };
        JitTracer {
            out: Mutex::new(BufWriter::with_capacity(1 << 16, out)),
        }
    }
}

/// One line, built on the stack (on the heap only past 512 bytes) before
/// the output lock is taken, so threads do not wait on each other's
/// metadata calls.
struct Line {
    inline: [u8; 512],
    len: usize,
    spill: Vec<u8>,
}

impl Line {
    fn new() -> Line {
        Line {
            inline: [0; 512],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn bytes(&self) -> &[u8] {
        if self.spill.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if self.spill.is_empty() && end <= self.inline.len() {
            self.inline[self.len..end].copy_from_slice(s.as_bytes());
            self.len = end;
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline[..self.len]);
            }
            self.spill.extend_from_slice(s.as_bytes());
        }
        Ok(())
    }
}

impl JitTracer {
    fn out(&self) -> MutexGuard<'_, BufWriter<Box<dyn Write + Send>>> {
        self.out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes a whole line (its `\n` included) under the lock.
    fn write_line(&self, line: &Line) {
        let mut out = self.out();
        // A tracer must never take the program down: write errors are ignored.
        let _ = out.write_all(line.bytes());
    }
}

impl Profiler for JitTracer {
    fn initialize(&self, info: &ProfilerInfo) -> Result<()> {
        info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)?;
        let mut line = Line::new();
        let _ = writeln!(line, "initialize: ICorProfilerInfo{}", info.version());
        self.write_line(&line);
        Ok(())
    }

    fn jit_compilation_started(
        &self,
        info: &ProfilerInfo,
        function: FunctionID,
        _is_safe_to_block: bool,
    ) -> Result<()> {
        let mut line = Line::new();
        let _ = line.write_str("jit: ");
        // On a failure nothing of the name has been written.
        if let Err(error) = info.write_function_name(function, &mut line) {
            let _ = write!(line, "{function:?} (no name: {error})");
        }
        let _ = line.write_char('\n');
        self.write_line(&line);
        Ok(())
    }

    fn load_as_notification_only(&self) -> Result<bool> {
        let Some(setting) = std::env::var_os("JIT_TRACER_NOTIFICATION_ONLY") else {
            return Ok(false);
        };
        let yes = setting == "1";
        let mut line = Line::new();
        let _ = writeln!(line, "load_as_notification_only: {yes}");
        self.write_line(&line);
        // Refused, this instance gets no Shutdown: write the answer now.
        let _ = self.out().flush();
        Ok(yes)
    }

    fn shutdown(&self, _info: &ProfilerInfo) -> Result<()> {
        let mut out = self.out();
        let _ = out.write_all(b"shutdown\n");
        let _ = out.flush();
        Ok(())
    }
}

corprof::profiler!(JitTracer, "DF63A541-5A33-4611-8829-F4E495985EE3");
