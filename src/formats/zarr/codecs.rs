//! Decoding one stored Zarr chunk through its codec [`Chain`] into C-ordered element bytes.
//!
//! Decoding runs the chain backwards (Zarr v3 core specification, "Codecs": bytes-to-bytes
//! codecs in reverse, then the array-to-bytes codec, then array-to-array codecs in reverse).
//! Every stage checks its output size against what the chunk shape and dtype require, so a
//! chunk shorter (or longer) than its codecs say is an error, never wrong data, and no stage
//! allocates more than the decoded chunk plus a CRC trailer.

use super::meta::{ArrayBytes, ArrayCodec, BytesCodec, Chain};
use crate::codec::blosc2;
use crate::dtype::{ByteOrder, DType, Kind};

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `data`, as the v3 `crc32c`
/// codec stores it (RFC 3720 appendix B.4).
pub fn crc32c(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    let mut c = !0u32;
    for &b in data {
        c = t[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Strips and checks a trailing CRC-32C.
pub fn strip_crc32c(data: &[u8]) -> Result<&[u8], String> {
    if data.len() < 4 {
        return Err(format!("{} bytes cannot hold a crc32c", data.len()));
    }
    let (body, tail) = data.split_at(data.len() - 4);
    let want = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    let got = crc32c(body);
    if want != got {
        return Err(format!(
            "crc32c mismatch: stored {want:#010x}, computed {got:#010x}"
        ));
    }
    Ok(body)
}

fn gunzip(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    // RFC 1952 section 2.3: fixed 10-byte header, then optional fields by FLG bits.
    let cut = || "gzip header cut short".to_string();
    if data.len() < 18 || data[0] != 0x1f || data[1] != 0x8b || data[2] != 8 {
        return Err("not a gzip member".into());
    }
    let flg = data[3];
    let mut p = 10usize;
    if flg & 4 != 0 {
        let n = u16::from_le_bytes([
            *data.get(p).ok_or_else(cut)?,
            *data.get(p + 1).ok_or_else(cut)?,
        ]);
        p += 2 + n as usize;
    }
    for bit in [8u8, 16] {
        if flg & bit != 0 {
            let z = data
                .get(p..)
                .ok_or_else(cut)?
                .iter()
                .position(|&b| b == 0)
                .ok_or_else(cut)?;
            p += z + 1;
        }
    }
    if flg & 2 != 0 {
        p += 2;
    }
    let body = data.get(p..).ok_or_else(cut)?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(body, limit).map_err(|e| {
        format!(
            "gzip: deflate stream invalid or longer than {limit} bytes ({:?})",
            e.status
        )
    })
}

fn zstd(data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    // ruzstd reserves the declared window before decoding: refuse windows far beyond the chunk.
    let window = blosc2::zstd_window(data).ok_or("zstd frame header invalid")?;
    let bound = (limit.next_power_of_two() * 2).max(1 << 20) as u64;
    if window > bound {
        return Err(format!(
            "zstd window {window} bytes for a {limit}-byte chunk"
        ));
    }
    let mut out = vec![0u8; limit];
    let mut dec = ruzstd::decoding::FrameDecoder::new();
    let n = dec
        .decode_all(data, &mut out)
        .map_err(|e| format!("zstd: {e}"))?;
    out.truncate(n);
    Ok(out)
}

fn decode_bytes(codec: &BytesCodec, data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    match codec {
        BytesCodec::Crc32c => Ok(strip_crc32c(data)?.to_vec()),
        BytesCodec::Blosc => {
            let h = blosc2::ChunkHeader::parse(data).map_err(|e| format!("blosc: {e}"))?;
            if h.nbytes > limit {
                return Err(format!(
                    "blosc chunk holds {} bytes, at most {limit} expected",
                    h.nbytes
                ));
            }
            blosc2::decode_chunk(data).map_err(|e| format!("blosc: {e}"))
        }
        BytesCodec::Zstd => zstd(data, limit),
        BytesCodec::Gzip => gunzip(data, limit),
        BytesCodec::Zlib => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, limit)
            .map_err(|e| {
                format!(
                    "zlib: stream invalid or longer than {limit} bytes ({:?})",
                    e.status
                )
            }),
        BytesCodec::Lz4 => {
            // numcodecs LZ4: u32 little-endian decoded size, then one LZ4 block.
            let n = data
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or("lz4 header cut short")?;
            if n > limit {
                return Err(format!(
                    "lz4 chunk holds {n} bytes, at most {limit} expected"
                ));
            }
            let mut out = vec![0u8; n];
            match blosc2::lz4::decompress(&data[4..], &mut out) {
                Some(k) if k == n => Ok(out),
                _ => Err("lz4 block invalid".into()),
            }
        }
    }
}

/// Undoes numcodecs `Delta` in place: a running sum in the element type (integers wrap).
fn undelta(dtype: &DType, data: &mut [u8]) {
    let n = dtype.itemsize;
    let be = dtype.order == ByteOrder::Big;
    macro_rules! run {
        ($t:ty, $add:expr) => {{
            let get = |b: &[u8]| -> $t {
                let a: [u8; std::mem::size_of::<$t>()] = b.try_into().expect("item size");
                if be {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            };
            let mut acc: Option<$t> = None;
            for c in data.chunks_exact_mut(n) {
                let v = get(c);
                let s = match acc {
                    None => v,
                    Some(a) => $add(a, v),
                };
                acc = Some(s);
                c.copy_from_slice(&if be { s.to_be_bytes() } else { s.to_le_bytes() });
            }
        }};
    }
    match (dtype.kind, n) {
        (Kind::Int | Kind::UInt | Kind::Bool, 1) => run!(u8, u8::wrapping_add),
        (Kind::Int | Kind::UInt, 2) => run!(u16, u16::wrapping_add),
        (Kind::Int | Kind::UInt, 4) => run!(u32, u32::wrapping_add),
        (Kind::Int | Kind::UInt, 8) => run!(u64, u64::wrapping_add),
        (Kind::Float, 4) => run!(f32, |a: f32, b: f32| a + b),
        (Kind::Float, 8) => run!(f64, |a: f64, b: f64| a + b),
        // Rejected when the metadata is parsed (float16, complex).
        _ => {}
    }
}

/// Rearranges `enc` (elements of `itemsize` bytes in C order over the encoded shape, whose
/// axis `i` is decoded axis `order[i]`) into C order over `shape`.
pub fn untranspose(enc: &[u8], shape: &[u64], order: &[usize], itemsize: usize) -> Vec<u8> {
    let nd = shape.len();
    let mut dstride = vec![1usize; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        dstride[d] = dstride[d + 1] * shape[d + 1] as usize;
    }
    let eshape: Vec<usize> = order.iter().map(|&a| shape[a] as usize).collect();
    let estride_in_dec: Vec<usize> = order.iter().map(|&a| dstride[a]).collect();
    let mut out = vec![0u8; enc.len()];
    let mut idx = vec![0usize; nd];
    let mut off = 0usize;
    for item in enc.chunks_exact(itemsize) {
        out[off * itemsize..(off + 1) * itemsize].copy_from_slice(item);
        // Odometer over the encoded shape, tracking the decoded offset.
        for d in (0..nd).rev() {
            idx[d] += 1;
            off += estride_in_dec[d];
            if idx[d] < eshape[d] {
                break;
            }
            off -= estride_in_dec[d] * idx[d];
            idx[d] = 0;
        }
    }
    out
}

/// Decodes one stored chunk (`stored`) of `chunk_shape` elements through `chain` (which must
/// not be sharding) into C-ordered bytes of `dtype`.
///
/// Peak memory: the stored bytes plus at most two buffers of the decoded chunk size (plus 4
/// bytes per CRC).
///
/// # Errors
/// A message saying which stage failed: corrupt compressed data, CRC mismatch, or a decoded
/// size other than `product(chunk_shape) * itemsize`.
pub fn decode_chunk(
    chain: &Chain,
    stored: &[u8],
    chunk_shape: &[u64],
    dtype: &DType,
) -> Result<Vec<u8>, String> {
    let items: u64 = chunk_shape.iter().product();
    let want = items as usize * dtype.itemsize;
    let crcs = chain
        .bytes
        .iter()
        .filter(|c| **c == BytesCodec::Crc32c)
        .count();
    let limit = want + 4 * crcs;
    let mut buf: Option<Vec<u8>> = None;
    for codec in chain.bytes.iter().rev() {
        let input = buf.as_deref().unwrap_or(stored);
        buf = Some(decode_bytes(codec, input, limit)?);
    }
    let mut data = buf.unwrap_or_else(|| stored.to_vec());
    if !matches!(chain.to_bytes, ArrayBytes::Bytes) {
        return Err("nested sharding".into());
    }
    if data.len() != want {
        return Err(format!(
            "decoded {} bytes, the chunk shape {chunk_shape:?} of {dtype} needs {want}",
            data.len()
        ));
    }
    for codec in chain.array.iter().rev() {
        match codec {
            ArrayCodec::Delta => undelta(dtype, &mut data),
            ArrayCodec::Transpose(order) => {
                data = untranspose(&data, chunk_shape, order, dtype.itemsize)
            }
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_value() {
        // RFC 3720 B.4 / the common check value of "123456789".
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let mut v = b"abc".to_vec();
        v.extend(crc32c(b"abc").to_le_bytes());
        assert_eq!(strip_crc32c(&v).unwrap(), b"abc");
        v[0] ^= 1;
        assert!(strip_crc32c(&v).is_err());
    }

    #[test]
    fn untranspose_f_order() {
        // A 2x3 array stored in F order: columns first.
        let f: Vec<u8> = vec![0, 3, 1, 4, 2, 5];
        assert_eq!(untranspose(&f, &[2, 3], &[1, 0], 1), vec![0, 1, 2, 3, 4, 5]);
        // 3-d permutation (2, 0, 1): encoded shape (4, 2, 3).
        let shape = [2u64, 3, 4];
        let dec: Vec<u8> = (0..24).collect();
        let mut enc = Vec::new();
        for k in 0..4 {
            for i in 0..2 {
                for j in 0..3 {
                    enc.push(dec[i * 12 + j * 4 + k]);
                }
            }
        }
        assert_eq!(untranspose(&enc, &shape, &[2, 0, 1], 1), dec);
    }

    #[test]
    fn short_and_corrupt_chunks_are_errors() {
        let dt = DType::parse("<i4").unwrap();
        let raw = Chain {
            array: vec![],
            to_bytes: ArrayBytes::Bytes,
            bytes: vec![],
        };
        assert!(decode_chunk(&raw, &[0u8; 7], &[2], &dt)
            .unwrap_err()
            .contains("needs 8"));
        for codec in [
            BytesCodec::Blosc,
            BytesCodec::Zstd,
            BytesCodec::Gzip,
            BytesCodec::Zlib,
            BytesCodec::Lz4,
            BytesCodec::Crc32c,
        ] {
            let chain = Chain {
                array: vec![],
                to_bytes: ArrayBytes::Bytes,
                bytes: vec![codec.clone()],
            };
            for junk in [
                &[][..],
                &[1, 2, 3][..],
                &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8][..],
                &[255; 40][..],
            ] {
                assert!(
                    decode_chunk(&chain, junk, &[2], &dt).is_err(),
                    "{codec:?} {junk:?}"
                );
            }
        }
        let delta = Chain {
            array: vec![ArrayCodec::Delta],
            to_bytes: ArrayBytes::Bytes,
            bytes: vec![],
        };
        let enc: Vec<u8> = [5i32, 1, -2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let dec = decode_chunk(&delta, &enc, &[3], &dt).unwrap();
        let want: Vec<u8> = [5i32, 6, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(dec, want);
    }
}
