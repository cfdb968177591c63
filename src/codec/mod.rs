//! Codecs: Blosc2 in Rust (decode everywhere, including wasm32; encode for the payload
//! cache's converted chunks), with the Zstandard and zlib decoders it shares with the other
//! formats.

pub mod blosc2;
pub(crate) mod inflate;
pub(crate) mod zstd;
