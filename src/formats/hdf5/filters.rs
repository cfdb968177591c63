//! HDF5 plugin filters (the registered filter ids of hdf5plugin), decoded in pure Rust.
//!
//! Every decoder takes one stored chunk and `limit`, the decoded size of the dataset's chunk,
//! and refuses any size above it before allocating, so a damaged chunk never allocates more
//! than the chunk it claims to be nor panics.
//!
//! - 32000 LZF: a raw LZF stream (`lzf_filter.c`, `lzf_d.c` of h5py).
//! - 32001 Blosc: one Blosc1 chunk (`blosc_filter.c` of hdf5plugin).
//! - 32004 LZ4: the HDF5 LZ4 filter format (`H5Zlz4.c`).
//! - 32008 bitshuffle, uncompressed, LZ4 or Zstandard (`bshuf_h5filter.c`, `bitshuffle.c`,
//!   `bitshuffle_core.c`).
//! - 32015 Zstandard: one Zstandard frame (`H5Zzstd.c`).
//! - 32026 Blosc2: one Blosc2 contiguous frame (`blosc2_filter.c` of hdf5plugin).

use crate::codec::blosc2::{self, filters as bfilters, frame};

/// Filter id of LZF.
pub const LZF: u16 = 32000;
/// Filter id of Blosc.
pub const BLOSC: u16 = 32001;
/// Filter id of LZ4.
pub const LZ4: u16 = 32004;
/// Filter id of bitshuffle.
pub const BITSHUFFLE: u16 = 32008;
/// Filter id of Zstandard.
pub const ZSTD: u16 = 32015;
/// Filter id of Blosc2.
pub const BLOSC2: u16 = 32026;

/// Why a plugin-filtered chunk does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The stored bytes are malformed for the filter's format.
    #[error("{filter}: {detail}")]
    Malformed {
        /// Filter name.
        filter: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The chunk declares more decoded bytes than the dataset's chunk holds.
    #[error("{filter}: declares {declared} decoded bytes, the chunk holds at most {limit}")]
    TooLarge {
        /// Filter name.
        filter: &'static str,
        /// Size the stored bytes declare.
        declared: u64,
        /// Decoded size of the dataset's chunk.
        limit: usize,
    },
}

fn bad(filter: &'static str, detail: impl Into<String>) -> FilterError {
    FilterError::Malformed {
        filter,
        detail: detail.into(),
    }
}

fn checked_size(filter: &'static str, declared: u64, limit: usize) -> Result<usize, FilterError> {
    if declared > limit as u64 {
        return Err(FilterError::TooLarge {
            filter,
            declared,
            limit,
        });
    }
    Ok(declared as usize)
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes the stored bytes of filter `id` with the filter's client data `cd`, for a dataset
/// of `itemsize`-byte elements; `None` for an id not decoded here.
pub fn decode(
    id: u16,
    cd: &[u32],
    itemsize: usize,
    data: &[u8],
    limit: usize,
) -> Option<Result<Vec<u8>, FilterError>> {
    Some(match id {
        LZF => lzf(data, limit),
        BLOSC => blosc(data, limit),
        LZ4 => lz4(data, limit),
        BITSHUFFLE => {
            let elem = cd
                .get(2)
                .map(|&e| e as usize)
                .filter(|&e| e > 0)
                .unwrap_or(itemsize);
            let block = cd.get(3).copied().unwrap_or(0) as usize;
            let comp = cd.get(4).copied().unwrap_or(0);
            bitshuffle(data, elem, block, comp, limit)
        }
        ZSTD => zstd(data, limit),
        BLOSC2 => blosc2_frame(data, limit),
        _ => return None,
    })
}

/// Whether filter `id` is decoded by [`decode`].
pub fn is_decoded(id: u16) -> bool {
    matches!(id, LZF | BLOSC | LZ4 | BITSHUFFLE | ZSTD | BLOSC2)
}

/// A Blosc1 (or Blosc2) chunk (`blosc_filter.c`: the chunk is `blosc_compress` output).
pub fn blosc(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "blosc";
    let h = blosc2::ChunkHeader::parse(data).map_err(|e| bad(F, e.to_string()))?;
    let n = checked_size(F, h.nbytes as u64, limit)?;
    let mut out = vec![0u8; n];
    blosc2::decode_chunk_into(data, &mut out).map_err(|e| bad(F, e.to_string()))?;
    Ok(out)
}

/// Decodes one Zstandard frame into at most `limit` bytes.
fn zstd_into(f: &'static str, data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    // ruzstd reserves the declared window before decoding: refuse windows far beyond the chunk.
    let window = blosc2::zstd_window(data).ok_or_else(|| bad(f, "zstd frame header invalid"))?;
    let bound = (limit.next_power_of_two() * 2).max(1 << 20) as u64;
    if window > bound {
        return Err(bad(
            f,
            format!("zstd window {window} bytes for a {limit}-byte chunk"),
        ));
    }
    let mut out = vec![0u8; limit];
    let mut dec = ruzstd::decoding::FrameDecoder::new();
    let n = dec
        .decode_all(data, &mut out)
        .map_err(|e| bad(f, format!("zstd: {e}")))?;
    out.truncate(n);
    Ok(out)
}

/// A Zstandard frame (`H5Zzstd.c`: `ZSTD_compress` output).
pub fn zstd(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    zstd_into("zstd", data, limit)
}

/// The HDF5 LZ4 filter format (`H5Zlz4.c`): total decoded size (u64 BE), block size (u32 BE),
/// then per block its stored size (u32 BE) and an LZ4 block, stored raw when that size equals
/// the block's decoded size.
pub fn lz4(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "lz4";
    let total = be_u64(data, 0).ok_or_else(|| bad(F, "header cut short"))?;
    let total = checked_size(F, total, limit)?;
    let block = be_u32(data, 8).ok_or_else(|| bad(F, "header cut short"))? as usize;
    if block == 0 && total > 0 {
        return Err(bad(F, "block size 0"));
    }
    let mut out = vec![0u8; total];
    let mut ip = 12usize;
    let mut op = 0usize;
    while op < total {
        let want = block.min(total - op);
        let n = be_u32(data, ip).ok_or_else(|| bad(F, "block size cut short"))? as usize;
        ip += 4;
        let src = data
            .get(ip..ip.saturating_add(n))
            .ok_or_else(|| bad(F, "block runs past the chunk"))?;
        let dst = &mut out[op..op + want];
        if n == want {
            dst.copy_from_slice(src);
        } else if blosc2::lz4::decompress(src, dst) != Some(want) {
            return Err(bad(F, format!("LZ4 block at byte {} invalid", ip - 4)));
        }
        ip += n;
        op += want;
    }
    Ok(out)
}

/// Default bitshuffle block size in elements (`bshuf_default_block_size`: 8 KiB of elements, a
/// multiple of 8, at least 128).
fn bshuf_default_block(elem: usize) -> usize {
    ((8192 / elem) / 8 * 8).max(128)
}

/// Bitshuffle (`bshuf_h5filter.c`). `comp` 0: the chunk is bitshuffled in blocks of `block`
/// elements (0: the default size). `comp` 2 (LZ4) or 3 (Zstandard): a 12-byte header of the
/// decoded size (u64 BE) and block size in bytes (u32 BE), then per block its stored size
/// (u32 BE) and the compressed bitshuffled block. In both, blocks are `block` elements, the
/// last one the remainder rounded down to a multiple of 8 elements, and the last
/// `count % 8` elements are stored as they are (`bshuf_blocked_wrap_fun` in
/// `bitshuffle_core.c`). The transform of a block is Blosc's BITSHUFFLE.
pub fn bitshuffle(
    data: &[u8],
    elem: usize,
    block: usize,
    comp: u32,
    limit: usize,
) -> Result<Vec<u8>, FilterError> {
    const F: &str = "bitshuffle";
    if elem == 0 {
        return Err(bad(F, "element size 0"));
    }
    let (total, block, mut ip) = match comp {
        0 => (
            checked_size(F, data.len() as u64, limit)?,
            if block == 0 {
                bshuf_default_block(elem)
            } else {
                block
            },
            0usize,
        ),
        2 | 3 => {
            let total = be_u64(data, 0).ok_or_else(|| bad(F, "header cut short"))?;
            let total = checked_size(F, total, limit)?;
            let bytes = be_u32(data, 8).ok_or_else(|| bad(F, "header cut short"))? as usize;
            (total, bytes / elem, 12usize)
        }
        other => return Err(bad(F, format!("compression {other} not decoded"))),
    };
    if total % elem != 0 {
        return Err(bad(
            F,
            format!("{total} bytes are not whole {elem}-byte elements"),
        ));
    }
    if block == 0 || block % 8 != 0 {
        return Err(bad(
            F,
            format!("block of {block} elements (not a positive multiple of 8)"),
        ));
    }
    let count = total / elem;
    let mut out = vec![0u8; total];
    let mut sizes: Vec<usize> = vec![block; count / block];
    let last = count % block / 8 * 8;
    if last > 0 {
        sizes.push(last);
    }
    let mut op = 0usize;
    let mut tmp = Vec::new();
    for n in sizes {
        let nb = n * elem;
        let dst = &mut out[op..op + nb];
        if comp == 0 {
            let src = data
                .get(ip..ip + nb)
                .ok_or_else(|| bad(F, "data cut short"))?;
            bfilters::bitunshuffle(elem, src, dst, 3);
            ip += nb;
        } else {
            let cs = be_u32(data, ip).ok_or_else(|| bad(F, "block size cut short"))? as usize;
            ip += 4;
            let src = data
                .get(ip..ip.saturating_add(cs))
                .ok_or_else(|| bad(F, "block runs past the chunk"))?;
            tmp.clear();
            tmp.resize(nb, 0);
            if comp == 2 {
                if blosc2::lz4::decompress(src, &mut tmp) != Some(nb) {
                    return Err(bad(F, format!("LZ4 block at byte {} invalid", ip - 4)));
                }
            } else {
                let d = zstd_into(F, src, nb)?;
                if d.len() != nb {
                    return Err(bad(F, "zstd block of the wrong size"));
                }
                tmp.copy_from_slice(&d);
            }
            bfilters::bitunshuffle(elem, &tmp, dst, 3);
            ip += cs;
        }
        op += nb;
    }
    let rest = total - op;
    let src = data
        .get(ip..ip + rest)
        .ok_or_else(|| bad(F, "trailing elements cut short"))?;
    out[op..].copy_from_slice(src);
    Ok(out)
}

/// A Blosc2 contiguous frame (`blosc2_filter.c`: the chunk is `blosc2_schunk_to_buffer`
/// output); its chunks, decoded in order, are the HDF5 chunk. A frame with a `b2nd`
/// metalayer (written for datasets of more than one dimension) holds the HDF5 chunk as one
/// b2nd chunk: blocks of `blockshape` in C order, each in C order, padded to whole blocks;
/// the padding is dropped here. Its padded size is at most `2^ndim` times the chunk's.
pub fn blosc2_frame(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "blosc2";
    let h = frame::FrameHeader::parse_with_len(data, Some(data.len() as u64))
        .map_err(|e| bad(F, e.to_string()))?;
    if h.nbytes < 0 {
        return Err(bad(F, "negative size"));
    }
    let meta = match h.metalayer("b2nd") {
        Some(m) => Some(blosc2::b2nd::B2ndMeta::parse(m).map_err(|e| bad(F, e.to_string()))?),
        None => None,
    };
    let Some(meta) = meta.filter(|m| m.blockshape != m.chunkshape) else {
        let total = checked_size(F, h.nbytes as u64, limit)?;
        return blosc2_chunks(&h, data, total);
    };
    if meta.chunkshape != meta.shape {
        return Err(bad(F, "b2nd frame of more than one chunk"));
    }
    let ts = h.typesize.max(1) as u64;
    let ext_bytes = meta
        .ext_chunkshape()
        .iter()
        .try_fold(ts, |a, &x| a.checked_mul(x))
        .ok_or_else(|| bad(F, "b2nd chunk size overflows"))?;
    let chunk_bytes = meta.chunk_len().saturating_mul(ts);
    let chunk_bytes = checked_size(F, chunk_bytes, limit)?;
    // Blocks are at most the chunk's extent, so padding at most doubles each dimension.
    let bound = (chunk_bytes as u64).saturating_mul(1 << meta.ndim().min(16));
    let ext = checked_size(F, ext_bytes, bound.min(usize::MAX as u64) as usize)?;
    if h.nbytes as u64 != ext_bytes {
        return Err(bad(
            F,
            format!("frame holds {} bytes, its b2nd chunk {ext}", h.nbytes),
        ));
    }
    let raw = blosc2_chunks(&h, data, ext)?;
    Ok(unblock(&raw, &meta, ts as usize, chunk_bytes))
}

/// The elements of a b2nd chunk (`raw`: blocks in C order, each in C order, padded to whole
/// blocks) in C order over `meta.chunkshape` (`chunk_bytes` bytes).
fn unblock(raw: &[u8], meta: &blosc2::b2nd::B2ndMeta, ts: usize, chunk_bytes: usize) -> Vec<u8> {
    let cs: Vec<usize> = meta.chunkshape.iter().map(|&x| x as usize).collect();
    let bs: Vec<usize> = meta.blockshape.iter().map(|&x| x as usize).collect();
    let grid: Vec<usize> = meta.block_grid().iter().map(|&x| x as usize).collect();
    let nd = cs.len();
    let mut out = vec![0u8; chunk_bytes];
    if nd == 0 {
        return out;
    }
    let block_bytes = bs.iter().product::<usize>() * ts;
    let nblocks: usize = grid.iter().product();
    let nrows: usize = bs[..nd - 1].iter().product();
    let mut bidx = vec![0usize; nd];
    let mut ridx = vec![0usize; nd.saturating_sub(1)];
    for b in 0..nblocks {
        // Block coordinates of block `b` (C order).
        let mut r = b;
        for d in (0..nd).rev() {
            bidx[d] = r % grid[d];
            r /= grid[d];
        }
        for row in 0..nrows {
            let mut r = row;
            for d in (0..nd - 1).rev() {
                ridx[d] = r % bs[d];
                r /= bs[d];
            }
            // Element coordinates of the row's first element; rows in the padding are skipped.
            let mut at = 0usize;
            let mut inside = true;
            for d in 0..nd - 1 {
                let c = bidx[d] * bs[d] + ridx[d];
                if c >= cs[d] {
                    inside = false;
                    break;
                }
                at = at * cs[d] + c;
            }
            if !inside {
                continue;
            }
            let c0 = bidx[nd - 1] * bs[nd - 1];
            let n = bs[nd - 1].min(cs[nd - 1] - c0);
            let at = (at * cs[nd - 1] + c0) * ts;
            let from = b * block_bytes + row * bs[nd - 1] * ts;
            out[at..at + n * ts].copy_from_slice(&raw[from..from + n * ts]);
        }
    }
    out
}

/// The data chunks of frame `h`, decoded in order into `total` bytes.
fn blosc2_chunks(
    h: &frame::FrameHeader,
    data: &[u8],
    total: usize,
) -> Result<Vec<u8>, FilterError> {
    const F: &str = "blosc2";
    let r = h.index_range();
    let tail = data
        .get(r.start as usize..r.end as usize)
        .ok_or_else(|| bad(F, "index past the frame"))?;
    let index = frame::parse_index(h, tail).map_err(|e| bad(F, e.to_string()))?;
    let mut out = vec![0u8; total];
    let mut op = 0usize;
    for (i, loc) in index.chunks.iter().enumerate() {
        match *loc {
            frame::ChunkLocation::Stored { offset } => {
                let src = data
                    .get(offset as usize..)
                    .ok_or_else(|| bad(F, format!("chunk {i} past the frame")))?;
                let ch = blosc2::ChunkHeader::parse(src).map_err(|e| bad(F, e.to_string()))?;
                if ch.nbytes > total - op {
                    return Err(bad(F, format!("chunk {i} runs past the frame's size")));
                }
                blosc2::decode_chunk_into(src, &mut out[op..op + ch.nbytes])
                    .map_err(|e| bad(F, format!("chunk {i}: {e}")))?;
                op += ch.nbytes;
            }
            frame::ChunkLocation::Special(k) => {
                if h.chunksize == 0 {
                    return Err(bad(F, "special chunk in a frame of variable chunks"));
                }
                let n = h.chunksize.min(total - op);
                k.fill(h.typesize.max(1), &mut out[op..op + n])
                    .map_err(|e| bad(F, e.to_string()))?;
                op += n;
            }
        }
    }
    if op != total {
        return Err(bad(
            F,
            format!("chunks decode to {op} bytes, the frame holds {total}"),
        ));
    }
    Ok(out)
}

/// An LZF stream (`lzf_d.c`): a control byte below 32 starts a run of `ctrl + 1` literals;
/// otherwise a back reference of length `(ctrl >> 5) + 2` (plus a byte when that field is 7)
/// at distance `((ctrl & 31) << 8) + next byte + 1`.
pub fn lzf(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "lzf";
    let mut out: Vec<u8> = Vec::with_capacity(limit.min(data.len().saturating_mul(4)));
    let mut ip = 0usize;
    while ip < data.len() {
        let ctrl = data[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let src = data
                .get(ip..ip + n)
                .ok_or_else(|| bad(F, "literal run past the stream"))?;
            if out.len() + n > limit {
                return Err(bad(F, format!("decodes past {limit} bytes")));
            }
            out.extend_from_slice(src);
            ip += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *data.get(ip).ok_or_else(|| bad(F, "stream cut short"))? as usize;
                ip += 1;
            }
            n += 2;
            let low = *data.get(ip).ok_or_else(|| bad(F, "stream cut short"))? as usize;
            ip += 1;
            let dist = ((ctrl & 0x1f) << 8) + low + 1;
            if dist > out.len() {
                return Err(bad(F, "back reference before the start"));
            }
            if out.len() + n > limit {
                return Err(bad(F, format!("decodes past {limit} bytes")));
            }
            let from = out.len() - dist;
            for k in 0..n {
                let b = out[from + k];
                out.push(b);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lzf_literals_and_references() {
        // "abcabcabc": 3 literals, then a reference of 6 at distance 3.
        let s = [2u8, b'a', b'b', b'c', (4 << 5), 2];
        assert_eq!(lzf(&s, 100).unwrap(), b"abcabcabc");
        assert!(lzf(&s, 5).is_err());
        assert!(lzf(&[0x20, 0], 100).is_err());
        assert!(lzf(&[5, 1], 100).is_err());
    }

    #[test]
    fn lz4_raw_blocks_and_limits() {
        let mut s = Vec::new();
        s.extend_from_slice(&6u64.to_be_bytes());
        s.extend_from_slice(&4u32.to_be_bytes());
        s.extend_from_slice(&4u32.to_be_bytes());
        s.extend_from_slice(b"abcd");
        s.extend_from_slice(&2u32.to_be_bytes());
        s.extend_from_slice(b"ef");
        assert_eq!(lz4(&s, 6).unwrap(), b"abcdef");
        assert!(matches!(lz4(&s, 5), Err(FilterError::TooLarge { .. })));
        assert!(lz4(&s[..s.len() - 1], 6).is_err());
    }

    #[test]
    fn bitshuffle_checks_sizes() {
        let mut s = Vec::new();
        s.extend_from_slice(&(u64::MAX).to_be_bytes());
        s.extend_from_slice(&8u32.to_be_bytes());
        assert!(matches!(
            bitshuffle(&s, 1, 0, 2, 64),
            Err(FilterError::TooLarge { .. })
        ));
        // Fewer than 8 elements: stored as they are.
        assert_eq!(bitshuffle(&[1, 2, 3], 1, 0, 0, 8).unwrap(), vec![1, 2, 3]);
        assert!(bitshuffle(&[1, 2, 3], 1, 0, 7, 8).is_err());
    }
}
