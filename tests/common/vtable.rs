//! Reading a COM object's vtable the way native code does.
#![allow(dead_code)]

use core::ffi::c_void;

/// Slot `index` of the vtable of `this`, exactly as a C caller reads it:
/// `(*(*this))[index]`.
///
/// # Safety
///
/// `this` must be a live COM object whose vtable has more than `index` slots
/// (callers check against the interface's `SLOTS`).
pub(crate) unsafe fn slot(this: *mut c_void, index: usize) -> *const c_void {
    // SAFETY: the first word of a COM object is its vtable pointer, and the
    // caller asks only for slots that exist.
    unsafe { *(*(this as *const *const *const c_void)).add(index) }
}
