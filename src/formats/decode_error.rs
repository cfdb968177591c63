//! Why one stored chunk did not decode, with the failing codec's own error kept as the
//! `source` ([`std::error::Error::source`]) where that codec has a typed one.

use crate::codec::blosc2::CodecError;
#[cfg(feature = "hdf5")]
use crate::formats::hdf5::filters::FilterError;

/// The cause of a [`crate::formats::FormatError::Chunk`] (code `DECODE`).
///
/// The Blosc2 codec and the HDF5 plugin filters keep their variant ([`CodecError`],
/// [`FilterError`]), reachable by `source()` and `downcast_ref`; codecs that only report text
/// (HDF5 deflate and fletcher32 through `crate::codec::inflate` and `hdf5-reader`, `zarrs`'
/// own codecs) keep that text beside the codec's name. The `Display` text is the one the chunk error shows
/// after `chunk N: `.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkDecodeError {
    /// A Blosc2 or Blosc1 chunk of the format itself (a b2nd chunk or block) failed to decode.
    #[error("{0}")]
    Blosc2(#[source] CodecError),
    /// The Blosc chunk of a Zarr `blosc` codec (numcodecs Blosc, v2 or v3) failed to decode.
    #[error("blosc: {0}")]
    ZarrBlosc(#[source] CodecError),
    /// An HDF5 plugin filter (szip, nbit, scaleoffset, zstd, lz4, bitshuffle, lzf, Blosc,
    /// Blosc2) refused the chunk.
    #[cfg(feature = "hdf5")]
    #[error("{0}")]
    Hdf5Filter(#[source] FilterError),
    /// A codec that reports only text failed (HDF5 `deflate` through `crate::codec::inflate`,
    /// `fletcher32` through `hdf5-reader`).
    #[error("{codec}: {detail}")]
    Codec {
        /// The codec or filter name.
        codec: &'static str,
        /// Its message.
        detail: String,
    },
    /// An embedded checksum does not match the data (Zarr `crc32c`, zarrs'
    /// `CodecError::InvalidChecksum`).
    #[error("{codec} checksum mismatch ({detail})")]
    Checksum {
        /// The checksum codec.
        codec: &'static str,
        /// What the codec said.
        detail: String,
    },
    /// The codecs ran but produced the wrong number of bytes for the chunk.
    #[error("decodes to {actual} bytes, the chunk holds {expected}")]
    Size {
        /// Bytes decoded.
        actual: u64,
        /// Bytes of one decoded chunk of the array.
        expected: u64,
    },
    /// The stored chunk does not fit the array's layout (a Blosc2 header whose size is not
    /// the frame's chunk size, a block outside its chunk, a chunk outside the grid).
    #[error("{0}")]
    Layout(String),
    /// A `zarrs` codec error without a typed counterpart here (its text).
    #[error("{0}")]
    Zarrs(String),
}
