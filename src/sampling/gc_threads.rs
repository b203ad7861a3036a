//! The CPU time of the runtime's own GC threads, which no sampling mode can
//! walk: server GC's heap threads and background GC's threads are native
//! threads the runtime starts itself (the signal mode registers only the
//! threads the runtime reports through `ThreadCreated`, the other modes
//! walk only managed threads).
//!
//! The data's route: every [`POLL`] the sampler thread calls
//! [`GcThreads::poll`], which lists `/proc/self/task` (every
//! [`LIST_EVERY`]) for the threads named as the runtime names its GC
//! threads ([`GC_THREAD_NAMES`]), reads each one's CPU clock
//! ([`thread_cpu_nanos`]) and returns the CPU each used since the previous
//! poll; the record path puts that under `[GC thread]` and the thread's
//! name, in the thread's own tree.
//!
//! The names are the runtime's: `gc_heap::create_gc_thread` starts each
//! server GC thread with `GCToEEInterface::CreateThread(gc_thread_stub,
//! this, false, ".NET Server GC")` and `create_bgc_thread` each background
//! GC thread with the name `".NET BGC"` (dotnet/runtime
//! `src/coreclr/gc/gc.cpp`); Linux keeps the first 15 bytes of a name
//! (`TASK_COMM_LEN` is 16 with the terminating NUL), which both fit in.
//! A thread the sampler already samples ([`GcThreads::poll`]'s `sampled`)
//! is left out, so no CPU is counted twice. Linux only: elsewhere `poll`
//! finds nothing.

use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;
use std::time::Instant;

use super::clock::thread_cpu_nanos;

/// How the runtime names its GC threads (see the module documentation).
pub const GC_THREAD_NAMES: [&str; 2] = [".NET Server GC", ".NET BGC"];

/// How often the GC threads' clocks are read.
pub(super) const POLL: Duration = Duration::from_millis(100);

/// How often `/proc/self/task` is listed again for GC threads started
/// since (background GC starts its thread at the first background GC).
pub(super) const LIST_EVERY: Duration = Duration::from_secs(1);

/// One GC thread's CPU since the previous poll.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GcCpu {
    /// The OS thread ID.
    pub(super) os_thread: u32,
    /// Its name, one of [`GC_THREAD_NAMES`].
    pub(super) name: &'static str,
    /// CPU time used since the previous poll, in nanoseconds.
    pub(super) nanos: u64,
}

/// A GC thread being followed: its ID, name and the clock's last value.
struct Followed {
    os_thread: u32,
    name: &'static str,
    last: u64,
}

/// The GC threads found so far and when they were listed and polled.
#[derive(Default)]
pub(super) struct GcThreads {
    followed: Vec<Followed>,
    listed: Option<Instant>,
    polled: Option<Instant>,
}

impl GcThreads {
    /// Whether [`poll`](Self::poll) would read the clocks at `now` (not
    /// within [`POLL`] of the previous poll).
    pub(super) fn due(&self, now: Instant) -> bool {
        self.polled.is_none_or(|at| now.duration_since(at) >= POLL)
    }

    /// Makes the next [`poll`](Self::poll) read the clocks whenever it
    /// comes (the last one, at the stop).
    pub(super) fn force(&mut self) {
        self.polled = None;
    }

    /// The CPU each GC thread used since the previous poll (none before
    /// [`POLL`] has passed since it): threads `sampled` answers `true` for
    /// are left out. A thread found at the first poll is counted from then
    /// on (it may have run long before the sampler started, as after an
    /// attach); one found later, from its start (it started since: the
    /// threads are listed every [`LIST_EVERY`]).
    pub(super) fn poll(&mut self, now: Instant, sampled: impl Fn(u32) -> bool) -> Vec<GcCpu> {
        if !self.due(now) {
            return Vec::new();
        }
        self.polled = Some(now);
        if self
            .listed
            .is_none_or(|at| now.duration_since(at) >= LIST_EVERY)
        {
            // A thread there at the first listing may have run long before
            // the sampler started (after an attach): counted from now. One
            // found later started since: counted from its start.
            let first = self.listed.is_none();
            self.listed = Some(now);
            for (os_thread, name) in list_gc_threads() {
                if !self.followed.iter().any(|f| f.os_thread == os_thread) {
                    if let Some(clock) = thread_cpu_nanos(os_thread) {
                        self.followed.push(Followed {
                            os_thread,
                            name,
                            last: if first { clock } else { 0 },
                        });
                    }
                }
            }
        }
        let mut used = Vec::new();
        self.followed.retain_mut(|f| {
            // An ended thread's clock can no longer be read: forgotten
            // (its ID may come back for another thread, found anew).
            let Some(clock) = thread_cpu_nanos(f.os_thread) else {
                return false;
            };
            let nanos = clock.saturating_sub(f.last);
            f.last = clock;
            if nanos > 0 && !sampled(f.os_thread) {
                used.push(GcCpu {
                    os_thread: f.os_thread,
                    name: f.name,
                    nanos,
                });
            }
            true
        });
        used
    }
}

/// The threads of this process named as GC threads, with their names.
#[cfg(target_os = "linux")]
fn list_gc_threads() -> Vec<(u32, &'static str)> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| {
            let task = task.ok()?;
            let os_thread: u32 = task.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read(task.path().join("comm")).ok()?;
            gc_thread_name(&comm).map(|name| (os_thread, name))
        })
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn list_gc_threads() -> Vec<(u32, &'static str)> {
    Vec::new()
}

/// The GC thread name `comm` (a `/proc/.../comm` file's bytes: the name
/// and a newline) is, if any.
pub(super) fn gc_thread_name(comm: &[u8]) -> Option<&'static str> {
    let comm = comm.strip_suffix(b"\n").unwrap_or(comm);
    GC_THREAD_NAMES
        .into_iter()
        .find(|name| name.as_bytes() == comm)
}

/// The frame a GC thread's CPU is recorded under, above its name.
pub const GC_THREAD_FRAME: &str = "[GC thread]";

/// The name of the frame under [`GC_THREAD_FRAME`]: the thread's name in
/// brackets (`[.NET Server GC]`).
pub(super) fn name_frame(name: &str) -> String {
    alloc::format!("[{name}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_threads_are_known_by_the_runtime_s_names() {
        assert_eq!(gc_thread_name(b".NET Server GC\n"), Some(".NET Server GC"));
        assert_eq!(gc_thread_name(b".NET BGC\n"), Some(".NET BGC"));
        assert_eq!(gc_thread_name(b".NET BGC"), Some(".NET BGC"));
        assert_eq!(gc_thread_name(b".NET TP Worker\n"), None);
        assert_eq!(gc_thread_name(b".NET Server G\n"), None);
        assert_eq!(gc_thread_name(b""), None);
        // Each fits in the kernel's 15 bytes.
        assert!(GC_THREAD_NAMES.iter().all(|n| n.len() <= 15));
        assert_eq!(name_frame(".NET BGC"), "[.NET BGC]");
    }

    /// A thread of this process renamed as a server GC thread is found
    /// and its CPU counted once it works; a sampled one is left out; a
    /// poll within [`POLL`] of the previous reads nothing.
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_thread_named_as_a_gc_thread_has_its_cpu_counted() {
        use std::sync::mpsc;
        let (tid_tx, tid_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let worker = std::thread::Builder::new()
            .name(String::from(".NET Server GC"))
            .spawn(move || {
                let tid = crate::sampling::unix::gettid();
                tid_tx.send(tid as u32).unwrap();
                go_rx.recv().unwrap();
                let start = thread_cpu_nanos(tid as u32).unwrap();
                let mut x = 0u64;
                while thread_cpu_nanos(tid as u32).unwrap() - start < 20_000_000 {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                std::hint::black_box(x);
                done_tx.send(()).unwrap();
                // Stay alive until the test has polled.
                let _ = go_rx.recv();
            })
            .unwrap();
        let tid = tid_rx.recv().unwrap();
        let mut gc = GcThreads::default();
        let mut probe = GcThreads::default();
        let t0 = Instant::now();
        // The first poll finds it and starts its count.
        assert!(gc.poll(t0, |_| false).iter().all(|c| c.os_thread != tid));
        assert!(gc.followed.iter().any(|f| f.os_thread == tid));
        probe.poll(t0, |_| false);
        go_tx.send(()).unwrap();
        done_rx.recv().unwrap();
        // Too soon: nothing read.
        assert!(gc.poll(t0 + POLL / 2, |_| false).is_empty());
        let used = gc.poll(t0 + POLL, |_| false);
        let ours: Vec<&GcCpu> = used.iter().filter(|c| c.os_thread == tid).collect();
        assert_eq!(ours.len(), 1, "{used:?}");
        assert_eq!(ours[0].name, ".NET Server GC");
        assert!(ours[0].nanos >= 20_000_000, "{:?}", ours[0]);
        // The same CPU, the thread sampled: left out.
        let left = probe.poll(t0 + POLL, |t| t == tid);
        assert!(left.iter().all(|c| c.os_thread != tid), "{left:?}");
        drop(go_tx);
        worker.join().unwrap();
    }
}
