//! Blosc2 (see [`chunkwise_codec::blosc2`]): the `chunkwise-codec` crate's chunk, frame and
//! `b2nd` code, re-exported, and the reader of variable-length metalayers as attributes
//! ([`vlmeta`]).

pub use chunkwise_codec::blosc2::*;
pub mod vlmeta;
