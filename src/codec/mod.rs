//! Codecs: Blosc2 in Rust (decode everywhere, including wasm32; encode for the payload
//! cache's converted chunks), with the Zstandard and zlib decoders it shares with the other
//! formats. They live in the workspace crate `chunkwise-codec` (crates/codec), built at
//! opt-level 3 while this crate is optimised for size, and are re-exported here under their
//! old paths; only the vlmeta reader ([`blosc2::vlmeta`]), which builds this crate's
//! attributes, is here.

pub mod blosc2;
// inflate is used by the HDF5 reader (and its bound by the Zarr one), zstd by it and the
// Zarr reader: unused without them.
#[cfg_attr(not(any(feature = "hdf5", feature = "zarr")), allow(unused_imports))]
pub(crate) use chunkwise_codec::inflate;
#[cfg_attr(not(any(feature = "hdf5", feature = "zarr")), allow(unused_imports))]
pub(crate) use chunkwise_codec::zstd;
