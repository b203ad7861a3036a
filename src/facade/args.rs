//! Small typed views of callback arguments: [`Bools`] over a `BOOL` array,
//! [`EventPipeEvent`] for `EventPipeEventDelivered`'s many arguments.
//!
//! Both borrow the runtime's memory for the duration of one callback: they
//! copy nothing, and the borrow checker keeps them from outliving the call.

use core::fmt;
use core::iter::FusedIterator;

use crate::profiling::{ThreadID, EVENTPIPE_PROVIDER};
use crate::{BOOL, GUID};

/// A borrowed array of Windows `BOOL`s (32-bit integers, zero for false),
/// read as `bool`s without copying.
///
/// `GarbageCollectionStarted` passes one: entry `i` says whether generation
/// `i` is collected.
///
/// ```
/// use corprof::facade::Bools;
/// let raw = [1, 0, 7];
/// let bools = Bools::new(&raw);
/// assert_eq!(bools.len(), 3);
/// assert_eq!(bools.get(2), Some(true));
/// assert_eq!(bools.get(3), None);
/// assert_eq!(bools.iter().collect::<Vec<_>>(), [true, false, true]);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Bools<'a> {
    raw: &'a [BOOL],
}

impl<'a> Bools<'a> {
    /// Views `raw` as booleans (any non-zero value is `true`).
    #[inline]
    pub const fn new(raw: &'a [BOOL]) -> Bools<'a> {
        Bools { raw }
    }

    /// The number of entries.
    #[inline]
    pub const fn len(&self) -> usize {
        self.raw.len()
    }

    /// `true` when there are no entries.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// Entry `index` as a `bool`, or `None` past the end.
    #[inline]
    pub fn get(&self, index: usize) -> Option<bool> {
        self.raw.get(index).map(|&b| b != 0)
    }

    /// The entries, in order.
    #[inline]
    pub fn iter(&self) -> BoolsIter<'a> {
        BoolsIter {
            inner: self.raw.iter(),
        }
    }

    /// The raw `BOOL` values, as the runtime passed them.
    #[inline]
    pub const fn as_raw(&self) -> &'a [BOOL] {
        self.raw
    }
}

impl fmt::Debug for Bools<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Bools<'a> {
    type Item = bool;
    type IntoIter = BoolsIter<'a>;
    #[inline]
    fn into_iter(self) -> BoolsIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Bools<'a> {
    type Item = bool;
    type IntoIter = BoolsIter<'a>;
    #[inline]
    fn into_iter(self) -> BoolsIter<'a> {
        self.iter()
    }
}

/// The iterator of [`Bools::iter`].
#[derive(Clone, Debug)]
pub struct BoolsIter<'a> {
    inner: core::slice::Iter<'a, BOOL>,
}

impl Iterator for BoolsIter<'_> {
    type Item = bool;
    #[inline]
    fn next(&mut self) -> Option<bool> {
        self.inner.next().map(|&b| b != 0)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for BoolsIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<bool> {
        self.inner.next_back().map(|&b| b != 0)
    }
}

impl ExactSizeIterator for BoolsIter<'_> {}
impl FusedIterator for BoolsIter<'_> {}

/// One EventPipe event delivered to the profiler's session
/// (`ICorProfilerCallback10::EventPipeEventDelivered`).
///
/// Every borrowed field points into the runtime's memory and is valid only
/// during the callback; copy what you keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventPipeEvent<'a> {
    /// The provider that wrote the event.
    pub provider: EVENTPIPE_PROVIDER,
    /// The event's ID within its provider.
    pub event_id: u32,
    /// The event's version.
    pub event_version: u32,
    /// The event's metadata blob (name and field descriptions, in
    /// EventPipe's metadata format).
    pub metadata: &'a [u8],
    /// The event's payload.
    pub data: &'a [u8],
    /// The activity ID, if the runtime passed one.
    pub activity_id: Option<&'a GUID>,
    /// The related (parent) activity ID, if the runtime passed one.
    pub related_activity_id: Option<&'a GUID>,
    /// The managed thread that wrote the event.
    pub thread: ThreadID,
    /// The stack of the writing thread, as instruction pointers, innermost
    /// first (empty unless stacks were requested for the session).
    pub stack: &'a [usize],
}
