//! A bounded queue that never makes its producer wait: when full, a push
//! drops the oldest item.

use alloc::collections::VecDeque;
use core::time::Duration;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

pub(crate) struct Queue<T> {
    state: Mutex<(VecDeque<T>, bool)>,
    ready: Condvar,
    capacity: usize,
}

impl<T> Queue<T> {
    /// An open queue of at most `capacity` items (at least 1).
    pub(crate) fn new(capacity: usize) -> Queue<T> {
        Queue {
            state: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (VecDeque<T>, bool)> {
        crate::support::sync::lock(&self.state)
    }

    /// Adds `item`; returns how many old items were dropped to make room
    /// (0 or 1). After [`close`](Self::close) the item is dropped (1).
    pub(crate) fn push(&self, item: T) -> usize {
        let mut state = self.lock();
        if state.1 {
            return 1;
        }
        let mut dropped = 0;
        while state.0.len() >= self.capacity {
            state.0.pop_front();
            dropped += 1;
        }
        state.0.push_back(item);
        drop(state);
        self.ready.notify_one();
        dropped
    }

    /// The oldest item, waiting for one; `None` once closed and empty.
    pub(crate) fn pop(&self) -> Option<T> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.0.pop_front() {
                return Some(item);
            }
            if state.1 {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The oldest item, if any, without waiting.
    pub(crate) fn try_pop(&self) -> Option<T> {
        self.lock().0.pop_front()
    }

    /// Waits until `deadline` or until the queue is closed: `true` when it
    /// was closed (for a retry's back-off that shutdown cuts short).
    pub(crate) fn wait_closed(&self, deadline: Instant) -> bool {
        let mut state = self.lock();
        loop {
            if state.1 {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self
                .ready
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Whether [`close`](Self::close) was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.lock().1
    }

    /// Closes the queue: pops return what is left, then `None`.
    pub(crate) fn close(&self) {
        self.lock().1 = true;
        self.ready.notify_all();
    }

    /// Items waiting.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().0.len()
    }
}

/// A sleep of `duration` that a close of `queue` cuts short.
pub(crate) fn backoff<T>(queue: &Queue<T>, duration: Duration) -> bool {
    queue.wait_closed(Instant::now() + duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_its_oldest_and_close_drains() {
        let q = Queue::new(2);
        assert_eq!(q.push(1), 0);
        assert_eq!(q.push(2), 0);
        assert_eq!(q.push(3), 1);
        assert_eq!(q.len(), 2);
        q.close();
        assert_eq!(q.push(4), 1);
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some(2), Some(3), None));
    }

    #[test]
    fn close_cuts_a_backoff_short() {
        let q = std::sync::Arc::new(Queue::<u8>::new(1));
        let closer = std::sync::Arc::clone(&q);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            closer.close();
        });
        let start = Instant::now();
        assert!(backoff(&q, Duration::from_secs(30)));
        assert!(start.elapsed() < Duration::from_secs(20));
        t.join().unwrap();
        assert!(!backoff(&Queue::<u8>::new(1), Duration::from_millis(1)));
    }
}
