//! `com_class!`: the exported `DllGetClassObject` and its class factory,
//! called the way the runtime calls them.
#![allow(missing_docs)]

#[path = "common/self_exec.rs"]
mod self_exec;

use core::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use corprof::*;

static CREATED: AtomicUsize = AtomicUsize::new(0);
static DROPPED: AtomicUsize = AtomicUsize::new(0);

com_interface! {
    /// What the served class implements.
    #[iid("11111111-2222-4333-8444-555555555555")]
    #[vtable(IServed_Vtbl)]
    #[implement(IServed_Impl)]
    pub unsafe interface IServed: IUnknown {
        fn Ping(out: *mut u32) -> HRESULT;
    }
}

struct Served;
impl Drop for Served {
    fn drop(&mut self) {
        DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}
impl IServed_Impl for Served {
    unsafe fn Ping(&self, out: *mut u32) -> HRESULT {
        // SAFETY: the test passes a valid pointer.
        unsafe { *out = 0x9146 };
        S_OK
    }
}

fn create() -> IUnknown {
    CREATED.fetch_add(1, Ordering::SeqCst);
    export::<IServed, _>(Served).into()
}

com_class!("A1B2C3D4-E5F6-4789-8ABC-DEF012345678", create);

#[test]
fn dll_get_class_object_serves_only_its_clsid() {
    assert_eq!(
        CORPROF_CLSID,
        GUID::from_u128(0xA1B2C3D4_E5F6_4789_8ABC_DEF012345678)
    );
    let other = GUID::from_u128(1);
    let mut out: *mut c_void = core::ptr::NonNull::<c_void>::dangling().as_ptr();
    // SAFETY: valid pointers, as the runtime passes them.
    unsafe {
        assert_eq!(
            DllGetClassObject(&other, &IClassFactory::IID, &mut out),
            CLASS_E_CLASSNOTAVAILABLE
        );
        assert!(out.is_null());
        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, &IClassFactory::IID, core::ptr::null_mut()),
            E_POINTER
        );
        assert_eq!(
            DllGetClassObject(core::ptr::null(), &IClassFactory::IID, &mut out),
            E_POINTER
        );
        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, &IServed::IID, &mut out),
            E_NOINTERFACE
        );
        assert!(out.is_null());
    }
    assert_eq!(DllCanUnloadNow(), S_FALSE);
}

#[test]
fn the_factory_creates_objects_and_refuses_aggregation() {
    let mut out = core::ptr::null_mut();
    // SAFETY: valid pointers.
    let factory = unsafe {
        assert_eq!(
            DllGetClassObject(&CORPROF_CLSID, &IClassFactory::IID, &mut out),
            S_OK
        );
        IClassFactory::from_raw(out).unwrap()
    };
    let before = CREATED.load(Ordering::SeqCst);
    let dropped_before = DROPPED.load(Ordering::SeqCst);
    // SAFETY: valid pointers throughout; each out-pointer is checked.
    unsafe {
        assert_eq!(factory.LockServer(TRUE), S_OK);
        let mut object = core::ptr::NonNull::<c_void>::dangling().as_ptr();
        assert_eq!(
            factory.CreateInstance(
                core::ptr::NonNull::<c_void>::dangling().as_ptr(),
                &IServed::IID,
                &mut object
            ),
            CLASS_E_NOAGGREGATION
        );
        assert!(object.is_null());
        assert_eq!(
            CREATED.load(Ordering::SeqCst),
            before,
            "aggregation is refused before creating anything"
        );
        assert_eq!(
            factory.CreateInstance(core::ptr::null_mut(), &IClassFactory::IID, &mut object),
            E_NOINTERFACE
        );
        assert!(object.is_null());
        assert_eq!(
            DROPPED.load(Ordering::SeqCst),
            dropped_before + 1,
            "the refused instance was freed"
        );
        assert_eq!(
            factory.CreateInstance(core::ptr::null_mut(), &IServed::IID, core::ptr::null_mut()),
            E_POINTER
        );
        assert_eq!(
            factory.CreateInstance(core::ptr::null_mut(), &IServed::IID, &mut object),
            S_OK
        );
        let served = IServed::from_raw(object).unwrap();
        let mut pong = 0;
        assert_eq!(served.Ping(&mut pong), S_OK);
        assert_eq!(pong, 0x9146);
        drop(served);
    }
    assert_eq!(DROPPED.load(Ordering::SeqCst), dropped_before + 2);
}

/// Set in the child process: the value of `CORPROF_DEBUG` it was given.
const CHILD: &str = "CORPROF_COM_SERVER_CHILD";

#[test]
#[cfg_attr(miri, ignore = "Miri cannot start the child process")]
fn corprof_debug_1_reports_an_unserved_clsid_on_stderr() {
    const NAME: &str = "corprof_debug_1_reports_an_unserved_clsid_on_stderr";
    if std::env::var_os(CHILD).is_some() {
        let other = GUID::parse("00000000-1111-2222-3333-444444444444");
        let mut out: *mut c_void = core::ptr::null_mut();
        // SAFETY: valid pointers, as the runtime passes them.
        let hr = unsafe { DllGetClassObject(&other, &IClassFactory::IID, &mut out) };
        assert_eq!(hr, CLASS_E_CLASSNOTAVAILABLE);
        // And a served CLSID is never reported.
        // SAFETY: as above.
        let hr = unsafe { DllGetClassObject(&CORPROF_CLSID, &IClassFactory::IID, &mut out) };
        assert_eq!(hr, S_OK);
        // SAFETY: `out` holds the factory's reference, released here.
        drop(unsafe { IUnknown::from_raw(out) });
        return;
    }
    let run = |debug: Option<&str>| {
        let mut cmd = self_exec::this_test_binary();
        cmd.args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env_remove("CORPROF_DEBUG");
        if let Some(value) = debug {
            cmd.env("CORPROF_DEBUG", value);
        }
        let output = cmd.output().expect("run the test binary again");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let line =
        "corprof: DllGetClassObject was asked for CLSID {00000000-1111-2222-3333-444444444444}, \
                but this library serves {A1B2C3D4-E5F6-4789-8ABC-DEF012345678}; answering \
                CLASS_E_CLASSNOTAVAILABLE (check CORECLR_PROFILER)";
    let stderr = run(Some("1"));
    assert_eq!(stderr.matches(line).count(), 1, "{stderr}");
    for quiet in [None, Some("0")] {
        let stderr = run(quiet);
        assert!(!stderr.contains("corprof:"), "{quiet:?}: {stderr}");
    }
}
