//! What one [`com_interface!`](crate::com_interface) invocation generates.
//!
//! This module exists only in the documentation. It was produced by:
//!
//! ```
//! use corprof::{com_interface, BOOL, HRESULT, S_OK};
//!
//! com_interface! {
//!     /// An example interface: a counter.
//!     #[iid("6F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9")]
//!     #[vtable(IExampleCounter_Vtbl)]
//!     #[implement(IExampleCounter_Impl)]
//!     pub unsafe interface IExampleCounter: IUnknown {
//!         /// Adds `amount` and writes the new total to `total`.
//!         fn Increment(amount: u32, total: *mut u32) -> HRESULT;
//!         /// Resets the counter. Optional: the default does nothing.
//!         fn Reset() -> HRESULT { S_OK }
//!     }
//!
//!     /// An example derived interface.
//!     #[iid("6F1E2D3C-4B5A-4978-8695-A4B3C2D1E0FA")]
//!     #[vtable(IExampleCounter2_Vtbl)]
//!     #[implement(IExampleCounter2_Impl: IExampleCounter_Impl)]
//!     pub unsafe interface IExampleCounter2: IExampleCounter {
//!         /// Whether the counter has overflowed (a non-HRESULT return).
//!         fn HasOverflowed() -> BOOL;
//!     }
//! }
//! ```
//!
//! For each interface the page lists the invoker struct (`IExampleCounter`),
//! its `#[repr(C)]` vtable (`IExampleCounter_Vtbl`) and the trait to
//! implement for export (`IExampleCounter_Impl`), with every generated method
//! and trait implementation.

use crate::{BOOL, HRESULT, S_OK};

crate::com_interface! {
    /// An example interface: a counter.
    #[iid("6F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9")]
    #[vtable(IExampleCounter_Vtbl)]
    #[implement(IExampleCounter_Impl)]
    pub unsafe interface IExampleCounter: IUnknown {
        /// Adds `amount` and writes the new total to `total`.
        fn Increment(amount: u32, total: *mut u32) -> HRESULT;
        /// Resets the counter. Optional: the default does nothing.
        fn Reset() -> HRESULT { S_OK }
    }

    /// An example derived interface.
    #[iid("6F1E2D3C-4B5A-4978-8695-A4B3C2D1E0FA")]
    #[vtable(IExampleCounter2_Vtbl)]
    #[implement(IExampleCounter2_Impl: IExampleCounter_Impl)]
    pub unsafe interface IExampleCounter2: IExampleCounter {
        /// Whether the counter has overflowed (a non-HRESULT return).
        fn HasOverflowed() -> BOOL;
    }
}
