//! Converted payload: a chunk decoded from another format (a Zarr chunk, an HDF5 chunk)
//! re-encoded as one Blosc2 chunk for the [`super::PayloadCache`], so a warm read skips both
//! the transfer and the source format's decoding (spec: remote cache design, "Zarr stores":
//! "converts the resulting values into a Blosc2-compressed logical chunk").

use crate::codec::blosc2::{self, Codec, EncodeOptions, Filter};
use bytes::Bytes;

/// Name of the conversion layout, part of every converted entry's cache stamp: LZ4 level 5
/// with byte shuffle (C-Blosc2's defaults; fast to decode, which is what a warm read needs).
pub const CONVERSION_LAYOUT: &str = "blosc2-lz4-5-shuffle";

/// Encodes a decoded chunk (`decoded`, elements of `itemsize` bytes) as one Blosc2 chunk in
/// the [`CONVERSION_LAYOUT`]. `None` when the chunk cannot be encoded (larger than a Blosc2
/// chunk may be, about 2 GiB): the caller then simply does not cache it.
pub fn encode_converted(decoded: &[u8], itemsize: usize) -> Option<Bytes> {
    let opts = EncodeOptions {
        codec: Codec::Lz4,
        clevel: 5,
        filter: Filter::Shuffle,
        ..Default::default()
    };
    // Blosc2 type sizes are 1..=255; larger items are shuffled as bytes.
    let typesize = if (1..=255).contains(&itemsize) {
        itemsize
    } else {
        1
    };
    blosc2::encode_chunk(decoded, typesize, &opts)
        .ok()
        .map(Bytes::from)
}

/// Decodes a converted entry back; `None` when it is corrupt or does not hold exactly
/// `expected_len` bytes, which callers treat as a cache miss.
pub fn decode_converted(stored: &[u8], expected_len: usize) -> Option<Vec<u8>> {
    let h = blosc2::ChunkHeader::parse(stored).ok()?;
    if h.nbytes != expected_len {
        return None;
    }
    blosc2::decode_chunk(stored)
        .ok()
        .filter(|d| d.len() == expected_len)
}

/// A non-reversible fingerprint of request headers (credentials such as `Authorization`),
/// so entries read with different credentials never share a cache stamp: the first 16 hex
/// digits of SHA-256 over the headers sorted by lower-cased name. Empty headers give `""`.
pub fn credential_fingerprint(headers: &[(String, String)]) -> String {
    use sha2::{Digest, Sha256};
    if headers.is_empty() {
        return String::new();
    }
    let mut h: Vec<(String, &str)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str()))
        .collect();
    h.sort();
    let mut sha = Sha256::new();
    for (k, v) in h {
        sha.update(k.as_bytes());
        sha.update([0]);
        sha.update(v.as_bytes());
        sha.update([0]);
    }
    sha.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corrupt_entries_miss() {
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let enc = encode_converted(&data, 4).unwrap();
        assert!(enc.len() < data.len());
        assert_eq!(decode_converted(&enc, data.len()).unwrap(), data);
        assert!(decode_converted(&enc, data.len() + 4).is_none());
        let mut bad = enc.to_vec();
        bad.truncate(bad.len() / 2);
        assert!(decode_converted(&bad, data.len()).is_none());
        assert!(decode_converted(b"junk", 4).is_none());
    }

    #[test]
    fn fingerprints_differ_by_credentials_and_hide_them() {
        let a = credential_fingerprint(&[("Authorization".into(), "Bearer one".into())]);
        let b = credential_fingerprint(&[("authorization".into(), "Bearer two".into())]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 16);
        assert!(!a.contains("one"));
        assert_eq!(credential_fingerprint(&[]), "");
    }
}
