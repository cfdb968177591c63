//! Blosc2: chunks (32-byte header, blocks, split streams, filters, codecs, special values),
//! Blosc1-format chunks (16-byte header), contiguous frames and the `b2nd` metalayer.
//! Sources: the Blosc2 chunk and frame format documents (README_CHUNK_FORMAT.rst,
//! README_CFRAME_FORMAT.rst in C-Blosc2) and `blosc2.c`.

pub mod blosclz;
mod decode;
mod encode;
mod error;
pub mod filters;
pub mod header;
pub mod lz4;
pub use decode::{block_dependencies, block_spans, decode_block, decode_chunk, decode_chunk_into};
pub use encode::{encode_chunk, Codec, EncodeOptions, Filter, SplitMode};
pub use error::CodecError;
pub use header::{ChunkHeader, SpecialValue};
#[cfg(test)]
mod tests;
