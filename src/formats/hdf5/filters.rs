//! HDF5 filters beyond deflate, shuffle and fletcher32, decoded in pure Rust: HDF5's own szip,
//! nbit and scale-offset filters and the plugin filters (the registered filter ids of
//! hdf5plugin).
//!
//! Every decoder takes one stored chunk and `limit`, the decoded size of the dataset's chunk,
//! and refuses any size above it before allocating, so a damaged chunk never allocates more
//! than the chunk it claims to be nor panics.
//!
//! - 4 szip (`H5Zszip.c`): the decoded size (u32 LE), then a CCSDS 121.0-B Adaptive Entropy
//!   Coding stream as libaec's `SZ_BufftoBuffDecompress` (`sz_compat.c`) reads it.
//! - 5 nbit (`H5Znbit.c`): the significant bits of every element packed most significant first.
//! - 6 scale-offset (`H5Zscaleoffset.c`): a 21-byte header (minimum bits, minimum value), then
//!   every element minus the minimum in that many bits; integer and D-scaled float variants.
//!
//! The three HDF5 filters run the decoders of `hdf5-reader` (`hdf5_reader::filters`, pure
//! Rust, already the discovery dependency) rather than a second copy of them here; this module
//! gives them the chunk limit and the error type of the other filters, and [`BitField`] does
//! the datatype conversion nbit leaves to the library.
//!
//! - 32000 LZF: a raw LZF stream (`lzf_filter.c`, `lzf_d.c` of h5py).
//! - 32001 Blosc: one Blosc1 chunk (`blosc_filter.c` of hdf5plugin).
//! - 32004 LZ4: the HDF5 LZ4 filter format (`H5Zlz4.c`).
//! - 32008 bitshuffle, uncompressed, LZ4 or Zstandard (`bshuf_h5filter.c`, `bitshuffle.c`,
//!   `bitshuffle_core.c`).
//! - 32015 Zstandard: one Zstandard frame (`H5Zzstd.c`).
//! - 32026 Blosc2: one Blosc2 contiguous frame (`blosc2_filter.c` of hdf5plugin).

use crate::codec::blosc2::{self, filters as bfilters, frame};
use crate::codec::zstd as zstd_frame;

/// Filter id of szip (HDF5's own; `H5Zpublic.h` `H5Z_FILTER_SZIP`).
pub const SZIP: u16 = 4;
/// Filter id of nbit (`H5Z_FILTER_NBIT`).
pub const NBIT: u16 = 5;
/// Filter id of scale-offset (`H5Z_FILTER_SCALEOFFSET`).
pub const SCALEOFFSET: u16 = 6;
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
    /// The Blosc chunk of the Blosc filter (32001) failed to decode: the Blosc2 codec's error.
    #[error("blosc: {0}")]
    Blosc(#[source] blosc2::CodecError),
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
        SZIP => szip(cd, data, limit),
        NBIT => nbit(cd, data, limit),
        SCALEOFFSET => scaleoffset(cd, data, limit),
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
    matches!(
        id,
        SZIP | NBIT | SCALEOFFSET | LZF | BLOSC | LZ4 | BITSHUFFLE | ZSTD | BLOSC2
    )
}

fn reader_err(filter: &'static str, e: hdf5_reader::error::Error) -> FilterError {
    bad(filter, e.to_string())
}

/// Checks that a decoder gave exactly the chunk's `limit` bytes (`H5Z_pipeline` fails a
/// filter whose output is not the size the next step expects).
fn exact(filter: &'static str, out: Vec<u8>, limit: usize) -> Result<Vec<u8>, FilterError> {
    if out.len() != limit {
        return Err(bad(
            filter,
            format!("decodes to {} bytes, the chunk holds {limit}", out.len()),
        ));
    }
    Ok(out)
}

/// szip (`H5Zszip.c` `H5Z__filter_szip`): `cd` = options mask (EC 4 / NN 32, LSB 8 / MSB 16,
/// RAW 128, chip 2, allow-K13 1), pixels per block, bits per pixel, pixels per scanline. The
/// chunk is the decoded size (u32 LE) then the AEC stream; 32- and 64-bit pixels are coded as
/// 8-bit samples one byte plane at a time, and each scanline is one reference sample
/// interval padded to whole blocks (libaec `sz_compat.c`).
///
/// # Errors
/// [`FilterError::TooLarge`] for a declared size above `limit`; [`FilterError::Malformed`]
/// for bad parameters, a stream cut short or invalid, or a decoded size other than `limit`.
pub fn szip(cd: &[u32], data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "szip";
    let declared = data
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| bad(F, "size header cut short"))?;
    checked_size(F, declared as u64, limit)?;
    let out = hdf5_reader::filters::szip::decompress_with_limit(data, cd, limit)
        .map_err(|e| reader_err(F, e))?;
    exact(F, out, limit)
}

/// nbit (`H5Znbit.c` `H5Z__filter_nbit`): `cd` = parameter count, a "nothing to do" flag,
/// elements per chunk, then the datatype's description: class (1 atomic, 2 array, 3
/// compound, 4 no-op) and size, and for an atomic type its byte order (0 LE, 1 BE),
/// precision and offset in bits. The decoded chunk holds the file datatype's bits, padding
/// bits zero; [`BitField`] turns reduced-precision integers into values.
///
/// # Errors
/// [`FilterError::Malformed`] for parameters that do not describe a datatype, a stream cut
/// short, or a decoded size other than `limit`.
pub fn nbit(cd: &[u32], data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "nbit";
    if cd.get(1).is_some_and(|&skip| skip != 0) {
        // Full-precision types: the filter stored the chunk as it was (`H5Z__set_local_nbit`).
        return exact(F, data.to_vec(), limit);
    }
    let out = hdf5_reader::filters::nbit::decompress_with_limit(data, cd, limit)
        .map_err(|e| reader_err(F, e))?;
    exact(F, out, limit)
}

/// scale-offset (`H5Zscaleoffset.c` `H5Z__filter_scaleoffset`): `cd` = scale type (0 float
/// D-scale, 1 float E-scale (never written by HDF5), 2 integer), scale factor (decimal digits
/// kept, or minimum bits for integers, 0 = automatic), elements per chunk, class (0 integer,
/// 1 float), size, sign, byte order, whether a fill value is defined, then the fill value.
/// The chunk is a 21-byte header (minimum bits u32 LE, size of the minimum, minimum value)
/// and each element minus the minimum in minimum-bits bits, most significant first; with a
/// fill value defined the largest code stands for it. Output is in the datatype's byte order.
///
/// # Errors
/// [`FilterError::TooLarge`] when the parameters describe more than `limit` bytes;
/// [`FilterError::Malformed`] for bad parameters or header, a stream cut short, or a decoded
/// size other than `limit`.
pub fn scaleoffset(cd: &[u32], data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "scaleoffset";
    let n = cd.get(2).copied().unwrap_or(0) as u64;
    let size = cd.get(4).copied().unwrap_or(0) as u64;
    checked_size(F, n.saturating_mul(size), limit)?;
    let out = hdf5_reader::filters::scaleoffset::decompress_with_limit(data, cd, limit)
        .map_err(|e| reader_err(F, e))?;
    exact(F, out, limit)
}

/// Bits of an integer file datatype that does not use all its bits (HDF5 File Format
/// Specification, "Datatype Message", fixed-point bit offset and bit precision): the value is
/// `precision` bits starting `offset` bits above the least significant bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BitField {
    /// Significant bits.
    pub precision: u32,
    /// Bits below the value.
    pub offset: u32,
}

impl BitField {
    /// The bit field of an nbit filter's atomic datatype (`cd[3] == 1`: size `cd[4]`, order,
    /// precision `cd[6]`, offset `cd[7]`); `None` when the type uses all its bits or is not
    /// atomic.
    pub fn of_nbit(cd: &[u32]) -> Option<BitField> {
        if cd.get(3) != Some(&1) {
            return None;
        }
        let (size, precision, offset) = (*cd.get(4)?, *cd.get(6)?, *cd.get(7)?);
        let f = BitField { precision, offset };
        (precision != size.saturating_mul(8) || offset != 0).then_some(f)
    }

    /// Converts `data` (elements of `itemsize` bytes, little-endian when `little`) in place
    /// from the file type's bits to values: shifted down by `offset`, `precision` bits kept,
    /// sign-extended when `signed` (`H5T__conv_i_i`).
    ///
    /// # Errors
    /// A field past the element or an element wider than 8 bytes.
    pub fn to_values(
        &self,
        data: &mut [u8],
        itemsize: usize,
        little: bool,
        signed: bool,
    ) -> Result<(), FilterError> {
        let bits = itemsize as u32 * 8;
        if itemsize == 0
            || itemsize > 8
            || self.precision == 0
            || self.precision.saturating_add(self.offset) > bits
        {
            return Err(bad(
                "nbit",
                format!(
                    "{} bits at offset {} in a {itemsize}-byte integer",
                    self.precision, self.offset
                ),
            ));
        }
        let mask = if self.precision == 64 {
            u64::MAX
        } else {
            (1u64 << self.precision) - 1
        };
        for e in data.chunks_exact_mut(itemsize) {
            let mut b = [0u8; 8];
            let mut v = if little {
                b[..itemsize].copy_from_slice(e);
                u64::from_le_bytes(b)
            } else {
                b[8 - itemsize..].copy_from_slice(e);
                u64::from_be_bytes(b)
            };
            v = (v >> self.offset) & mask;
            if signed && self.precision < 64 && v >> (self.precision - 1) & 1 == 1 {
                v |= !mask;
            }
            if little {
                e.copy_from_slice(&v.to_le_bytes()[..itemsize]);
            } else {
                e.copy_from_slice(&v.to_be_bytes()[8 - itemsize..]);
            }
        }
        Ok(())
    }
}

/// A Blosc1 (or Blosc2) chunk (`blosc_filter.c`: the chunk is `blosc_compress` output).
pub fn blosc(data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    const F: &str = "blosc";
    let blosc = FilterError::Blosc;
    let h = blosc2::ChunkHeader::parse(data).map_err(blosc)?;
    let n = checked_size(F, h.nbytes as u64, limit)?;
    let mut out = vec![0u8; n];
    blosc2::decode_chunk_into(data, &mut out).map_err(blosc)?;
    Ok(out)
}

/// Decodes one Zstandard frame into at most `limit` bytes.
fn zstd_into(f: &'static str, data: &[u8], limit: usize) -> Result<Vec<u8>, FilterError> {
    // The window check refuses windows far beyond the chunk before `limit` bytes are
    // allocated; C zstd decodes into `out` and never past it (`crate::codec::zstd`).
    zstd_frame::check_window(data, limit, 1 << 20).map_err(|e| bad(f, e))?;
    let mut out = vec![0u8; limit];
    let n = zstd_frame::Decoder::default()
        .decompress(data, &mut out, 1 << 20)
        .map_err(|e| bad(f, e))?;
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
    fn bit_fields_become_values() {
        // 12 bits at offset 3 of a little-endian i32: -5 stored as its 12-bit pattern << 3.
        let f = BitField {
            precision: 12,
            offset: 3,
        };
        let mut d = (((-5i32 as u32) & 0xfff) << 3).to_le_bytes().to_vec();
        d.extend_from_slice(&(2047u32 << 3).to_le_bytes());
        f.to_values(&mut d, 4, true, true).unwrap();
        assert_eq!(d[..4], (-5i32).to_le_bytes());
        assert_eq!(d[4..], 2047i32.to_le_bytes());
        // Unsigned, big-endian: no sign extension.
        let mut d = ((0xfffu16) << 2).to_be_bytes().to_vec();
        let f = BitField {
            precision: 12,
            offset: 2,
        };
        f.to_values(&mut d, 2, false, false).unwrap();
        assert_eq!(d, 0xfffu16.to_be_bytes());
        assert!(f.to_values(&mut [0u8; 1], 1, true, false).is_err());
        assert_eq!(
            BitField::of_nbit(&[8, 0, 50, 1, 4, 0, 12, 3]),
            Some(BitField {
                precision: 12,
                offset: 3
            })
        );
        assert_eq!(BitField::of_nbit(&[8, 1, 50, 1, 4, 0, 32, 0]), None);
    }

    #[test]
    fn nbit_compound_members() {
        // A compound of 3 bytes: u8 of 4 bits at offset 2 (byte 0), then a little-endian u16
        // of 10 bits (bytes 1..3); one element packs 4 + 10 bits most significant first.
        let cd = [
            18, 0, 1, 3, 3, 2, //
            0, 1, 1, 0, 4, 2, //
            1, 1, 2, 0, 10, 0,
        ];
        let cd = {
            let mut v = cd.to_vec();
            v[0] = v.len() as u32;
            v
        };
        // Member a = 0b1011 (stored 0b1011 << 2), member b = 0b11_0000_0001.
        let bits: u32 = (0b1011 << 10) | 0b11_0000_0001;
        let packed = [(bits >> 6) as u8, ((bits & 0x3f) << 2) as u8];
        let out = nbit(&cd, &packed, 3).unwrap();
        assert_eq!(out, vec![0b1011 << 2, 0x01, 0x03]);
        assert!(nbit(&cd, &packed[..1], 3).is_err());
    }

    #[test]
    fn szip_size_header_is_bounded() {
        let cd = [4 | 128, 8, 8, 16];
        let mut s = 1000u32.to_le_bytes().to_vec();
        s.extend_from_slice(&[0u8; 16]);
        assert!(matches!(
            szip(&cd, &s, 64),
            Err(FilterError::TooLarge { .. })
        ));
        assert!(szip(&cd, &s[..2], 64).is_err());
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
