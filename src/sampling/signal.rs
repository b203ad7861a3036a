//! Sampling without stopping the world ([`SamplingMode::Signal`], Linux on
//! x86-64 and AArch64): each thread is interrupted on its own by a signal
//! and walks its own stack in the handler.
//!
//! - **CPU samples**: every registered thread has a POSIX timer on its own
//!   CPU clock (`timer_create` with `SIGEV_THREAD_ID`), firing every
//!   `1/hz` seconds of that thread's CPU time; a thread that sleeps or
//!   waits is never interrupted by it. The sample's weight is the thread's
//!   CPU time since its previous CPU sample, read in the handler.
//! - **Wall samples**: the sampler thread signals at most
//!   [`SamplerOptions::wall_threads_per_tick`](super::SamplerOptions)
//!   threads per tick, round-robin (`rt_tgsigqueueinfo`); the weight is the
//!   wall time since that thread's previous wall sample.
//!
//! The signal is `SIGPROF`: CoreCLR's PAL uses `SIGRTMIN` to inject
//! activations (thread suspension) and handles `SIGILL`, `SIGTRAP`,
//! `SIGFPE`, `SIGBUS`, `SIGSEGV`, `SIGINT`, `SIGQUIT`, `SIGTERM` (and
//! `SIGABRT`), none of them `SIGPROF` (dotnet/runtime
//! `src/coreclr/pal/src/exception/signal.cpp`, `INJECT_ACTIVATION_SIGNAL`
//! and `SEHInitializeSignals`). The handler is installed with `SA_RESTART |
//! SA_SIGINFO`, not `SA_ONSTACK` (see `install`), and recognizes its own signals by `si_code`
//! (`SI_TIMER` or `SI_QUEUE`) and a tag in `si_value`; any other `SIGPROF`
//! goes to the handler that was there before (one taking `SA_SIGINFO`
//! arguments or a plain one; a default or ignored disposition is left as
//! ignored for those). The stop puts the previous disposition back once no
//! signal of ours can come (`uninstall`: the timers deleted, the pending
//! signals discarded by a passage through `SIG_IGN`, the running handlers
//! waited for), so that a detach can unload the library;
//! [`Sampler::threads_ended`](super::Sampler::threads_ended) is `false`
//! until then.
//!
//! The handler is async-signal-safe: no allocation, no lock, no call into
//! the runtime. It finds its thread's registration (stack bounds) by the
//! index carried in `si_value`, checks that it is its own (`gettid`), walks
//! the frame-pointer chain from the interrupted context ([`walk`]: every
//! read inside the thread's stack, strictly upward, 8-byte aligned, at most
//! [`MAX_DEPTH`] frames) and writes the raw instruction pointers into a
//! preallocated buffer of [`SLOTS`] slots, each with an atomic state
//! (free, being written, ready); a full buffer drops the sample (counted).
//! The sampler thread drains it and turns the addresses into `FunctionID`s
//! (`GetFunctionFromIP`, cached) off the signal path. Every function the
//! handler runs (here, in `unwind.rs` and `unix.rs`) is compiled under
//! `deny(clippy::arithmetic_side_effects, clippy::indexing_slicing,
//! clippy::panic)`: a debug build has no overflow or bounds check that
//! could panic inside the handler.
//!
//! A thread is registered on itself (its stack bounds come from
//! `pthread_getattr_np`, which only the thread can ask safely), from the
//! runtime's `ThreadCreated` or `ThreadAssignedToOSThread` callbacks, which
//! CoreCLR raises on the new thread; its timer is deleted at
//! `ThreadDestroyed`, when the OS thread ends (a thread-local guard), or at
//! [`stop`], whichever comes first.

// Off Linux x86-64/AArch64 the handler, the walk and the tables are not
// built into a sampler (SamplingMode::Signal answers E_NOTIMPL there).
#![cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code, unused_imports)
)]

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use std::collections::HashMap;

use super::unwind;
use crate::facade::ProfilerInfo;
use crate::profiling::{FunctionID, ReJITID, COR_PRF_CODE_INFO};
use core::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

/// How the sampler takes stack samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingMode {
    /// Per-thread signals on Linux (x86-64 and AArch64): CPU timers on each
    /// thread's CPU clock and wall-time signals to a few threads per tick;
    /// each thread walks its own frame-pointer chain in the handler. The
    /// runtime is never suspended. The default on those targets.
    Signal,
    /// Windows x64: at every beat, one managed thread at a time suspended
    /// (`SuspendThread`), walked with `DoStackSnapshot` and resumed; the
    /// runtime is never suspended (`thread_suspend.rs`). The default there.
    ThreadSuspend,
    /// `SuspendRuntime`: every managed thread stops for every sample and is
    /// walked with `DoStackSnapshot`. Every platform; the default where
    /// the others are not available.
    SuspendRuntime,
}

impl Default for SamplingMode {
    /// [`SamplingMode::Signal`] on Linux x86-64 and AArch64,
    /// [`SamplingMode::ThreadSuspend`] on Windows x64,
    /// [`SamplingMode::SuspendRuntime`] elsewhere.
    fn default() -> SamplingMode {
        if SIGNAL_SUPPORTED {
            SamplingMode::Signal
        } else if super::thread_suspend::SUPPORTED {
            SamplingMode::ThreadSuspend
        } else {
            SamplingMode::SuspendRuntime
        }
    }
}

impl SamplingMode {
    /// Its name: `signal`, `thread-suspend` or `suspend-runtime`.
    pub fn name(self) -> &'static str {
        match self {
            SamplingMode::Signal => "signal",
            SamplingMode::ThreadSuspend => "thread-suspend",
            SamplingMode::SuspendRuntime => "suspend-runtime",
        }
    }

    /// The mode of a [`name`](SamplingMode::name) (`None` for any other
    /// text).
    pub fn from_name(name: &str) -> Option<SamplingMode> {
        [
            SamplingMode::Signal,
            SamplingMode::ThreadSuspend,
            SamplingMode::SuspendRuntime,
        ]
        .into_iter()
        .find(|mode| mode.name() == name)
    }

    /// Whether this build can sample in this mode.
    pub fn is_supported(self) -> bool {
        match self {
            SamplingMode::Signal => SIGNAL_SUPPORTED,
            SamplingMode::ThreadSuspend => super::thread_suspend::SUPPORTED,
            SamplingMode::SuspendRuntime => true,
        }
    }

    /// Whether the sampler can sample in this mode with this runtime: built
    /// for it, and for [`SuspendRuntime`](SamplingMode::SuspendRuntime)
    /// a runtime with `SuspendRuntime` (`ICorProfilerInfo10`, .NET Core
    /// 3.0); for [`ThreadSuspend`](SamplingMode::ThreadSuspend) one with
    /// `EnumThreads` and `InitializeCurrentThread` (`ICorProfilerInfo4`).
    pub fn is_available(self, info: &ProfilerInfo) -> bool {
        self.is_supported()
            && match self {
                SamplingMode::SuspendRuntime => info.v10().is_some(),
                SamplingMode::ThreadSuspend => info.version() >= 4,
                SamplingMode::Signal => true,
            }
    }
}

/// Whether [`SamplingMode::Signal`] is built for this target.
const SIGNAL_SUPPORTED: bool = cfg!(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
));

/// What the signal sampler did ([`SamplingMode::Signal`]; all zero in the
/// other modes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignalStats {
    /// Wall-time signals the sampler thread sent.
    pub signals_sent: u64,
    /// Signals of the sampler's own that a handler ran for (CPU timer
    /// expirations and wall-time signals).
    pub signals_handled: u64,
    /// Samples lost because the buffer was full.
    pub dropped: u64,
    /// Signals for a registration that had just ended (thread gone, or the
    /// slot reused): ignored.
    pub stale: u64,
    /// `SIGPROF`s that were not the sampler's, passed to the handler that
    /// was installed before.
    pub foreign: u64,
    /// CPU samples recorded.
    pub cpu_samples: u64,
    /// Wall samples recorded.
    pub wall_samples: u64,
    /// Samples whose walk reached at least one managed frame.
    pub managed_samples: u64,
    /// Walks cut short by the stack bounds (a frame pointer outside the
    /// thread's stack, not moving upward, or misaligned: a native frame
    /// without a frame pointer, typically).
    pub cut_bounds: u64,
    /// Walks cut short by [`MAX_DEPTH`].
    pub cut_depth: u64,
    /// Threads registered (a timer each).
    pub timers_created: u64,
    /// Timers deleted (thread destroyed or ended, or the stop).
    pub timers_deleted: u64,
    /// Whether the stop put back the `SIGPROF` disposition that was there
    /// before the sampler's (`false` while another sampler in signal mode
    /// runs, or when a handler installed after the sampler's chains to it:
    /// the library must then stay loaded).
    pub handler_removed: bool,
    /// Registrations that failed (not called on the thread itself, no
    /// stack bounds, no free slot, or `timer_create` refused).
    pub registrations_failed: u64,
    /// Timers alive just before the stop deleted them, as the sampler
    /// counts them.
    pub timers_live_at_stop: u64,
    /// The POSIX timers the kernel listed for the process at that moment
    /// (`/proc/self/timers`; `None` where it cannot be read).
    pub kernel_timers_at_stop: Option<u64>,
    /// Samples recorded after their thread's registration had ended (its
    /// thread destroyed or gone): dropped, so that an ended thread's slot
    /// is never made again.
    pub late: u64,
    /// Samples per thread slot of the profile, filled at the stop: (OS
    /// thread ID, CPU samples, wall samples); the ended threads of one
    /// name share the slot of the first of them, as their samples do.
    pub per_thread: Vec<(u32, u64, u64)>,
}

/// Most frames a walk records (deeper stacks are cut, counted in
/// [`SignalStats::cut_depth`]).
pub const MAX_DEPTH: usize = 128;
/// Slots of the sample buffer.
pub const SLOTS: usize = 1024;
/// Most threads registered at once (more are not sampled, counted in
/// [`SignalStats::registrations_failed`]).
pub const MAX_THREADS: usize = 4096;

/// Why a walk ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WalkEnd {
    /// A null frame pointer: the outermost frame.
    Complete,
    /// A frame pointer outside `[sp, high)`, not above the previous one,
    /// or misaligned.
    Bounds,
    /// `MAX_DEPTH` (the output's length) reached.
    Depth,
}

/// Walks a stack from an interrupted context: `out[0]` is `ip`, then one
/// return address per frame. A frame whose code is in a loaded module with
/// call frame information (`unwind.rs`: glibc, CoreCLR) is stepped by it;
/// any other (JIT-compiled code) by its frame record (`[fp]` the caller's
/// frame pointer, `[fp + 8]` the return address: x86-64's `push rbp; mov
/// rbp, rsp`, AArch64's `stp x29, x30`). Reads only 8-byte aligned words of
/// `[max(sp, low), high)`, each frame strictly above the one before, at
/// most `out.len()` frames. `lr` is AArch64's link register (0 elsewhere).
/// Returns the frames written and why it stopped.
///
/// # Safety
/// Every aligned address in `[max(sp, low), high)` is readable for the
/// duration of the call (the calling thread's own stack).
#[deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
pub(super) unsafe fn walk(
    ip: usize,
    sp: usize,
    fp: usize,
    lr: usize,
    (low, high): (usize, usize),
    out: &mut [usize],
) -> (usize, WalkEnd) {
    let Some(first) = out.first_mut() else {
        return (0, WalkEnd::Depth);
    };
    *first = ip;
    // An interrupted SP outside the thread's stack (an alternate signal
    // stack: CoreCLR's SIGSEGV handler, a fiber): nothing above it is known
    // to be mapped. Only the leaf.
    if !(low..high).contains(&sp) {
        return (1, WalkEnd::Bounds);
    }
    let mut depth = 1;
    let mut frame = unwind::Frame { ip, sp, fp };
    // After a frame-record step the caller's SP is known on x86-64 (the
    // record sits right below the return address) but not on AArch64.
    let mut sp_known = true;
    // Whether the current frame was reached by a frame-record step (the
    // only step an OSR frame's record can mislead).
    let mut by_record = false;
    loop {
        let leaf = depth == 1;
        let lookup = if leaf {
            frame.ip
        } else {
            frame.ip.wrapping_sub(1)
        };
        let step = if sp_known && frame.sp >= low {
            // SAFETY: [frame.sp, high) is inside the readable range.
            unsafe { unwind::cfi_step(frame, lookup, if leaf { lr } else { 0 }, (low, high)) }
        } else {
            unwind::Step::NoCfi
        };
        // Set again by the frame-record steps below.
        let reached_by_record = core::mem::replace(&mut by_record, false);
        let next = match step {
            unwind::Step::Caller(next) if next.sp > frame.sp => next,
            unwind::Step::Caller(_) | unwind::Step::Bounds => return (depth, WalkEnd::Bounds),
            unwind::Step::End => return (depth, WalkEnd::Complete),
            unwind::Step::NoCfi if sp_known && cfg!(target_arch = "x86_64") => {
                let found = unwind::frameless_at(lookup);
                // Tier-0 code under an OSR frame, reached by that frame's
                // record (up to .NET 10), or the OSR code's own first byte
                // that .NET 11 puts in that record: the tier-0 frame's own
                // record leads to the real caller, which stands in its
                // place.
                let osr_record = matches!(found, Some((unwind::OSR_ORIGIN, _, _)))
                    || matches!(
                        unwind::frameless_at(frame.ip),
                        Some((unwind::OSR_ENTRY, start, _)) if start == frame.ip
                    );
                if reached_by_record && osr_record {
                    // SAFETY: [frame.sp, high) is inside the readable range
                    // (the walk's contract; frames only go up).
                    if let Some(caller) = unsafe { tier0_caller(frame, high) } {
                        // depth >= 1: the slot of the current frame.
                        if let Some(slot) = out.get_mut(depth.wrapping_sub(1)) {
                            *slot = caller.ip;
                        }
                        frame = caller;
                        continue;
                    }
                }
                // Managed code the sampler thread found frameless (no
                // frame pointer): its caller's return address sits right
                // above its frame, and rbp is still the caller's.
                match found {
                    Some((size, start, prologue))
                        if size != unwind::OSR_ORIGIN
                            && size != unwind::OSR_ENTRY
                            && (!leaf || frame.ip >= start.saturating_add(prologue)) =>
                    {
                        let at = frame.sp.wrapping_add(size);
                        let top_ok = matches!(at.checked_add(8), Some(end) if end <= high);
                        if at < frame.sp.max(low) || at % 8 != 0 || !top_ok {
                            return (depth, WalkEnd::Bounds);
                        }
                        // SAFETY: an aligned word inside [sp, high).
                        let ret = unsafe { core::ptr::read_volatile(at as *const usize) };
                        if ret == 0 {
                            return (depth, WalkEnd::Complete);
                        }
                        unwind::Frame {
                            ip: ret,
                            // at + 8 <= high: checked above.
                            sp: at.wrapping_add(8),
                            fp: frame.fp,
                        }
                    }
                    // SAFETY: the walk's contract.
                    _ => match unsafe { frame_record_step(frame, low, high) } {
                        Ok((next, known)) => {
                            sp_known = known;
                            by_record = true;
                            next
                        }
                        Err(end) => return (depth, end),
                    },
                }
            }
            // SAFETY: the walk's contract.
            unwind::Step::NoCfi => match unsafe { frame_record_step(frame, low, high) } {
                Ok((next, known)) => {
                    sp_known = known;
                    by_record = true;
                    next
                }
                Err(end) => return (depth, end),
            },
        };
        let Some(slot) = out.get_mut(depth) else {
            return (depth, WalkEnd::Depth);
        };
        *slot = next.ip;
        // depth < out.len(): no overflow.
        depth = depth.wrapping_add(1);
        frame = next;
    }
}

/// One step by the frame record at `frame.fp`: the caller's frame and
/// whether its SP is known (x86-64: the record sits right below the return
/// address).
///
/// # Safety
/// Every aligned address in `[max(frame.sp, low), high)` is readable (the
/// walk's contract).
#[deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
unsafe fn frame_record_step(
    frame: unwind::Frame,
    low: usize,
    high: usize,
) -> Result<(unwind::Frame, bool), WalkEnd> {
    let fp = frame.fp;
    if fp == 0 {
        return Err(WalkEnd::Complete);
    }
    let floor = frame.sp.max(low);
    let top_ok = matches!(fp.checked_add(16), Some(end) if end <= high);
    if fp < floor || fp % 8 != 0 || !top_ok {
        return Err(WalkEnd::Bounds);
    }
    // SAFETY: fp and fp + 8 are aligned words inside [floor, high),
    // readable by this function's contract.
    let (next_fp, ret) = unsafe {
        (
            core::ptr::read_volatile(fp as *const usize),
            core::ptr::read_volatile(fp.wrapping_add(8) as *const usize),
        )
    };
    if ret == 0 {
        return Err(WalkEnd::Complete);
    }
    Ok((
        unwind::Frame {
            ip: ret,
            // fp + 16 <= high: checked above.
            sp: fp.wrapping_add(16),
            fp: next_fp,
        },
        cfg!(target_arch = "x86_64"),
    ))
}

/// The most bytes of a tier-0 frame [`tier0_caller`] looks through.
const MAX_TIER0_FRAME: usize = 4096;

/// x86-64, .NET 7 and later: a method compiled again by OSR (on-stack
/// replacement) runs on top of its tier-0 frame, which stays on the stack.
/// The OSR code's prologue (`mov rax, [rbp]; push rax; mov rbp, rsp`)
/// copies the tier-0 frame's saved frame pointer (the caller's) into a
/// record of its own whose return address is the tier-0 code's call of the
/// patchpoint helper (dotnet/runtime, docs/design/features/
/// OSRX64EpilogRedesign.md). A frame-record step from an OSR frame thus
/// lands on `frame`: an address in the tier-0 code with the caller's frame
/// pointer, and the step after it would skip the caller. The walk calls
/// this when `frame.ip` is in a tier-0 code range the sampler thread saw
/// under the same method's OSR code (`unwind::OSR_ORIGIN`): the tier-0
/// frame's own record is found by its content, the first word above
/// `frame.sp` and below the caller's frame that holds the caller's frame
/// pointer; the word above it is the return address into the caller.
/// .NET 11 lays the OSR frame out otherwise (measured on 11.0.0: the OSR
/// code begins `push rax; mov rax, [rbp]; push rax`, and the word the first
/// push leaves is the OSR code's own address): the record's return address
/// is the OSR code's first byte, which no call returns to. The sampler thread
/// publishes that byte (`unwind::OSR_ENTRY`, found by
/// `Resolver::return_address`) and the walk calls this there too.
/// Returns the caller's frame, or `None` (no such word within
/// `MAX_TIER0_FRAME` bytes).
///
/// # Safety
/// Every aligned word of `[frame.sp, high)` is readable.
#[deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
unsafe fn tier0_caller(frame: unwind::Frame, high: usize) -> Option<unwind::Frame> {
    let end = frame
        .fp
        .min(high)
        .min(frame.sp.saturating_add(MAX_TIER0_FRAME));
    let mut at = frame.sp;
    while at % 8 == 0 && at.saturating_add(16) <= end {
        // SAFETY: aligned words inside [frame.sp, high) (contract).
        let word = unsafe { core::ptr::read_volatile(at as *const usize) };
        if word == frame.fp {
            // SAFETY: as above (at + 16 <= high).
            let ret = unsafe { core::ptr::read_volatile(at.wrapping_add(8) as *const usize) };
            return (ret != 0).then_some(unwind::Frame {
                ip: ret,
                // at + 16 <= end: no overflow.
                sp: at.wrapping_add(16),
                fp: frame.fp,
            });
        }
        at = at.wrapping_add(8);
    }
    None
}

// ---------------------------------------------------------------------------
// The sample buffer (shared with the handler)
// ---------------------------------------------------------------------------

const FREE: u32 = 0;
const WRITING: u32 = 1;
const READY: u32 = 2;

/// The kinds of sample, in the tag of `si_value`.
const KIND_CPU: u8 = 1;
const KIND_WALL: u8 = 2;
/// The upper 32 bits of the sampler's `si_value`: a tag and the kind; the
/// lower 32 the registration's index.
const TAG: usize = 0x5157_0000;

/// The `si_value` of a sample of `kind` for registration `index` (signal
/// mode runs on 64-bit targets only; on others the value is never used).
#[deny(
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
fn value_of(kind: u8, index: usize) -> usize {
    ((((TAG | kind as usize) as u64) << 32) | index as u64) as usize
}

struct Slot {
    state: AtomicU32,
    /// Written by the handler that owns the slot (`WRITING`), read by the
    /// sampler thread once it is `READY`.
    data: core::cell::UnsafeCell<SlotData>,
}

#[derive(Clone, Copy)]
struct SlotData {
    thread: usize,
    /// The registration: its index and serial.
    index: u32,
    serial: u64,
    tid: i32,
    kind: u8,
    end: WalkEnd,
    depth: u16,
    weight: u64,
    ips: [usize; MAX_DEPTH],
}

// SAFETY: `data` is only touched by the one party that holds the slot by
// its atomic state (a handler between FREE->WRITING and READY, the
// sampler thread between READY and FREE).
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: Slot = Slot {
    state: AtomicU32::new(FREE),
    data: core::cell::UnsafeCell::new(SlotData {
        thread: 0,
        index: 0,
        serial: 0,
        tid: 0,
        kind: 0,
        end: WalkEnd::Complete,
        depth: 0,
        weight: 0,
        ips: [0; MAX_DEPTH],
    }),
};

static BUFFER: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];
static CURSOR: AtomicUsize = AtomicUsize::new(0);

/// A thread's registration, read by its handler.
struct Entry {
    /// Even when stable, odd while being written (a sequence lock: the
    /// handler retries never, it gives up on a change).
    seq: AtomicU32,
    /// Kernel thread ID (0: free).
    tid: AtomicI32,
    low: AtomicUsize,
    high: AtomicUsize,
    /// The managed `ThreadID`.
    thread: AtomicUsize,
    /// The registration's serial (one per registration, never reused).
    serial: AtomicU64,
    /// The thread's CPU clock at its previous CPU sample, and the monotonic
    /// clock at its previous wall sample (written by the handler).
    last_cpu: AtomicU64,
    last_wall: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_ENTRY: Entry = Entry {
    seq: AtomicU32::new(0),
    tid: AtomicI32::new(0),
    low: AtomicUsize::new(0),
    high: AtomicUsize::new(0),
    thread: AtomicUsize::new(0),
    serial: AtomicU64::new(0),
    last_cpu: AtomicU64::new(0),
    last_wall: AtomicU64::new(0),
};

static REGISTRY: [Entry; MAX_THREADS] = [EMPTY_ENTRY; MAX_THREADS];

/// Counters the handler and the registration update.
struct Counters {
    handled: AtomicU64,
    dropped: AtomicU64,
    stale: AtomicU64,
    foreign: AtomicU64,
}

static COUNTERS: Counters = Counters {
    handled: AtomicU64::new(0),
    dropped: AtomicU64::new(0),
    stale: AtomicU64::new(0),
    foreign: AtomicU64::new(0),
};

/// One drained sample: the managed thread, its registration (index and
/// serial), its OS thread, the kind, its weight in nanoseconds, how the
/// walk ended, and the raw addresses (innermost first).
#[derive(Clone, Debug)]
pub(super) struct RawSample {
    pub(super) thread: usize,
    pub(super) index: u32,
    pub(super) serial: u64,
    pub(super) tid: i32,
    pub(super) cpu: bool,
    pub(super) weight: u64,
    pub(super) end: WalkEnd,
    pub(super) ips: Vec<usize>,
}

/// Takes every ready sample out of the buffer (the sampler thread only).
pub(super) fn drain(out: &mut Vec<RawSample>) {
    for slot in BUFFER.iter() {
        if slot.state.load(Ordering::Acquire) != READY {
            continue;
        }
        // SAFETY: READY: the handler is done with it and no one else
        // writes it until it is FREE again.
        let data = unsafe { &*slot.data.get() };
        out.push(RawSample {
            thread: data.thread,
            index: data.index,
            serial: data.serial,
            tid: data.tid,
            cpu: data.kind == KIND_CPU,
            weight: data.weight,
            end: data.end,
            ips: data.ips[..usize::from(data.depth)].to_vec(),
        });
        slot.state.store(FREE, Ordering::Release);
    }
}

// ---------------------------------------------------------------------------
// Addresses to functions (the sampler thread)
// ---------------------------------------------------------------------------

/// Most single addresses the resolver remembers before it starts over.
const MAX_CACHED_IPS: usize = 1 << 20;

/// Turns instruction pointers into `FunctionID`s (`GetFunctionFromIP`),
/// caching each managed function's code ranges (`GetCodeInfo2`) and every
/// native address seen.
#[derive(Default)]
pub(super) struct Resolver {
    /// Code range start -> (end, function).
    ranges: BTreeMap<usize, (usize, FunctionID)>,
    /// Addresses answered one by one (native code: `FunctionID::NULL`).
    ips: HashMap<usize, FunctionID>,
    /// x86-64: managed code without a frame pointer, start -> (end, frame
    /// size, prologue length), for the handler (`unwind::frameless_at`).
    frameless: BTreeMap<usize, (usize, usize, usize)>,
    /// Whether `frameless` grew since it was last published.
    frameless_changed: bool,
    /// Return addresses [`Resolver::return_address`] has asked about, and
    /// its answers.
    checked: HashMap<usize, bool>,
}

impl Resolver {
    /// The function whose code holds `ip` (`FunctionID::NULL` for native
    /// code).
    pub(super) fn function(&mut self, info: &ProfilerInfo, ip: usize) -> FunctionID {
        if let Some((_, &(end, function))) = self.ranges.range(..=ip).next_back() {
            if ip < end {
                return function;
            }
        }
        if let Some(&function) = self.ips.get(&ip) {
            return function;
        }
        let mut function = FunctionID::NULL;
        // SAFETY: a valid out-pointer; any address may be asked (an address
        // outside managed code is an error answer).
        let found = unsafe { info.v1().GetFunctionFromIP(ip as *const u8, &mut function) }
            .ok()
            .is_ok();
        let function = if found { function } else { FunctionID::NULL };
        if found && self.cache_ranges(info, function, ip) {
            return function;
        }
        if self.ips.len() >= MAX_CACHED_IPS {
            self.ips.clear();
        }
        self.ips.insert(ip, function);
        function
    }

    /// Caches `function`'s code ranges if one of them holds `ip` (the
    /// ranges `GetCodeInfo2` gives are those of one code version; another
    /// version's addresses are cached one by one).
    fn cache_ranges(&mut self, info: &ProfilerInfo, function: FunctionID, ip: usize) -> bool {
        let Some(v2) = info.v2() else {
            return false;
        };
        let holds = |ranges: &[COR_PRF_CODE_INFO]| {
            ranges
                .iter()
                .any(|r| (r.startAddress..r.startAddress + r.size).contains(&ip))
        };
        let mut buffer = [COR_PRF_CODE_INFO::default(); 8];
        let mut count = 0u32;
        // SAFETY: a buffer of 8 entries, as announced; a valid count.
        let ok = unsafe { v2.GetCodeInfo2(function, 8, &mut count, buffer.as_mut_ptr()) }
            .ok()
            .is_ok();
        if !ok || !holds(&buffer[..(count as usize).min(8)]) {
            // Another code version (tiered compilation keeps the tier-0
            // code): its ranges by its start (ICorProfilerInfo9).
            count = 0;
            if let Some(v9) = info.v9() {
                let mut starts = [0usize; 8];
                let mut n = 0u32;
                // SAFETY: a buffer of 8 addresses, as announced.
                let listed = unsafe {
                    v9.GetNativeCodeStartAddresses(
                        function,
                        ReJITID::NULL,
                        8,
                        &mut n,
                        starts.as_mut_ptr(),
                    )
                };
                if listed.ok().is_ok() {
                    for &start in &starts[..(n as usize).min(8)] {
                        let mut c = 0u32;
                        // SAFETY: a buffer of 8 entries; a start the runtime listed.
                        let got = unsafe { v9.GetCodeInfo4(start, 8, &mut c, buffer.as_mut_ptr()) };
                        if got.ok().is_ok() && holds(&buffer[..(c as usize).min(8)]) {
                            count = c;
                            break;
                        }
                    }
                }
            }
            if count == 0 {
                return false;
            }
        }
        let ranges = &buffer[..(count as usize).min(8)];
        for r in ranges {
            self.ranges
                .insert(r.startAddress, (r.startAddress + r.size, function));
        }
        // The first range holds the entry and its prologue.
        if cfg!(target_arch = "x86_64") && self.frameless.len() < unwind::MAX_FRAMELESS {
            let first = ranges[0];
            let len = first.size.min(16);
            // Copied byte by byte, not borrowed as a slice: the runtime may
            // patch its code (tiering, rejit) while it is read.
            let mut code = [0u8; 16];
            for (i, byte) in code.iter_mut().take(len).enumerate() {
                // SAFETY: the first `len` bytes of the function's code,
                // which the runtime just reported (executable and readable
                // while loaded); a volatile read of a byte that may change.
                *byte = unsafe {
                    core::ptr::read_volatile((first.startAddress as *const u8).wrapping_add(i))
                };
            }
            if let Some((size, prologue)) = unwind::frameless_prologue(&code[..len]) {
                self.frameless.insert(
                    first.startAddress,
                    (first.startAddress + first.size, size, prologue),
                );
                self.frameless_changed = true;
            }
        }
        true
    }

    /// The cached code range (start, end) holding `ip`.
    fn range_of(&self, ip: usize) -> Option<(usize, usize)> {
        let (&start, &(end, _)) = self.ranges.range(..=ip).next_back()?;
        (ip < end).then_some((start, end))
    }

    /// Two adjacent frames of one walk, `inner` called by `outer` (both
    /// addresses as resolved), that the resolver found in the same method:
    /// when `outer` is in a cached code range that does not hold `inner`,
    /// it is the tier-0 code under an OSR frame (or, harmlessly, one code
    /// version of a method calling another), published to the handler as
    /// [`unwind::OSR_ORIGIN`] so that later walks find the caller the OSR
    /// frame's record skips.
    pub(super) fn same_method(&mut self, inner: usize, outer: usize) {
        if !cfg!(target_arch = "x86_64") || self.frameless.len() >= unwind::MAX_FRAMELESS {
            return;
        }
        let Some((start, end)) = self.range_of(outer) else {
            return;
        };
        if self.range_of(inner) == Some((start, end)) || self.frameless.contains_key(&start) {
            return;
        }
        self.frameless.insert(start, (end, unwind::OSR_ORIGIN, 0));
        self.frameless_changed = true;
    }

    /// A return address `ra` of a walk (x86-64): when it is the first byte
    /// of a method's code (`GetCodeInfo4` of it answers a range starting
    /// there), no call returns there and the frame record that held it is
    /// an OSR frame's (.NET 11: see [`tier0_caller`]). The byte is
    /// published to the handler as [`unwind::OSR_ENTRY`] so that later
    /// walks find the caller the OSR frame's record skips. Each address is
    /// asked once. Returns whether `ra` is such a byte (a walk taken before
    /// the handler knew it holds it: not a frame of its own).
    pub(super) fn return_address(&mut self, info: &ProfilerInfo, ra: usize) -> bool {
        if !cfg!(target_arch = "x86_64") {
            return false;
        }
        if let Some(&entry) = self.checked.get(&ra) {
            return entry;
        }
        if self.checked.len() >= MAX_CACHED_IPS {
            self.checked.clear();
        }
        let entry = self.code_start(info, ra);
        self.checked.insert(ra, entry);
        // Not inside a range the handler already knows.
        let inside = self
            .frameless
            .range(..=ra)
            .next_back()
            .is_some_and(|(_, &(end, _, _))| ra < end);
        if entry && !inside && self.frameless.len() < unwind::MAX_FRAMELESS {
            self.frameless.insert(ra, (ra + 1, unwind::OSR_ENTRY, 0));
            self.frameless_changed = true;
        }
        entry
    }

    /// Whether `ip` is the first byte of a managed method's code.
    fn code_start(&self, info: &ProfilerInfo, ip: usize) -> bool {
        let Some(v9) = info.v9() else {
            return false;
        };
        let mut buffer = [COR_PRF_CODE_INFO::default(); 2];
        let mut count = 0u32;
        // SAFETY: a buffer of 2 entries, as announced; any address may be
        // asked (an address that is not managed code is an error answer;
        // one inside a method's code answers another range, dotnet/runtime
        // `GetCodeInfoFromCodeStart`).
        let got = unsafe { v9.GetCodeInfo4(ip, 2, &mut count, buffer.as_mut_ptr()) };
        got.ok().is_ok() && count >= 1 && buffer[0].startAddress == ip && buffer[0].size > 0
    }

    /// Hands the frameless code ranges found since the last call to the
    /// handler.
    pub(super) fn publish(&mut self) {
        if self.frameless_changed {
            let ranges: Vec<(usize, usize, usize, usize)> = self
                .frameless
                .iter()
                .map(|(&start, &(end, size, prologue))| (start, end, size, prologue))
                .collect();
            unwind::publish_frameless(&ranges);
            self.frameless_changed = false;
        }
    }
}

// ---------------------------------------------------------------------------
// Linux: the handler, registration and timers
// ---------------------------------------------------------------------------

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    use super::*;
    use crate::sampling::unix::{self, sigaction_t, siginfo_t};
    use core::ffi::{c_int, c_void};
    use core::time::Duration;
    use std::sync::{Mutex, MutexGuard};

    /// The handler that was installed before ours, for signals that are
    /// not ours; written once before ours is installed.
    struct Previous(core::cell::UnsafeCell<sigaction_t>);
    // SAFETY: written once under INSTALL before the handler that reads it
    // is installed (the installation publishes it), read-only after.
    unsafe impl Sync for Previous {}
    static PREVIOUS: Previous = Previous(core::cell::UnsafeCell::new(sigaction_t::zeroed()));
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    /// Serializes [`install`] and [`uninstall`].
    static INSTALL: Mutex<()> = Mutex::new(());
    /// Handlers of ours running now (entered and not yet returned).
    static IN_HANDLER: AtomicUsize = AtomicUsize::new(0);
    /// Whether a signal-mode sampler is running (one per process).
    static ACTIVE: AtomicBool = AtomicBool::new(false);

    /// The side of each registration that only callbacks touch.
    struct Side {
        tid: c_int,
        thread: usize,
        timer: usize,
        serial: u64,
    }

    /// The last registration's serial.
    static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

    struct Registrations {
        entries: Vec<Option<Side>>,
        free: Vec<usize>,
        /// CPU timer interval in nanoseconds.
        period: u64,
        created: u64,
        deleted: u64,
        failed: u64,
        /// Round-robin position of the wall signals.
        next_wall: usize,
    }

    static REGISTRATIONS: Mutex<Option<Registrations>> = Mutex::new(None);

    fn registrations() -> MutexGuard<'static, Option<Registrations>> {
        REGISTRATIONS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    extern "C" {
        fn __errno_location() -> *mut c_int;
    }

    #[deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::panic
    )]
    extern "C" fn handler(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
        // Counted while it runs: `uninstall` waits for none to run.
        IN_HANDLER.fetch_add(1, Ordering::AcqRel);
        // SAFETY: errno of the calling thread; restored before returning so
        // the interrupted code never sees it change.
        let errno = unsafe { *__errno_location() };
        // SAFETY: the kernel's arguments of an SA_SIGINFO handler.
        unsafe { handle(signo, info, context) };
        // SAFETY: as above.
        unsafe { *__errno_location() = errno };
        IN_HANDLER.fetch_sub(1, Ordering::AcqRel);
    }

    /// # Safety
    /// The arguments of an `SA_SIGINFO` handler.
    #[deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::panic
    )]
    unsafe fn handle(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
        // SAFETY: the kernel's siginfo_t.
        let (code, value) = unsafe { ((*info).si_code, (*info).si_value) };
        let kind = ((value >> 32) & 0xff) as u8;
        let ours = (code == unix::SI_TIMER || code == unix::SI_QUEUE)
            && (value >> 32) & !0xff == TAG
            && (kind == KIND_CPU || kind == KIND_WALL);
        if !ours {
            COUNTERS.foreign.fetch_add(1, Ordering::Relaxed);
            // SAFETY: the arguments as received.
            unsafe { chain(signo, info, context) };
            return;
        }
        COUNTERS.handled.fetch_add(1, Ordering::Relaxed);
        let Some(entry) = REGISTRY.get(value & 0xffff_ffff) else {
            COUNTERS.stale.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let seq = entry.seq.load(Ordering::Acquire);
        let tid = entry.tid.load(Ordering::Relaxed);
        let (low, high) = (
            entry.low.load(Ordering::Relaxed),
            entry.high.load(Ordering::Relaxed),
        );
        let thread = entry.thread.load(Ordering::Relaxed);
        let serial = entry.serial.load(Ordering::Relaxed);
        fence(Ordering::Acquire);
        if seq % 2 == 1
            || entry.seq.load(Ordering::Relaxed) != seq
            || tid == 0
            || tid != unix::gettid()
        {
            COUNTERS.stale.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // The weight: this thread's CPU time, or the wall time, since its
        // previous sample of the kind.
        let weight = if kind == KIND_CPU {
            let now = unix::clock_nanos(unix::CLOCK_THREAD_CPUTIME_ID);
            now.saturating_sub(entry.last_cpu.swap(now, Ordering::Relaxed))
        } else {
            let now = unix::clock_nanos(unix::CLOCK_MONOTONIC);
            now.saturating_sub(entry.last_wall.swap(now, Ordering::Relaxed))
        };
        let start = CURSOR.fetch_add(1, Ordering::Relaxed);
        let slot = (0..8)
            .filter_map(|i| BUFFER.get(start.wrapping_add(i) % SLOTS))
            .find(|slot| {
                slot.state
                    .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            });
        let Some(slot) = slot else {
            COUNTERS.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // SAFETY: WRITING: this handler owns the slot's data.
        let data = unsafe { &mut *slot.data.get() };
        // SAFETY: the context of this signal, on this target.
        let regs = unsafe { unix::registers(context) };
        // SAFETY: [low, high) is this thread's own stack (the registration
        // is this thread's: its tid), mapped while the thread runs; the walk
        // reads nothing below the interrupted SP.
        let (depth, end) = unsafe {
            walk(
                regs.ip,
                regs.sp,
                regs.fp,
                regs.lr,
                (low, high),
                &mut data.ips,
            )
        };
        data.thread = thread;
        // The index fits: below MAX_THREADS (REGISTRY.get above).
        data.index = (value & 0xffff_ffff) as u32;
        data.serial = serial;
        data.tid = tid;
        data.kind = kind;
        data.end = end;
        data.depth = depth as u16;
        data.weight = weight;
        slot.state.store(READY, Ordering::Release);
    }

    /// Passes a signal that is not ours to the handler installed before.
    ///
    /// # Safety
    /// The arguments of an `SA_SIGINFO` handler.
    #[deny(
        clippy::arithmetic_side_effects,
        clippy::indexing_slicing,
        clippy::panic
    )]
    unsafe fn chain(signo: c_int, info: *mut siginfo_t, context: *mut c_void) {
        // SAFETY: PREVIOUS is read-only once the handler is installed.
        let previous = unsafe { *PREVIOUS.0.get() };
        let handler = previous.sa_sigaction;
        if handler == unix::SIG_DFL || handler == unix::SIG_IGN {
            return;
        }
        if previous.sa_flags & unix::SA_SIGINFO != 0 {
            // SAFETY: a handler installed with SA_SIGINFO takes these.
            let f: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
                unsafe { core::mem::transmute(handler) };
            f(signo, info, context);
        } else {
            // SAFETY: a plain handler takes the signal number.
            let f: extern "C" fn(c_int) = unsafe { core::mem::transmute(handler) };
            f(signo);
        }
    }

    /// Installs the handler (once per process).
    fn install() -> bool {
        let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
        if INSTALLED.load(Ordering::Acquire) {
            return true;
        }
        let mut action = sigaction_t::zeroed();
        action.sa_sigaction = handler as extern "C" fn(c_int, *mut siginfo_t, *mut c_void) as usize;
        // Not SA_ONSTACK: CoreCLR gives each thread a 16 KB alternate stack
        // for its own handlers (SIGSTKSZ + SignalHandlerWorkerReturnPoint +
        // a page: src/coreclr/pal/src/thread/thread.cpp,
        // CPalThread::EnsureSignalAlternateStack); the kernel's signal frame
        // and this handler's walk overflowed one (a debug build on 8.0.4
        // died of SIGSEGV in the handler, on that stack, once in 25 runs). The thread's own stack has room: the handler runs below the
        // interrupted SP, where the walk never reads.
        action.sa_flags = unix::SA_SIGINFO | unix::SA_RESTART;
        let mut previous = sigaction_t::zeroed();
        // SAFETY: reads the current action into a valid buffer.
        if unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut previous) } != 0 {
            return false;
        }
        // SAFETY: no handler of ours runs yet (not installed): no reader.
        unsafe { *PREVIOUS.0.get() = previous };
        // SAFETY: a valid action whose handler is async-signal-safe.
        if unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) } != 0 {
            return false;
        }
        INSTALLED.store(true, Ordering::Release);
        true
    }

    /// How long no handler of ours must be seen running before
    /// [`uninstall`] puts the previous disposition back, and the most it
    /// waits for that.
    const SETTLE: Duration = Duration::from_millis(20);
    const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);

    /// Puts back the disposition `SIGPROF` had before [`install`], so that
    /// the library can be unloaded (a detach) without a later signal
    /// jumping into unmapped code. Called once every timer is deleted and
    /// the sampler thread sends no more wall signals: no signal of ours is
    /// generated any more. Those already generated are pending, or being
    /// delivered. `SIG_IGN` first: setting a pending signal's action to
    /// `SIG_IGN` discards it (POSIX `sigaction`; Linux's `do_sigaction`
    /// flushes the process's and every thread's pending set). Then the
    /// handlers that the kernel began delivering before are waited for
    /// ([`IN_HANDLER`] at zero for [`SETTLE`]), and the previous action
    /// goes back. Returns whether no handler of ours is installed; `false`
    /// (ours stays) when the installed handler is not ours (one installed
    /// later may chain to ours) or a handler of ours kept running.
    ///
    /// A thread that the kernel had handed a signal of ours before the
    /// `SIG_IGN` but that then did not run for the whole [`SETTLE`] still
    /// enters the handler: a detach leaves it the runtime's wait too (the
    /// library is unloaded no sooner than the 500 ms the sampler asks the
    /// runtime to wait, `SamplingProfiler`'s detach).
    fn uninstall() -> bool {
        let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
        if !INSTALLED.load(Ordering::Acquire) {
            return true;
        }
        let ours = handler as extern "C" fn(c_int, *mut siginfo_t, *mut c_void) as usize;
        let mut current = sigaction_t::zeroed();
        // SAFETY: reads the current action into a valid buffer.
        if unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut current) } != 0
            || current.sa_sigaction != ours
        {
            return false;
        }
        let mut ignore = sigaction_t::zeroed();
        ignore.sa_sigaction = unix::SIG_IGN;
        // SAFETY: a valid action; discards the pending SIGPROFs.
        if unsafe { unix::sigaction(unix::SIGPROF, &ignore, core::ptr::null_mut()) } != 0 {
            return false;
        }
        let start = std::time::Instant::now();
        let mut quiet_since = start;
        loop {
            if IN_HANDLER.load(Ordering::Acquire) != 0 {
                quiet_since = std::time::Instant::now();
            } else if quiet_since.elapsed() >= SETTLE {
                break;
            }
            if start.elapsed() >= SETTLE_TIMEOUT {
                // SAFETY: ours again, as it was (PREVIOUS unchanged).
                unsafe { unix::sigaction(unix::SIGPROF, &current, core::ptr::null_mut()) };
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // SAFETY: no handler of ours runs or can start (above): PREVIOUS
        // has no reader.
        let previous = unsafe { *PREVIOUS.0.get() };
        // SAFETY: the action that was there before ours.
        if unsafe { unix::sigaction(unix::SIGPROF, &previous, core::ptr::null_mut()) } != 0 {
            // SIG_IGN stays: no handler of ours either.
        }
        INSTALLED.store(false, Ordering::Release);
        true
    }

    /// Whether the handler is installed (the library must stay loaded).
    pub(in crate::sampling) fn handler_installed() -> bool {
        INSTALLED.load(Ordering::Acquire)
    }

    /// [`install`] for the tests.
    #[cfg(test)]
    pub(in crate::sampling) fn install_for_test() -> bool {
        install()
    }

    /// [`uninstall`] for the tests.
    #[cfg(test)]
    pub(in crate::sampling) fn uninstall_for_test() -> bool {
        uninstall()
    }

    pub(in crate::sampling) fn start(hz: u32) -> bool {
        if ACTIVE.swap(true, Ordering::AcqRel) {
            return false;
        }
        unwind::refresh();
        if !install() {
            ACTIVE.store(false, Ordering::Release);
            return false;
        }
        *registrations() = Some(Registrations {
            entries: Vec::new(),
            free: Vec::new(),
            period: crate::sampling::sampler::sample_interval(hz).as_nanos() as u64,
            created: 0,
            deleted: 0,
            failed: 0,
            next_wall: 0,
        });
        true
    }

    std::thread_local! {
        /// The calling thread's registration (index, serial), ended when the
        /// OS thread ends.
        static GUARD: ExitGuard = const { ExitGuard(core::cell::Cell::new(None)) };
    }

    struct ExitGuard(core::cell::Cell<Option<(usize, u64)>>);

    impl Drop for ExitGuard {
        fn drop(&mut self) {
            if let Some((index, serial)) = self.0.get() {
                if let Some(regs) = registrations().as_mut() {
                    end(regs, index, Some(serial));
                }
            }
        }
    }

    /// Registers the calling thread as managed thread `thread` on OS
    /// thread `os_thread` (nothing when it is not the calling thread, or is
    /// registered already).
    pub(in crate::sampling) fn register_current(thread: usize, os_thread: u32) {
        let tid = unix::gettid();
        if tid as u32 != os_thread {
            return;
        }
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return;
        };
        if regs
            .entries
            .iter()
            .flatten()
            .any(|side| side.tid == tid && side.thread == thread)
        {
            return;
        }
        let Some((low, high)) = unix::current_stack() else {
            regs.failed += 1;
            return;
        };
        let index = match regs.free.pop() {
            Some(index) => index,
            None if regs.entries.len() < MAX_THREADS => {
                regs.entries.push(None);
                regs.entries.len() - 1
            }
            None => {
                regs.failed += 1;
                return;
            }
        };
        // Never 0, never reused (a later sampler in this process too).
        let serial = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed) + 1;
        let entry = &REGISTRY[index];
        let seq = entry.seq.load(Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        entry.low.store(low, Ordering::Relaxed);
        entry.high.store(high, Ordering::Relaxed);
        entry.thread.store(thread, Ordering::Relaxed);
        entry.serial.store(serial, Ordering::Relaxed);
        entry.last_cpu.store(
            unix::clock_nanos(unix::CLOCK_THREAD_CPUTIME_ID),
            Ordering::Relaxed,
        );
        entry
            .last_wall
            .store(unix::clock_nanos(unix::CLOCK_MONOTONIC), Ordering::Relaxed);
        entry.tid.store(tid, Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(2), Ordering::Release);

        let mut event = unix::sigevent::thread(unix::SIGPROF, tid, value_of(KIND_CPU, index));
        let mut timer: unix::timer_t = core::ptr::null_mut();
        // SAFETY: valid pointers; the CPU clock of the calling thread.
        let created =
            unsafe { unix::timer_create(unix::thread_cpu_clock(tid), &mut event, &mut timer) };
        let period = unix::timespec::from_nanos(regs.period);
        let spec = unix::itimerspec {
            it_interval: period,
            it_value: period,
        };
        let armed = created == 0 && {
            // SAFETY: the timer just created.
            unsafe { unix::timer_settime(timer, 0, &spec, core::ptr::null_mut()) == 0 }
        };
        if !armed {
            if created == 0 {
                // SAFETY: the timer created above, deleted once.
                unsafe { unix::timer_delete(timer) };
            }
            clear(index);
            regs.free.push(index);
            regs.failed += 1;
            return;
        }
        regs.entries[index] = Some(Side {
            tid,
            thread,
            timer: timer as usize,
            serial,
        });
        regs.created += 1;
        drop(guard);
        // The OS thread's end ends the registration, if nothing did before.
        let _ = GUARD.try_with(|g| g.0.set(Some((index, serial))));
    }

    fn clear(index: usize) {
        let entry = &REGISTRY[index];
        let seq = entry.seq.load(Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        entry.tid.store(0, Ordering::Relaxed);
        entry.seq.store(seq.wrapping_add(2), Ordering::Release);
    }

    /// Ends registration `index` (when its serial is `serial`, if given):
    /// deletes its timer, frees the slot.
    fn end(regs: &mut Registrations, index: usize, serial: Option<u64>) {
        let Some(Some(side)) = regs.entries.get(index) else {
            return;
        };
        if serial.is_some_and(|s| s != side.serial) {
            return;
        }
        // SAFETY: the registration's own timer, deleted once (the entry is
        // taken below).
        unsafe { unix::timer_delete(side.timer as unix::timer_t) };
        regs.deleted += 1;
        clear(index);
        regs.entries[index] = None;
        regs.free.push(index);
    }

    /// Managed threads destroyed while the sampler ran, for the sampler
    /// thread to end once it has recorded their last samples
    /// ([`take_destroyed`]).
    static DESTROYED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    /// Ends managed thread `thread`'s registration, if any. `true` when
    /// the sampler runs: the thread is then listed for the sampler thread
    /// to end its slot after the samples already taken are recorded
    /// ([`take_destroyed`]); `false` after the stop (nothing is recorded
    /// any more: the caller ends the slot).
    pub(in crate::sampling) fn deregister(thread: usize) -> bool {
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return false;
        };
        if let Some(index) = regs
            .entries
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.thread == thread))
        {
            end(regs, index, None);
        }
        DESTROYED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(thread);
        true
    }

    /// The threads [`deregister`] listed since the last call (the sampler
    /// thread, after recording what it drained).
    pub(in crate::sampling) fn take_destroyed() -> Vec<usize> {
        core::mem::take(&mut *DESTROYED.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether registration `index` of serial `serial` is still on (also
    /// when the sampler has stopped: the stop ended it, not its thread).
    pub(in crate::sampling) fn is_live(index: u32, serial: u64) -> bool {
        match registrations().as_ref() {
            None => true,
            Some(regs) => matches!(
                regs.entries.get(index as usize),
                Some(Some(side)) if side.serial == serial
            ),
        }
    }

    /// Signals at most `count` registered threads, round-robin, for a wall
    /// sample; returns how many were sent.
    pub(in crate::sampling) fn signal_wall(count: usize) -> u64 {
        let mut guard = registrations();
        let Some(regs) = guard.as_mut() else {
            return 0;
        };
        let live: Vec<(usize, c_int)> = regs
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s.tid)))
            .collect();
        if live.is_empty() {
            return 0;
        }
        let start = regs.next_wall % live.len();
        let picked = count.min(live.len());
        regs.next_wall = start + picked;
        drop(guard);
        let mut sent = 0;
        for k in 0..picked {
            let (index, tid) = live[(start + k) % live.len()];
            sent += u64::from(unix::queue_to_thread(
                tid,
                unix::SIGPROF,
                value_of(KIND_WALL, index),
            ));
        }
        sent
    }

    /// The POSIX timers of this process the kernel lists.
    fn kernel_timers() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/self/timers").ok()?;
        Some(text.lines().filter(|l| l.starts_with("ID:")).count() as u64)
    }

    /// Deletes every timer, ends every registration, then puts back the
    /// `SIGPROF` disposition that was there before ([`uninstall`]). Fills
    /// the counters of `stats`.
    pub(in crate::sampling) fn stop(stats: &mut SignalStats) {
        let mut guard = registrations();
        if let Some(regs) = guard.as_mut() {
            stats.timers_live_at_stop = regs.entries.iter().flatten().count() as u64;
            stats.kernel_timers_at_stop = kernel_timers();
            for index in 0..regs.entries.len() {
                end(regs, index, None);
            }
            stats.timers_created = regs.created;
            stats.timers_deleted = regs.deleted;
            stats.registrations_failed = regs.failed;
        }
        *guard = None;
        drop(guard);
        stats.signals_handled = COUNTERS.handled.load(Ordering::Relaxed);
        stats.dropped = COUNTERS.dropped.load(Ordering::Relaxed);
        stats.stale = COUNTERS.stale.load(Ordering::Relaxed);
        stats.foreign = COUNTERS.foreign.load(Ordering::Relaxed);
        // No timer left and the sampler thread sends nothing more (it is
        // the caller, or has ended): no signal of ours is generated now.
        stats.handler_removed = uninstall();
        ACTIVE.store(false, Ordering::Release);
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use super::SignalStats;

    pub(in crate::sampling) fn start(_hz: u32) -> bool {
        false
    }
    pub(in crate::sampling) fn register_current(_thread: usize, _os_thread: u32) {}
    pub(in crate::sampling) fn deregister(_thread: usize) -> bool {
        false
    }
    pub(in crate::sampling) fn take_destroyed() -> Vec<usize> {
        Vec::new()
    }
    pub(in crate::sampling) fn signal_wall(_count: usize) -> u64 {
        0
    }
    pub(in crate::sampling) fn stop(_stats: &mut SignalStats) {}
    pub(in crate::sampling) fn handler_installed() -> bool {
        false
    }
    pub(in crate::sampling) fn is_live(_index: u32, _serial: u64) -> bool {
        true
    }
}

pub(super) use imp::{
    deregister, handler_installed, is_live, register_current, signal_wall, start, stop,
    take_destroyed,
};

/// Lists the loaded modules' unwind tables for the handler (the sampler
/// thread).
pub(super) fn refresh_modules() {
    unwind::refresh();
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use core::sync::atomic::Ordering;

    /// A stack of `words` words whose frame records are laid out by
    /// `records` (pairs of word index of saved fp (or 0) and return
    /// address), as a walk finds them.
    fn stack(words: usize) -> Vec<usize> {
        vec![0usize; words]
    }

    fn addr(stack: &[usize], word: usize) -> usize {
        stack.as_ptr() as usize + word * 8
    }

    #[test]
    fn a_chain_is_walked_to_its_null_frame_pointer() {
        let mut s = stack(64);
        // Frames at words 4, 10, 20; the outermost has a null saved fp.
        let (f1, f2, f3) = (addr(&s, 4), addr(&s, 10), addr(&s, 20));
        s[4] = f2;
        s[5] = 0x1111;
        s[10] = f3;
        s[11] = 0x2222;
        s[20] = 0;
        s[21] = 0x3333;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // SAFETY: the walk reads only inside `s`.
        let (n, end) = unsafe { walk(0xAAAA, addr(&s, 2), f1, 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[0xAAAA, 0x1111, 0x2222, 0x3333]);
    }

    #[test]
    fn a_frame_pointer_out_of_bounds_backwards_or_misaligned_stops_the_walk() {
        let mut s = stack(64);
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Out of the stack entirely (a general register's garbage).
        // SAFETY: nothing outside `s` is read: the check comes first.
        let r = unsafe { walk(1, low, 0x10, 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // Below the interrupted SP (a dead frame).
        // SAFETY: as above.
        let r = unsafe { walk(1, addr(&s, 30), addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // An interrupted SP outside the stack (an alternate signal
        // stack): not walked at all, however good the frame pointer looks.
        s[10] = 0;
        s[11] = 0x99;
        // SAFETY: as above.
        let r = unsafe { walk(1, low - 4096, addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // SAFETY: as above.
        let r = unsafe { walk(1, high, addr(&s, 10), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // Misaligned.
        // SAFETY: as above.
        let r = unsafe { walk(1, low, addr(&s, 10) + 4, 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // The last record straddling the top.
        // SAFETY: as above.
        let r = unsafe { walk(1, low, addr(&s, 63), 0, (low, high), &mut out) };
        assert_eq!(r, (1, WalkEnd::Bounds));
        // A loop (a record pointing at itself or down): one frame, then cut.
        let f = addr(&s, 8);
        s[8] = f;
        s[9] = 0x77;
        // SAFETY: as above.
        let r = unsafe { walk(1, low, f, 0, (low, high), &mut out) };
        assert_eq!(r, (2, WalkEnd::Bounds));
        assert_eq!(&out[..2], &[1, 0x77]);
        s[8] = addr(&s, 4);
        // SAFETY: as above.
        let r = unsafe { walk(1, low, f, 0, (low, high), &mut out) };
        assert_eq!(r, (2, WalkEnd::Bounds));
    }

    /// .NET 7+ OSR on x86-64: the OSR frame's record copies the tier-0
    /// frame's saved frame pointer and names the tier-0 code as its
    /// caller. Once the tier-0 code's range is published as
    /// `OSR_ORIGIN`, the walk finds the tier-0 frame's own record and
    /// goes on to the real caller instead of skipping it; a tier-0 frame
    /// of the same code called normally is walked as before. (AArch64's
    /// OSR frames are laid out otherwise: not handled there.)
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_osr_frame_is_walked_past_its_tier0_frame_to_the_caller() {
        let _table = unwind::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (osr, tier0, caller, outer) = (0x9000_0100, 0x9100_0010, 0x9200_0020, 0x9300_0030);
        let mut s = stack(64);
        let caller_fp = addr(&s, 30);
        // The OSR frame's record at word 4: the copy, and the tier-0 code.
        s[4] = caller_fp;
        s[5] = tier0;
        // The tier-0 frame: locals (words 6-13), then its record at 14.
        for (i, word) in s.iter_mut().enumerate().take(14).skip(6) {
            *word = 0x5000 + i;
        }
        s[14] = caller_fp;
        s[15] = caller;
        // The caller's record, the outermost.
        s[30] = 0;
        s[31] = outer;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Before the sampler thread saw the OSR frame: the tier-0 code
        // stands for the caller, which is skipped.
        unwind::publish_frameless(&[]);
        // SAFETY: the walk reads only inside `s`.
        let (n, _) = unsafe { walk(osr, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[osr, tier0, outer]);
        unwind::publish_frameless(&[(0x9100_0000, 0x9100_1000, unwind::OSR_ORIGIN, 0)]);
        // SAFETY: as above.
        let (n, end) = unsafe { walk(osr, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[osr, caller, outer]);
        // The same tier-0 code called normally (its frame pointer at word
        // 14): no word of its frame holds its own frame pointer.
        s[4] = addr(&s, 14);
        // SAFETY: as above.
        let (n, _) = unsafe {
            walk(
                0x9400_0000,
                addr(&s, 2),
                addr(&s, 4),
                0,
                (low, high),
                &mut out,
            )
        };
        assert_eq!(&out[..n], &[0x9400_0000, tier0, caller, outer]);
        // A frameless-looking entry is never used as a frame size.
        // SAFETY: as above.
        let (n, _) = unsafe {
            walk(
                tier0 + 1,
                addr(&s, 12),
                addr(&s, 14),
                0,
                (low, high),
                &mut out,
            )
        };
        assert_eq!(&out[..n], &[tier0 + 1, caller, outer]);
        unwind::publish_frameless(&[]);
    }

    /// .NET 11 OSR on x86-64: the OSR code pushes a pseudo return address,
    /// its own first byte, and a copy of the tier-0 frame's saved frame
    /// pointer: its record names the OSR code's entry as its caller. Once
    /// that byte is published as `OSR_ENTRY`, the walk finds the tier-0
    /// frame's own record and goes on to the real caller; an address one
    /// byte further is not the entry and is walked as before.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn an_osr_frame_naming_its_own_entry_is_walked_to_the_caller() {
        let _table = unwind::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (osr_entry, inside, caller, outer) =
            (0x9500_0000, 0x9500_0120, 0x9600_0020, 0x9700_0030);
        let mut s = stack(64);
        let caller_fp = addr(&s, 30);
        // The OSR frame's record at word 4: the copy, and the pseudo
        // return address.
        s[4] = caller_fp;
        s[5] = osr_entry;
        // The tier-0 frame: locals (words 6-15), then its record at 16.
        for (i, word) in s.iter_mut().enumerate().take(16).skip(6) {
            *word = 0x5000 + i;
        }
        s[16] = caller_fp;
        s[17] = caller;
        s[30] = 0;
        s[31] = outer;
        let (low, high) = (addr(&s, 0), addr(&s, 64));
        let mut out = [0usize; 16];
        // Unknown: the entry stands for the caller, which is skipped.
        unwind::publish_frameless(&[]);
        // SAFETY: the walk reads only inside `s`.
        let (n, _) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[inside, osr_entry, outer]);
        // Published: the caller.
        unwind::publish_frameless(&[(osr_entry, osr_entry + 1, unwind::OSR_ENTRY, 0)]);
        // SAFETY: as above.
        let (n, end) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(end, WalkEnd::Complete);
        assert_eq!(&out[..n], &[inside, caller, outer]);
        // A record naming the byte after the entry: an ordinary frame.
        s[5] = osr_entry + 1;
        // SAFETY: as above.
        let (n, _) = unsafe { walk(inside, addr(&s, 2), addr(&s, 4), 0, (low, high), &mut out) };
        assert_eq!(&out[..n], &[inside, osr_entry + 1, outer]);
        unwind::publish_frameless(&[]);
    }

    #[test]
    fn the_depth_limit_cuts_a_deep_chain() {
        let mut s = stack(256);
        for i in 0..100 {
            s[2 * i] = addr(&s, 2 * i + 2);
            s[2 * i + 1] = 0x1000 + i;
        }
        let (low, high) = (addr(&s, 0), addr(&s, 256));
        let mut out = [0usize; 10];
        // SAFETY: reads inside `s` only.
        let (n, end) = unsafe { walk(9, low, low, 0, (low, high), &mut out) };
        assert_eq!((n, end), (10, WalkEnd::Depth));
        assert_eq!(out[9], 0x1000 + 8);
    }

    /// A thread blocked in glibc's `nanosleep` (no frame pointer kept
    /// there, nor in this test binary's Rust code) is interrupted by a
    /// signal whose handler walks its stack: the call frame information of
    /// the loaded modules leads the walk out of glibc to the function that
    /// called `nanosleep`, and on to the thread's start.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_thread_blocked_in_glibc_is_walked_to_its_caller() {
        let _table = unwind::TABLE_IN_TEST
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use std::sync::atomic::AtomicUsize;
        // A real-time signal no other test of this binary uses (SIGUSR1
        // and SIGUSR2 are unix.rs's tests').
        const SIGNAL: c_int = 40;
        static LOW: AtomicUsize = AtomicUsize::new(0);
        static HIGH: AtomicUsize = AtomicUsize::new(0);
        static DEPTH: AtomicUsize = AtomicUsize::new(0);
        static END: AtomicUsize = AtomicUsize::new(9);
        static IPS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];
        extern "C" fn handler(_: c_int, _: *mut unix::siginfo_t, context: *mut c_void) {
            // SAFETY: this signal's context.
            let regs = unsafe { unix::registers(context) };
            let mut out = [0usize; 64];
            let bounds = (LOW.load(Ordering::SeqCst), HIGH.load(Ordering::SeqCst));
            // SAFETY: the bounds of this thread's own stack.
            let (n, end) = unsafe { walk(regs.ip, regs.sp, regs.fp, regs.lr, bounds, &mut out) };
            for (slot, ip) in IPS.iter().zip(&out[..n]) {
                slot.store(*ip, Ordering::SeqCst);
            }
            END.store(end as usize, Ordering::SeqCst);
            DEPTH.store(n, Ordering::SeqCst);
        }
        extern "C" {
            fn nanosleep(request: *const unix::timespec, remaining: *mut unix::timespec) -> c_int;
        }
        #[inline(never)]
        fn sleep_in_glibc() {
            let request = unix::timespec::from_nanos(2_000_000_000);
            let mut remaining = unix::timespec::default();
            // SAFETY: valid pointers; interrupted by the test's signal.
            unsafe { nanosleep(&request, &mut remaining) };
            core::hint::black_box(&remaining);
        }
        unwind::refresh();
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction =
            handler as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        // As the sampler's handler (`install`): on the thread's own stack,
        // not SA_ONSTACK (the test harness's alternate stack is a few KB,
        // which a debug build's walk through the CFI interpreter, about
        // 4 KB of frames, and the kernel's signal frame overflow).
        action.sa_flags = unix::SA_SIGINFO | unix::SA_RESTART;
        let mut old = unix::sigaction_t::zeroed();
        // SAFETY: valid pointers; SIGNAL is this test's alone.
        assert_eq!(unsafe { unix::sigaction(SIGNAL, &action, &mut old) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let sleeper = std::thread::spawn(move || {
            let (low, high) = unix::current_stack().unwrap();
            LOW.store(low, Ordering::SeqCst);
            HIGH.store(high, Ordering::SeqCst);
            tx.send(unix::gettid()).unwrap();
            sleep_in_glibc();
        });
        let tid = rx.recv().unwrap();
        // Until the signal lands in nanosleep: retried while the thread has
        // not reached it (its walk then does not show the caller yet).
        let marker = sleep_in_glibc as fn() as usize;
        let found = |n: usize| {
            IPS[1..n]
                .iter()
                .map(|ip| ip.load(Ordering::SeqCst))
                .any(|ip| (marker..marker + 256).contains(&ip))
        };
        let mut tries = 0;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(50));
            DEPTH.store(0, Ordering::SeqCst);
            assert!(unix::queue_to_thread(tid, SIGNAL, 0));
            while DEPTH.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            let n = DEPTH.load(Ordering::SeqCst);
            tries += 1;
            if found(n) || tries == 20 {
                let ips: Vec<usize> = IPS[..n].iter().map(|i| i.load(Ordering::SeqCst)).collect();
                assert!(found(n), "no return into {marker:#x} in {ips:#x?}");
                // Further up: the thread's own start, a walk of several
                // frames that ended at the outermost one or the bounds.
                assert!(n >= 4, "{ips:#x?}");
                break;
            }
        }
        sleeper.join().unwrap();
        // SAFETY: restores what was there.
        let restored = unsafe { unix::sigaction(SIGNAL, &old, core::ptr::null_mut()) };
        assert_eq!(restored, 0);
    }

    /// A `SIGPROF` that is not the sampler's (no tag in its value: an
    /// application's own) reaches the handler that was installed before
    /// the sampler's, with its arguments; one with the tag but no live
    /// registration is counted as stale and goes nowhere.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_foreign_sigprof_goes_to_the_handler_installed_before() {
        let _sigprof = SIGPROF_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use std::sync::atomic::AtomicUsize;
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn before(signo: c_int, info: *mut unix::siginfo_t, _: *mut c_void) {
            // SAFETY: the siginfo_t passed along.
            let value = unsafe { (*info).si_value };
            SEEN.store(value + signo as usize, Ordering::SeqCst);
        }
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction =
            before as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        action.sa_flags = unix::SA_SIGINFO;
        // SAFETY: a valid action; SIGPROF is used by no other test here.
        let set = unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) };
        assert_eq!(set, 0);
        assert!(imp::install_for_test());
        // Ours now.
        let mut now = unix::sigaction_t::zeroed();
        // SAFETY: reads the current action.
        let read = unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut now) };
        assert_eq!(read, 0);
        assert_ne!(now.sa_sigaction, action.sa_sigaction);
        assert_eq!(now.sa_flags & unix::SA_RESTART, unix::SA_RESTART);
        let tid = unix::gettid();
        // The application's: value 1000, no tag.
        assert!(unix::queue_to_thread(tid, unix::SIGPROF, 1000));
        assert_eq!(SEEN.load(Ordering::SeqCst), 1000 + unix::SIGPROF as usize);
        // Tagged, for a registration that does not exist: stale.
        SEEN.store(0, Ordering::SeqCst);
        let stale = COUNTERS.stale.load(Ordering::SeqCst);
        assert!(unix::queue_to_thread(
            tid,
            unix::SIGPROF,
            value_of(KIND_WALL, MAX_THREADS - 1)
        ));
        assert_eq!(SEEN.load(Ordering::SeqCst), 0);
        assert_eq!(COUNTERS.stale.load(Ordering::SeqCst), stale + 1);
    }

    /// Held by the tests that set `SIGPROF`'s disposition.
    static SIGPROF_IN_TEST: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The stop's `uninstall`: a pending signal of ours is discarded (it
    /// would otherwise meet the restored disposition, or a handler in an
    /// unloaded library), the handler that was there before is back, and
    /// the application's `SIGPROF`s go straight to it; a handler installed
    /// after ours (which may chain to it) keeps ours installed.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn uninstalling_discards_pending_signals_and_puts_the_previous_handler_back() {
        let _sigprof = SIGPROF_IN_TEST.lock().unwrap_or_else(|e| e.into_inner());
        use crate::sampling::unix;
        use core::ffi::{c_int, c_void};
        use std::sync::atomic::AtomicUsize;
        /// glibc's `sigset_t` (1024 bits).
        #[repr(C)]
        struct SigSet([u64; 16]);
        const SIG_BLOCK: c_int = 0;
        const SIG_UNBLOCK: c_int = 1;
        extern "C" {
            fn pthread_sigmask(how: c_int, set: *const SigSet, old: *mut SigSet) -> c_int;
            fn sigpending(set: *mut SigSet) -> c_int;
        }
        let sigprof = SigSet({
            let mut bits = [0u64; 16];
            bits[0] = 1 << (unix::SIGPROF - 1);
            bits
        });
        let pending = || {
            let mut set = SigSet([0; 16]);
            // SAFETY: a valid out-pointer.
            assert_eq!(unsafe { sigpending(&mut set) }, 0);
            set.0[0] & sigprof.0[0] != 0
        };
        let current = || {
            let mut now = unix::sigaction_t::zeroed();
            // SAFETY: reads the current action.
            let read = unsafe { unix::sigaction(unix::SIGPROF, core::ptr::null(), &mut now) };
            assert_eq!(read, 0);
            now.sa_sigaction
        };
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn before(_: c_int, info: *mut unix::siginfo_t, _: *mut c_void) {
            // SAFETY: the siginfo_t passed along.
            SEEN.store(unsafe { (*info).si_value }, Ordering::SeqCst);
        }
        extern "C" fn later(_: c_int, _: *mut unix::siginfo_t, _: *mut c_void) {}
        let application = before as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void);
        // A clean start: another test may have left ours installed.
        assert!(imp::uninstall_for_test());
        let mut action = unix::sigaction_t::zeroed();
        action.sa_sigaction = application as usize;
        action.sa_flags = unix::SA_SIGINFO;
        // SAFETY: a valid action; SIGPROF's tests hold SIGPROF_IN_TEST.
        let set = unsafe { unix::sigaction(unix::SIGPROF, &action, core::ptr::null_mut()) };
        assert_eq!(set, 0);
        assert!(imp::install_for_test());
        assert!(handler_installed());
        assert_ne!(current(), application as usize);

        // A signal of ours pending on this thread (blocked here).
        let masked =
            // SAFETY: valid sets.
            unsafe { pthread_sigmask(SIG_BLOCK, &sigprof, core::ptr::null_mut()) };
        assert_eq!(masked, 0);
        let ours = value_of(KIND_WALL, MAX_THREADS - 1);
        assert!(unix::queue_to_thread(unix::gettid(), unix::SIGPROF, ours));
        assert!(pending(), "the signal is pending before the stop");
        assert!(imp::uninstall_for_test());
        assert!(!handler_installed());
        assert!(!pending(), "the pending signal of ours was discarded");
        assert_eq!(current(), application as usize);
        SEEN.store(0, Ordering::SeqCst);
        let masked =
            // SAFETY: valid sets.
            unsafe { pthread_sigmask(SIG_UNBLOCK, &sigprof, core::ptr::null_mut()) };
        assert_eq!(masked, 0);
        assert_eq!(SEEN.load(Ordering::SeqCst), 0, "nothing left to deliver");
        // The application's own SIGPROF: straight to its handler, not
        // through ours (the foreign count stays).
        let foreign = COUNTERS.foreign.load(Ordering::SeqCst);
        assert!(unix::queue_to_thread(unix::gettid(), unix::SIGPROF, 77));
        assert_eq!(SEEN.load(Ordering::SeqCst), 77);
        assert_eq!(COUNTERS.foreign.load(Ordering::SeqCst), foreign);

        // Installed again, then a handler installed over ours: ours stays.
        assert!(imp::install_for_test());
        let mut over = unix::sigaction_t::zeroed();
        over.sa_sigaction =
            later as extern "C" fn(c_int, *mut unix::siginfo_t, *mut c_void) as usize;
        over.sa_flags = unix::SA_SIGINFO;
        let mut ours_action = unix::sigaction_t::zeroed();
        // SAFETY: valid actions.
        let swapped = unsafe { unix::sigaction(unix::SIGPROF, &over, &mut ours_action) };
        assert_eq!(swapped, 0);
        assert!(!imp::uninstall_for_test());
        assert!(handler_installed());
        assert_eq!(current(), over.sa_sigaction);
        // That handler gone (ours back), the uninstall goes through.
        // SAFETY: a valid action (ours, as read above).
        let back = unsafe { unix::sigaction(unix::SIGPROF, &ours_action, core::ptr::null_mut()) };
        assert_eq!(back, 0);
        assert!(imp::uninstall_for_test());
        assert_eq!(current(), application as usize);
        let mut default = unix::sigaction_t::zeroed();
        default.sa_sigaction = unix::SIG_IGN;
        // SAFETY: a valid action: SIGPROF ignored for the rest of the run.
        let reset = unsafe { unix::sigaction(unix::SIGPROF, &default, core::ptr::null_mut()) };
        assert_eq!(reset, 0);
    }

    #[test]
    fn modes_have_names_and_a_default_for_the_target() {
        for mode in [
            SamplingMode::Signal,
            SamplingMode::ThreadSuspend,
            SamplingMode::SuspendRuntime,
        ] {
            assert_eq!(SamplingMode::from_name(mode.name()), Some(mode));
        }
        assert_eq!(SamplingMode::from_name("signals"), None);
        let linux = cfg!(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ));
        assert_eq!(SamplingMode::Signal.is_supported(), linux);
        assert_eq!(SamplingMode::default() == SamplingMode::Signal, linux);
        let windows_x64 = cfg!(all(windows, target_arch = "x86_64"));
        assert_eq!(SamplingMode::ThreadSuspend.is_supported(), windows_x64);
        assert_eq!(
            SamplingMode::default() == SamplingMode::ThreadSuspend,
            windows_x64
        );
        assert!(SamplingMode::default().is_supported());
    }

    #[test]
    fn the_value_tag_carries_kind_and_index() {
        let v = value_of(KIND_WALL, 4095);
        assert_eq!(v & 0xffff_ffff, 4095);
        assert_eq!(((v >> 32) & 0xff) as u8, KIND_WALL);
        assert_eq!((v >> 32) & !0xff, TAG);
    }
}
