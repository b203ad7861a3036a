//! The runtime's `ICorProfiler*Enum` enumerators as Rust iterators that
//! fetch in batches and release the enumerator when dropped.

use crate::profiling::*;

/// How many items one `Next` call asks for.
const BATCH: usize = 32;

macro_rules! com_iterator {
    ($(#[$attr:meta])* $name:ident: $enum_ty:ident => $item:ty, $zero:expr) => {
        $(#[$attr])*
        pub struct $name {
            raw: $enum_ty,
            buffer: [$item; BATCH],
            len: usize,
            pos: usize,
            done: bool,
        }

        impl $name {
            /// Iterates over what `raw` enumerates, from its current position.
            pub fn new(raw: $enum_ty) -> $name {
                $name { raw, buffer: [$zero; BATCH], len: 0, pos: 0, done: false }
            }

            /// The number of items the enumerator holds in all (`GetCount`).
            pub fn count_all(&self) -> super::result::Result<u32> {
                let mut count = 0;
                // SAFETY: a valid out-pointer.
                unsafe { self.raw.GetCount(&mut count) }.ok_with("GetCount")?;
                Ok(count)
            }

            /// The raw enumerator invoker.
            pub fn raw(&self) -> &$enum_ty {
                &self.raw
            }
        }

        impl Iterator for $name {
            type Item = $item;

            fn next(&mut self) -> Option<$item> {
                if self.pos == self.len {
                    if self.done {
                        return None;
                    }
                    let mut fetched: u32 = 0;
                    // SAFETY: `buffer` has room for BATCH items.
                    let hr = unsafe { self.raw.Next(BATCH as u32, self.buffer.as_mut_ptr(), &mut fetched) };
                    // S_FALSE (fewer than asked) or a failure: this batch is the last.
                    if hr != crate::S_OK {
                        self.done = true;
                    }
                    if hr.is_err() {
                        return None;
                    }
                    self.len = (fetched as usize).min(BATCH);
                    self.pos = 0;
                    if self.len == 0 {
                        self.done = true;
                        return None;
                    }
                }
                let item = self.buffer[self.pos];
                self.pos += 1;
                Some(item)
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.debug_struct(::core::stringify!($name)).field("raw", &self.raw).finish_non_exhaustive()
            }
        }
    };
}

com_iterator! {
    /// The modules of an `ICorProfilerModuleEnum`.
    ModuleIter: ICorProfilerModuleEnum => ModuleID, ModuleID::NULL
}
com_iterator! {
    /// The functions of an `ICorProfilerFunctionEnum`.
    FunctionIter: ICorProfilerFunctionEnum => COR_PRF_FUNCTION,
    COR_PRF_FUNCTION { functionId: FunctionID::NULL, reJitId: ReJITID::NULL }
}
com_iterator! {
    /// The threads of an `ICorProfilerThreadEnum`.
    ThreadIter: ICorProfilerThreadEnum => ThreadID, ThreadID::NULL
}
com_iterator! {
    /// The objects of an `ICorProfilerObjectEnum`.
    ObjectIter: ICorProfilerObjectEnum => ObjectID, ObjectID::NULL
}
