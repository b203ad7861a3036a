//! [`Claims`]: where each method stands, and the one thread that
//! instruments it. A thread that meets a method first claims it
//! ([`Claim::Mine`]) and settles it when its IL is final; a thread that
//! is about to compile the method meanwhile waits for the settling, so
//! that it never compiles the IL without probes while the probes are being
//! written (issue 38).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use crate::support::sync::lock;

/// Where a method stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    /// Being instrumented by thread `by`: not to be inlined yet, and not
    /// to be compiled before it settles.
    Pending {
        /// The thread that claimed it.
        by: ThreadId,
    },
    /// Excluded, failed or without sequence points: its IL is final.
    Settled,
    /// Given probes: its IL is final. `done`: the epoch (see the session)
    /// taken once `SetILFunctionBody` had returned.
    Instrumented {
        /// When the new IL was installed.
        done: u64,
    },
}

/// What [`Claims::claim`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Claim {
    /// This thread claimed the method: instrument it, then
    /// [`settle`](Claims::settle) it.
    Mine,
    /// The method's outcome: settled, or still [`Outcome::Pending`] (when
    /// not waiting, when this thread holds the claim itself, or after the
    /// wait's limit).
    Known(Outcome),
}

/// The outcome of every method met so far, by key.
pub(super) struct Claims<K> {
    outcomes: Mutex<HashMap<K, Outcome>>,
    settled: Condvar,
    /// Threads waiting in [`claim`](Claims::claim) now (for the tests).
    waiting: AtomicUsize,
    /// Calls of [`claim`](Claims::claim) that waited, in all.
    waits: AtomicU64,
}

impl<K> Default for Claims<K> {
    fn default() -> Self {
        Claims {
            outcomes: Mutex::new(HashMap::new()),
            settled: Condvar::new(),
            waiting: AtomicUsize::new(0),
            waits: AtomicU64::new(0),
        }
    }
}

impl<K: Hash + Eq + Copy> Claims<K> {
    /// The outcome of `key`, if it was met.
    pub(super) fn get(&self, key: K) -> Option<Outcome> {
        lock(&self.outcomes).get(&key).copied()
    }

    /// Records `outcome` for `key` unless it has one; whether it was new.
    pub(super) fn note(&self, key: K, outcome: Outcome) -> bool {
        let mut outcomes = lock(&self.outcomes);
        if outcomes.contains_key(&key) {
            return false;
        }
        outcomes.insert(key, outcome);
        drop(outcomes);
        self.settled.notify_all();
        true
    }

    /// Claims `key` for this thread, or tells its outcome. With `wait`, a
    /// method another thread is instrumenting is waited for, up to that
    /// long; without, or when this thread holds the claim (a compilation
    /// nested in its own instrumenting), its `Pending` comes back at once.
    pub(super) fn claim(&self, key: K, wait: Option<Duration>) -> Claim {
        let me = thread::current().id();
        let start = Instant::now();
        let mut outcomes = lock(&self.outcomes);
        let mut waited = false;
        loop {
            match outcomes.get(&key).copied() {
                None => {
                    outcomes.insert(key, Outcome::Pending { by: me });
                    return Claim::Mine;
                }
                Some(Outcome::Pending { by }) if by != me => {
                    let Some(limit) = wait else {
                        return Claim::Known(Outcome::Pending { by });
                    };
                    let Some(left) = limit.checked_sub(start.elapsed()).filter(|l| !l.is_zero())
                    else {
                        return Claim::Known(Outcome::Pending { by });
                    };
                    if !waited {
                        waited = true;
                        self.waits.fetch_add(1, Ordering::Relaxed);
                    }
                    self.waiting.fetch_add(1, Ordering::SeqCst);
                    outcomes = match self.settled.wait_timeout(outcomes, left) {
                        Ok((guard, _)) => guard,
                        Err(poisoned) => poisoned.into_inner().0,
                    };
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                }
                Some(outcome) => return Claim::Known(outcome),
            }
        }
    }

    /// Settles a claimed `key` with its final `outcome` and wakes the
    /// threads waiting for it.
    pub(super) fn settle(&self, key: K, outcome: Outcome) {
        lock(&self.outcomes).insert(key, outcome);
        self.settled.notify_all();
    }

    /// Calls of [`claim`](Claims::claim) that waited, in all.
    pub(super) fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Threads waiting in [`claim`](Claims::claim) now.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// Settles a claim as [`Outcome::Settled`] when dropped unsettled (the
/// instrumenting thread panicked, or returned early): waiters are never
/// left to the wait's limit.
pub(super) struct ClaimGuard<'c, K: Hash + Eq + Copy> {
    claims: &'c Claims<K>,
    key: K,
    armed: bool,
}

impl<'c, K: Hash + Eq + Copy> ClaimGuard<'c, K> {
    /// Guards this thread's claim of `key`.
    pub(super) fn new(claims: &'c Claims<K>, key: K) -> Self {
        ClaimGuard {
            claims,
            key,
            armed: true,
        }
    }

    /// Settles the claim with `outcome`.
    pub(super) fn settle(mut self, outcome: Outcome) {
        self.armed = false;
        self.claims.settle(self.key, outcome);
    }
}

impl<K: Hash + Eq + Copy> Drop for ClaimGuard<'_, K> {
    fn drop(&mut self) {
        if self.armed {
            self.claims.settle(self.key, Outcome::Settled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    const LONG: Option<Duration> = Some(Duration::from_secs(60));

    /// Waits until `f` holds (up to 60 s).
    fn until(f: impl Fn() -> bool) {
        let start = Instant::now();
        while !f() {
            assert!(start.elapsed() < Duration::from_secs(60), "timed out");
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_second_caller_waits_until_the_probes_are_installed() {
        let claims = Arc::new(Claims::<u32>::default());
        assert_eq!(claims.claim(7, LONG), Claim::Mine);
        let installed = Arc::new(AtomicBool::new(false));
        let other = {
            let (claims, installed) = (Arc::clone(&claims), Arc::clone(&installed));
            thread::spawn(move || {
                let claim = claims.claim(7, LONG);
                // What the JIT would compile now: the IL after the claim's end.
                (claim, installed.load(Ordering::SeqCst))
            })
        };
        // The other thread is blocked in the wait (not merely not started).
        until(|| claims.waiting() == 1);
        thread::sleep(Duration::from_millis(50));
        assert!(!other.is_finished(), "returned while the claim was pending");
        installed.store(true, Ordering::SeqCst);
        ClaimGuard::new(&claims, 7).settle(Outcome::Instrumented { done: 5 });
        let (claim, saw_installed) = other.join().unwrap();
        assert_eq!(claim, Claim::Known(Outcome::Instrumented { done: 5 }));
        assert!(saw_installed, "returned before the probes were installed");
        assert_eq!(claims.waiting(), 0);
        assert_eq!(claims.waits(), 1);
    }

    #[test]
    fn the_claiming_thread_and_the_inliner_do_not_wait() {
        let claims = Claims::<u32>::default();
        assert_eq!(claims.claim(1, LONG), Claim::Mine);
        let me = thread::current().id();
        // A compilation nested in this thread's own instrumenting.
        assert_eq!(
            claims.claim(1, LONG),
            Claim::Known(Outcome::Pending { by: me })
        );
        thread::scope(|s| {
            let other = s.spawn(|| claims.claim(1, None)).join().unwrap();
            assert_eq!(other, Claim::Known(Outcome::Pending { by: me }));
            // A wait has a limit.
            let start = Instant::now();
            let limited = s
                .spawn(|| claims.claim(1, Some(Duration::from_millis(30))))
                .join()
                .unwrap();
            assert_eq!(limited, Claim::Known(Outcome::Pending { by: me }));
            assert!(start.elapsed() >= Duration::from_millis(30));
        });
    }

    #[test]
    fn a_dropped_claim_settles_and_wakes_the_waiters() {
        let claims = Arc::new(Claims::<u32>::default());
        assert_eq!(claims.claim(3, LONG), Claim::Mine);
        let guard = ClaimGuard::new(&claims, 3);
        let other = {
            let claims = Arc::clone(&claims);
            thread::spawn(move || claims.claim(3, LONG))
        };
        until(|| claims.waiting() == 1);
        drop(guard);
        assert_eq!(other.join().unwrap(), Claim::Known(Outcome::Settled));
        assert_eq!(claims.waits(), 1);
        assert!(!claims.note(3, Outcome::Settled), "already known");
        assert!(claims.note(4, Outcome::Settled));
        assert_eq!(claims.get(4), Some(Outcome::Settled));
    }
}
