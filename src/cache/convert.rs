//! Chunks of formats whose stored chunks are not Blosc2 (HDF5, Zarr), converted after their
//! first decode into Blosc2 chunks with chunkwise's encoder, so a warm read skips both the
//! transfer and the format's filter pipeline (spec: remote cache design, "Zarr stores": "The
//! adapter converts the resulting values into a Blosc2-compressed logical chunk, which
//! enters the ordinary payload cache").
//!
//! The converted payload lives under its own stamp ([`stamp`]), which covers the source's
//! identity (location, credential fingerprint, dataset scope, size and validators), the
//! chunk geometry, the dtype and the conversion layout. It does not detect changed values
//! under unchanged metadata: sources are assumed immutable.

use crate::codec::blosc2::{decode_chunk, encode_chunk, Codec, EncodeOptions, Filter};
use crate::dtype::DType;
use crate::selection::Grid;
use bytes::Bytes;
use std::sync::Arc;

/// The conversion layout: one Blosc2 chunk per logical chunk, the decoded chunk (edge
/// chunks padded to the full chunk shape, as [`Grid`] lays them out) compressed with LZ4
/// level 5 and byte SHUFFLE, default block size. Part of [`stamp`]: changing the layout
/// changes every stamp.
pub const CONVERSION_LAYOUT: &str = "blosc2-chunk-v1;lz4:5;shuffle";

/// The payload source identity of converted chunks of one array: `identity` (the array's
/// payload identity) extended with shape, chunk shape, dtype and [`CONVERSION_LAYOUT`].
pub fn stamp(identity: &str, grid: &Grid, dtype: DType) -> Arc<str> {
    Arc::from(format!(
        "{identity}\nconverted {CONVERSION_LAYOUT} shape={:?} chunks={:?} dtype={dtype}",
        grid.shape, grid.chunks
    ))
}

/// Encodes a decoded chunk (`decoded`, elements of `itemsize` bytes) as a Blosc2 chunk:
/// compressed as [`CONVERSION_LAYOUT`] says when `compress`, else memcpyed (the chunk's bytes
/// after the 32-byte header, one copy, which the same decoder reads). `None` if the encoder
/// refuses it (then the chunk is simply not cached).
///
/// The pipeline compresses for persistent backends, where the bytes written and read back
/// cost more than LZ4 does, and not in memory: LZ4 with SHUFFLE runs at about 250 MB/s in
/// wasm, so compressing the 24 MB of a 2000x3000 float32 read took about 100 ms of a cold
/// read (and unshuffling it again every warm read) to save 14% of the entry's bytes
/// (scripts/bench-zarr-js.mjs).
pub fn encode(decoded: &[u8], itemsize: usize, compress: bool) -> Option<Bytes> {
    let opts = EncodeOptions {
        codec: Codec::Lz4,
        clevel: if compress { 5 } else { 0 },
        filter: Filter::Shuffle,
        ..Default::default()
    };
    encode_chunk(decoded, itemsize.clamp(1, 255), &opts)
        .ok()
        .map(Bytes::from)
}

/// Decodes a converted payload; `None` unless it decodes to exactly `expected` bytes (a
/// damaged entry is a miss).
pub fn decode(payload: &[u8], expected: usize) -> Option<Vec<u8>> {
    decode_chunk(payload).ok().filter(|d| d.len() == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let c = encode(&data, 4, true).unwrap();
        assert!(c.len() < data.len());
        assert_eq!(decode(&c, data.len()).unwrap(), data);
        let raw = encode(&data, 4, false).unwrap();
        assert_eq!(raw.len(), data.len() + 32);
        assert_eq!(decode(&raw, data.len()).unwrap(), data);
        assert!(decode(&c, data.len() + 1).is_none());
        assert!(decode(&c[..c.len() / 2], data.len()).is_none());
    }

    #[test]
    fn stamps_differ_by_geometry_and_dtype() {
        let g1 = Grid::new(vec![10], vec![5], vec![5]).unwrap();
        let g2 = Grid::new(vec![10], vec![2], vec![2]).unwrap();
        let f8 = DType::parse("<f8").unwrap();
        let i8 = DType::parse("<i8").unwrap();
        assert_ne!(stamp("s", &g1, f8), stamp("s", &g2, f8));
        assert_ne!(stamp("s", &g1, f8), stamp("s", &g1, i8));
        assert_ne!(stamp("s", &g1, f8), stamp("t", &g1, f8));
    }
}
