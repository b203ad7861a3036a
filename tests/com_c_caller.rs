//! A C program calls an object exported with two unrelated interfaces
//! (`export_multi`) through its vtables alone: COM's QueryInterface rules,
//! AddRef/Release counts and one drop, checked on the C side
//! (tests/c/com_caller.c, compiled here with the system's C compiler and
//! loaded with `dlopen`). Under scripts/ci/check-sanitizer.sh the Rust side
//! runs with AddressSanitizer and the C side is compiled with
//! `CORPROF_C_CALLER_CFLAGS` (`-fsanitize=address`), so that a read of the
//! object after its drop, from either side, is reported.
#![cfg(unix)]
#![allow(missing_docs)]

use core::ffi::{c_char, c_int, c_void};
use core::mem::size_of;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use corprof::*;

com_interface! {
    /// The first interface.
    #[iid("6A0D5C61-0001-4000-8000-000000000001")]
    #[vtable(IGreeter_Vtbl)]
    #[implement(IGreeter_Impl)]
    #[agile]
    pub unsafe interface IGreeter: IUnknown {
        /// Writes the length of the NUL-terminated UTF-16 `name` to `out`
        /// and counts one greeting.
        fn Greet(name: *const u16, out: *mut i32) -> HRESULT;
        fn Count() -> u32;
    }

    /// Its child.
    #[iid("6A0D5C61-0001-4000-8000-000000000002")]
    #[vtable(IGreeter2_Vtbl)]
    #[implement(IGreeter2_Impl: IGreeter_Impl)]
    #[agile]
    pub unsafe interface IGreeter2: IGreeter {
        fn Bump() -> u32;
    }

    /// An interface unrelated to either.
    #[iid("6A0D5C61-0001-4000-8000-000000000003")]
    #[vtable(IStore_Vtbl)]
    #[implement(IStore_Impl)]
    #[agile]
    pub unsafe interface IStore: IUnknown {
        fn Put(value: u32) -> HRESULT;
        fn Get(out: *mut u32) -> HRESULT;
    }
}

struct Greeter {
    count: AtomicU32,
    drops: Arc<AtomicUsize>,
}

impl Drop for Greeter {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

impl IGreeter_Impl for Greeter {
    unsafe fn Greet(&self, name: *const u16, out: *mut i32) -> HRESULT {
        if name.is_null() || out.is_null() {
            return E_POINTER;
        }
        let mut len = 0;
        // SAFETY: the caller passes a NUL-terminated string and a writable
        // i32 (the method's contract).
        unsafe {
            while *name.add(len) != 0 {
                len += 1;
            }
            *out = len as i32;
        }
        self.count.fetch_add(1, Ordering::SeqCst);
        S_OK
    }
    unsafe fn Count(&self) -> u32 {
        self.count.load(Ordering::SeqCst)
    }
}

impl IGreeter2_Impl for Greeter {
    unsafe fn Bump(&self) -> u32 {
        self.count.fetch_add(1, Ordering::SeqCst) + 1
    }
}

impl IStore_Impl for Greeter {
    unsafe fn Put(&self, value: u32) -> HRESULT {
        self.count.store(value, Ordering::SeqCst);
        S_OK
    }
    unsafe fn Get(&self, out: *mut u32) -> HRESULT {
        if out.is_null() {
            return E_POINTER;
        }
        // SAFETY: checked non-null; the caller passes a writable u32.
        unsafe { *out = self.count.load(Ordering::SeqCst) };
        S_OK
    }
}

const RTLD_NOW: c_int = 2;

#[cfg_attr(target_os = "linux", link(name = "dl"))]
extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
}

/// The last `dlopen`/`dlsym` error.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until
    // the next dl call on this thread.
    unsafe {
        let e = dlerror();
        if e.is_null() {
            "no dlerror".into()
        } else {
            core::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// tests/c/com_caller.c compiled as a shared library with `$CC` (default
/// `cc`), warnings as errors. `CORPROF_C_CALLER_CFLAGS` is passed to the
/// compilation only, not to the link: with `-fsanitize=address` the library's
/// checks then call the AddressSanitizer runtime the test executable carries
/// (rustc links it in statically; the executable must export it, as
/// `-Clink-arg=-rdynamic` does) instead of loading a second one.
fn build_caller() -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/com_caller.c");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (object, library) = (dir.join("com_caller.o"), dir.join("com_caller.so"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let extra = std::env::var("CORPROF_C_CALLER_CFLAGS").unwrap_or_default();
    let run = |command: &mut Command| {
        let status = command
            .status()
            .unwrap_or_else(|e| panic!("running `{cc}` (the C compiler; set CC): {e}"));
        assert!(status.success(), "`{cc}` failed: {command:?}");
    };
    run(Command::new(&cc)
        .args([
            "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fPIC",
        ])
        .args(extra.split_whitespace())
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&object));
    run(Command::new(&cc)
        .arg("-shared")
        .arg(&object)
        .arg("-o")
        .arg(&library));
    library
}

/// The function `name` of the C library ([`build_caller`]), as `F`.
///
/// `F` must be an `unsafe extern "C" fn` type matching the C declaration.
fn caller_symbol<F: Copy>(name: &core::ffi::CStr) -> F {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    let library = LIBRARY.get_or_init(build_caller);
    let path = std::ffi::CString::new(library.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; the library's initializers are the C
    // runtime's (and AddressSanitizer's when instrumented).
    let handle = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
    assert!(!handle.is_null(), "dlopen: {}", dl_error());
    // SAFETY: a live handle and a NUL-terminated name.
    let symbol = unsafe { dlsym(handle, name.as_ptr()) };
    assert!(!symbol.is_null(), "dlsym {name:?}: {}", dl_error());
    // SAFETY: `F` is a function pointer type of the symbol's C signature
    // (the caller's contract), the size of a pointer (checked).
    unsafe { core::mem::transmute_copy::<*mut c_void, F>(&symbol) }
}

type Caller = unsafe extern "C" fn(*mut c_void, *mut c_char, usize) -> c_int;

#[test]
fn a_c_caller_sees_one_identity_one_count_and_one_drop() {
    let caller: Caller = caller_symbol(c"corprof_c_caller");
    let drops = Arc::new(AtomicUsize::new(0));
    let greeter: IGreeter2 = export_multi::<(IGreeter2, IStore), _>(Greeter {
        count: AtomicU32::new(0),
        drops: drops.clone(),
    });
    // The C caller takes over this one reference and releases it last.
    let raw = greeter.into_raw();
    let mut why = [0 as c_char; 256];
    // SAFETY: `raw` is a live IGreeter2 whose one reference the callee
    // owns; `why` is writable for its length.
    let line = unsafe { caller(raw, why.as_mut_ptr(), why.len()) };
    // SAFETY: snprintf wrote a NUL-terminated string, or `why` is all zeros.
    let why = unsafe { core::ffi::CStr::from_ptr(why.as_ptr()) };
    assert_eq!(line, 0, "tests/c/com_caller.c: {}", why.to_string_lossy());
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "dropped once, at the C caller's last Release"
    );
}

/// The canary of scripts/ci/check-sanitizer.sh for the C side: a read of a
/// released object in the C file's own code, which AddressSanitizer reports
/// only when that file is instrumented (`CORPROF_C_CALLER_CFLAGS`) and its
/// checks reach the executable's runtime. Undefined behaviour, so ignored and
/// refused unless `CORPROF_SANITIZER_CANARY=1`.
#[test]
#[ignore = "reads freed memory: run by scripts/ci/check-sanitizer.sh under AddressSanitizer only"]
fn c_reads_a_released_object() {
    assert_eq!(
        std::env::var("CORPROF_SANITIZER_CANARY").as_deref(),
        Ok("1"),
        "a deliberate use after free: run by scripts/ci/check-sanitizer.sh only"
    );
    type Canary = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
    let canary: Canary = caller_symbol(c"corprof_c_read_after_release");
    let drops = Arc::new(AtomicUsize::new(0));
    let greeter: IGreeter2 = export_multi::<(IGreeter2, IStore), _>(Greeter {
        count: AtomicU32::new(0),
        drops,
    });
    // SAFETY: none: the callee releases the one reference and then reads the
    // freed object, the use after free AddressSanitizer must report.
    let read = unsafe { canary(greeter.into_raw()) };
    println!("read {read:p} from a released object: AddressSanitizer did not stop the process");
}
