//! The starts of a [`Sampler`]: [`Sampler::start`], [`Sampler::start_exporting`]
//! and the [`SamplerBuilder`] (its exporters; the unsafe start of
//! thread-suspend mode).

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::export::Exporter;
use super::mode::SamplingMode;
use super::options::{OptionError, SamplerOptions};
use super::sampler::Sampler;
use crate::facade::{ProfilerInfo, Result};

impl Sampler {
    /// A builder: the sampler with `options`, the exporters added to it,
    /// started by [`SamplerBuilder::start`]
    /// (`Sampler::builder(options).exporter(e).start(info)`).
    pub fn builder(options: SamplerOptions) -> SamplerBuilder {
        SamplerBuilder {
            options,
            exporters: Vec::new(),
        }
    }

    /// Starts the sampler thread (named `corprof-sampler`) and, for
    /// [`AllocationSource::AllocationTick`](crate::sampling::AllocationSource::AllocationTick), its EventPipe session (the
    /// event masks of [`SamplerOptions::event_masks`] must be set).
    ///
    /// `E_INVALIDARG` for options [`SamplerOptions::validate`] refuses,
    /// with the [`OptionError`] (the field, the value) as the error's
    /// source; `E_NOTIMPL` when the runtime lacks `ICorProfilerInfo10`
    /// (before .NET Core 3.0), or `ICorProfilerInfo12` for `AllocationTick`
    /// (before .NET 5); the runtime's error when the session cannot start;
    /// `E_FAIL` when the thread cannot be started.
    pub fn start(info: &ProfilerInfo, options: SamplerOptions) -> Result<Sampler> {
        Sampler::start_exporting(info, options, Vec::new())
    }

    /// Like [`start`](Self::start), and every [`SamplerOptions::period`]
    /// hands a profile of that period alone to `exporters`, from an export
    /// thread of its own (`corprof-export`, `corprof::sampling::export`):
    /// the sampler and the application never wait for an export. With no
    /// exporter, there are no periods. [`Sampler::builder`] does the same.
    ///
    /// [`SamplingMode::ThreadSuspend`] is refused (`E_INVALIDARG`, an
    /// [`OptionError`] on `mode`): it needs every `ThreadDestroyed`
    /// forwarded, which only
    /// [`SamplerBuilder::start_forwarding_thread_destroyed`] (`unsafe`)
    /// can be told.
    pub fn start_exporting(
        info: &ProfilerInfo,
        options: SamplerOptions,
        exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
    ) -> Result<Sampler> {
        check_forwarding(&options, false)?;
        let sampler = Sampler::prepare(info, options, exporters)?;
        sampler.launch()?;
        Ok(sampler)
    }
}

/// A [`Sampler`] being assembled: its options and exporters
/// ([`Sampler::builder`]).
#[must_use = "a builder does nothing until started"]
pub struct SamplerBuilder {
    options: SamplerOptions,
    exporters: Vec<alloc::boxed::Box<dyn Exporter>>,
}

impl core::fmt::Debug for SamplerBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SamplerBuilder")
            .field("options", &self.options)
            .field("exporters", &self.exporters.len())
            .finish()
    }
}

impl SamplerBuilder {
    /// Adds an exporter: every [`SamplerOptions::period`] it gets a profile
    /// of that period ([`Sampler::start_exporting`]).
    pub fn exporter(mut self, exporter: impl Exporter + 'static) -> SamplerBuilder {
        self.exporters.push(alloc::boxed::Box::new(exporter));
        self
    }

    /// Adds exporters already boxed (as
    /// [`ExportOptions::exporters`](super::export::ExportOptions::exporters)
    /// makes them).
    pub fn exporters(
        mut self,
        exporters: impl IntoIterator<Item = alloc::boxed::Box<dyn Exporter>>,
    ) -> SamplerBuilder {
        self.exporters.extend(exporters);
        self
    }

    /// The options it will start with.
    pub fn options(&self) -> &SamplerOptions {
        &self.options
    }

    /// Starts the sampler: [`Sampler::start_exporting`] with the options
    /// and the exporters added (the same errors; [`SamplingMode::ThreadSuspend`]
    /// refused: see [`start_forwarding_thread_destroyed`](Self::start_forwarding_thread_destroyed)).
    pub fn start(self, info: &ProfilerInfo) -> Result<Sampler> {
        Sampler::start_exporting(info, self.options, self.exporters)
    }

    /// Starts the sampler in any mode, [`SamplingMode::ThreadSuspend`] (the
    /// default on Windows x64) included: the sampler is handed to `publish`
    /// (to put it where the profiler's `thread_destroyed` finds it) before
    /// its thread starts sampling, then started. The errors of
    /// [`start`](Self::start), but for the mode.
    ///
    /// # Safety
    ///
    /// In [`SamplingMode::ThreadSuspend`], from `publish` on, every
    /// `ThreadDestroyed` the runtime raises while the sampler lives must
    /// reach [`Sampler::thread_destroyed`] of the sampler published, from
    /// that callback, before it returns: the sampler suspends and walks the
    /// managed threads one at a time, and it leaves out a destroyed thread
    /// only when told (the runtime frees the thread's `Thread` after the
    /// callback; `DoStackSnapshot` of it ends the process).
    /// [`SamplingProfiler`](super::SamplingProfiler) does this. Nothing is
    /// asked in the other modes.
    pub unsafe fn start_forwarding_thread_destroyed(
        self,
        info: &ProfilerInfo,
        publish: impl FnOnce(&Arc<Sampler>),
    ) -> Result<Arc<Sampler>> {
        check_forwarding(&self.options, true)?;
        let sampler = Arc::new(Sampler::prepare(info, self.options, self.exporters)?);
        publish(&sampler);
        sampler.launch()?;
        Ok(sampler)
    }
}

/// [`SamplingMode::ThreadSuspend`] only with `ThreadDestroyed` forwarded
/// (`forwarded`: the caller took on
/// [`SamplerBuilder::start_forwarding_thread_destroyed`]'s contract).
fn check_forwarding(options: &SamplerOptions, forwarded: bool) -> Result<()> {
    if options.mode == SamplingMode::ThreadSuspend && !forwarded {
        return Err(OptionError {
            field: "mode",
            value: alloc::format!("{:?}", options.mode),
            expected: "Signal or SuspendRuntime here: ThreadSuspend needs every ThreadDestroyed \
                       forwarded, SamplerBuilder::start_forwarding_thread_destroyed (unsafe)",
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Safe code cannot start the thread-suspend mode (the unsafe start
    /// can; that safe code cannot call it is ui-tests/
    /// thread_suspend_needs_unsafe.rs).
    #[test]
    fn the_safe_start_refuses_the_thread_suspend_mode() {
        let options = SamplerOptions::default().with_mode(SamplingMode::ThreadSuspend);
        let error = check_forwarding(&options, false).unwrap_err();
        assert_eq!(error.code(), crate::E_INVALIDARG);
        let text = alloc::format!("{error}");
        assert!(
            text.contains("SamplerOptions::mode = ThreadSuspend: must be Signal or SuspendRuntime"),
            "{text}"
        );
        assert!(check_forwarding(&options, true).is_ok());
        for mode in [SamplingMode::Signal, SamplingMode::SuspendRuntime] {
            assert!(check_forwarding(&SamplerOptions::default().with_mode(mode), false).is_ok());
        }
    }
}
