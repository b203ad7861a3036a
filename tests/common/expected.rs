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
