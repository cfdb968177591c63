//! The chunk header: 32 bytes for Blosc2 chunks (extended header), 16 bytes for Blosc1 chunks.
//!
//! Layout (README_CHUNK_FORMAT.rst; `read_chunk_header` in C-Blosc2's blosc2.c), little-endian:
//! version 0, versionlz 1, flags 2, typesize 3, nbytes 4 (i32), blocksize 8 (i32), cbytes 12
//! (i32); extended header only: filter codes 16 (6 bytes), user codec 22, codec meta 23, filter
//! metas 24 (6 bytes), reserved 30, blosc2 flags 31.

use super::error::CodecError;

/// Length of a Blosc1 header (bytes).
pub const BLOSC1_HEADER_LEN: usize = 16;
/// Length of a Blosc2 (extended) header (bytes).
pub const BLOSC2_HEADER_LEN: usize = 32;
/// Largest block size the format allows (bytes; `BLOSC2_MAXBLOCKSIZE`).
pub const MAX_BLOCKSIZE: usize = 536_866_816;
/// Newest chunk format version accepted (C-Blosc2 2.x writes 5; 3.x may write 6).
pub const MAX_VERSION: u8 = 6;

/// Header flag: byte shuffle (Blosc1) / with bit 2 set, extended header (Blosc2).
pub const FLAG_SHUFFLE: u8 = 0x01;
/// Header flag: the chunk is stored uncompressed right after the header.
pub const FLAG_MEMCPYED: u8 = 0x02;
/// Header flag: bit shuffle (Blosc1).
pub const FLAG_BITSHUFFLE: u8 = 0x04;
/// Header flag: delta filter (Blosc1).
pub const FLAG_DELTA: u8 = 0x08;
/// Header flag: blocks are not split into one stream per byte of the type.
pub const FLAG_DONT_SPLIT: u8 = 0x10;

/// Blosc2 flags (byte 31): a dictionary follows the bstarts table (see
/// [`ChunkHeader::has_dict`]).
pub const B2FLAG_USEDICT: u8 = 0x01;
/// The largest dictionary a chunk may carry, bytes (`BLOSC2_MAXDICTSIZE` in blosc2.h).
pub const MAX_DICT_BYTES: usize = 32 << 10;
/// Blosc2 flags: lazy chunk (blocks live in a file, not in the chunk).
pub const B2FLAG_LAZY: u8 = 0x08;
/// Blosc2 flags: instrumented codec (development only).
pub const B2FLAG_INSTR_CODEC: u8 = 0x80;

/// Filter codes in the header's filter pipeline (blosc2.h).
pub mod filter_code {
    /// No filter.
    pub const NOFILTER: u8 = 0;
    /// Byte shuffle (`shuffle.c`).
    pub const SHUFFLE: u8 = 1;
    /// Bit shuffle (`bitshuffle-generic.c`).
    pub const BITSHUFFLE: u8 = 2;
    /// XOR delta against the chunk's first block (`delta.c`).
    pub const DELTA: u8 = 3;
    /// Precision truncation; nothing to undo on decode (`trunc-prec.c`).
    pub const TRUNC_PREC: u8 = 4;
    /// Byte delta, the legacy version C-Blosc2 wrote before 2.8
    /// (`BLOSC_FILTER_BYTEDELTA_BUGGY`, plugins/filters/bytedelta `bytedelta_backward_buggy`):
    /// each stream's running sum restarts after its last whole 16 bytes.
    pub const BYTEDELTA_LEGACY: u8 = 34;
    /// Byte delta, the fixed version (plugins/filters/bytedelta, `BLOSC_FILTER_BYTEDELTA`).
    pub const BYTEDELTA: u8 = 35;
}

/// Compressed-stream formats (the top three bits of `flags`; `BLOSC_*_FORMAT`).
pub mod format_code {
    /// BloscLZ.
    pub const BLOSCLZ: u8 = 0;
    /// LZ4 block format (also written by LZ4HC).
    pub const LZ4: u8 = 1;
    /// Zlib stream (RFC 1950).
    pub const ZLIB: u8 = 3;
    /// Zstandard frame.
    pub const ZSTD: u8 = 4;
    /// User-defined codec (code in byte 22).
    pub const UDCODEC: u8 = 6;
}

/// Special-value chunks: no data streams, the whole chunk is one value (blosc2 flags bits 4-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialValue {
    /// All bytes zero (`BLOSC2_SPECIAL_ZERO`).
    Zeros,
    /// All elements NaN; typesize 4 (f32) or 8 (f64) (`BLOSC2_SPECIAL_NAN`).
    Nan,
    /// One element of `typesize` bytes, stored right after the header, repeated
    /// (`BLOSC2_SPECIAL_VALUE`).
    Value,
    /// Uninitialised contents (`BLOSC2_SPECIAL_UNINIT`); this decoder writes zeros.
    Uninit,
}

/// A parsed chunk header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Chunk format version (byte 0): 1-2 for Blosc1, 3-6 for Blosc2.
    pub version: u8,
    /// Version of the codec's format (byte 1).
    pub versionlz: u8,
    /// Flags (byte 2): shuffle/memcpyed/bitshuffle/delta/dont-split bits and the format code.
    pub flags: u8,
    /// Bytes per element (1..=255).
    pub typesize: usize,
    /// Uncompressed bytes of the chunk.
    pub nbytes: usize,
    /// Uncompressed bytes per block (the last block may be shorter).
    pub blocksize: usize,
    /// Compressed bytes of the whole chunk, header included.
    pub cbytes: usize,
    /// 16 (Blosc1) or 32 (Blosc2).
    pub header_len: usize,
    /// Filter pipeline, applied in index order on encode and in reverse on decode. For Blosc1
    /// chunks it is derived from the flags as C-Blosc2's `flags_to_filters` does.
    pub filters: [u8; 6],
    /// One meta byte per filter (BYTEDELTA: the type size it works on).
    pub filters_meta: [u8; 6],
    /// Compressed-stream format (see [`format_code`]).
    pub format: u8,
    /// Codec meta byte (byte 23; Blosc2 only).
    pub codec_meta: u8,
    /// Blosc2 flags (byte 31; 0 for Blosc1).
    pub blosc2_flags: u8,
    /// Special-value chunk kind, if any.
    pub special: Option<SpecialValue>,
    /// The chunk is stored uncompressed after the header (no bstarts table).
    pub memcpyed: bool,
    /// Blocks other than a trailing partial one are split into `typesize` streams.
    pub split: bool,
}

fn rd_i32(src: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([src[at], src[at + 1], src[at + 2], src[at + 3]])
}

impl ChunkHeader {
    /// Parse the header at the start of `src`, which needs only the header bytes (16 for Blosc1,
    /// 32 for Blosc2). Checks mirror C-Blosc2's `read_chunk_header` and
    /// `initialize_context_decompression`.
    ///
    /// Errors: [`CodecError::Truncated`] if `src` is shorter than the header;
    /// [`CodecError::InvalidHeader`] for negative or inconsistent sizes, zero typesize, a block
    /// size of zero or above `nbytes` or [`MAX_BLOCKSIZE`], an unknown special value, a
    /// memcpyed chunk whose `cbytes` is not `nbytes + header_len`;
    /// [`CodecError::Unsupported`] for a version above [`MAX_VERSION`].
    pub fn parse(src: &[u8]) -> Result<ChunkHeader, CodecError> {
        if src.len() < BLOSC1_HEADER_LEN {
            return Err(CodecError::Truncated {
                what: "chunk header",
                needed: BLOSC1_HEADER_LEN,
                available: src.len(),
            });
        }
        let version = src[0];
        let versionlz = src[1];
        let flags = src[2];
        let typesize = src[3] as usize;
        let nbytes = rd_i32(src, 4);
        let blocksize = rd_i32(src, 8);
        let cbytes = rd_i32(src, 12);
        let invalid = |field, value: i32, reason| CodecError::InvalidHeader {
            field,
            value: value as i64,
            reason,
        };
        if version == 0 || version > MAX_VERSION {
            return Err(CodecError::Unsupported {
                what: "chunk format version",
                value: version as i64,
            });
        }
        if nbytes < 0 {
            return Err(invalid("nbytes", nbytes, "negative"));
        }
        if cbytes < BLOSC1_HEADER_LEN as i32 {
            return Err(invalid("cbytes", cbytes, "smaller than the header"));
        }
        if blocksize <= 0 {
            return Err(invalid("blocksize", blocksize, "zero or negative"));
        }
        if nbytes > 0 && blocksize > nbytes {
            return Err(invalid("blocksize", blocksize, "greater than nbytes"));
        }
        if blocksize as usize > MAX_BLOCKSIZE {
            return Err(invalid(
                "blocksize",
                blocksize,
                "greater than BLOSC2_MAXBLOCKSIZE",
            ));
        }
        if typesize == 0 {
            return Err(invalid("typesize", 0, "zero"));
        }
        let (nbytes, blocksize, cbytes) = (nbytes as usize, blocksize as usize, cbytes as usize);
        let extended = flags & FLAG_SHUFFLE != 0 && flags & FLAG_BITSHUFFLE != 0;
        let mut filters = [0u8; 6];
        let mut filters_meta = [0u8; 6];
        let mut codec_meta = 0;
        let mut blosc2_flags = 0;
        let mut special = None;
        let format = flags >> 5;
        let header_len;
        if extended {
            header_len = BLOSC2_HEADER_LEN;
            if cbytes < BLOSC2_HEADER_LEN {
                return Err(invalid(
                    "cbytes",
                    cbytes as i32,
                    "smaller than the extended header",
                ));
            }
            if src.len() < BLOSC2_HEADER_LEN {
                return Err(CodecError::Truncated {
                    what: "extended chunk header",
                    needed: BLOSC2_HEADER_LEN,
                    available: src.len(),
                });
            }
            filters.copy_from_slice(&src[16..22]);
            filters_meta.copy_from_slice(&src[24..30]);
            codec_meta = src[23];
            blosc2_flags = src[31];
            if format == format_code::UDCODEC {
                return Err(CodecError::Unsupported {
                    what: "user-defined codec",
                    value: src[22] as i64,
                });
            }
            // The alpha format (version 3) left the sixth filter slot uninitialised.
            if version == 3 {
                filters[5] = 0;
                filters_meta[5] = 0;
            }
            special = match (blosc2_flags >> 4) & 0x7 {
                0 => None,
                1 => Some(SpecialValue::Zeros),
                2 => Some(SpecialValue::Nan),
                3 => Some(SpecialValue::Value),
                4 => Some(SpecialValue::Uninit),
                other => {
                    return Err(invalid(
                        "blosc2 flags",
                        other as i32,
                        "unknown special value",
                    ))
                }
            };
            if special.is_some() {
                // C-Blosc2 refuses every special chunk whose nbytes is not a multiple of
                // typesize, yet writes such zero chunks itself (all-zero input of e.g. 12345
                // bytes with typesize 2). Zeros need no element size, so accept those.
                let needs_elements =
                    matches!(special, Some(SpecialValue::Nan | SpecialValue::Value));
                if needs_elements && nbytes % typesize != 0 {
                    return Err(invalid(
                        "nbytes",
                        nbytes as i32,
                        "special-value chunk not a multiple of typesize",
                    ));
                }
                if special == Some(SpecialValue::Value) && cbytes < BLOSC2_HEADER_LEN + typesize {
                    return Err(invalid(
                        "cbytes",
                        cbytes as i32,
                        "too small for the repeated value",
                    ));
                }
                if special == Some(SpecialValue::Nan) && typesize != 4 && typesize != 8 {
                    return Err(invalid(
                        "typesize",
                        typesize as i32,
                        "NaN chunk needs 4 or 8",
                    ));
                }
            }
        } else {
            header_len = BLOSC1_HEADER_LEN;
            // flags_to_filters in blosc2.c
            if flags & FLAG_SHUFFLE != 0 {
                filters[5] = filter_code::SHUFFLE;
            }
            if flags & FLAG_BITSHUFFLE != 0 {
                filters[5] = filter_code::BITSHUFFLE;
            }
            if flags & FLAG_DELTA != 0 {
                filters[4] = filter_code::DELTA;
            }
        }
        let memcpyed = flags & FLAG_MEMCPYED != 0;
        if memcpyed && special.is_none() && cbytes != nbytes + header_len {
            return Err(invalid(
                "cbytes",
                cbytes as i32,
                "memcpyed chunk must be nbytes + header",
            ));
        }
        Ok(ChunkHeader {
            version,
            versionlz,
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            header_len,
            filters,
            filters_meta,
            format,
            codec_meta,
            blosc2_flags,
            special,
            memcpyed,
            split: flags & FLAG_DONT_SPLIT == 0,
        })
    }

    /// Number of blocks: `ceil(nbytes / blocksize)` (0 for an empty chunk).
    pub fn nblocks(&self) -> usize {
        self.nbytes.div_ceil(self.blocksize)
    }

    /// Uncompressed bytes of block `block` (`blocksize`, or the remainder for the last block;
    /// 0 for an index past the end).
    pub fn block_nbytes(&self, block: usize) -> usize {
        let start = block.saturating_mul(self.blocksize);
        if start >= self.nbytes {
            return 0;
        }
        (self.nbytes - start).min(self.blocksize)
    }

    /// Number of compressed streams of block `block`: `typesize` when the chunk is split and the
    /// block is full-sized, else 1 (`blosc_d` in blosc2.c).
    pub fn block_nstreams(&self, block: usize) -> usize {
        let leftover = !self.nbytes.is_multiple_of(self.blocksize) && block + 1 == self.nblocks();
        if self.split && !leftover {
            self.typesize
        } else {
            1
        }
    }

    /// True when the chunk carries a bstarts table (neither special-value nor memcpyed, and not
    /// empty).
    pub fn has_bstarts(&self) -> bool {
        self.special.is_none() && !self.memcpyed && self.nbytes > 0
    }

    /// True when the chunk's blocks were compressed with a dictionary: the Blosc2 flag
    /// [`B2FLAG_USEDICT`] on a chunk with a bstarts table. The dictionary follows that table
    /// as an i32 size (1..=[`MAX_DICT_BYTES`]) and the dictionary's bytes, before the first
    /// block (blosc2.c `initialize_context_decompression`); ZSTD decodes each stream with it
    /// (`ZSTD_decompress_usingDDict`), LZ4 and LZ4HC as if it preceded the stream's output
    /// (`LZ4_decompress_safe_usingDict`). C-Blosc2 3.3 also sets the flag on memcpyed chunks,
    /// which carry no dictionary (cbytes = header + nbytes) and which it then fails to read;
    /// their bytes are the data, and this method says `false` for them.
    pub fn has_dict(&self) -> bool {
        self.blosc2_flags & B2FLAG_USEDICT != 0 && self.has_bstarts()
    }

    /// Bytes from the chunk start that cover the header and the bstarts table.
    pub fn prefix_len(&self) -> usize {
        if self.has_bstarts() {
            self.header_len + 4 * self.nblocks()
        } else {
            self.header_len
        }
    }

    /// True when the DELTA filter is in the pipeline (blocks other than 0 then refer to the
    /// decoded block 0).
    pub fn has_delta(&self) -> bool {
        self.filters.contains(&filter_code::DELTA)
    }
}
