//! The live heap: the sampled allocations whose objects are still alive,
//! at their allocation stacks (.NET 7 and later: `ICorProfilerInfo13`'s
//! `CreateHandle`, `GetObjectIDFromHandle`, `DestroyHandle`). A part of its
//! own: a bounded table of weak handles, a thread that drops the collected
//! objects after each GC, and the snapshot each period's profile carries.
//!
//! Every allocation the sampler records (an `AllocationSampled` or
//! `GCAllocationTick` event kept by the countdown, or an `ObjectAllocated`
//! callback) is tracked by a weak handle created on the allocating thread,
//! inside the event's callback. What the runtime requires there, as
//! dd-trace-dotnet's `LiveObjectsProvider` documents it (profiler/src/
//! ProfilerEngine/Datadog.Profiler.Native/LiveObjectsProvider.cpp,
//! `OnAllocation`): when the allocation event is delivered the object is
//! not initialised yet (the runtime sets its MethodTable after the
//! allocation helper returns, and the event is written inside it), and
//! `CreateHandle` needs an object with its MethodTable; so the event's
//! `TypeID` (the MethodTable) is written into the object's first word
//! first, the value the runtime writes there next. Waiting for the next GC
//! to create the handle instead made GCs fail there. The event is
//! delivered synchronously on the allocating thread (`gc_pauses.rs`), which
//! holds the fresh object in cooperative mode: no GC can move it before the
//! handle exists.
//!
//! After each GC (the runtime's `GCEnd` event), the sweeper thread
//! (`corprof-live-heap`) asks each handle for its object; a handle that no
//! longer resolves is destroyed and its entry dropped. The table holds at
//! most `limit` objects (`CORPROF_SAMPLER_HEAP_OBJECTS`, default 4,096): when
//! it is full, new objects are skipped and counted. An application thread
//! does nothing but write one word and create one handle, under a lock it
//! shares only with the sweeper's brief take and put back.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::facade::{ObjectHandle, ProfilerInfo};
use crate::profile::FrameId;
use crate::profiling::{ObjectID, COR_PRF_HANDLE_TYPE_WEAK};

/// The default number of objects the table holds.
pub const HEAP_OBJECTS: u32 = 4096;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How the object of a sampled allocation is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NewObject {
    /// From an allocation event: its address and MethodTable (`TypeID`),
    /// the object not initialised yet.
    Uninitialised { address: usize, method_table: usize },
    /// From `ObjectAllocated`: an initialised object.
    Initialised(ObjectID),
}

/// One object tracked (`H`: its handle; [`ObjectHandle`] but in tests).
#[derive(Debug)]
struct Entry<H> {
    handle: H,
    /// The allocation's stack, outermost first, its last frame `new <Type>`
    /// (frames of the sampler's run table).
    stack: Vec<FrameId>,
    objects: f64,
    bytes: f64,
    /// GCs ended before it was allocated.
    born: u64,
}

#[derive(Debug)]
struct Table<H> {
    entries: Vec<Entry<H>>,
    /// Entries taken out by a sweep in progress (counted against the limit).
    out: usize,
    /// Handles found collected, to be destroyed by the sweeper.
    dead: Vec<H>,
    tracked: u64,
    skipped: u64,
    collected: u64,
    handle_errors: u64,
}

#[derive(Debug, Default)]
struct Signal {
    pending: bool,
    stop: bool,
}

/// What the live heap did ([`SamplerStats::live_heap`]).
///
/// [`SamplerStats::live_heap`]: super::SamplerStats::live_heap
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LiveHeapStats {
    /// The most objects the table holds.
    pub limit: u64,
    /// Objects tracked (a handle created).
    pub tracked: u64,
    /// Sampled objects skipped because the table was full.
    pub skipped: u64,
    /// Tracked objects found collected after a GC (their handles destroyed).
    pub collected: u64,
    /// Handles the runtime refused to create or resolve (counted, skipped).
    pub handle_errors: u64,
    /// Objects in the table at the last look.
    pub live: u64,
    /// GCs ended (`GCEnd` events) while tracking.
    pub gcs: u64,
    /// Sweeps made (one per GC, or one for several GCs in a row).
    pub sweeps: u64,
}

/// A live object's share of a profile: its stack, weights and age in GCs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LiveObject {
    pub(crate) stack: Vec<FrameId>,
    pub(crate) objects: f64,
    pub(crate) bytes: f64,
    pub(crate) age: u64,
}

/// The live heap being tracked.
#[derive(Debug)]
pub(crate) struct LiveHeap<H = ObjectHandle> {
    limit: usize,
    table: Mutex<Table<H>>,
    /// Held by a sweep and by a snapshot, so that a snapshot never misses
    /// the entries a sweep has taken out.
    sweeping: Mutex<()>,
    gcs: AtomicU64,
    sweeps: AtomicU64,
    signal: Mutex<Signal>,
    wake: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl<H> LiveHeap<H> {
    /// A table of at most `limit` objects (at least 1); no sweeper yet.
    pub(crate) fn new(limit: u32) -> LiveHeap<H> {
        LiveHeap {
            limit: limit.max(1) as usize,
            table: Mutex::new(Table {
                entries: Vec::new(),
                out: 0,
                dead: Vec::new(),
                tracked: 0,
                skipped: 0,
                collected: 0,
                handle_errors: 0,
            }),
            sweeping: Mutex::new(()),
            gcs: AtomicU64::new(0),
            sweeps: AtomicU64::new(0),
            signal: Mutex::new(Signal::default()),
            wake: Condvar::new(),
            thread: Mutex::new(None),
        }
    }

    /// Whether a new object has room; counts it skipped when not.
    fn has_room(&self) -> bool {
        let mut table = lock(&self.table);
        if table.entries.len() + table.out >= self.limit {
            table.skipped += 1;
            return false;
        }
        true
    }

    /// Adds a tracked object (`None`: its handle could not be made).
    fn insert(&self, handle: Option<H>, stack: Vec<FrameId>, objects: f64, bytes: f64) {
        let mut table = lock(&self.table);
        let Some(handle) = handle else {
            table.handle_errors += 1;
            return;
        };
        table.tracked += 1;
        table.entries.push(Entry {
            handle,
            stack,
            objects,
            bytes,
            born: self.gcs.load(Ordering::Relaxed),
        });
    }

    /// A GC ended (the runtime's `GCEnd`, on the GC's thread): counted, and
    /// the sweeper woken. No call into the runtime, no wait but two short
    /// locks.
    pub(crate) fn gc_ended(&self) {
        self.gcs.fetch_add(1, Ordering::Relaxed);
        lock(&self.signal).pending = true;
        self.wake.notify_one();
    }

    /// Waits for a GC's end or the stop: `false` on the stop.
    fn wait_for_gc(&self) -> bool {
        let mut signal = lock(&self.signal);
        loop {
            if signal.stop {
                return false;
            }
            if core::mem::take(&mut signal.pending) {
                return true;
            }
            signal = self.wake.wait(signal).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Drops the entries whose handle no longer resolves: `resolve` gives
    /// whether the handle's object is alive (`None` on an error). Their
    /// handles wait in the table for [`take_dead`](Self::take_dead). The
    /// table lock is held only to take the entries out and put the living
    /// back, never while `resolve` runs.
    fn sweep(&self, mut resolve: impl FnMut(&H) -> Option<bool>) {
        let _sweeping = lock(&self.sweeping);
        let taken = {
            let mut table = lock(&self.table);
            let taken = core::mem::take(&mut table.entries);
            table.out = taken.len();
            taken
        };
        let mut alive = Vec::with_capacity(taken.len());
        let (mut dead, mut errors) = (Vec::new(), 0u64);
        for entry in taken {
            match resolve(&entry.handle) {
                Some(true) => alive.push(entry),
                Some(false) => dead.push(entry.handle),
                None => {
                    errors += 1;
                    dead.push(entry.handle);
                }
            }
        }
        let mut table = lock(&self.table);
        table.out = 0;
        table.collected += dead.len() as u64 - errors;
        table.handle_errors += errors;
        table.dead.append(&mut dead);
        // The living first, then what was added meanwhile.
        alive.append(&mut table.entries);
        table.entries = alive;
        drop(table);
        self.sweeps.fetch_add(1, Ordering::Relaxed);
    }

    /// The handles found collected, to destroy.
    fn take_dead(&self) -> Vec<H> {
        core::mem::take(&mut lock(&self.table).dead)
    }

    /// The objects alive at the last look, with their ages in GCs.
    pub(crate) fn snapshot(&self) -> Vec<LiveObject> {
        let _sweeping = lock(&self.sweeping);
        let now = self.gcs.load(Ordering::Relaxed);
        lock(&self.table)
            .entries
            .iter()
            .map(|e| LiveObject {
                stack: e.stack.clone(),
                objects: e.objects,
                bytes: e.bytes,
                age: now.saturating_sub(e.born),
            })
            .collect()
    }

    /// What it did so far.
    pub(crate) fn stats(&self) -> LiveHeapStats {
        let table = lock(&self.table);
        LiveHeapStats {
            limit: self.limit as u64,
            tracked: table.tracked,
            skipped: table.skipped,
            collected: table.collected,
            handle_errors: table.handle_errors,
            live: (table.entries.len() + table.out) as u64,
            gcs: self.gcs.load(Ordering::Relaxed),
            sweeps: self.sweeps.load(Ordering::Relaxed),
        }
    }
}

impl LiveHeap<ObjectHandle> {
    /// Starts the sweeper thread (`corprof-live-heap`); `false` when it
    /// cannot be started (the table then fills to its limit and stays).
    pub(crate) fn start(self: &Arc<LiveHeap>, info: &ProfilerInfo) -> bool {
        let (heap, info) = (Arc::clone(self), info.clone());
        let spawned = std::thread::Builder::new()
            .name(String::from("corprof-live-heap"))
            .spawn(move || {
                let _ = info.initialize_current_thread();
                while heap.wait_for_gc() {
                    heap.sweep(|handle| info.object_from_handle(handle).ok().map(|o| !o.is_null()));
                    for handle in heap.take_dead() {
                        let _ = info.destroy_handle(handle);
                    }
                }
            });
        match spawned {
            Ok(thread) => {
                *lock(&self.thread) = Some(thread);
                true
            }
            Err(_) => false,
        }
    }

    /// Tracks a sampled allocation's object on the allocating thread:
    /// skipped (and counted) when the table is full; otherwise a weak
    /// handle is created (for an event's object, after its MethodTable is
    /// written) and the entry added.
    ///
    /// # Safety
    ///
    /// Call it on the allocating thread, inside the callback that reported
    /// the allocation: for [`NewObject::Uninitialised`], `address` and
    /// `method_table` are an allocation event's `Address` and `TypeID` for
    /// the object this thread is allocating (its first word is written);
    /// for [`NewObject::Initialised`], the `ObjectAllocated` callback's
    /// object.
    pub(crate) unsafe fn track(
        &self,
        info: &ProfilerInfo,
        object: NewObject,
        stack: Vec<FrameId>,
        objects: f64,
        bytes: f64,
    ) {
        if !self.has_room() {
            return;
        }
        let id = match object {
            NewObject::Uninitialised {
                address,
                method_table,
            } => {
                if address == 0
                    || method_table == 0
                    || address % core::mem::align_of::<usize>() != 0
                {
                    return self.insert(None, stack, objects, bytes);
                }
                // SAFETY: the caller's contract: `address` is the object this
                // thread is allocating, inside the allocation event's
                // callback; its first word is its MethodTable slot, which
                // the runtime is about to set to this same value (the
                // event's TypeID), and no other thread reaches the object
                // yet (aligned: checked above).
                unsafe { core::ptr::write_volatile(address as *mut usize, method_table) };
                // SAFETY: the address of an object the runtime allocated.
                unsafe { ObjectID::from_raw(address) }
            }
            NewObject::Initialised(id) => id,
        };
        // SAFETY: the object is live and cannot move during this call: the
        // allocating thread is inside the allocation's callback (the
        // caller's contract), and the object has its MethodTable.
        let handle = unsafe { info.create_handle(id, COR_PRF_HANDLE_TYPE_WEAK) }.ok();
        self.insert(handle, stack, objects, bytes);
    }

    /// Asks the sweeper to end (without waiting, and without destroying
    /// the handles: for a sampler dropped without `stop`).
    pub(crate) fn request_stop(&self) {
        lock(&self.signal).stop = true;
        self.wake.notify_all();
    }

    /// Whether the sweeper thread has ended (or never started).
    pub(crate) fn thread_ended(&self) -> bool {
        lock(&self.thread).as_ref().is_none_or(|t| t.is_finished())
    }

    /// Stops the sweeper and waits for it, then destroys every handle
    /// (idempotent; call it before the runtime goes away).
    pub(crate) fn stop(&self, info: &ProfilerInfo) {
        self.request_stop();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
        let entries = core::mem::take(&mut lock(&self.table).entries);
        let handles = self
            .take_dead()
            .into_iter()
            .chain(entries.into_iter().map(|e| e.handle));
        for handle in handles {
            let _ = info.destroy_handle(handle);
        }
    }
}

/// The first age (in GCs survived) of `age`'s bucket: 0, 1, then powers of
/// two (2-3, 4-7, 8-15, ...), so a long run has a few dozen ages at most,
/// not one per GC (each is a profile thread and a label value).
pub(crate) fn age_bucket(age: u64) -> u64 {
    match age {
        0 | 1 => age,
        _ => 1 << (63 - age.leading_zeros()),
    }
}

/// The label of the bucket that starts at `start` ([`age_bucket`]): `0`,
/// `1`, `2-3`, `4-7`, ...
pub(crate) fn age_bucket_label(start: u64) -> String {
    match start {
        0 | 1 => alloc::format!("{start}"),
        _ => {
            let last = start.checked_mul(2).map_or(u64::MAX, |end| end - 1);
            alloc::format!("{start}-{last}")
        }
    }
}

/// The live objects grouped by age bucket ([`age_bucket`]: the key is the
/// bucket's first age), each group a map from stack to summed (objects,
/// bytes).
pub(crate) fn by_age(objects: &[LiveObject]) -> BTreeMap<u64, BTreeMap<Vec<FrameId>, (f64, f64)>> {
    let mut groups: BTreeMap<u64, BTreeMap<Vec<FrameId>, (f64, f64)>> = BTreeMap::new();
    for o in objects {
        let sum = groups
            .entry(age_bucket(o.age))
            .or_default()
            .entry(o.stack.clone())
            .or_default();
        sum.0 += o.objects;
        sum.1 += o.bytes;
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Frames;

    #[test]
    fn ages_fall_in_power_of_two_buckets() {
        let buckets: Vec<(u64, u64)> = [0, 1, 2, 3, 4, 7, 8, 1000, u64::MAX]
            .iter()
            .map(|&a| (a, age_bucket(a)))
            .collect();
        assert_eq!(
            buckets,
            [
                (0, 0),
                (1, 1),
                (2, 2),
                (3, 2),
                (4, 4),
                (7, 4),
                (8, 8),
                (1000, 512),
                (u64::MAX, 1 << 63)
            ]
        );
        let labels: Vec<String> = [0, 1, 2, 4, 512, 1 << 63].map(age_bucket_label).to_vec();
        assert_eq!(
            labels,
            [
                "0",
                "1",
                "2-3",
                "4-7",
                "512-1023",
                "9223372036854775808-18446744073709551615"
            ]
        );
    }

    /// The table with plain numbers for handles: the limit, skips, sweeps
    /// that drop the collected and keep what was added meanwhile, ages in
    /// GCs, errors counted.
    #[test]
    fn the_table_is_bounded_swept_and_aged() {
        let mut frames = Frames::new();
        let (kept, dropped) = (frames.intern("new Kept"), frames.intern("new Dropped"));
        let heap: LiveHeap<u32> = LiveHeap::new(4);
        for n in 0..6u32 {
            if heap.has_room() {
                let leaf = if n % 2 == 0 { kept } else { dropped };
                heap.insert(Some(n), alloc::vec![leaf], 2.0, 200.0);
            }
        }
        let stats = heap.stats();
        assert_eq!((stats.tracked, stats.skipped, stats.live), (4, 2, 4));
        heap.gc_ended();
        assert!(heap.wait_for_gc(), "a GC's end wakes the sweeper");
        // Odd handles are collected, handle 2 fails to resolve.
        heap.sweep(|&h| if h == 2 { None } else { Some(h % 2 == 0) });
        assert_eq!(heap.take_dead(), [1, 2, 3]);
        assert!(heap.take_dead().is_empty());
        heap.insert(Some(10), alloc::vec![kept], 1.0, 100.0);
        heap.gc_ended();
        heap.gc_ended();
        let live = heap.snapshot();
        assert_eq!(
            live,
            [
                LiveObject {
                    stack: alloc::vec![kept],
                    objects: 2.0,
                    bytes: 200.0,
                    age: 3
                },
                LiveObject {
                    stack: alloc::vec![kept],
                    objects: 1.0,
                    bytes: 100.0,
                    age: 2
                }
            ]
        );
        let stats = heap.stats();
        assert_eq!(
            (
                stats.collected,
                stats.handle_errors,
                stats.live,
                stats.gcs,
                stats.sweeps
            ),
            (2, 1, 2, 3, 1)
        );
        // A handle that could not be made is an error, not an entry.
        heap.insert(None, alloc::vec![kept], 1.0, 1.0);
        assert_eq!((heap.stats().handle_errors, heap.stats().live), (2, 2));
        // Grouped by age bucket: ages 3 and 2 share the bucket 2-3, their
        // one stack summed.
        let groups = by_age(&live);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[&2][&alloc::vec![kept]], (3.0, 300.0));
        let _ = dropped;
        // The stop wakes the waiting sweeper with `false`.
        lock(&heap.signal).stop = true;
        assert!(!heap.wait_for_gc());
    }
}
