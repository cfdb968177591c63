//! What each format looks like from outside, checked before any reader runs: the first bytes
//! of an object, or a store's name. Always built, so a build that leaves a format out
//! (cargo features) still recognises its sources and says which feature reads them.

/// The HDF5 format signature, `\x89HDF\r\n\x1a\n` (HDF5 File Format Specification, "Format
/// Signature"), at byte 0 or after a user block of 512, 1024, 2048, ... bytes.
pub const HDF5_SIGNATURE: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// Whether `prefix` starts a Blosc2 contiguous frame: a msgpack fixarray, then the magic
/// `b2frame\0` as an 8-byte fixstr (C-Blosc2 README_CFRAME_FORMAT.rst).
pub fn is_b2nd_frame(prefix: &[u8]) -> bool {
    prefix.len() >= 10
        && prefix[0] & 0xf0 == 0x90
        && prefix[1] == 0xa8
        && &prefix[2..10] == b"b2frame\0"
}

/// Offset of the first HDF5 signature in `prefix` at 0, 512, 1024, 2048, ..., if any.
pub fn hdf5_signature_offset(prefix: &[u8]) -> Option<u64> {
    let mut at = 0usize;
    loop {
        if prefix.len() < at + 8 {
            return None;
        }
        if prefix[at..at + 8] == HDF5_SIGNATURE {
            return Some(at as u64);
        }
        at = if at == 0 { 512 } else { at * 2 };
    }
}

/// Whether `prefix` (the first bytes of a source) holds an HDF5 signature.
pub fn is_hdf5(prefix: &[u8]) -> bool {
    hdf5_signature_offset(prefix).is_some()
}

/// Whether a URL or path names a Zarr store by its conventional suffix (`.zarr`, `.zarr/`),
/// ignoring a URL's query and fragment (`v3.zarr?token=...` is a store: RFC 3986 section 3.4
/// ends the path at `?` or `#`).
pub fn looks_like_zarr_store(location: &str) -> bool {
    let path = location.split(['?', '#']).next().unwrap_or(location);
    path.trim_end_matches('/').ends_with(".zarr")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        let mut frame = vec![0x9e, 0xa8];
        frame.extend_from_slice(b"b2frame\0");
        assert!(is_b2nd_frame(&frame));
        assert!(!is_b2nd_frame(&frame[..9]));
        let mut h5 = vec![0u8; 1024 + 8];
        assert_eq!(hdf5_signature_offset(&h5), None);
        h5[1024..].copy_from_slice(&HDF5_SIGNATURE);
        assert_eq!(hdf5_signature_offset(&h5), Some(1024));
        h5[512..520].copy_from_slice(&HDF5_SIGNATURE);
        assert_eq!(hdf5_signature_offset(&h5), Some(512));
        assert!(looks_like_zarr_store("https://h/x.zarr/") && !looks_like_zarr_store("x.zarr.zip"));
        // A signed store URL is still a store, not an object to probe first.
        assert!(looks_like_zarr_store("https://h/x.zarr?token=t&x=1"));
        assert!(looks_like_zarr_store("https://h/x.zarr/#frag"));
        assert!(!looks_like_zarr_store("https://h/x.b2nd?name=a.zarr"));
    }
}
