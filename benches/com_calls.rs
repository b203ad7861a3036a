//! Run-time cost of the COM core, each figure against a baseline measured in
//! the same run (these machines are noisy: compare ratios, not nanoseconds).
//!
//! `cargo bench --bench com_calls` prints a table. `scripts/bench/bench.sh` also
//! runs it under callgrind for instruction counts per call:
//! `com_calls --callgrind CASE N` runs just one case N times.

#![allow(missing_docs)]

use core::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use corprof::*;

com_interface! {
    /// The measured interface: one method as the runtime's callbacks look.
    #[iid("BE4C0000-0000-4000-8000-000000000001")]
    #[vtable(IBench_Vtbl)]
    #[implement(IBench_Impl)]
    #[agile]
    pub interface IBench: IUnknown {
        fn Method(a: u32, b: u32) -> HRESULT;
    }
}

com_interface! {
    /// An IID the benchmark object does not answer.
    #[iid("BE4C0000-0000-4000-8000-0000000000FF")]
    #[vtable(IMissing_Vtbl)]
    #[implement(IMissing_Impl)]
    pub interface IMissing: IUnknown {
        fn Nothing() -> HRESULT;
    }
}

/// The exported Rust object.
struct Exported {
    total: AtomicU32,
}

impl IBench_Impl for Exported {
    #[inline]
    fn Method(&self, a: u32, b: u32) -> HRESULT {
        self.total.fetch_add(a ^ b, Ordering::Relaxed);
        S_OK
    }
}

/// The floor: a hand-written C++-style object, `[vtable*, data]`, whose
/// method is a plain `extern "system"` function doing the same work.
#[repr(C)]
struct FloorObject {
    vtable: &'static FloorVtbl,
    total: AtomicU32,
    refs: AtomicU32,
}

#[repr(C)]
struct FloorVtbl {
    query_interface:
        unsafe extern "system" fn(*mut c_void, *const GUID, *mut *mut c_void) -> HRESULT,
    add_ref: unsafe extern "system" fn(*mut c_void) -> u32,
    release: unsafe extern "system" fn(*mut c_void) -> u32,
    method: unsafe extern "system" fn(*mut c_void, u32, u32) -> HRESULT,
}

/// What a careful C++ object does: check the IID against its chain, take a
/// reference, write the pointer.
unsafe extern "system" fn floor_qi(
    this: *mut c_void,
    riid: *const GUID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: the benchmark passes a valid IID and out-pointer.
    unsafe {
        if *riid == IBench::IID || *riid == IUnknown::IID {
            floor_add_ref(this);
            *out = this;
            S_OK
        } else {
            *out = core::ptr::null_mut();
            E_NOINTERFACE
        }
    }
}
unsafe extern "system" fn floor_add_ref(this: *mut c_void) -> u32 {
    // SAFETY: `this` is the FloorObject the benchmark owns.
    let object = unsafe { &*(this as *const FloorObject) };
    object.refs.fetch_add(1, Ordering::Relaxed) + 1
}
unsafe extern "system" fn floor_release(this: *mut c_void) -> u32 {
    // SAFETY: `this` is the FloorObject the benchmark owns.
    let object = unsafe { &*(this as *const FloorObject) };
    let old = object.refs.fetch_sub(1, Ordering::Release);
    if old == 1 {
        std::sync::atomic::fence(Ordering::Acquire);
    }
    old - 1
}
unsafe extern "system" fn floor_method(this: *mut c_void, a: u32, b: u32) -> HRESULT {
    // SAFETY: `this` is the FloorObject the benchmark owns.
    let object = unsafe { &*(this as *const FloorObject) };
    object.total.fetch_add(a ^ b, Ordering::Relaxed);
    S_OK
}

static FLOOR_VTBL: FloorVtbl = FloorVtbl {
    query_interface: floor_qi,
    add_ref: floor_add_ref,
    release: floor_release,
    method: floor_method,
};

type MethodFn = unsafe extern "system" fn(*mut c_void, u32, u32) -> HRESULT;

/// Slot 3 of `this`'s vtable, read the way native code reads it.
fn slot3(this: *mut c_void) -> MethodFn {
    // SAFETY: `this` is a live COM object with at least 4 slots.
    unsafe {
        core::mem::transmute::<*const c_void, MethodFn>(
            *(*(this as *const *const *const c_void)).add(3),
        )
    }
}

struct Fixture {
    exported: IBench,
    floor: Box<FloorObject>,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            exported: export(Exported {
                total: AtomicU32::new(0),
            }),
            floor: Box::new(FloorObject {
                vtable: &FLOOR_VTBL,
                total: AtomicU32::new(0),
                refs: AtomicU32::new(1),
            }),
        }
    }
    fn floor_ptr(&self) -> *mut c_void {
        &*self.floor as *const FloorObject as *mut c_void
    }
}

/// Every case, for warming up.
const ALL_CASES: [&str; 10] = [
    "thunk",
    "floor",
    "invoker",
    "raw_call",
    "qi_hit",
    "qi_miss",
    "addref_release",
    "floor_qi_hit",
    "floor_qi_miss",
    "floor_refs",
];

/// One measured operation, `n` times.
fn run_case(fixture: &Fixture, case: &str, n: u64) {
    let exported = fixture.exported.as_raw();
    let floor = fixture.floor_ptr();
    match case {
        // A native-style call through the exported object's vtable.
        "thunk" => {
            for i in 0..n {
                let this = black_box(exported);
                // SAFETY: a live exported object and its own slot.
                let _ = black_box(unsafe { slot3(this)(this, i as u32, 7) });
            }
        }
        // The same call through the hand-written vtable.
        "floor" => {
            for i in 0..n {
                let this = black_box(floor);
                // SAFETY: the live floor object and its own slot.
                let _ = black_box(unsafe { slot3(this)(this, i as u32, 7) });
            }
        }
        // The invoker calling a native object (the floor object stands for one).
        "invoker" => {
            // SAFETY: the floor object is a valid COM-shaped object with a
            // Method slot; the invoker is forgotten, never released.
            let native = core::mem::ManuallyDrop::new(unsafe { IBench::from_raw(floor) }.unwrap());
            for i in 0..n {
                let native = black_box(&*native);
                // SAFETY: plain values.
                let _ = black_box(unsafe { native.Method(i as u32, 7) });
            }
        }
        // A raw function-pointer call of the same slot (the invoker's floor).
        "raw_call" => {
            let method = black_box(FLOOR_VTBL.method);
            for i in 0..n {
                // SAFETY: the floor object and its method.
                let _ = black_box(unsafe { method(black_box(floor), i as u32, 7) });
            }
        }
        "qi_hit" => {
            let mut out = core::ptr::null_mut();
            for _ in 0..n {
                // SAFETY: valid IID and out-pointer; the reference taken is released.
                unsafe {
                    let _ = fixture
                        .exported
                        .QueryInterface(black_box(&IBench::IID), &mut out);
                    fixture.exported.Release();
                }
            }
        }
        "qi_miss" => {
            let mut out = core::ptr::null_mut();
            for _ in 0..n {
                // SAFETY: valid IID and out-pointer.
                let _ = black_box(unsafe {
                    fixture
                        .exported
                        .QueryInterface(black_box(&IMissing::IID), &mut out)
                });
            }
        }
        "addref_release" => {
            for _ in 0..n {
                // SAFETY: balanced on a live object.
                unsafe {
                    black_box(fixture.exported.AddRef());
                    black_box(fixture.exported.Release());
                }
            }
        }
        // The same three operations on the hand-written object, through its vtable.
        "floor_qi_hit" | "floor_qi_miss" | "floor_refs" => {
            // SAFETY: the floor object is COM-shaped; the invoker is never released.
            let native =
                core::mem::ManuallyDrop::new(unsafe { IUnknown::from_raw(floor) }.unwrap());
            let iid = if case == "floor_qi_hit" {
                IBench::IID
            } else {
                IMissing::IID
            };
            let mut out = core::ptr::null_mut();
            for _ in 0..n {
                // SAFETY: valid IID and out-pointer; every reference taken is given back.
                unsafe {
                    if case == "floor_refs" {
                        black_box(native.AddRef());
                        black_box(native.Release());
                    } else {
                        let _ = black_box(native.QueryInterface(black_box(&iid), &mut out));
                        if !out.is_null() {
                            native.Release();
                        }
                    }
                }
            }
        }
        other => panic!("unknown case {other}"),
    }
}

/// Nanoseconds per operation: the median of `rounds` timed runs.
fn time_case(fixture: &Fixture, case: &str, n: u64, rounds: usize) -> f64 {
    let mut samples: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            run_case(fixture, case, n);
            start.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[rounds / 2]
}

/// AddRef/Release pairs on one object from two threads at once.
fn contended(case: &str, n: u64) -> f64 {
    let fixture = Fixture::new();
    let barrier = std::sync::Barrier::new(2);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                barrier.wait();
                run_case(&fixture, case, n);
            });
        }
    });
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--callgrind") {
        let case = &args[position + 1];
        let n: u64 = args[position + 2].parse().expect("N");
        run_case(&Fixture::new(), case, n);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this
    // binary without it, as a quick smoke test of every case.
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let n: u64 = if quick { 200_000 } else { 5_000_000 };
    let rounds = if quick { 3 } else { 11 };
    let fixture = Fixture::new();
    // Warm up every path once.
    for case in ALL_CASES {
        run_case(&fixture, case, 10_000);
    }
    println!("| measurement | ns/op | baseline | baseline ns/op | ratio |");
    println!("|---|---|---|---|---|");
    let row = |what: &str, case: &str, base_name: &str, base: &str| {
        // Interleave measurement and baseline so drift affects both alike;
        // report the run with the median ratio.
        let mut runs: Vec<(f64, f64)> = (0..3)
            .map(|_| {
                (
                    time_case(&fixture, case, n, rounds),
                    time_case(&fixture, base, n, rounds),
                )
            })
            .collect();
        runs.sort_by(|a, b| (a.0 / a.1).partial_cmp(&(b.0 / b.1)).unwrap());
        let (value, floor) = runs[1];
        println!(
            "| {what} | {value:.2} | {base_name} | {floor:.2} | {:.2} |",
            value / floor
        );
    };
    row(
        "exporter thunk (native-style call)",
        "thunk",
        "hand-written vtable",
        "floor",
    );
    row(
        "invoker method call",
        "invoker",
        "raw fn-pointer call",
        "raw_call",
    );
    row(
        "QueryInterface hit (+Release)",
        "qi_hit",
        "hand-written QI hit (+Release)",
        "floor_qi_hit",
    );
    row(
        "QueryInterface miss",
        "qi_miss",
        "hand-written QI miss",
        "floor_qi_miss",
    );
    row(
        "AddRef+Release, uncontended",
        "addref_release",
        "hand-written AddRef+Release",
        "floor_refs",
    );
    let mut runs: Vec<(f64, f64)> = (0..5)
        .map(|_| {
            (
                contended("addref_release", n / 4),
                contended("floor_refs", n / 4),
            )
        })
        .collect();
    runs.sort_by(|a, b| (a.0 / a.1).partial_cmp(&(b.0 / b.1)).unwrap());
    let (pair, floor) = runs[2];
    println!(
        "| AddRef+Release, 2 threads contending | {pair:.2} | hand-written, 2 threads contending | {floor:.2} | {:.2} |",
        pair / floor
    );
}
