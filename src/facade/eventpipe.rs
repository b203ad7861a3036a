//! In-process EventPipe sessions (`ICorProfilerInfo12`, .NET 5), behind
//! safe methods of [`ProfilerInfo`]. The events of a session arrive at
//! [`Profiler::event_pipe_event_delivered`](super::Profiler::event_pipe_event_delivered)
//! (ask for `COR_PRF_HIGH_MONITOR_EVENT_PIPE` in the high event mask).
//! A profiler can also be a provider of its own: create it, define its
//! events, write them ([`ProfilerInfo::event_pipe_create_provider`],
//! [`ProfilerInfo::event_pipe_define_event`],
//! [`ProfilerInfo::event_pipe_write_event`]).

use alloc::string::String;
use alloc::vec::Vec;

use super::info::{ProfilerInfo, Result};
use super::strings::{read_utf16, wide};
use crate::profiling::{
    COR_PRF_EVENTPIPE_PARAM_DESC, COR_PRF_EVENTPIPE_PARAM_TYPE, COR_PRF_EVENTPIPE_PROVIDER_CONFIG,
    COR_PRF_EVENT_DATA, EVENTPIPE_EVENT, EVENTPIPE_PROVIDER, EVENTPIPE_SESSION,
};
use crate::E_INVALIDARG;

/// One parameter of an event the profiler defines: its type and name
/// (`COR_PRF_EVENTPIPE_PARAM_DESC`; `element` is the element type of an
/// array, ignored otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventPipeParam<'a> {
    /// The parameter's type (`COR_PRF_EVENTPIPE_INT32`, ...).
    pub kind: COR_PRF_EVENTPIPE_PARAM_TYPE,
    /// The element type when `kind` is `COR_PRF_EVENTPIPE_ARRAY`.
    pub element: COR_PRF_EVENTPIPE_PARAM_TYPE,
    /// The parameter's name, as the event's metadata carries it.
    pub name: &'a str,
}

/// An event the profiler defines (`EventPipeDefineEvent`), identified in
/// its provider by an ID and a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventPipeEventDefinition<'a> {
    /// The event's name.
    pub name: &'a str,
    /// Its ID within the provider.
    pub id: u32,
    /// The keywords a session must enable for it.
    pub keywords: u64,
    /// Its version.
    pub version: u32,
    /// Its level (0 LogAlways .. 5 Verbose).
    pub level: u32,
    /// Its opcode (0 for none).
    pub opcode: u8,
    /// Whether the writer's stack goes with each event.
    pub need_stack: bool,
    /// Its parameters, in payload order.
    pub params: &'a [EventPipeParam<'a>],
}

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
            return Err(E_INVALIDARG.into());
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
        let v12 = self.live_v12()?;
        if providers.is_empty() {
            return Err(E_INVALIDARG.into());
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
        .ok_with("EventPipeStartSession")?;
        Ok(session)
    }

    /// Adds a provider to a running session (`EventPipeAddProviderToSession`).
    pub fn event_pipe_add_provider(
        &self,
        session: EVENTPIPE_SESSION,
        provider: &EventPipeProvider<'_>,
    ) -> Result<()> {
        let v12 = self.live_v12()?;
        let wide = WideProvider::new(provider)?;
        // SAFETY: the config's strings (`wide`) live across the call.
        unsafe { v12.EventPipeAddProviderToSession(session, wide.raw()) }
            .ok_with("EventPipeAddProviderToSession")
    }

    /// Stops a session (`EventPipeStopSession`); its last events are
    /// delivered before this returns.
    pub fn event_pipe_stop_session(&self, session: EVENTPIPE_SESSION) -> Result<()> {
        let v12 = self.live_v12()?;
        // SAFETY: a plain value argument; the runtime checks it.
        unsafe { v12.EventPipeStopSession(session) }.ok_with("EventPipeStopSession")
    }

    /// Creates an EventPipe provider of the profiler's own
    /// (`EventPipeCreateProvider`, `ICorProfilerInfo12`, .NET 5). Sessions
    /// name it like any provider.
    pub fn event_pipe_create_provider(&self, name: &str) -> Result<EVENTPIPE_PROVIDER> {
        let v12 = self.live_v12()?;
        if name.is_empty() {
            return Err(E_INVALIDARG.into());
        }
        let name = wide(name)?;
        let mut provider = EVENTPIPE_PROVIDER::NULL;
        // SAFETY: a NUL-terminated name and a valid out-pointer.
        unsafe { v12.EventPipeCreateProvider(name.as_ptr(), &mut provider) }
            .ok_with("EventPipeCreateProvider")?;
        Ok(provider)
    }

    /// The name of a provider (`EventPipeGetProviderInfo`): one of the
    /// profiler's own, or one the runtime announced in
    /// `event_pipe_provider_created`.
    pub fn event_pipe_provider_name(&self, provider: EVENTPIPE_PROVIDER) -> Result<String> {
        let v12 = self.live_v12()?;
        // SAFETY: `read_utf16` passes a buffer of the capacity it states
        // and a valid length out-pointer.
        read_utf16(|capacity, needed, buffer| unsafe {
            v12.EventPipeGetProviderInfo(provider, capacity, needed, buffer)
        })
        .map_err(|hr| crate::Error::new(hr, "EventPipeGetProviderInfo"))
    }

    /// Defines an event of a provider of the profiler's own
    /// (`EventPipeDefineEvent`).
    pub fn event_pipe_define_event(
        &self,
        provider: EVENTPIPE_PROVIDER,
        event: &EventPipeEventDefinition<'_>,
    ) -> Result<EVENTPIPE_EVENT> {
        let v12 = self.live_v12()?;
        if event.name.is_empty() || event.params.iter().any(|p| p.name.is_empty()) {
            return Err(E_INVALIDARG.into());
        }
        let name = wide(event.name)?;
        let names: Vec<Vec<u16>> = event
            .params
            .iter()
            .map(|p| wide(p.name))
            .collect::<core::result::Result<_, crate::HRESULT>>()?;
        let mut params: Vec<COR_PRF_EVENTPIPE_PARAM_DESC> = event
            .params
            .iter()
            .zip(&names)
            .map(|(p, name)| COR_PRF_EVENTPIPE_PARAM_DESC {
                r#type: p.kind.0,
                elementType: p.element.0,
                name: name.as_ptr(),
            })
            .collect();
        let count = u32::try_from(params.len()).map_err(|_| E_INVALIDARG)?;
        let mut handle = EVENTPIPE_EVENT::NULL;
        // SAFETY: `params` holds `count` descriptors whose names (`names`)
        // and the event's name live across the call; a valid out-pointer.
        unsafe {
            v12.EventPipeDefineEvent(
                provider,
                name.as_ptr(),
                event.id,
                event.keywords,
                event.version,
                event.level,
                event.opcode,
                i32::from(event.need_stack),
                count,
                if params.is_empty() {
                    core::ptr::null_mut()
                } else {
                    params.as_mut_ptr()
                },
                &mut handle,
            )
        }
        .ok_with("EventPipeDefineEvent")?;
        Ok(handle)
    }

    /// Writes an event the profiler defined (`EventPipeWriteEvent`): its
    /// payload as blocks of bytes, one per parameter, each laid out as the
    /// parameter's type is (little-endian integers, NUL-terminated UTF-16
    /// strings, ...). Sessions that enable the provider (at the event's
    /// level and keywords) receive it.
    pub fn event_pipe_write_event(&self, event: EVENTPIPE_EVENT, data: &[&[u8]]) -> Result<()> {
        let v12 = self.live_v12()?;
        let mut blocks: Vec<COR_PRF_EVENT_DATA> = data
            .iter()
            .map(|block| {
                Ok(COR_PRF_EVENT_DATA {
                    ptr: block.as_ptr() as usize as u64,
                    size: u32::try_from(block.len()).map_err(|_| E_INVALIDARG)?,
                    reserved: 0,
                })
            })
            .collect::<Result<_>>()?;
        let count = u32::try_from(blocks.len()).map_err(|_| E_INVALIDARG)?;
        // SAFETY: `blocks` holds `count` descriptors of the caller's
        // slices, alive across the call; no activity IDs.
        unsafe {
            v12.EventPipeWriteEvent(
                event,
                count,
                if blocks.is_empty() {
                    core::ptr::null_mut()
                } else {
                    blocks.as_mut_ptr()
                },
                core::ptr::null(),
                core::ptr::null(),
            )
        }
        .ok_with("EventPipeWriteEvent")
    }
}
