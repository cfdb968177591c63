//! zlib-format (RFC 1950) inflate into a caller's buffer, for Blosc2 ZLIB streams (C-Blosc2's
//! zlib codec calls zlib's `uncompress`) and HDF5's deflate filter (`H5Z_filter_deflate`).
//!
//! The inflater differs by target, each the faster one measured side by side
//! (`scripts/codec-candidates`, decoders interleaved in each run, two runs on a shared machine,
//! on the streams of real C-Blosc2 ZLIB+SHUFFLE chunks and a 4 MiB whole-chunk zlib stream):
//! in wasm32 zlib-rs 0.6 decodes 0.96-2.1x as fast as miniz_oxide 0.8 on the Blosc2 streams
//! and 1.2-2.3x on the whole-chunk stream (a gzip/zlib Zarr or HDF5 chunk); natively zlib-rs
//! is 0.55-0.92x of miniz_oxide on the Blosc2 streams (0.96-1.2x on the whole chunk), so
//! native builds keep miniz_oxide.

/// Inflates zlib streams into buffers, keeping the inflater's state between streams.
#[derive(Default)]
pub struct Inflater {
    #[cfg(not(target_arch = "wasm32"))]
    state: Option<Box<miniz_oxide::inflate::core::DecompressorOxide>>,
}

/// Deflate's largest expansion: a 258-byte match costs at least 2 bits, so one input byte
/// yields at most 1032 output bytes (zlib's `inflate` docs; the bound `compressBound` mirrors).
/// The bound of every inflate of unknown decoded size (here, and Zarr's gzip and zlib codecs).
pub const MAX_EXPANSION: usize = 1032;

impl Inflater {
    /// Inflates one zlib stream from `src` into `out`; returns the bytes written. Bytes after
    /// the stream's end are ignored. Memory: the inflater's fixed state (about 10 KiB; in
    /// wasm32 zlib-rs' state and 32 KiB window per call); the output is never grown.
    /// Errors: the reason as text (corrupt or truncated stream, output longer than `out`).
    pub fn inflate_zlib(&mut self, src: &[u8], out: &mut [u8]) -> Result<usize, String> {
        #[cfg(target_arch = "wasm32")]
        {
            let (done, rc) = zlib_rs::decompress_slice(out, src, zlib_rs::InflateConfig::default());
            match rc {
                zlib_rs::ReturnCode::Ok => Ok(done.len()),
                zlib_rs::ReturnCode::BufError => Err("zlib: output larger than expected".into()),
                other => Err(format!("zlib: {other:?}")),
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            use miniz_oxide::inflate::core::{decompress, inflate_flags};
            use miniz_oxide::inflate::TINFLStatus;
            let st = self.state.get_or_insert_with(Box::default);
            st.init();
            let flags = inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER
                | inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
            let (status, _, written) = decompress(st, src, out, 0, flags);
            match status {
                TINFLStatus::Done => Ok(written),
                TINFLStatus::HasMoreOutput => Err("zlib: output larger than expected".into()),
                other => Err(format!("zlib: {other:?}")),
            }
        }
    }
}

/// Inflates one zlib stream of unknown decoded size, at most `limit` bytes, into a new vector.
/// Allocates at most `min(limit, 1032 x src.len())` bytes (deflate's largest expansion), so
/// a small stream cannot make a large `limit` allocate.
/// Errors: as [`Inflater::inflate_zlib`]; more than `limit` bytes is an error.
pub fn inflate_zlib_to_vec(src: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    #[cfg(target_arch = "wasm32")]
    {
        let cap = limit.min(src.len().saturating_mul(MAX_EXPANSION).saturating_add(64));
        let mut out = Vec::new();
        out.try_reserve_exact(cap)
            .map_err(|_| format!("zlib: cannot allocate {cap} bytes"))?;
        out.resize(cap, 0);
        let n = Inflater::default().inflate_zlib(src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        // miniz_oxide grows its output as it decodes, never past `limit`.
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(src, limit)
            .map_err(|e| format!("zlib: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflates_into_the_buffer_and_refuses_more() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i % 97) as u8).collect();
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&data, 6);
        let mut inf = Inflater::default();
        let mut out = vec![0u8; data.len()];
        assert_eq!(inf.inflate_zlib(&z, &mut out), Ok(data.len()));
        assert_eq!(out, data);
        let mut short = vec![0u8; data.len() - 1];
        assert!(inf.inflate_zlib(&z, &mut short).is_err());
        assert!(inf.inflate_zlib(&z[..z.len() / 2], &mut out).is_err());
        assert!(inf.inflate_zlib(b"not zlib", &mut out).is_err());
        assert_eq!(inf.inflate_zlib(&z, &mut out), Ok(data.len()));
        assert_eq!(inflate_zlib_to_vec(&z, data.len()), Ok(data.clone()));
        assert!(inflate_zlib_to_vec(&z, data.len() - 1).is_err());
    }
}
