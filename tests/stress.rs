//! Stress: many threads export objects while others QueryInterface, AddRef
//! and Release them and drop invokers. A counting global allocator proves
//! that nothing leaks once every reference is gone, and a drop counter with
//! a per-object "dropped" flag proves nothing is freed twice.
#![allow(missing_docs)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use corprof::*;

/// Counts live heap bytes and allocations.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
static LIVE_BLOCKS: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
            LIVE_BLOCKS.fetch_add(1, Ordering::Relaxed);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        LIVE_BLOCKS.fetch_sub(1, Ordering::Relaxed);
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

com_interface! {
    /// The stressed interface.
    #[iid("57E55000-0000-4000-8000-000000000001")]
    #[vtable(IStressed_Vtbl)]
    #[implement(IStressed_Impl)]
    #[agile]
    pub unsafe interface IStressed: IUnknown {
        fn Touch(out: *mut u64) -> HRESULT;
    }

    /// A child, so QI has a chain to walk.
    #[iid("57E55000-0000-4000-8000-000000000002")]
    #[vtable(IStressedChild_Vtbl)]
    #[implement(IStressedChild_Impl: IStressed_Impl)]
    pub unsafe interface IStressedChild: IStressed {
        fn Id() -> u64;
    }
}

static DROPS: AtomicUsize = AtomicUsize::new(0);

struct Victim {
    id: u64,
    dropped: AtomicBool,
    _payload: Vec<u8>,
}

impl Drop for Victim {
    fn drop(&mut self) {
        assert!(
            !self.dropped.swap(true, Ordering::SeqCst),
            "object {} dropped twice",
            self.id
        );
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}

impl IStressed_Impl for Victim {
    unsafe fn Touch(&self, out: *mut u64) -> HRESULT {
        if out.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; callers pass a valid pointer.
        unsafe { *out = self.id };
        S_OK
    }
}

impl IStressedChild_Impl for Victim {
    unsafe fn Id(&self) -> u64 {
        self.id
    }
}

/// A tiny deterministic PRNG (xorshift64*), so the schedule of operations
/// differs per thread but every run is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn many_threads_export_cast_and_release_without_leaks_or_double_frees() {
    const PRODUCERS: usize = 2;
    const CONSUMERS: usize = 4;
    const OBJECTS_PER_PRODUCER: usize = if cfg!(miri) { 20 } else { 20_000 };

    // Let the test harness and thread-spawning machinery settle their own
    // allocations before taking the baseline.
    std::thread::spawn(|| {}).join().unwrap();
    // The baseline comes before anything the test itself allocates.
    let drops_before = DROPS.load(Ordering::SeqCst);
    let baseline_blocks = LIVE_BLOCKS.load(Ordering::SeqCst);
    let baseline_bytes = LIVE_BYTES.load(Ordering::SeqCst);
    let pool: Arc<Mutex<Vec<IStressedChild>>> = Arc::new(Mutex::new(Vec::new()));
    let producing = Arc::new(AtomicUsize::new(PRODUCERS));

    let mut handles = Vec::new();
    for p in 0..PRODUCERS {
        let pool = pool.clone();
        let producing = producing.clone();
        handles.push(std::thread::spawn(move || {
            for i in 0..OBJECTS_PER_PRODUCER {
                let id = (p * OBJECTS_PER_PRODUCER + i) as u64;
                let object: IStressedChild = if i % 2 == 0 {
                    export(Victim {
                        id,
                        dropped: AtomicBool::new(false),
                        _payload: vec![0; 64],
                    })
                } else {
                    // Half of them are shared with the Rust side for a while.
                    let shared = Arc::new(Victim {
                        id,
                        dropped: AtomicBool::new(false),
                        _payload: vec![0; 64],
                    });
                    let exported = export_arc(shared.clone());
                    drop(shared);
                    exported
                };
                pool.lock().unwrap().push(object);
            }
            producing.fetch_sub(1, Ordering::SeqCst);
        }));
    }
    for c in 0..CONSUMERS {
        let pool = pool.clone();
        let producing = producing.clone();
        handles.push(std::thread::spawn(move || {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (c as u64 + 1));
            let mut held: Vec<IStressedChild> = Vec::new();
            loop {
                let taken = pool.lock().unwrap().pop();
                match taken {
                    Some(object) => {
                        // Raw AddRef/QI/Release, invoker clones and casts, in a random mix.
                        for _ in 0..(rng.next() % 8) {
                            match rng.next() % 5 {
                                0 => held.push(object.clone()),
                                1 => {
                                    let base: IStressed = object.cast().unwrap();
                                    let mut id = 0;
                                    // SAFETY: a valid out-pointer.
                                    assert_eq!(unsafe { base.Touch(&mut id) }, S_OK);
                                    // SAFETY: no arguments.
                                    assert_eq!(id, unsafe { object.Id() });
                                }
                                2 => {
                                    let unknown: IUnknown = object.cast().unwrap();
                                    assert_eq!(unknown.as_raw(), object.as_raw());
                                }
                                3 => {
                                    // SAFETY: AddRef then Release on a live object.
                                    unsafe {
                                        object.AddRef();
                                        object.Release();
                                    }
                                }
                                _ => {
                                    if !held.is_empty() {
                                        let index = (rng.next() as usize) % held.len();
                                        held.swap_remove(index);
                                    }
                                }
                            }
                        }
                        // Sometimes give it back for another thread to use.
                        if rng.next() % 3 == 0 {
                            pool.lock().unwrap().push(object);
                        }
                    }
                    None if producing.load(Ordering::SeqCst) == 0 => break,
                    None => std::thread::yield_now(),
                }
            }
            drop(held);
        }));
    }
    for handle in handles {
        handle.join().unwrap();
    }
    let leftover = std::mem::take(&mut *pool.lock().unwrap());
    drop(leftover);
    drop(pool);
    drop(producing);

    assert_eq!(
        DROPS.load(Ordering::SeqCst) - drops_before,
        PRODUCERS * OBJECTS_PER_PRODUCER,
        "every object dropped exactly once"
    );
    assert_eq!(
        LIVE_BLOCKS.load(Ordering::SeqCst),
        baseline_blocks,
        "no allocation outlives its references"
    );
    assert_eq!(
        LIVE_BYTES.load(Ordering::SeqCst),
        baseline_bytes,
        "no bytes leaked"
    );
}
