//! [`ShutdownFlag`]: what a profiler's own threads check so that they stop
//! calling the runtime once it has shut down, and their bounded waits,
//! which end early when it does.

use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::time::Instant;

/// The longest sleep between two looks at the flag.
const STEP: Duration = Duration::from_millis(10);

/// Raised in [`shutdown`](super::Profiler::shutdown); read by the
/// profiler's own threads (the ones that call
/// [`ProfilerInfo::request_rejit`](super::ProfilerInfo::request_rejit),
/// for example), which must make no more calls into the runtime after it.
/// Share it in an `Arc` or in a struct the threads share.
#[derive(Debug, Default)]
pub struct ShutdownFlag(AtomicBool);

/// How [`ShutdownFlag::wait_until`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// The condition came true.
    Ready,
    /// The time limit passed first.
    TimedOut,
    /// The flag was raised first.
    ShutDown,
}

impl ShutdownFlag {
    /// A flag not raised.
    pub const fn new() -> ShutdownFlag {
        ShutdownFlag(AtomicBool::new(false))
    }

    /// Raises the flag (from `shutdown`); it stays raised.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the flag is raised.
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Sleeps for `duration`, looking at the flag at least every 10 ms:
    /// `true` when the time passed, `false` when the flag was raised
    /// first (or already).
    pub fn sleep(&self, duration: Duration) -> bool {
        let start = Instant::now();
        loop {
            if self.is_raised() {
                return false;
            }
            let elapsed = start.elapsed();
            if elapsed >= duration {
                return true;
            }
            std::thread::sleep(STEP.min(duration - elapsed));
        }
    }

    /// Asks `ready` every `poll` (at most 10 ms apart, so that the flag is
    /// seen soon) until it answers `true`, the flag is raised, or `timeout`
    /// has passed, in that order of precedence at each look.
    pub fn wait_until(
        &self,
        timeout: Duration,
        poll: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Waited {
        let start = Instant::now();
        loop {
            if ready() {
                return Waited::Ready;
            }
            if self.is_raised() {
                return Waited::ShutDown;
            }
            if start.elapsed() >= timeout {
                return Waited::TimedOut;
            }
            std::thread::sleep(poll.min(STEP));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Raises `flag` after `after`, from another thread.
    fn raise_later(flag: &Arc<ShutdownFlag>, after: Duration) -> std::thread::JoinHandle<()> {
        let flag = Arc::clone(flag);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            flag.raise();
        })
    }

    #[test]
    fn sleep_lasts_its_time_unless_the_flag_is_raised() {
        let flag = Arc::new(ShutdownFlag::new());
        let start = Instant::now();
        assert!(flag.sleep(Duration::from_millis(30)));
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert!(!flag.is_raised());

        let raiser = raise_later(&flag, Duration::from_millis(20));
        let start = Instant::now();
        assert!(!flag.sleep(Duration::from_secs(60)));
        // Generous bound for a busy machine; far below the 60 s asked.
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        raiser.join().unwrap();
        assert!(flag.is_raised());
        assert!(!flag.sleep(Duration::ZERO), "raised already");
    }

    #[test]
    fn wait_until_ends_ready_timed_out_or_shut_down() {
        let flag = Arc::new(ShutdownFlag::default());
        let mut asked = 0;
        let ready = flag.wait_until(Duration::from_secs(60), Duration::from_millis(1), || {
            asked += 1;
            asked == 3
        });
        assert_eq!((ready, asked), (Waited::Ready, 3));

        let start = Instant::now();
        let waited = flag.wait_until(Duration::from_millis(30), Duration::from_millis(5), || {
            false
        });
        assert_eq!(waited, Waited::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(30));

        let raiser = raise_later(&flag, Duration::from_millis(20));
        let start = Instant::now();
        // A poll longer than the step still sees the flag within a step.
        let waited = flag.wait_until(Duration::from_secs(60), Duration::from_secs(60), || false);
        assert_eq!(waited, Waited::ShutDown);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        raiser.join().unwrap();
        // Ready wins over a raised flag.
        let ready = flag.wait_until(Duration::ZERO, Duration::ZERO, || true);
        assert_eq!(ready, Waited::Ready);
    }
}
