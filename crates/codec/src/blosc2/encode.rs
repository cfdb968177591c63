//! Chunk encoding: Blosc2 chunks (32-byte header, format version 5) that C-Blosc2 decodes
//! (`blosc_c`, `write_compression_header`, `split_block` in blosc2.c).

use super::blosclz;
use super::error::CodecError;
use super::filters;
use super::header::{
    filter_code, format_code, BLOSC2_HEADER_LEN, FLAG_BITSHUFFLE, FLAG_DELTA, FLAG_DONT_SPLIT,
    FLAG_MEMCPYED, FLAG_SHUFFLE, MAX_BLOCKSIZE,
};

/// Compression codecs (codec ids as in blosc2.h and the frame header: 0, 1, 2, 4, 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// BloscLZ (id 0).
    BloscLz,
    /// LZ4 (id 1).
    Lz4,
    /// LZ4HC (id 2); writes the LZ4 format (this encoder uses the LZ4 compressor).
    Lz4Hc,
    /// Zlib (id 4).
    Zlib,
    /// Zstandard (id 5).
    Zstd,
}

impl Codec {
    /// The codec for a codec id (`BLOSC_BLOSCLZ` ... `BLOSC_ZSTD`), if known.
    pub fn from_id(id: u8) -> Option<Codec> {
        Some(match id {
            0 => Codec::BloscLz,
            1 => Codec::Lz4,
            2 => Codec::Lz4Hc,
            4 => Codec::Zlib,
            5 => Codec::Zstd,
            _ => return None,
        })
    }

    /// The compressed-stream format written in the chunk flags (`compcode_to_compformat`).
    pub fn format_code(self) -> u8 {
        match self {
            Codec::BloscLz => format_code::BLOSCLZ,
            Codec::Lz4 | Codec::Lz4Hc => format_code::LZ4,
            Codec::Zlib => format_code::ZLIB,
            Codec::Zstd => format_code::ZSTD,
        }
    }

    /// Whether [`encode_chunk`] of this build writes this codec: BloscLZ, LZ4 and LZ4HC
    /// always; ZLIB and ZSTD with the cargo feature `zlib-zstd-encoder` (on by default; the
    /// Blosc2-only wasm package leaves it out). Decoding reads every codec either way.
    pub fn can_encode(self) -> bool {
        match self {
            Codec::BloscLz | Codec::Lz4 | Codec::Lz4Hc => true,
            Codec::Zlib | Codec::Zstd => cfg!(feature = "zlib-zstd-encoder"),
        }
    }

    /// The codec id (`BLOSC_BLOSCLZ` ... `BLOSC_ZSTD`, blosc2.h), as [`Codec::from_id`] reads it.
    pub fn id(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 => 1,
            Codec::Lz4Hc => 2,
            Codec::Zlib => 4,
            Codec::Zstd => 5,
        }
    }
}

/// The main reordering filter of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// No reordering.
    NoFilter,
    /// Byte shuffle.
    Shuffle,
    /// Bit shuffle.
    BitShuffle,
    /// Byte shuffle followed by BYTEDELTA (filter 35, meta = typesize), as python-blosc2 writes.
    ByteDelta,
}

/// Whether blocks are split into one stream per byte of the type (`BLOSC_*_SPLIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// Always split full blocks.
    Always,
    /// Never split.
    Never,
    /// C-Blosc2's rule (`split_block`): split for BloscLZ, LZ4 and Zstd at clevel <= 5 when
    /// shuffling, typesize <= 16 and at least 32 elements per block.
    Auto,
}

/// Options for [`encode_chunk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Codec.
    pub codec: Codec,
    /// Compression level 0-9; 0 stores the chunk uncompressed (memcpyed).
    pub clevel: u8,
    /// Reordering filter.
    pub filter: Filter,
    /// Apply DELTA (against the chunk's first block) before the reordering filter.
    pub delta: bool,
    /// Apply TRUNC_PREC first, keeping this many mantissa bits (negative: removing that many);
    /// typesize must be 4 or 8.
    pub trunc_prec: Option<i8>,
    /// Uncompressed bytes per block; `None` picks `min(nbytes, 256 KiB)`. Rounded down to a
    /// multiple of typesize and clamped to `nbytes`.
    pub blocksize: Option<usize>,
    /// Split mode.
    pub split: SplitMode,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            codec: Codec::Lz4,
            clevel: 5,
            filter: Filter::Shuffle,
            delta: false,
            trunc_prec: None,
            blocksize: None,
            split: SplitMode::Auto,
        }
    }
}

const DEFAULT_BLOCKSIZE: usize = 256 * 1024;

fn compress_stream(codec: Codec, clevel: u8, src: &[u8], out: &mut Vec<u8>) {
    match codec {
        Codec::BloscLz => out.extend_from_slice(&blosclz::compress(src)),
        Codec::Lz4 | Codec::Lz4Hc => {
            let start = out.len();
            out.resize(
                start + lz4_flex::block::get_maximum_output_size(src.len()),
                0,
            );
            // The buffer has the maximum output size, so compression cannot run out of room.
            let n = lz4_flex::block::compress_into(src, &mut out[start..]).unwrap_or(usize::MAX);
            if n == usize::MAX {
                out.truncate(start);
                out.extend(std::iter::repeat_n(0u8, src.len() + 1));
            } else {
                out.truncate(start + n);
            }
        }
        #[cfg(feature = "zlib-zstd-encoder")]
        Codec::Zlib => out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(
            src,
            clevel.min(9),
        )),
        #[cfg(feature = "zlib-zstd-encoder")]
        Codec::Zstd => out.extend_from_slice(&ruzstd::encoding::compress_to_vec(
            src,
            ruzstd::encoding::CompressionLevel::Fastest,
        )),
        // Refused by `encode_chunk` before any stream is compressed (`Codec::can_encode`).
        #[cfg(not(feature = "zlib-zstd-encoder"))]
        Codec::Zlib | Codec::Zstd => {
            let _ = clevel;
        }
    }
}

/// Encode `src` (elements of `typesize` bytes) as one Blosc2 chunk that C-Blosc2 decodes.
///
/// Each stream that does not shrink is stored raw; if the whole chunk does not shrink, or
/// `clevel` is 0, or `src` is shorter than 32 bytes (as C-Blosc2 does), the chunk is memcpyed.
///
/// Errors: [`CodecError::InvalidArgument`] for typesize outside 1..=255, `src` longer than
/// `i32::MAX - 32` bytes, a zero block size, or TRUNC_PREC with a typesize other than 4 or 8 or
/// a precision that would remove the whole mantissa; [`CodecError::Unsupported`] (`what`
/// names the feature, `value` is the codec id) for ZLIB or ZSTD in a build without the cargo
/// feature `zlib-zstd-encoder` ([`Codec::can_encode`]), whatever `clevel`.
pub fn encode_chunk(
    src: &[u8],
    typesize: usize,
    opts: &EncodeOptions,
) -> Result<Vec<u8>, CodecError> {
    let arg = |name, value: usize, reason| CodecError::InvalidArgument {
        name,
        value: value as i64,
        reason,
    };
    if !opts.codec.can_encode() {
        return Err(CodecError::Unsupported {
            what: "encoder codec (ZLIB and ZSTD need chunkwise-codec's cargo feature `zlib-zstd-encoder`)",
            value: opts.codec.id().into(),
        });
    }
    if typesize == 0 || typesize > 255 {
        return Err(arg("typesize", typesize, "must be 1..=255"));
    }
    let nbytes = src.len();
    if nbytes > i32::MAX as usize - BLOSC2_HEADER_LEN {
        return Err(arg(
            "src.len()",
            nbytes,
            "chunk larger than the format allows",
        ));
    }
    if let Some(p) = opts.trunc_prec {
        let mant = match typesize {
            4 => 23,
            8 => 52,
            _ => return Err(arg("typesize", typesize, "TRUNC_PREC needs 4 or 8")),
        };
        let zeroed = if p >= 0 { mant - p as i32 } else { -(p as i32) };
        if p.unsigned_abs() as i32 > mant || zeroed >= mant {
            return Err(arg(
                "trunc_prec",
                p.unsigned_abs() as usize,
                "removes the whole mantissa",
            ));
        }
    }
    let mut blocksize = opts
        .blocksize
        .unwrap_or(DEFAULT_BLOCKSIZE)
        .min(nbytes)
        .min(MAX_BLOCKSIZE);
    if blocksize >= typesize {
        blocksize -= blocksize % typesize;
    }
    if opts.blocksize == Some(0) {
        return Err(arg("blocksize", 0, "must be positive"));
    }
    // An empty chunk still needs a positive block size to be readable.
    let blocksize = blocksize.max(1);

    // Forward pipeline, in index order, right-aligned in the six slots.
    let mut pipeline: Vec<(u8, u8)> = Vec::new();
    if let Some(p) = opts.trunc_prec {
        pipeline.push((filter_code::TRUNC_PREC, p as u8));
    }
    if opts.delta {
        pipeline.push((filter_code::DELTA, 0));
    }
    match opts.filter {
        Filter::NoFilter => {}
        Filter::Shuffle => pipeline.push((filter_code::SHUFFLE, 0)),
        Filter::BitShuffle => pipeline.push((filter_code::BITSHUFFLE, 0)),
        Filter::ByteDelta => {
            pipeline.push((filter_code::SHUFFLE, 0));
            pipeline.push((filter_code::BYTEDELTA, typesize as u8));
        }
    }
    let mut fcodes = [0u8; 6];
    let mut fmeta = [0u8; 6];
    let off = 6 - pipeline.len();
    for (k, &(c, m)) in pipeline.iter().enumerate() {
        fcodes[off + k] = c;
        fmeta[off + k] = m;
    }
    let shuffled = pipeline.iter().any(|&(c, _)| c == filter_code::SHUFFLE);
    let split = match opts.split {
        SplitMode::Always => true,
        SplitMode::Never => false,
        SplitMode::Auto => {
            let fast = matches!(opts.codec, Codec::BloscLz | Codec::Lz4)
                || (opts.codec == Codec::Zstd && opts.clevel <= 5);
            fast && shuffled && typesize <= 16 && blocksize / typesize >= 32
        }
    };
    let nblocks = nbytes.div_ceil(blocksize);
    let mut flags = FLAG_SHUFFLE | FLAG_BITSHUFFLE | (opts.codec.format_code() << 5);
    if !split {
        flags |= FLAG_DONT_SPLIT;
    }
    if opts.delta {
        flags |= FLAG_DELTA;
    }
    let header = |flags: u8, cbytes: usize, fcodes: &[u8; 6], fmeta: &[u8; 6]| {
        let mut h = [0u8; BLOSC2_HEADER_LEN];
        h[0] = 5;
        h[1] = 1;
        h[2] = flags;
        h[3] = typesize as u8;
        h[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
        h[8..12].copy_from_slice(&(blocksize as i32).to_le_bytes());
        h[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
        h[16..22].copy_from_slice(fcodes);
        h[24..30].copy_from_slice(fmeta);
        h
    };
    let memcpyed = |src: &[u8]| {
        let f = FLAG_SHUFFLE | FLAG_BITSHUFFLE | FLAG_MEMCPYED | FLAG_DONT_SPLIT;
        let mut out = header(f, nbytes + BLOSC2_HEADER_LEN, &[0; 6], &[0; 6]).to_vec();
        out.extend_from_slice(src);
        out
    };
    if opts.clevel == 0 || nbytes < 32 {
        return Ok(memcpyed(src));
    }

    let limit = nbytes + BLOSC2_HEADER_LEN;
    let mut out = Vec::with_capacity(limit.min(nbytes / 2 + 4096));
    out.extend_from_slice(&header(flags, 0, &fcodes, &fmeta));
    out.resize(BLOSC2_HEADER_LEN + 4 * nblocks, 0);
    let mut a = vec![0u8; blocksize];
    let mut b = vec![0u8; blocksize];
    let mut comp = Vec::new();
    for blk in 0..nblocks {
        let start = blk * blocksize;
        let bsize = (nbytes - start).min(blocksize);
        let bstart = out.len();
        out[BLOSC2_HEADER_LEN + 4 * blk..BLOSC2_HEADER_LEN + 4 * blk + 4]
            .copy_from_slice(&(bstart as i32).to_le_bytes());
        // Run the forward pipeline; `cur` says which buffer holds the current data.
        let (mut cur, mut oth) = (&mut a[..bsize], &mut b[..bsize]);
        cur.copy_from_slice(&src[start..start + bsize]);
        for &(code, meta) in &pipeline {
            match code {
                filter_code::TRUNC_PREC => filters::trunc_prec(typesize, meta as i8, cur, oth),
                filter_code::DELTA => {
                    let dref = &src[..blocksize.min(nbytes)];
                    filters::delta_encode(typesize, dref, blk == 0, cur, oth);
                    // Bytes past whole words are not touched by DELTA.
                    let w = bsize - bsize % delta_word(typesize);
                    oth[w..].copy_from_slice(&cur[w..]);
                }
                filter_code::SHUFFLE => filters::shuffle(typesize, cur, oth),
                filter_code::BITSHUFFLE => filters::bitshuffle(typesize, cur, oth),
                _ => filters::bytedelta_encode(meta as usize, cur, oth),
            }
            std::mem::swap(&mut cur, &mut oth);
        }
        let leftover = bsize < blocksize;
        let nstreams = if split && !leftover { typesize } else { 1 };
        let neblock = bsize / nstreams;
        for s in cur.chunks_exact(neblock) {
            comp.clear();
            compress_stream(opts.codec, opts.clevel, s, &mut comp);
            if comp.len() >= neblock {
                out.extend_from_slice(&(neblock as i32).to_le_bytes());
                out.extend_from_slice(s);
            } else {
                out.extend_from_slice(&(comp.len() as i32).to_le_bytes());
                out.extend_from_slice(&comp);
            }
        }
        if out.len() >= limit {
            return Ok(memcpyed(src));
        }
    }
    let cbytes = out.len();
    out[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    Ok(out)
}

fn delta_word(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}
