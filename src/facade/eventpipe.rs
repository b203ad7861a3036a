//! In-process EventPipe sessions (`ICorProfilerInfo12`, .NET 5), behind
//! safe methods of [`ProfilerInfo`]. The events of a session arrive at
//! [`Profiler::event_pipe_event_delivered`](super::Profiler::event_pipe_event_delivered)
//! (ask for `COR_PRF_HIGH_MONITOR_EVENT_PIPE` in the high event mask).

use alloc::vec::Vec;

use super::info::{ProfilerInfo, Result};
use super::strings::wide;
use crate::profiling::{COR_PRF_EVENTPIPE_PROVIDER_CONFIG, EVENTPIPE_SESSION};
use crate::{E_INVALIDARG, E_NOTIMPL};

/// One provider of a session: its name, the keywords and the level to
/// enable, and optional `key=value;...` filter arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventPipeProvider<'a> {
    /// The provider's name (`Microsoft-Windows-DotNETRuntime`).
    pub name: &'a str,
    /// The keyword mask (for the runtime provider: 0x1 GC, 0x8000
    /// exceptions, ...).
    pub keywords: u64,
    /// The level: 0 LogAlways, 1 Critical, 2 Error, 3 Warning, 4
    /// Informational, 5 Verbose.
    pub level: u32,
    /// Filter arguments, or `None`.
    pub filter: Option<&'a str>,
}

/// A provider's strings as the runtime reads them, kept alive across the call.
struct WideProvider {
    name: Vec<u16>,
    filter: Option<Vec<u16>>,
    keywords: u64,
    level: u32,
}

impl WideProvider {
    fn new(provider: &EventPipeProvider<'_>) -> Result<WideProvider> {
        if provider.name.is_empty() {
            return Err(E_INVALIDARG);
        }
        Ok(WideProvider {
            name: wide(provider.name)?,
            filter: provider.filter.map(wide).transpose()?,
            keywords: provider.keywords,
            level: provider.level,
        })
    }

    /// The raw config; borrows `self`'s strings.
    fn raw(&self) -> COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
        COR_PRF_EVENTPIPE_PROVIDER_CONFIG {
            providerName: self.name.as_ptr(),
            keywords: self.keywords,
            loggingLevel: self.level,
            filterData: self
                .filter
                .as_ref()
                .map_or(core::ptr::null(), |f| f.as_ptr()),
        }
    }
}

impl ProfilerInfo {
    /// Starts an in-process EventPipe session with these providers
    /// (`EventPipeStartSession`, `ICorProfilerInfo12`, .NET 5; `E_NOTIMPL`
    /// before). `rundown` asks for the rundown events at the session's end.
    pub fn event_pipe_start_session(
        &self,
        providers: &[EventPipeProvider<'_>],
        rundown: bool,
    ) -> Result<EVENTPIPE_SESSION> {
        let v12 = self.v12().ok_or(E_NOTIMPL)?;
        if providers.is_empty() {
            return Err(E_INVALIDARG);
        }
        let wide: Vec<WideProvider> = providers
            .iter()
            .map(WideProvider::new)
            .collect::<Result<_>>()?;
        let mut raw: Vec<COR_PRF_EVENTPIPE_PROVIDER_CONFIG> =
            wide.iter().map(WideProvider::raw).collect();
        let count = u32::try_from(raw.len()).map_err(|_| E_INVALIDARG)?;
        let mut session = EVENTPIPE_SESSION::NULL;
        // SAFETY: `raw` holds `count` configs whose strings (`wide`) live
        // across the call; a valid out-pointer.
        unsafe {
            v12.EventPipeStartSession(count, raw.as_mut_ptr(), i32::from(rundown), &mut session)
        }
        .ok()?;
        Ok(session)
    }

    /// Adds a provider to a running session (`EventPipeAddProviderToSession`).
    pub fn event_pipe_add_provider(
        &self,
        session: EVENTPIPE_SESSION,
        provider: &EventPipeProvider<'_>,
    ) -> Result<()> {
        let v12 = self.v12().ok_or(E_NOTIMPL)?;
        let wide = WideProvider::new(provider)?;
        // SAFETY: the config's strings (`wide`) live across the call.
        unsafe { v12.EventPipeAddProviderToSession(session, wide.raw()) }.ok()
    }

    /// Stops a session (`EventPipeStopSession`); its last events are
    /// delivered before this returns.
    pub fn event_pipe_stop_session(&self, session: EVENTPIPE_SESSION) -> Result<()> {
        let v12 = self.v12().ok_or(E_NOTIMPL)?;
        // SAFETY: a plain value argument; the runtime checks it.
        unsafe { v12.EventPipeStopSession(session) }.ok()
    }
}
