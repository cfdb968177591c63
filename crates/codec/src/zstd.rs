//! Zstandard frames (RFC 8878): the frame-header facts the callers bound their buffers with, and
//! one-shot decoding through C zstd 1.5.7 (`zstd-safe` over `zstd-sys`, built from source by the
//! target's C compiler: gcc natively, clang for wasm32 with `zstd-sys`'s libc shim, whose
//! `malloc` is Rust's allocator). Used by Blosc2 ZSTD streams, Zarr's `zstd` codec and HDF5's
//! zstd filter (32015).
//!
//! Why C zstd: measured side by side on the streams of real C-Blosc2 ZSTD+SHUFFLE chunks
//! (`scripts/codec-candidates`, decoders interleaved in each run; two runs on a shared
//! machine), C zstd decodes 4.5-9.6x as fast as the pure-Rust `ruzstd` (0.8.3 and 0.9.1, the
//! maintained pure-Rust decoders) on float32 streams and 20-60x on int64 ones, natively and in
//! wasm32 alike; `ruzstd` stays only as the tests' encoder and the Blosc2 encoder's ZSTD (feature
//! `zlib-zstd-encoder`).
//!
//! Memory: the decoding context is a fixed-size allocation (`ZSTD_createDCtx`, about 160 KiB
//! with its literal buffer), and one-shot decoding (`ZSTD_decompressDCtx`) writes only into
//! the caller's buffer: a frame that would produce more is an error (`dstSize_tooSmall`),
//! whatever size or window its header declares. [`check_window`] still refuses frames whose
//! declared window is far beyond the chunk, as a consistency check independent of the
//! decoder's internals.

/// The four bytes every Zstandard frame starts with (RFC 8878 §3.1.1), little-endian 0xFD2FB528.
const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The window size (bytes) a Zstandard frame declares (RFC 8878, section 3.1.1.1): the
/// Window_Descriptor, or the Frame_Content_Size of a single-segment frame. `None` if the frame
/// header is cut short or the magic number is wrong.
pub fn zstd_window(src: &[u8]) -> Option<u64> {
    if src.get(..4)? != MAGIC {
        return None;
    }
    let fhd = *src.get(4)?;
    let single = fhd & 0x20 != 0;
    let mut pos = 5;
    if !single {
        let wd = *src.get(pos)? as u64;
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + base / 8 * (wd & 7));
    }
    pos += [0, 1, 2, 4][(fhd & 3) as usize];
    let fcs = match fhd >> 6 {
        0 => *src.get(pos)? as u64,
        1 => u16::from_le_bytes(src.get(pos..pos + 2)?.try_into().ok()?) as u64 + 256,
        2 => u32::from_le_bytes(src.get(pos..pos + 4)?.try_into().ok()?) as u64,
        _ => u64::from_le_bytes(src.get(pos..pos + 8)?.try_into().ok()?),
    };
    Some(fcs)
}

/// The content size a zstd frame header declares (RFC 8878 §3.1.1.1.4), `None` when the
/// frame does not carry one (streaming writers) or the header is not a zstd frame's.
pub fn zstd_content_size(src: &[u8]) -> Option<u64> {
    if src.get(..4)? != MAGIC {
        return None;
    }
    let fhd = *src.get(4)?;
    let single = fhd & 0x20 != 0;
    let pos = 5 + usize::from(!single) + [0, 1, 2, 4][(fhd & 3) as usize];
    match (fhd >> 6, single) {
        (0, false) => None,
        (0, true) => Some(*src.get(pos)? as u64),
        (1, _) => Some(u16::from_le_bytes(src.get(pos..pos + 2)?.try_into().ok()?) as u64 + 256),
        (2, _) => Some(u32::from_le_bytes(src.get(pos..pos + 4)?.try_into().ok()?) as u64),
        _ => Some(u64::from_le_bytes(src.get(pos..pos + 8)?.try_into().ok()?)),
    }
}

/// Refuses a frame whose declared window (or single-segment content size) exceeds
/// `max(2 x next_pow2(out_len), floor)` bytes: no stream of `out_len` bytes needs it.
/// `floor` is the smallest bound whatever the chunk (a streaming writer's default window).
/// Errors: the reason, as text, when the header is not a zstd frame's or the window is refused.
pub fn check_window(src: &[u8], out_len: usize, floor: usize) -> Result<(), String> {
    let window = zstd_window(src).ok_or_else(|| "zstd frame header invalid".to_string())?;
    let limit = (out_len.checked_next_power_of_two().unwrap_or(usize::MAX))
        .saturating_mul(2)
        .max(floor) as u64;
    if window > limit {
        return Err(format!(
            "zstd window {window} bytes for a {out_len}-byte stream"
        ));
    }
    Ok(())
}

/// A reusable C zstd decoding context (`ZSTD_DCtx`), created on first use.
#[derive(Default)]
pub struct Decoder {
    dctx: Option<zstd_safe::DCtx<'static>>,
}

/// A Zstandard dictionary digested for decoding (`ZSTD_createDDict`: a copy of its bytes and
/// its entropy tables), made once and used for many frames, as C-Blosc2 does per chunk.
/// A raw-content dictionary and a trained one (magic 0xEC30A437, RFC 8878 §5) both work.
pub struct Dictionary(zstd_safe::DDict<'static>);

impl Dictionary {
    /// Digests `bytes`. Errors: the allocation failed (zstd's libc shim in wasm32 allocates
    /// through Rust's allocator).
    pub fn new(bytes: &[u8]) -> Result<Dictionary, String> {
        zstd_safe::DDict::try_create(bytes)
            .map(Dictionary)
            .ok_or_else(|| "zstd: dictionary allocation failed".to_string())
    }
}

impl Decoder {
    /// Decodes the zstd frames of `src` (one or more, back to back, as `ZSTD_decompressDCtx`
    /// takes them) into `out`; returns the bytes written. The window is checked first
    /// ([`check_window`], floor 1 MiB unless `floor` says more).
    /// Errors: the reason as text (window refused, context allocation failed, or C zstd's
    /// error name: corrupted data, output larger than `out`, ...).
    pub fn decompress(
        &mut self,
        src: &[u8],
        out: &mut [u8],
        floor: usize,
    ) -> Result<usize, String> {
        self.decompress_with(src, out, floor, None)
    }

    /// [`Decoder::decompress`] with a dictionary (`ZSTD_decompress_usingDDict`) when `dict` is
    /// given. A frame that needs a dictionary fails without one, and a frame naming another
    /// dictionary's ID fails with this one (C zstd's `dictionary_wrong`).
    pub fn decompress_with(
        &mut self,
        src: &[u8],
        out: &mut [u8],
        floor: usize,
        dict: Option<&Dictionary>,
    ) -> Result<usize, String> {
        check_window(src, out.len(), floor.max(1 << 20))?;
        let dctx = match &mut self.dctx {
            Some(d) => d,
            slot => slot.insert(
                zstd_safe::DCtx::try_create()
                    .ok_or_else(|| "zstd: decoding context allocation failed".to_string())?,
            ),
        };
        match dict {
            None => dctx.decompress(out, src),
            Some(d) => dctx.decompress_using_ddict(out, src, &d.0),
        }
        .map_err(|code| format!("zstd: {}", zstd_safe::get_error_name(code)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_content_size_from_frame_header() {
        // Frame headers libzstd 1.5 (python-zstandard 0.25) wrote for 7, 300 and 70,000
        // bytes: single segment with 1-, 2- (+256) and 4-byte content sizes.
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        assert_eq!(zstd_content_size(&hex("28b52ffd2007390000030303")), Some(7));
        assert_eq!(
            zstd_content_size(&hex("28b52ffd602c004d00001003")),
            Some(300)
        );
        assert_eq!(
            zstd_content_size(&hex("28b52ffda070110100550000")),
            Some(70_000)
        );
        // No content size (a streaming writer's frame: window descriptor, flag 0).
        assert_eq!(zstd_content_size(&hex("28b52ffd0058")), None);
        assert_eq!(zstd_content_size(b"not zstd"), None);
    }

    #[test]
    fn frames_declaring_huge_sizes_are_refused_before_decoding() {
        let mut dec = Decoder::default();
        let mut out = vec![0u8; 4096];
        // A 2 GiB window (Window_Descriptor exponent 21).
        let window = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 21 << 3, 0, 0, 0];
        assert_eq!(zstd_window(&window), Some(1 << 31));
        let err = dec.decompress(&window, &mut out, 0).unwrap_err();
        assert!(err.contains("window 2147483648"), "{err}");
        // A single-segment frame declaring 2^40 bytes of content (8-byte Frame_Content_Size).
        let mut content = vec![0x28, 0xB5, 0x2F, 0xFD, 0xE0];
        content.extend_from_slice(&(1u64 << 40).to_le_bytes());
        content.extend_from_slice(&[1, 0, 0]);
        assert_eq!(zstd_content_size(&content), Some(1 << 40));
        let err = dec.decompress(&content, &mut out, 0).unwrap_err();
        assert!(err.contains("window 1099511627776"), "{err}");
        // A window the bound allows, but content longer than the buffer: C zstd stops at
        // the buffer's end with an error, it does not grow anything.
        let data = vec![7u8; 100_000];
        let frame = ruzstd::encoding::compress_to_vec(
            &data[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let err = dec.decompress(&frame, &mut out, 0).unwrap_err();
        assert!(err.starts_with("zstd: "), "{err}");
        let mut out = vec![0u8; 100_000];
        assert_eq!(dec.decompress(&frame, &mut out, 0), Ok(100_000));
        assert_eq!(out, data);
    }

    #[test]
    fn damaged_frames_are_errors() {
        let data: Vec<u8> = (0..50_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let frame = ruzstd::encoding::compress_to_vec(
            &data[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let mut dec = Decoder::default();
        let mut out = vec![0u8; data.len()];
        for cut in [6, frame.len() / 2, frame.len() - 1] {
            assert!(
                dec.decompress(&frame[..cut], &mut out, 0).is_err(),
                "cut {cut}"
            );
        }
        let mut bad = frame.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0xFF;
        // Either refused, or (a literal byte flipped) decoded to something else: never a panic.
        let _ = dec.decompress(&bad, &mut out, 0);
        assert_eq!(dec.decompress(&frame, &mut out, 0), Ok(data.len()));
        assert_eq!(out, data);
    }
}
