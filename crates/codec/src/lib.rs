//! The decoders on chunkwise's hot path, in a crate of their own: Blosc2 chunks and frames
//! ([`blosc2`]: chunk decoding and encoding, LZ4, BloscLZ, the filters and their SIMD
//! kernels, the frame and `b2nd` metalayer parsers) and the Zstandard ([`zstd`], C zstd) and
//! zlib ([`inflate`]) decoders every format shares, and the byte swap of big-endian results
//! ([`swap`]).
//!
//! Separate so that a cargo profile can build it at opt-level 3 while the rest of chunkwise
//! (metadata parsing, the read pipeline's plumbing, the wasm bindings) is optimised for size
//! (`[profile.release.package.chunkwise-codec]` in the workspace's Cargo.toml): the decode
//! loops run 3-5x slower at opt-level "s" or "z" (Blosc2 LZ4+SHUFFLE, wasm32 in Node: 998 MB/s
//! at 3, 295 at "s", 194 at "z"), and they are a small part of the module. chunkwise
//! re-exports [`blosc2`] as `chunkwise::codec::blosc2` (and uses [`zstd`] and [`inflate`]
//! as its `codec::zstd` and `codec::inflate`); it keeps the vlmeta reader
//! (`chunkwise::codec::blosc2::vlmeta`), which maps msgpack onto its attribute types. Depends
//! on no other part of chunkwise.

pub mod blosc2;
pub mod inflate;
pub mod swap;
pub mod zstd;
