//! Blosc2: chunks (32-byte header, blocks, split streams, filters, codecs, special values),
//! Blosc1-format chunks (16-byte header), contiguous frames and the `b2nd` metalayer.
//! Sources: the Blosc2 chunk and frame format documents (README_CHUNK_FORMAT.rst,
//! README_CFRAME_FORMAT.rst in C-Blosc2) and `blosc2.c`.
//!
//! Chunk codec, Rust (wasm32 and native), ZSTD through C zstd ([`crate::zstd`]):
//! - [`decode_chunk`] / [`decode_chunk_into`]: a whole chunk (codecs BloscLZ, LZ4/LZ4HC, Zlib,
//!   Zstd; filters SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC, BYTEDELTA and legacy BYTEDELTA
//!   (34); split streams; memcpyed chunks and blocks; run-length streams; special-value
//!   chunks; Blosc1 headers).
//! - Block-level remote reads: fetch [`ChunkHeader::prefix_len`] bytes (parse the first 32 to
//!   learn it), call [`block_spans`], fetch the spans of the wanted blocks plus those
//!   [`block_dependencies`] lists (block 0 under DELTA), and [`decode_block`] each (or
//!   [`BlockDecoder::decode_block`], which keeps its buffers and codec state between blocks).
//! - [`GroupDecoder`]: a whole chunk a group of blocks at a time, each group handed on while
//!   in the CPU's cache (into a reader's result, out of wasm memory).
//! - [`encode_chunk`]: Blosc2 chunks C-Blosc2 reads back.

pub mod b2nd;
pub mod blosclz;
mod decode;
mod encode;
mod error;
pub mod filters;
pub mod frame;
mod groups;
pub mod header;
pub mod lz4;
mod msgpack;
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
mod simd;
#[cfg(target_arch = "x86_64")]
mod simd_avx2;
pub use decode::{
    block_dependencies, block_spans, decode_block, decode_chunk, decode_chunk_into, BlockDecoder,
};
pub use encode::{encode_chunk, Codec, EncodeOptions, Filter, SplitMode};
pub use error::CodecError;
pub use groups::{sized, ChunkBytes, GroupDecoder, GroupTarget, BLOCK_MAX, BLOCK_MIN, GROUP_BYTES};
pub use header::{ChunkHeader, SpecialValue};
#[cfg(test)]
mod tests;
