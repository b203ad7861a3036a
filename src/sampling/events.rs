//! What the runtime tells the sampler: allocations (`ObjectAllocated`,
//! `GCAllocationTick`, `AllocationSampled`), thrown exceptions, lock
//! contentions, blocking waits and GC events, each recorded at the calling
//! thread's stack
//! through the one record path (`record.rs`).

use alloc::string::String;
use alloc::vec::Vec;
use std::time::{Instant, SystemTime};

use super::alloc::{allocation_sampled_weight, allocation_weight, AllocationCountdown};
use super::contention::{
    self, decode_contention, decode_contention_with, Contention, CONTENTION_START, CONTENTION_STOP,
};
use super::gc_heap::GC_HEAP_STATS;
use super::gc_pauses::{decode_gc_event, is_gc_event, GcEvent};
use super::live_heap::NewObject;
use super::options::{
    AllocationSource, ALLOCATION_SAMPLED, ALLOCATION_TICK, ALLOC_BYTES, ALLOC_OBJECTS, EXCEPTIONS,
    LOCK_COUNT, LOCK_TIME, SAMPLE_TYPES, WAIT,
};
use super::record::{push_frame, Sample};
use super::sampler::{Inner, Sampler};
use super::state::{SamplerStats, SpanIds};
use super::waits::{
    self, decode_wait, decode_wait_with, wait_source_name, Wait, WAIT_START, WAIT_STOP,
};
use crate::eventpipe::{decode_payload, runtime_fields, EventMetadata, Value, RUNTIME_PROVIDER};
use crate::facade::{CallbackObject, EventPipeEvent, Result};
use crate::profile::FrameId;
use crate::profiling::{ClassID, ObjectID, ThreadID, EVENTPIPE_PROVIDER};
use crate::support::sync::lock;

impl Sampler {
    /// Counts an allocation (forward `Profiler::object_allocated`; for
    /// [`AllocationSource::ObjectAllocated`]): on the allocating thread, by
    /// the Poisson countdown of `alloc.rs`; a sampled allocation walks the
    /// thread's stack and records its estimated objects and bytes under the
    /// stack and a last frame `new <Type>`.
    ///
    /// # Safety
    ///
    /// `object` must be the ID of a live object that the garbage collector
    /// cannot move or free during the call (the sampler asks the runtime
    /// for its size, [`ProfilerInfo::object_size`]): forward the arguments
    /// of `Profiler::object_allocated` from inside that callback, on its
    /// thread.
    ///
    /// [`ProfilerInfo::object_size`]: crate::facade::ProfilerInfo::object_size
    pub unsafe fn object_allocated(&self, object: ObjectID, class: ClassID) -> Result<()> {
        let (Some(mean), Some(AllocationSource::ObjectAllocated)) =
            (self.inner.options.allocation_mean_bytes, self.inner.source)
        else {
            return Ok(());
        };
        let info = &self.inner.info;
        // SAFETY: `object` is live and does not move (this function's
        // contract, which `Profiler::object_allocated`'s argument meets).
        let size = unsafe { info.object_size(object) }? as u64;
        if !countdown(size, mean) {
            return Ok(());
        }
        let weight = allocation_weight(size, mean);
        let type_name = info.class_name(class).unwrap_or_else(|_| String::from("?"));
        let object = NewObject::Initialised(object);
        // SAFETY: `object` is the callback's live object, on its thread
        // (this function's contract).
        unsafe {
            self.inner
                .record_allocation(&type_name, weight.objects, weight.bytes, Some(object))
        }
    }

    /// Counts the allocations a `GCAllocationTick` event stands for
    /// (forward `Profiler::event_pipe_event_delivered`; for
    /// [`AllocationSource::AllocationTick`]; other events are ignored).
    ///
    /// The runtime writes the event on the allocating thread each time
    /// about 100 KB have been allocated since the last one, naming the
    /// object whose allocation crossed the threshold: the event stands for
    /// `AllocationAmount64` bytes of that object's type, a size-biased
    /// sample. The Poisson countdown of `alloc.rs` runs over those amounts
    /// (so the mean interval still applies); a sampled event walks the
    /// thread's stack and records `amount / p` bytes and that divided by
    /// `ObjectSize` objects under the stack and a last frame `new <Type>`.
    /// An event that cannot be decoded is counted in
    /// [`SamplerStats::undecoded_ticks`], never an error.
    ///
    /// The live heap is not fed from here (its objects' handles need the
    /// event to be the runtime's own): forward the runtime's events with
    /// [`event_pipe_event_delivered_from_runtime`](Self::event_pipe_event_delivered_from_runtime)
    /// to have it.
    pub fn event_pipe_event_delivered(&self, event: &EventPipeEvent<'_>) -> Result<()> {
        self.delivered(event, false)
    }

    /// [`event_pipe_event_delivered`](Self::event_pipe_event_delivered),
    /// and each allocation recorded is also tracked by the live heap
    /// ([`SamplerOptions::heap_objects`](crate::sampling::SamplerOptions::heap_objects)): a weak handle to its object,
    /// made on this thread after the object's MethodTable is written into
    /// its first word (`live_heap.rs`; the object is not initialised yet
    /// when the runtime writes the event).
    ///
    /// # Safety
    ///
    /// `event` must be the runtime's own, forwarded from inside
    /// `Profiler::event_pipe_event_delivered` on the thread the runtime
    /// called it on: the `Address` and `TypeID` of an `AllocationSampled`
    /// or `GCAllocationTick` event are then the object this thread is
    /// allocating and its MethodTable.
    pub unsafe fn event_pipe_event_delivered_from_runtime(
        &self,
        event: &EventPipeEvent<'_>,
    ) -> Result<()> {
        self.delivered(event, true)
    }

    /// The events; `trusted`: `event` is the runtime's own, on its thread.
    fn delivered(&self, event: &EventPipeEvent<'_>, trusted: bool) -> Result<()> {
        // The heap after a GC, read only while a rule watches it.
        if event.event_id == GC_HEAP_STATS {
            if let Some(incidents) = self.inner.incidents.as_ref().filter(|i| i.watches_heap) {
                if self.inner.is_runtime_provider(event.provider) {
                    incidents.gc_heap_stats(event.metadata, event.event_version, event.data);
                    return Ok(());
                }
            }
        }
        if (self.inner.gc.is_some() || self.inner.live.is_some())
            && is_gc_event(event.event_id)
            && self.inner.is_runtime_provider(event.provider)
            && !EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty())
        {
            let decoded = decode_gc_event(event.event_id, event.event_version, event.data);
            if let (Some(live), Some(GcEvent::End)) = (&self.inner.live, decoded) {
                live.gc_ended();
            }
            if let Some(gc) = &self.inner.gc {
                let pause = gc.event(decoded, Instant::now());
                if let (Some(nanos), Some(incidents)) = (pause, &self.inner.incidents) {
                    incidents.gc_pause(nanos);
                }
            }
            return Ok(());
        }
        let contention = event.event_id == CONTENTION_START || event.event_id == CONTENTION_STOP;
        if contention
            && self.inner.contentions.is_some()
            && self.inner.is_runtime_provider(event.provider)
        {
            return self.inner.record_contention(event);
        }
        let wait = event.event_id == WAIT_START || event.event_id == WAIT_STOP;
        if wait && self.inner.waits.is_some() && self.inner.is_runtime_provider(event.provider) {
            return self.inner.record_wait(event);
        }
        if self.inner.source == Some(AllocationSource::AllocationSampled) {
            return self.allocation_sampled(event, trusted);
        }
        let (Some(mean), Some(AllocationSource::AllocationTick)) =
            (self.inner.options.allocation_mean_bytes, self.inner.source)
        else {
            return Ok(());
        };
        if event.event_id != ALLOCATION_TICK || !self.inner.is_runtime_provider(event.provider) {
            return Ok(());
        }
        // Events that describe their own fields are the managed part of the
        // provider (its NativeRuntimeEventSource on .NET 8), not the GC's.
        if EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty()) {
            return Ok(());
        }
        let tick = allocation_tick(event);
        {
            let mut state = lock(&self.inner.state);
            state.stats.allocation_ticks += 1;
            state.stats.undecoded_ticks += u64::from(tick.is_none());
        }
        let Some((amount, type_name, object_size, object)) = tick else {
            return Ok(());
        };
        if amount == 0 || !countdown(amount, mean) {
            return Ok(());
        }
        let weight = allocation_weight(amount, mean);
        let objects = match object_size {
            Some(size) if size > 0 => weight.bytes / size as f64,
            _ => weight.objects,
        };
        let object = object.filter(|_| trusted);
        // SAFETY: with `trusted`, the runtime's own event on its thread:
        // `object` is the object this thread is allocating.
        unsafe {
            self.inner
                .record_allocation(&type_name, objects, weight.bytes, object)
        }
    }

    /// An `AllocationSampled` event ([`AllocationSource::AllocationSampled`];
    /// others are ignored): the runtime sampled a byte of the object this
    /// thread just allocated. The event stands for
    /// [`allocation_sampled_weight`](super::allocation_sampled_weight) of its `ObjectSize`; the Poisson
    /// countdown of `alloc.rs` then runs over those bytes (so the mean
    /// interval still applies: with the default 512 KiB, about one event
    /// in five is kept), a kept event weighing `w / p'` bytes and objects,
    /// `p' = 1 - exp(-w / mean)` for its `w` estimated bytes. Both
    /// samplings are independent: the product is unbiased. A sampled event
    /// walks the thread's stack and records those under a last frame `new
    /// <Type>` (the event's `TypeName`, or the runtime's name of its
    /// `TypeID` when that is empty). An event that cannot be decoded is
    /// counted in [`SamplerStats::undecoded_sampled_events`].
    fn allocation_sampled(&self, event: &EventPipeEvent<'_>, trusted: bool) -> Result<()> {
        let Some(mean) = self.inner.options.allocation_mean_bytes else {
            return Ok(());
        };
        if event.event_id != ALLOCATION_SAMPLED || !self.inner.is_runtime_provider(event.provider) {
            return Ok(());
        }
        // As for the ticks: the provider's managed half is not the GC's.
        if EventMetadata::parse(event.metadata).is_ok_and(|m| !m.fields.is_empty()) {
            return Ok(());
        }
        let sampled = allocation_sampled(event);
        {
            let mut state = lock(&self.inner.state);
            state.stats.allocation_sampled_events += 1;
            state.stats.undecoded_sampled_events += u64::from(sampled.is_none());
        }
        let Some((size, type_id, type_name, address)) = sampled else {
            return Ok(());
        };
        let weight = allocation_sampled_weight(size);
        let estimated = weight.bytes.round() as u64;
        if !countdown(estimated, mean) {
            return Ok(());
        }
        let kept = allocation_weight(estimated, mean);
        let type_name = match type_name {
            Some(name) => name,
            // SAFETY: a TypeID the runtime just named for an object of this
            // thread: a loaded type's MethodTable, which is its ClassID.
            None => self
                .inner
                .info
                .class_name(unsafe { ClassID::from_raw(type_id) })
                .unwrap_or_else(|_| String::from("?")),
        };
        let object = trusted.then_some(NewObject::Uninitialised {
            address,
            method_table: type_id,
        });
        // SAFETY: with `trusted`, the runtime's own event on its thread:
        // `address` is the object this thread is allocating, `type_id` its
        // MethodTable.
        unsafe {
            self.inner.record_allocation(
                &type_name,
                weight.objects * kept.objects,
                kept.bytes,
                object,
            )
        }
    }

    /// Counts a thrown exception (forward `Profiler::exception_thrown`;
    /// the event masks of [`SamplerOptions::event_masks`](crate::sampling::SamplerOptions::event_masks) enable it): on
    /// the throwing thread, its stack and a last frame of the exception's
    /// type, with a count of 1, or beyond
    /// [`SamplerOptions::exceptions_per_second`](crate::sampling::SamplerOptions::exceptions_per_second) a uniform sample with
    /// upweighted counts.
    ///
    /// `thrown` is the callback's own argument: the exception's class is
    /// asked while the callback runs, so no `unsafe` is needed.
    pub fn exception_thrown(&self, thrown: CallbackObject<'_>) -> Result<()> {
        let Some(sampler) = &self.inner.exceptions else {
            return Ok(());
        };
        let weight = sampler.weigh(Instant::now());
        lock(&self.inner.state).stats.exceptions_thrown += 1;
        let Some(count) = weight else {
            return Ok(());
        };
        let info = &self.inner.info;
        let type_name = thrown
            .class()
            .and_then(|class| info.class_name(class))
            .unwrap_or_else(|_| String::from("?"));
        let mut values = [0; SAMPLE_TYPES.len()];
        values[EXCEPTIONS] = count;
        let stack = self.inner.record_here(Some(&type_name), values, |stats| {
            stats.exceptions_recorded += 1;
        })?;
        if let Some(incidents) = &self.inner.incidents {
            let thread = info.current_thread().ok();
            incidents.exception(&type_name, count, thread, stack);
        }
        Ok(())
    }
}

impl Inner {
    /// Whether `provider` is the runtime's own (asked once per provider).
    fn is_runtime_provider(&self, provider: EVENTPIPE_PROVIDER) -> bool {
        if let Some(&(_, known)) = lock(&self.providers).iter().find(|p| p.0 == provider) {
            return known;
        }
        let runtime = self
            .info
            .event_pipe_provider_name(provider)
            .is_ok_and(|name| name == RUNTIME_PROVIDER);
        lock(&self.providers).push((provider, runtime));
        runtime
    }

    /// Records a sampled allocation on the calling (allocating) thread:
    /// its stack, a last frame `new <type_name>`, and the estimated objects
    /// and bytes it stands for.
    ///
    /// With the live heap on and `object` given, the object is tracked at
    /// the same stack and weights.
    ///
    /// # Safety
    ///
    /// `object`, if given, is the object the calling thread is allocating,
    /// inside the runtime's callback that reported it
    /// ([`LiveHeap::track`]'s contract).
    unsafe fn record_allocation(
        &self,
        type_name: &str,
        objects: f64,
        bytes: f64,
        object: Option<NewObject>,
    ) -> Result<()> {
        let mut values = [0; SAMPLE_TYPES.len()];
        values[ALLOC_OBJECTS] = objects.round() as u64;
        values[ALLOC_BYTES] = bytes.round() as u64;
        let leaf = String::from("new ") + type_name;
        let stack = self.record_here(Some(&leaf), values, |stats| stats.allocation_samples += 1)?;
        if let (Some(live), Some(object)) = (&self.live, object) {
            // SAFETY: this function's contract.
            unsafe { live.track(&self.info, object, stack, objects, bytes) };
        }
        Ok(())
    }

    /// A `ContentionStart` or `ContentionStop` event, on the waiting
    /// thread: a start is noted; a stop is counted, and recorded (its
    /// stack, a count and the time waited, from the event's `DurationNs`
    /// or from the start) up to the rate limit, sampled and upweighted
    /// beyond. An event that does not decode is counted, never an error.
    fn record_contention(&self, event: &EventPipeEvent<'_>) -> Result<()> {
        let now = Instant::now();
        let Some(sampler) = &self.contentions else {
            return Ok(());
        };
        // Events that describe their own fields (the provider's managed
        // half) are read by those fields, the others by the manifest's.
        let decoded = match EventMetadata::parse(event.metadata) {
            Ok(m) if !m.fields.is_empty() => {
                decode_contention_with(event.event_id, &m.fields, event.data)
            }
            _ => decode_contention(event.event_id, event.event_version, event.data),
        };
        let (native, duration) = match decoded {
            None => {
                lock(&self.state).stats.undecoded_contentions += 1;
                return Ok(());
            }
            Some(Contention::Start { .. }) => {
                contention::started(now);
                return Ok(());
            }
            Some(Contention::Stop {
                native,
                duration_nanos,
            }) => (native, duration_nanos),
        };
        let waited = contention::waited(now);
        let nanos = duration.map_or(waited.unwrap_or(0), |d| d.min(u64::MAX as f64) as u64);
        lock(&self.state).stats.contentions += 1;
        let Some(count) = sampler.weigh(now) else {
            return Ok(());
        };
        let mut values = [0; SAMPLE_TYPES.len()];
        values[LOCK_COUNT] = count;
        values[LOCK_TIME] = nanos.saturating_mul(count);
        let leaf = native.then_some("[native lock]");
        self.record_here(leaf, values, |stats| stats.contentions_recorded += 1)
            .map(|_| ())
    }

    /// A `WaitHandleWaitStart` or `WaitHandleWaitStop` event, on the
    /// waiting thread: a start is noted with its source; a stop after a
    /// start is counted, and recorded (its stack, a last frame `[wait
    /// <source>]` and the time since the start) up to the rate limit,
    /// sampled and upweighted beyond. The stack is walked at the stop,
    /// still inside the waiting method (on 11.0 the start's stack has the
    /// event source's own frame on top; the stop's has not). An event that
    /// does not decode is counted, never an error.
    fn record_wait(&self, event: &EventPipeEvent<'_>) -> Result<()> {
        let now = Instant::now();
        let Some(sampler) = &self.waits else {
            return Ok(());
        };
        // The runtime's metadata names no fields (measured on 9.0 to
        // 11.0): the manifest's layout, unless the event describes its own.
        let decoded = match EventMetadata::parse(event.metadata) {
            Ok(m) if !m.fields.is_empty() => {
                decode_wait_with(event.event_id, &m.fields, event.data)
            }
            _ => decode_wait(event.event_id, event.event_version, event.data),
        };
        match decoded {
            None => {
                lock(&self.state).stats.undecoded_waits += 1;
                return Ok(());
            }
            Some(Wait::Start { source }) => {
                waits::started(now, source);
                return Ok(());
            }
            Some(Wait::Stop) => {}
        }
        let Some((nanos, source)) = waits::waited(now) else {
            return Ok(());
        };
        lock(&self.state).stats.waits += 1;
        let Some(count) = sampler.weigh(now) else {
            return Ok(());
        };
        let mut values = [0; SAMPLE_TYPES.len()];
        values[WAIT] = nanos.saturating_mul(count);
        let leaf = alloc::format!("[wait {}]", wait_source_name(source));
        self.record_here(Some(&leaf), values, |stats| stats.waits_recorded += 1)
            .map(|_| ())
    }

    /// Records `values` on the calling thread: its stack and a last frame
    /// `leaf` if given, through the one record path (`record.rs`); `count`
    /// updates the statistics. Returns the stack recorded.
    fn record_here(
        &self,
        leaf: Option<&str>,
        values: [u64; SAMPLE_TYPES.len()],
        count: impl FnOnce(&mut SamplerStats),
    ) -> Result<Vec<FrameId>> {
        let thread = self.info.current_thread()?;
        let mut frames = Vec::with_capacity(64);
        let walked = self
            .info
            .stack_snapshot(ThreadID::NULL, |frame| {
                push_frame(&mut frames, frame);
                true
            })
            .is_ok();
        let stack = self.resolve(&frames);
        let sample = Sample {
            thread,
            managed: walked && !stack.is_empty(),
            stack,
            walked: None,
            leaf,
            os_thread: None,
            cpu_clock: None,
            values,
            span: SpanIds::NONE,
        };
        Ok(self.record(sample, count))
    }
}

/// The calling thread's Poisson countdown over `size` bytes of mean
/// `mean`: `true` when this allocation is sampled.
fn countdown(size: u64, mean: u64) -> bool {
    std::thread_local! {
        // Seeded by the thread-local's own address and the time, so
        // that threads draw different intervals.
        static COUNTDOWN: AllocationCountdown = AllocationCountdown::new({
            let here = 0u8;
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            (&here as *const u8 as u64) ^ now ^ 0x9E37_79B9_7F4A_7C15
        });
    }
    COUNTDOWN.with(|countdown| countdown.allocated(size, mean))
}

/// A `GCAllocationTick` event of the runtime, laid out by the manifest:
/// its `AllocationAmount64`, `TypeName` and `ObjectSize` (version 4 and
/// later). `None` when it does not decode.
#[allow(clippy::type_complexity)]
fn allocation_tick(
    event: &EventPipeEvent<'_>,
) -> Option<(u64, String, Option<u64>, Option<NewObject>)> {
    let fields = runtime_fields(event.event_id, event.event_version)?;
    let values = decode_payload(&fields, event.data).ok()?;
    let field = |name: &str| -> Option<&Value> {
        let index = fields.iter().position(|f| f.name == name)?;
        values.get(index)
    };
    let amount = field("AllocationAmount64")?.as_u64()?;
    let type_name = String::from(field("TypeName")?.as_str()?);
    let object_size = field("ObjectSize").and_then(Value::as_u64);
    // Version 3 and later: the object's address, and its MethodTable.
    let address = field("Address").and_then(Value::as_u64);
    let method_table = field("TypeID").and_then(Value::as_u64);
    let object = match (address, method_table) {
        (Some(address), Some(method_table)) => Some(NewObject::Uninitialised {
            address: usize::try_from(address).ok()?,
            method_table: usize::try_from(method_table).ok()?,
        }),
        _ => None,
    };
    Some((amount, type_name, object_size, object))
}

/// An `AllocationSampled` event of the runtime, laid out by the manifest:
/// its `ObjectSize`, `TypeID` and `TypeName` (`None` when empty). `None`
/// when it does not decode or names no size.
fn allocation_sampled(event: &EventPipeEvent<'_>) -> Option<(u64, usize, Option<String>, usize)> {
    let fields = runtime_fields(event.event_id, event.event_version)?;
    let values = decode_payload(&fields, event.data).ok()?;
    let field = |name: &str| -> Option<&Value> {
        let index = fields.iter().position(|f| f.name == name)?;
        values.get(index)
    };
    let size = field("ObjectSize")?.as_u64().filter(|&s| s > 0)?;
    let type_id = usize::try_from(field("TypeID")?.as_u64()?).ok()?;
    let name = field("TypeName")?.as_str()?;
    let name = (!name.is_empty()).then(|| String::from(name));
    let address = usize::try_from(field("Address")?.as_u64()?).ok()?;
    Some((size, type_id, name, address))
}
