//! [`EventMask`]: the runtime's two event flag sets as one value, so that
//! the high set is optional and several components' needs merge with `|`.

use core::fmt;
use core::ops::{BitOr, BitOrAssign};

use super::info::{ProfilerInfo, Result};
use crate::profiling::{COR_PRF_HIGH_MONITOR, COR_PRF_MONITOR};

/// The events a profiler asks for: the low flags of `SetEventMask`
/// ([`COR_PRF_MONITOR`]) and the high flags `SetEventMask2` adds
/// ([`COR_PRF_HIGH_MONITOR`], .NET Framework 4.5.2 and .NET Core).
///
/// Either flag set converts into it, and `|` combines flags of both kinds,
/// so a mask without high flags is written without them:
///
/// ```
/// use corprof::facade::EventMask;
/// use corprof::profiling::*;
///
/// let jit: EventMask = COR_PRF_MONITOR_JIT_COMPILATION.into();
/// assert!(jit.high.is_empty());
/// let both = COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_HIGH_MONITOR_EVENT_PIPE;
/// assert_eq!(both, EventMask::new(COR_PRF_MONITOR_JIT_COMPILATION, COR_PRF_HIGH_MONITOR_EVENT_PIPE));
/// assert!(both.contains(jit));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EventMask {
    /// The flags of `SetEventMask` (`COR_PRF_MONITOR`).
    pub low: COR_PRF_MONITOR,
    /// The flags `SetEventMask2` adds (`COR_PRF_HIGH_MONITOR`).
    pub high: COR_PRF_HIGH_MONITOR,
}

impl EventMask {
    /// No event.
    pub const EMPTY: EventMask = EventMask::new(COR_PRF_MONITOR(0), COR_PRF_HIGH_MONITOR(0));

    /// Both flag sets.
    pub const fn new(low: COR_PRF_MONITOR, high: COR_PRF_HIGH_MONITOR) -> EventMask {
        EventMask { low, high }
    }

    /// `true` when no flag of either set is set.
    pub const fn is_empty(self) -> bool {
        self.low.is_empty() && self.high.is_empty()
    }

    /// `true` when every flag of `other` is set in `self`.
    pub const fn contains(self, other: EventMask) -> bool {
        self.low.contains(other.low) && self.high.contains(other.high)
    }

    /// The flags of either.
    pub const fn union(self, other: EventMask) -> EventMask {
        EventMask::new(self.low.union(other.low), self.high.union(other.high))
    }
}

impl fmt::Debug for EventMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.high.is_empty() {
            write!(f, "EventMask({:?})", self.low)
        } else {
            write!(f, "EventMask({:?} | {:?})", self.low, self.high)
        }
    }
}

impl From<COR_PRF_MONITOR> for EventMask {
    fn from(low: COR_PRF_MONITOR) -> EventMask {
        EventMask::new(low, COR_PRF_HIGH_MONITOR(0))
    }
}

impl From<COR_PRF_HIGH_MONITOR> for EventMask {
    fn from(high: COR_PRF_HIGH_MONITOR) -> EventMask {
        EventMask::new(COR_PRF_MONITOR(0), high)
    }
}

impl From<(COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR)> for EventMask {
    fn from((low, high): (COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR)) -> EventMask {
        EventMask::new(low, high)
    }
}

impl From<EventMask> for (COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR) {
    fn from(mask: EventMask) -> (COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR) {
        (mask.low, mask.high)
    }
}

impl<T: Into<EventMask>> BitOr<T> for EventMask {
    type Output = EventMask;
    fn bitor(self, other: T) -> EventMask {
        self.union(other.into())
    }
}

impl<T: Into<EventMask>> BitOrAssign<T> for EventMask {
    fn bitor_assign(&mut self, other: T) {
        *self = self.union(other.into());
    }
}

impl BitOr<COR_PRF_HIGH_MONITOR> for COR_PRF_MONITOR {
    type Output = EventMask;
    /// Low and high flags together: an [`EventMask`].
    fn bitor(self, high: COR_PRF_HIGH_MONITOR) -> EventMask {
        EventMask::new(self, high)
    }
}

impl BitOr<COR_PRF_MONITOR> for COR_PRF_HIGH_MONITOR {
    type Output = EventMask;
    /// Low and high flags together: an [`EventMask`].
    fn bitor(self, low: COR_PRF_MONITOR) -> EventMask {
        EventMask::new(low, self)
    }
}

impl BitOr<EventMask> for COR_PRF_MONITOR {
    type Output = EventMask;
    fn bitor(self, mask: EventMask) -> EventMask {
        mask.union(self.into())
    }
}

impl BitOr<EventMask> for COR_PRF_HIGH_MONITOR {
    type Output = EventMask;
    fn bitor(self, mask: EventMask) -> EventMask {
        mask.union(self.into())
    }
}

impl ProfilerInfo {
    /// Chooses the events the runtime reports, replacing the current mask:
    /// `SetEventMask` when `mask` has no high flag, `SetEventMask2`
    /// otherwise (`E_NOTIMPL` on a runtime before `ICorProfilerInfo5`).
    /// Takes low flags, high flags or both:
    /// `info.set_event_mask(COR_PRF_MONITOR_JIT_COMPILATION)`,
    /// `info.set_event_mask(COR_PRF_MONITOR_GC | COR_PRF_HIGH_BASIC_GC)`.
    ///
    /// A profiler made of parts should call
    /// [`add_event_mask`](ProfilerInfo::add_event_mask) instead, which keeps
    /// what the other parts asked for. The raw call stays at hand:
    /// `info.v5()` and `SetEventMask2`.
    pub fn set_event_mask(&self, mask: impl Into<EventMask>) -> Result<()> {
        let mask = mask.into();
        let raw = self.live()?;
        if mask.high.is_empty() {
            // SAFETY: a plain value argument.
            return unsafe { raw.SetEventMask(mask.low.0) }.ok_with("SetEventMask");
        }
        let v5 = self.live_v5()?;
        // SAFETY: plain value arguments.
        unsafe { v5.SetEventMask2(mask.low.0, mask.high.0) }.ok_with("SetEventMask2")
    }

    /// Adds `mask` to the events the runtime reports: reads the current mask
    /// ([`event_mask`](ProfilerInfo::event_mask)), and sets the union when
    /// it adds a flag (nothing is asked of the runtime otherwise). This is
    /// how the parts of a composed profiler each ask for their events
    /// without undoing the others'.
    ///
    /// Not atomic: call it where the runtime calls one part at a time
    /// (`initialize`, as the tuple profiler does).
    pub fn add_event_mask(&self, mask: impl Into<EventMask>) -> Result<()> {
        let mask = mask.into();
        let current = self.event_mask()?;
        if current.contains(mask) {
            return Ok(());
        }
        self.set_event_mask(current | mask)
    }

    /// The events currently reported (`GetEventMask2`, or `GetEventMask`
    /// with empty high flags on runtimes before version 5).
    pub fn event_mask(&self) -> Result<EventMask> {
        let raw = self.live()?;
        let (mut low, mut high) = (0, 0);
        match self.v5() {
            Some(v5) => {
                // SAFETY: valid out-pointers.
                unsafe { v5.GetEventMask2(&mut low, &mut high) }.ok_with("GetEventMask2")?
            }
            // SAFETY: a valid out-pointer.
            None => unsafe { raw.GetEventMask(&mut low) }.ok_with("GetEventMask")?,
        }
        Ok(EventMask::new(
            COR_PRF_MONITOR(low),
            COR_PRF_HIGH_MONITOR(high),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiling::*;

    #[test]
    fn flags_of_both_kinds_combine_into_one_mask() {
        let mask = COR_PRF_MONITOR_JIT_COMPILATION | COR_PRF_HIGH_MONITOR_EVENT_PIPE;
        assert_eq!(mask.low, COR_PRF_MONITOR_JIT_COMPILATION);
        assert_eq!(mask.high, COR_PRF_HIGH_MONITOR_EVENT_PIPE);
        let mut more = EventMask::from(COR_PRF_MONITOR_GC);
        more |= mask;
        more |= COR_PRF_HIGH_BASIC_GC;
        assert_eq!(
            more.low,
            COR_PRF_MONITOR_GC | COR_PRF_MONITOR_JIT_COMPILATION
        );
        assert_eq!(
            more.high,
            COR_PRF_HIGH_MONITOR_EVENT_PIPE | COR_PRF_HIGH_BASIC_GC
        );
        assert!(more.contains(mask) && !mask.contains(more));
        assert!(EventMask::EMPTY.is_empty() && !mask.is_empty());
        assert_eq!(
            <(COR_PRF_MONITOR, COR_PRF_HIGH_MONITOR)>::from(mask),
            (mask.low, mask.high)
        );
    }
}
