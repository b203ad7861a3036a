//! Profiles and their formats: the stack trie ([`StackTree`]) that the
//! sampler and the call-tree example fill, and the writers that stream it
//! out: folded stacks, flame-graph SVG, pprof (`profile.proto`, gzipped) and
//! speedscope JSON.
//!
//! The module knows nothing of the runtime: it stands beside `cil`, below
//! the capability modules that use it (`sampling`), and the writers read
//! only a [`StackTree`] and its [`Frames`].

mod tree;

pub use tree::{Children, FrameId, Frames, NodeId, StackTree};
