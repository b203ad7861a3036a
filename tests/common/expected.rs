//! The exact stdout of the C# test programs run without a profiler; a
//! profiler that observes a program must leave it unchanged.
#![allow(dead_code)]

/// `Basics`, exit code 42.
pub(crate) const BASICS: &[&str] = &[
    "fib(20)=6765",
    "identity<int>=7",
    "identity<string>=seven",
    "box<int>=42",
    "box<string>=boxed",
    "caught InvalidOperationException: state is invalid",
    "finally ran",
    "caught MyException: custom failure (code=7)",
    "gc: induced collections >= 2: True",
    "thread worker-1 sum=5050",
    "thread worker-2 sum=20100",
    "thread worker-3 sum=45150",
    "plugin says: hello, Basics, from Plugin v1",
    "done",
];

/// `Rewrite` without arguments, exit code 43.
pub(crate) const REWRITE: &[&str] = &[
    "answer=41",
    "work total=20",
    "hits=0",
    "guarded(1): try",
    "guarded(1): finally",
    "guarded(1)=10",
    "guarded(-1): try",
    "guarded(-1): catch ArgumentException: negative",
    "guarded(-1): finally",
    "guarded(-1)=-1",
    "done",
];

/// `CallTarget` (tests/e2e/programs/CallTarget), exit code 44: checked
/// unprofiled by tests/e2e_calltarget.rs, then under CallTarget alone and
/// in the composed profiler (tests/e2e_composed.rs).
pub(crate) const CALL_TARGET: &[&str] = &[
    "add=5",
    "hello world from corprof",
    "caught System.InvalidOperationException: boom",
    "sum=6",
    "echo=7,seven",
    "get=42,forty-two",
    "divide=True,3,1",
    "divide=False,0,2",
    "fib=5",
    "guarded=1020,999,-2",
    "thrower=4",
    "caught System.ArgumentOutOfRangeException x",
    "describe=nothing,<(1,2)>",
    "pair=1-2",
    "caught System.InvalidOperationException: outer after inner",
    "mirror=(2,1)",
    "name=True,n3",
    "maybe=some 5,none",
    "tail=103",
    "span=3,3",
    "make=Holder(8),Holder(eight)",
];
