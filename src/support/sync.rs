//! The crate's one poison-tolerant lock: a panic in a profiler callback is
//! caught at the COM boundary (and answered `E_FAIL`), so a lock it held
//! must stay usable for the callbacks after it; the data behind it is kept
//! consistent by each user's own invariants, not by poisoning.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Locks `mutex`, taking the guard of a poisoned one too.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `lock` for reading, taking the guard of a poisoned one too.
pub(crate) fn read<T: ?Sized>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Locks `lock` for writing, taking the guard of a poisoned one too.
pub(crate) fn write<T: ?Sized>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
