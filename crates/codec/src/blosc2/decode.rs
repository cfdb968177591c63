//! Chunk and block decoding (`blosc_d`, `pipeline_backward` and `serial_blosc` in C-Blosc2's
//! blosc2.c).
//!
//! Chunk layout after the header: unless the chunk is special-value or memcpyed, a bstarts table
//! of `nblocks` little-endian i32 offsets (from the chunk start) follows, then the blocks. A block
//! is `nstreams` streams, each an i32 compressed size and that many bytes: size 0 is a run of
//! zeros, a negative size `-v` followed by a token byte with bit 0 set is a run of the byte `v`,
//! a size equal to the stream's uncompressed size means stored raw, anything else is compressed
//! with the chunk's codec.
//!
//! A chunk whose Blosc2 flags say so ([`ChunkHeader::has_dict`]) carries a dictionary between
//! the bstarts table and the first block, which every ZSTD or LZ4 stream of the chunk was
//! compressed with; such a chunk decodes whole only ([`block_spans`] refuses it).

use std::ops::Range;

use crate::inflate::Inflater;
use crate::zstd;

use super::blosclz;
use super::error::CodecError;
use super::filters;
use super::header::{
    filter_code, format_code, ChunkHeader, SpecialValue, B2FLAG_INSTR_CODEC, B2FLAG_LAZY,
    MAX_DICT_BYTES,
};
use super::lz4;

/// Reusable buffers and codec state for decoding blocks of one chunk.
struct Scratch {
    tmp: Vec<u8>,
    tmp2: Vec<u8>,
    inflate: Inflater,
    zstd: zstd::Decoder,
    /// The chunk's dictionary, when it has one (set per chunk by [`decode_with_header`]).
    dict: Option<ChunkDict>,
}

/// A chunk's dictionary, made ready for its codec once per chunk.
enum ChunkDict {
    /// ZSTD: digested (`ZSTD_createDDict`).
    Zstd(zstd::Dictionary),
    /// LZ4 and LZ4HC: the dictionary's `len` bytes, then room for a stream's output; each
    /// stream decodes right after the dictionary, whose bytes its matches may refer to.
    Lz4 { buf: Vec<u8>, len: usize },
}

impl ChunkDict {
    /// The dictionary `bytes` for a chunk of codec `format` (ZSTD or LZ4, as
    /// [`check_supported`] lets through).
    fn new(format: u8, bytes: &[u8]) -> Result<ChunkDict, CodecError> {
        if format == format_code::ZSTD {
            let d = zstd::Dictionary::new(bytes)
                .map_err(|_| CodecError::Allocation { bytes: bytes.len() })?;
            Ok(ChunkDict::Zstd(d))
        } else {
            Ok(ChunkDict::Lz4 {
                buf: bytes.to_vec(),
                len: bytes.len(),
            })
        }
    }
}

/// The dictionary of a chunk with one ([`ChunkHeader::has_dict`]): an i32 size right after
/// the bstarts table, then that many bytes (blosc2.c `initialize_context_decompression`).
/// `src` is the chunk (`cbytes` bytes at most). Errors: the size outside 1..=
/// [`MAX_DICT_BYTES`], or the dictionary past the chunk's end.
fn chunk_dict<'a>(h: &ChunkHeader, src: &'a [u8]) -> Result<&'a [u8], CodecError> {
    let at = h.prefix_len();
    if src.len() < at + 4 {
        return Err(CodecError::Truncated {
            what: "dictionary size",
            needed: at + 4,
            available: src.len(),
        });
    }
    let n = read_i32(src, at);
    if n <= 0 || n as usize > MAX_DICT_BYTES {
        return Err(CodecError::InvalidHeader {
            field: "dictionary size",
            value: n as i64,
            reason: "outside 1..=32768 (BLOSC2_MAXDICTSIZE)",
        });
    }
    let end = at + 4 + n as usize;
    src.get(at + 4..end).ok_or(CodecError::Truncated {
        what: "dictionary",
        needed: end,
        available: src.len(),
    })
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            tmp: Vec::new(),
            tmp2: Vec::new(),
            inflate: Inflater::default(),
            zstd: zstd::Decoder::default(),
            dict: None,
        }
    }
}

fn bad_stream(block: usize, stream: usize, reason: impl Into<String>) -> CodecError {
    CodecError::BadStream {
        block,
        stream,
        reason: reason.into(),
    }
}

/// Decompress one stream with the chunk's codec into `out`, returning the bytes written.
fn decompress_stream(
    format: u8,
    src: &[u8],
    out: &mut [u8],
    scratch: &mut Scratch,
) -> Result<usize, String> {
    match format {
        format_code::BLOSCLZ => {
            blosclz::decompress(src, out).ok_or_else(|| "BloscLZ stream invalid".into())
        }
        format_code::LZ4 => match &mut scratch.dict {
            Some(ChunkDict::Lz4 { buf, len }) => {
                // The stream decodes after the dictionary, then moves to `out`: one copy more
                // than without one (LZ4's own `usingDict` reads matches from two places).
                let n = *len + out.len();
                if buf.len() < n {
                    buf.resize(n, 0);
                }
                let w = lz4::decompress_after(src, &mut buf[..n], *len)
                    .ok_or("LZ4 block invalid (with the chunk's dictionary)")?;
                out[..w].copy_from_slice(&buf[*len..*len + w]);
                Ok(w)
            }
            _ => lz4::decompress(src, out).ok_or_else(|| "LZ4 block invalid".into()),
        },
        format_code::ZLIB => scratch.inflate.inflate_zlib(src, out),
        // The window check (floor 1 MiB) and C zstd: see `crate::zstd`.
        format_code::ZSTD => {
            let dict = match &scratch.dict {
                Some(ChunkDict::Zstd(d)) => Some(d),
                _ => None,
            };
            scratch.zstd.decompress_with(src, out, 1 << 20, dict)
        }
        other => Err(format!("unknown codec format {other}")),
    }
}

fn read_i32(src: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([src[at], src[at + 1], src[at + 2], src[at + 3]])
}

/// Refuse chunk kinds this decoder does not handle.
fn check_supported(h: &ChunkHeader) -> Result<(), CodecError> {
    let unsupported = |what, value: u8| {
        Err(CodecError::Unsupported {
            what,
            value: value as i64,
        })
    };
    // C-Blosc2 writes dictionaries for ZSTD, LZ4 and LZ4HC only (blosc2.c
    // `blosc2_compress_ctx`).
    if h.has_dict() && !matches!(h.format, format_code::ZSTD | format_code::LZ4) {
        return unsupported("codec format with a dictionary", h.format);
    }
    if h.blosc2_flags & B2FLAG_LAZY != 0 {
        return unsupported(
            "lazy or variable-length-block chunk (blosc2 flags)",
            h.blosc2_flags,
        );
    }
    if h.blosc2_flags & B2FLAG_INSTR_CODEC != 0 {
        return unsupported("instrumented codec (blosc2 flags)", h.blosc2_flags);
    }
    if !h.memcpyed
        && h.special.is_none()
        && !matches!(
            h.format,
            format_code::BLOSCLZ | format_code::LZ4 | format_code::ZLIB | format_code::ZSTD
        )
    {
        return unsupported("codec format", h.format);
    }
    for &f in &h.filters {
        if !matches!(
            f,
            filter_code::NOFILTER
                | filter_code::SHUFFLE
                | filter_code::BITSHUFFLE
                | filter_code::DELTA
                | filter_code::TRUNC_PREC
                | filter_code::BYTEDELTA_LEGACY
                | filter_code::BYTEDELTA
        ) {
            return unsupported("filter", f);
        }
    }
    Ok(())
}

/// Offset of block `i`'s streams, checked to lie at or after `data_start` (the end of the
/// bstarts table, or of the dictionary after it) and inside the chunk.
fn block_start(
    h: &ChunkHeader,
    src: &[u8],
    i: usize,
    data_start: usize,
) -> Result<usize, CodecError> {
    let v = read_i32(src, h.header_len + 4 * i);
    if v < data_start as i32 || v as usize >= h.cbytes {
        return Err(CodecError::BadBlockStart {
            block: i,
            start: v as i64,
            cbytes: h.cbytes,
        });
    }
    Ok(v as usize)
}

fn fill_special(h: &ChunkHeader, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    match h.special {
        Some(SpecialValue::Zeros) | Some(SpecialValue::Uninit) => dst.fill(0),
        Some(SpecialValue::Nan) => {
            if h.typesize == 4 {
                let v = f32::NAN.to_le_bytes();
                dst.chunks_exact_mut(4).for_each(|c| c.copy_from_slice(&v));
            } else {
                let v = f64::NAN.to_le_bytes();
                dst.chunks_exact_mut(8).for_each(|c| c.copy_from_slice(&v));
            }
        }
        Some(SpecialValue::Value) => {
            let end = h.header_len + h.typesize;
            if src.len() < end {
                return Err(CodecError::Truncated {
                    what: "repeated value",
                    needed: end,
                    available: src.len(),
                });
            }
            let v = &src[h.header_len..end];
            dst.chunks_exact_mut(h.typesize)
                .for_each(|c| c.copy_from_slice(v));
        }
        None => {}
    }
    Ok(())
}

/// Check `src` holds the whole chunk and its bstarts table; returns the chunk slice.
fn validated_chunk<'a>(h: &ChunkHeader, src: &'a [u8]) -> Result<&'a [u8], CodecError> {
    if src.len() < h.cbytes {
        return Err(CodecError::Truncated {
            what: "chunk (cbytes)",
            needed: h.cbytes,
            available: src.len(),
        });
    }
    if h.prefix_len() > h.cbytes {
        return Err(CodecError::InvalidHeader {
            field: "cbytes",
            value: h.cbytes as i64,
            reason: "smaller than header plus bstarts table",
        });
    }
    Ok(&src[..h.cbytes])
}

/// Decode a whole chunk (Blosc2 or Blosc1 format) into a new vector of `nbytes` bytes.
///
/// `src` starts with the chunk and holds at least `cbytes` bytes (more is ignored).
/// Errors: see [`CodecError`]; a damaged chunk never panics.
pub fn decode_chunk(src: &[u8]) -> Result<Vec<u8>, CodecError> {
    let h = ChunkHeader::parse(src)?;
    check_supported(&h)?;
    validated_chunk(&h, src)?;
    let mut out = Vec::new();
    out.try_reserve_exact(h.nbytes)
        .map_err(|_| CodecError::Allocation { bytes: h.nbytes })?;
    out.resize(h.nbytes, 0);
    decode_with_header(&h, src, &mut out)?;
    Ok(out)
}

/// Decode a whole chunk into `dst[..nbytes]`; `dst` must hold at least `nbytes` bytes
/// ([`CodecError::DestinationSize`] otherwise). Bytes past `nbytes` are left untouched.
pub fn decode_chunk_into(src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let h = ChunkHeader::parse(src)?;
    check_supported(&h)?;
    if dst.len() < h.nbytes {
        return Err(CodecError::DestinationSize {
            expected: h.nbytes,
            actual: dst.len(),
        });
    }
    decode_with_header(&h, src, &mut dst[..h.nbytes])
}

fn decode_with_header(h: &ChunkHeader, src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let src = validated_chunk(h, src)?;
    if h.nbytes == 0 {
        return Ok(());
    }
    if h.special.is_some() {
        return fill_special(h, src, dst);
    }
    if h.memcpyed {
        dst.copy_from_slice(&src[h.header_len..h.header_len + h.nbytes]);
        return Ok(());
    }
    let nblocks = h.nblocks();
    let mut scratch = Scratch::new();
    let mut data_start = h.prefix_len();
    if h.has_dict() {
        let dict = chunk_dict(h, src)?;
        scratch.dict = Some(ChunkDict::new(h.format, dict)?);
        data_start += 4 + dict.len();
    }
    let first_len = h.block_nbytes(0);
    let (first, rest) = dst.split_at_mut(first_len);
    let start = block_start(h, src, 0, data_start)?;
    decode_block_inner(h, 0, &src[start..], None, first, &mut scratch)?;
    let dref = if h.has_delta() { Some(&*first) } else { None };
    for (i, out) in (1..nblocks).zip(rest.chunks_mut(h.blocksize)) {
        let start = block_start(h, src, i, data_start)?;
        decode_block_inner(h, i, &src[start..], dref, out, &mut scratch)?;
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Loc {
    Dst,
    Tmp,
    Tmp2,
}

fn is_out_of_place(f: u8) -> bool {
    matches!(
        f,
        filter_code::SHUFFLE
            | filter_code::BITSHUFFLE
            | filter_code::BYTEDELTA_LEGACY
            | filter_code::BYTEDELTA
    )
}

/// Decode one block from its streams (`stream` starts at the block's first stream size; extra
/// trailing bytes are ignored) into `dst` (exactly the block's uncompressed size).
fn decode_block_inner(
    h: &ChunkHeader,
    block: usize,
    stream: &[u8],
    dref: Option<&[u8]>,
    dst: &mut [u8],
    scratch: &mut Scratch,
) -> Result<(), CodecError> {
    let bsize = dst.len();
    let nstreams = h.block_nstreams(block);
    if !bsize.is_multiple_of(nstreams) {
        return Err(CodecError::InvalidHeader {
            field: "blocksize",
            value: h.blocksize as i64,
            reason: "split block not a multiple of typesize",
        });
    }
    let neblock = bsize / nstreams;
    let n_oop = h.filters.iter().filter(|&&f| is_out_of_place(f)).count();
    if n_oop > 0 {
        if scratch.tmp.len() < bsize {
            scratch.tmp.resize(bsize, 0);
        }
        if n_oop > 1 && scratch.tmp2.len() < bsize {
            scratch.tmp2.resize(bsize, 0);
        }
    }
    // Take the buffers out of the scratch so the codec state can be borrowed alongside.
    let mut tmp = std::mem::take(&mut scratch.tmp);
    let mut tmp2 = std::mem::take(&mut scratch.tmp2);
    let result = (|| {
        let target: &mut [u8] = if n_oop > 0 {
            &mut tmp[..bsize]
        } else {
            &mut *dst
        };
        let mut pos = 0usize;
        for (j, out) in target.chunks_exact_mut(neblock).enumerate() {
            if stream.len() < pos + 4 {
                return Err(CodecError::Truncated {
                    what: "stream size",
                    needed: pos + 4,
                    available: stream.len(),
                });
            }
            let cs = read_i32(stream, pos);
            pos += 4;
            if cs == 0 {
                out.fill(0);
            } else if cs < 0 {
                let token = *stream
                    .get(pos)
                    .ok_or_else(|| bad_stream(block, j, "run token missing"))?;
                pos += 1;
                if token & 1 == 0 || cs < -255 {
                    return Err(bad_stream(
                        block,
                        j,
                        format!("invalid run (size {cs}, token {token})"),
                    ));
                }
                out.fill((-cs) as u8);
            } else {
                let cs = cs as usize;
                let body = stream.get(pos..pos + cs).ok_or(CodecError::Truncated {
                    what: "compressed stream",
                    needed: pos + cs,
                    available: stream.len(),
                })?;
                pos += cs;
                if cs == neblock {
                    out.copy_from_slice(body);
                } else {
                    let n = decompress_stream(h.format, body, out, scratch)
                        .map_err(|e| bad_stream(block, j, e))?;
                    if n != neblock {
                        return Err(bad_stream(
                            block,
                            j,
                            format!("decoded {n} bytes, expected {neblock}"),
                        ));
                    }
                }
            }
        }
        // Filters in reverse pipeline order (pipeline_backward).
        let mut cur = if n_oop > 0 { Loc::Tmp } else { Loc::Dst };
        let mut left = n_oop;
        for i in (0..6).rev() {
            let f = h.filters[i];
            if is_out_of_place(f) {
                left -= 1;
                let to = if left == 0 {
                    Loc::Dst
                } else if cur == Loc::Tmp {
                    Loc::Tmp2
                } else {
                    Loc::Tmp
                };
                let (s, d): (&[u8], &mut [u8]) = match (cur, to) {
                    (Loc::Tmp, Loc::Dst) => (&tmp[..bsize], &mut *dst),
                    (Loc::Tmp2, Loc::Dst) => (&tmp2[..bsize], &mut *dst),
                    (Loc::Tmp, _) => (&tmp[..bsize], &mut tmp2[..bsize]),
                    _ => (&tmp2[..bsize], &mut tmp[..bsize]),
                };
                match f {
                    // C-Blosc2 3.x groups the shuffle by `filters_meta` bytes when it is not
                    // 0 (blosc2.c `pipeline_backward`: `blosc2_unshuffle(filters_meta[i] == 0
                    // ? typesize : filters_meta[i], ...)`); python-blosc2 writes 4 for `<U`.
                    filter_code::SHUFFLE => {
                        let group = match h.filters_meta[i] {
                            0 => h.typesize,
                            m => m as usize,
                        };
                        filters::unshuffle(group, s, d)
                    }
                    filter_code::BITSHUFFLE => filters::bitunshuffle(h.typesize, s, d, h.version),
                    _ => {
                        let ts = match h.filters_meta[i] {
                            0 => h.typesize,
                            m => m as usize,
                        };
                        if f == filter_code::BYTEDELTA_LEGACY {
                            filters::bytedelta_decode_legacy(ts, s, d)
                        } else {
                            filters::bytedelta_decode(ts, s, d)
                        }
                    }
                }
                cur = to;
            } else if f == filter_code::DELTA {
                let data: &mut [u8] = match cur {
                    Loc::Dst => &mut *dst,
                    Loc::Tmp => &mut tmp[..bsize],
                    Loc::Tmp2 => &mut tmp2[..bsize],
                };
                if block == 0 {
                    filters::delta_decode(h.typesize, None, data);
                } else {
                    match dref {
                        Some(r) if r.len() >= bsize => {
                            filters::delta_decode(h.typesize, Some(r), data)
                        }
                        _ => {
                            return Err(CodecError::MissingReference {
                                block,
                                reference: 0,
                                needed: bsize,
                            })
                        }
                    }
                }
            }
        }
        Ok(())
    })();
    scratch.tmp = tmp;
    scratch.tmp2 = tmp2;
    result
}

/// Blocks of a chunk with a dictionary are not decoded one by one: each needs the dictionary,
/// which lies between the bstarts table and the blocks, outside the spans [`block_spans`]
/// gives. Such chunks are read and decoded whole.
const NOT_SPLITTABLE_DICT: CodecError = CodecError::NotSplittable {
    reason: "chunk with a dictionary (decode it whole)",
};

/// For block-level remote reads: given the chunk's first bytes (the header plus the bstarts
/// table, i.e. [`ChunkHeader::prefix_len`] bytes: `header_len + 4 * nblocks`), the byte span of
/// each block's streams inside the chunk, indexed by block.
///
/// Blocks need not be stored in index order (C-Blosc2 writes them as threads finish), so a
/// block's span ends at the next larger start offset, or at `cbytes`. For a memcpyed chunk the
/// spans are the raw block bytes after the header.
///
/// Errors: [`CodecError::Truncated`] if `prefix` is short; [`CodecError::NotSplittable`] for
/// special-value chunks (decode them whole: they are at most `header_len + typesize` bytes)
/// and chunks with a dictionary (every block needs it: decode them whole);
/// [`CodecError::BadBlockStart`] for offsets outside the chunk.
pub fn block_spans(prefix: &[u8]) -> Result<Vec<Range<usize>>, CodecError> {
    let h = ChunkHeader::parse(prefix)?;
    check_supported(&h)?;
    if h.special.is_some() {
        return Err(CodecError::NotSplittable {
            reason: "special-value chunk has no block data",
        });
    }
    if h.has_dict() {
        return Err(NOT_SPLITTABLE_DICT);
    }
    let nblocks = h.nblocks();
    if h.memcpyed {
        return Ok((0..nblocks)
            .map(|i| {
                let s = h.header_len + i * h.blocksize;
                s..s + h.block_nbytes(i)
            })
            .collect());
    }
    if prefix.len() < h.prefix_len() {
        return Err(CodecError::Truncated {
            what: "bstarts table",
            needed: h.prefix_len(),
            available: prefix.len(),
        });
    }
    if h.prefix_len() > h.cbytes {
        return Err(CodecError::InvalidHeader {
            field: "cbytes",
            value: h.cbytes as i64,
            reason: "smaller than header plus bstarts table",
        });
    }
    let starts = (0..nblocks)
        .map(|i| block_start(&h, prefix, i, h.prefix_len()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    Ok(starts
        .iter()
        .map(|&s| {
            let k = sorted.partition_point(|&x| x <= s);
            s..sorted.get(k).copied().unwrap_or(h.cbytes)
        })
        .collect())
}

/// Blocks whose decoded bytes [`decode_block`] needs besides the block itself: `[0]` for blocks
/// other than 0 of a chunk using the DELTA filter (`delta_decoder` XORs with the chunk's first
/// block), else none.
pub fn block_dependencies(header: &ChunkHeader, block: usize) -> Vec<usize> {
    if block > 0 && header.has_delta() && !header.memcpyed && header.special.is_none() {
        vec![0]
    } else {
        Vec::new()
    }
}

/// Decode block `block` of a chunk from only that block's bytes: `stream` is the span given by
/// [`block_spans`] (longer input is fine). `reference` is the decoded block 0 when
/// [`block_dependencies`] lists it, else ignored. `dst` must hold exactly
/// `header.block_nbytes(block)` bytes.
///
/// Errors: [`CodecError::InvalidArgument`] for a block index past the end;
/// [`CodecError::DestinationSize`]; [`CodecError::MissingReference`];
/// [`CodecError::NotSplittable`] for special-value chunks and chunks with a dictionary;
/// stream errors as for
/// [`decode_chunk`].
pub fn decode_block(
    header: &ChunkHeader,
    block: usize,
    stream: &[u8],
    reference: Option<&[u8]>,
    dst: &mut [u8],
) -> Result<(), CodecError> {
    BlockDecoder::new().decode_block(header, block, stream, reference, dst)
}

/// [`decode_block`] for many blocks: keeps the filters' block-sized scratch buffers and the
/// codecs' state (the zstd decoding context, about 160 KiB, and the inflater) from one block
/// to the next instead of making them again per block, as [`decode_chunk`] does within a
/// chunk. Blocks of different chunks may share one decoder.
pub struct BlockDecoder {
    scratch: Scratch,
}

impl Default for BlockDecoder {
    fn default() -> Self {
        BlockDecoder::new()
    }
}

impl BlockDecoder {
    /// A decoder holding no buffer yet (they grow on first use to the largest block seen).
    pub fn new() -> BlockDecoder {
        BlockDecoder {
            scratch: Scratch::new(),
        }
    }

    /// As [`decode_block`] (same arguments, same errors).
    pub fn decode_block(
        &mut self,
        header: &ChunkHeader,
        block: usize,
        stream: &[u8],
        reference: Option<&[u8]>,
        dst: &mut [u8],
    ) -> Result<(), CodecError> {
        check_supported(header)?;
        if block >= header.nblocks() {
            return Err(CodecError::InvalidArgument {
                name: "block",
                value: block as i64,
                reason: "past the last block",
            });
        }
        let bsize = header.block_nbytes(block);
        if dst.len() != bsize {
            return Err(CodecError::DestinationSize {
                expected: bsize,
                actual: dst.len(),
            });
        }
        if header.special.is_some() {
            return Err(CodecError::NotSplittable {
                reason: "special-value chunk has no block data",
            });
        }
        if header.has_dict() {
            return Err(NOT_SPLITTABLE_DICT);
        }
        if header.memcpyed {
            let body = stream.get(..bsize).ok_or(CodecError::Truncated {
                what: "memcpyed block",
                needed: bsize,
                available: stream.len(),
            })?;
            dst.copy_from_slice(body);
            return Ok(());
        }
        decode_block_inner(header, block, stream, reference, dst, &mut self.scratch)
    }
}

#[cfg(test)]
mod zstd_tests {
    use super::*;
    use crate::zstd::zstd_window;

    #[test]
    fn zstd_window_from_frame_header() {
        let data = vec![7u8; 5000];
        let frame = ruzstd::encoding::compress_to_vec(
            &data[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let w = zstd_window(&frame).unwrap();
        assert!(w >= 1024, "window {w}");
        // A frame declaring a 2 GiB window (Window_Descriptor exponent 21) is refused before
        // any allocation.
        let lying = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 21 << 3, 0, 0, 0];
        assert_eq!(zstd_window(&lying), Some(1 << 31));
        let mut out = vec![0u8; 4096];
        let err = decompress_stream(format_code::ZSTD, &lying, &mut out, &mut Scratch::new())
            .unwrap_err();
        assert!(err.contains("window"), "{err}");
        let mut out = vec![0u8; 5000];
        assert_eq!(
            decompress_stream(format_code::ZSTD, &frame, &mut out, &mut Scratch::new()),
            Ok(5000)
        );
        assert_eq!(out, data);
    }
}
