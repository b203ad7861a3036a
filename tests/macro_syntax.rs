//! Syntax `com_interface!` accepts: return types written as paths or
//! generic types anywhere in a method list (a path used to be cut at `::`),
//! mixed with the single-identifier returns the fast chunk arms read, and
//! each slot still lands at its declared place.
#![allow(missing_docs)]

use corprof::{com_interface, export, Interface, HRESULT, S_FALSE, S_OK};

com_interface! {
    /// 18 methods: more than one 16-method chunk, with path returns at the
    /// start, in the middle, at the end of a chunk and after it.
    #[iid("0A1B2C3D-0000-4000-8000-0000000000A1")]
    #[vtable(IPaths_Vtbl)]
    #[implement(IPaths_Impl)]
    pub unsafe interface IPaths: IUnknown {
        fn P0() -> corprof::HRESULT;
        fn P1() -> u32;
        fn P2() -> u32;
        fn P3() -> core::ffi::c_uint;
        fn P4() -> u32;
        fn P5() -> ::core::primitive::u32 { 5 }
        fn P6() -> u32;
        fn P7() -> u32;
        fn P8() -> u32;
        fn P9() -> u32;
        fn P10() -> u32;
        fn P11() -> u32;
        fn P12() -> u32;
        fn P13() -> u32;
        fn P14() -> u32;
        fn P15() -> core::primitive::u32;
        fn P16() -> u32 { 16 }
        fn P17(x: core::ffi::c_uint) -> corprof::HRESULT { if x == 17 { S_OK } else { S_FALSE } }
    }
}

struct Paths;

impl IPaths_Impl for Paths {
    unsafe fn P0(&self) -> HRESULT {
        S_FALSE
    }
    unsafe fn P1(&self) -> u32 {
        1
    }
    unsafe fn P2(&self) -> u32 {
        2
    }
    unsafe fn P3(&self) -> core::ffi::c_uint {
        3
    }
    unsafe fn P4(&self) -> u32 {
        4
    }
    unsafe fn P6(&self) -> u32 {
        6
    }
    unsafe fn P7(&self) -> u32 {
        7
    }
    unsafe fn P8(&self) -> u32 {
        8
    }
    unsafe fn P9(&self) -> u32 {
        9
    }
    unsafe fn P10(&self) -> u32 {
        10
    }
    unsafe fn P11(&self) -> u32 {
        11
    }
    unsafe fn P12(&self) -> u32 {
        12
    }
    unsafe fn P13(&self) -> u32 {
        13
    }
    unsafe fn P14(&self) -> u32 {
        14
    }
    unsafe fn P15(&self) -> u32 {
        15
    }
}

#[test]
fn path_return_types_are_accepted_and_every_slot_is_in_place() {
    assert_eq!(IPaths::SLOTS, 3 + 18);
    let paths: IPaths = export(Paths);
    // SAFETY: a live exported object; the methods take no pointers.
    unsafe {
        assert_eq!(paths.P0(), S_FALSE);
        let got = [
            paths.P1(),
            paths.P2(),
            paths.P3(),
            paths.P4(),
            paths.P5(),
            paths.P6(),
            paths.P7(),
            paths.P8(),
            paths.P9(),
            paths.P10(),
            paths.P11(),
            paths.P12(),
            paths.P13(),
            paths.P14(),
            paths.P15(),
            paths.P16(),
        ];
        assert_eq!(got, core::array::from_fn(|i| i as u32 + 1));
        assert_eq!(paths.P17(17), S_OK);
        assert_eq!(paths.P17(0), S_FALSE);
    }
}

com_interface! {
    /// Free-threaded: its invoker is `Send + Sync`.
    #[iid("0A1B2C3D-0000-4000-8000-0000000000A2")]
    #[vtable(IAgileThing_Vtbl)]
    #[implement(IAgileThing_Impl)]
    #[agile]
    pub(crate) unsafe interface IAgileThing: IUnknown {
        fn Get() -> u32;
    }

    /// A child of an agile interface is agile too (its objects implement
    /// the parent).
    #[iid("0A1B2C3D-0000-4000-8000-0000000000A3")]
    #[vtable(IAgileChild_Vtbl)]
    #[implement(IAgileChild_Impl: IAgileThing_Impl)]
    unsafe interface IAgileChild: IAgileThing {
        fn More() -> u32;
    }
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn agile_interfaces_are_send_and_sync_and_so_are_the_runtimes() {
    assert_send_sync::<IAgileThing>();
    assert_send_sync::<IAgileChild>();
    assert_send_sync::<corprof::profiling::ICorProfilerInfo>();
    assert_send_sync::<corprof::profiling::ICorProfilerCallback11>();
    assert_send_sync::<corprof::metadata::IMetaDataImport2>();
    assert_send_sync::<corprof::metadata::IMetaDataEmit2>();

    // And one moves to another thread and is called there.
    struct Thing;
    impl IAgileThing_Impl for Thing {
        unsafe fn Get(&self) -> u32 {
            7
        }
    }
    impl IAgileChild_Impl for Thing {
        unsafe fn More(&self) -> u32 {
            8
        }
    }
    let child: IAgileChild = export(Thing);
    let answer = std::thread::spawn(move || {
        // SAFETY: no arguments; the exported object is free-threaded.
        unsafe { (child.Get(), child.More()) }
    })
    .join()
    .unwrap();
    assert_eq!(answer, (7, 8));
}
