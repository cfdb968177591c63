//! Blosc2 contiguous frames (`.b2nd`, `.b2frame`, frames embedded in `.b2z`): the msgpack header,
//! the offsets chunk and the trailer.
//!
//! Layout (C-Blosc2 `README_CFRAME_FORMAT.rst`, and `frame.c` as of C-Blosc2 3.x):
//!
//! ```text
//! | header (header_len bytes) | data chunks (cbytes bytes) | offsets chunk | trailer |
//! 0                           header_len                   header_len + cbytes       frame_len
//! ```
//!
//! The header is a msgpack array of 14 items (the format document says 13; `blocksize` was added
//! later and `new_header_frame` in `frame.c` writes 14). The offsets chunk is a Blosc2 chunk of
//! little-endian `i64`, one per data chunk, relative to the start of the data chunks; negative
//! values mark special-value chunks that occupy no bytes. The trailer is msgpack
//! `[version, vlmetalayers, trailer_len (u32), fingerprint (fixext 16)]` and ends the frame.
//!
//! A remote reader fetches a prefix, calls [`FrameHeader::parse`] (which says how many bytes it
//! needs if the prefix is short), then fetches [`FrameHeader::index_range`] and calls
//! [`parse_index`]. Everything is validated against the bytes present: bad input gives a
//! [`FrameError`], never a panic, and no allocation is sized by an unchecked claim.

use std::ops::Range;

use super::msgpack::Cursor;
use super::{decode_chunk, ChunkHeader, CodecError};

/// The frame magic, msgpack str 8 (`b2frame\0`).
pub const MAGIC: &[u8; 8] = b"b2frame\0";

/// Length in bytes of the fixed part of the header (everything before the metalayers), as
/// `FRAME_HEADER_MINLEN` in `frame.h`. A prefix of this many bytes always lets
/// [`FrameHeader::parse`] learn the full header length.
pub const HEADER_MIN_LEN: usize = 87;

/// Largest header accepted, in bytes. The header holds only fixed fields and at most 16
/// metalayers; a larger claim is treated as corrupt rather than fetched.
pub const MAX_HEADER_LEN: usize = 16 << 20;

/// Largest number of chunks accepted in one frame (4 Mi chunks: 64 MiB of decoded offsets and
/// locations). A sane limit so a forged header cannot make us allocate without bound.
pub const MAX_CHUNKS: usize = 1 << 22;

/// Length in bytes of the fixed end of the trailer: `0xce` + trailer length (u32) + `0xd8` +
/// fingerprint type + 16-byte fingerprint (`FRAME_TRAILER_LEN_OFFSET` region in `frame.h`).
pub const TRAILER_FIXED_LEN: usize = 23;

/// Length in bytes of a Blosc2 (extended) chunk header.
pub const CHUNK_HEADER_LEN: usize = 32;

/// Largest decoded vlmetalayer value accepted, in bytes (64 MiB). A sane limit: a 40-byte
/// repeated-value chunk may claim up to 2 GiB.
pub const MAX_VLMETALAYER_LEN: usize = 64 << 20;

/// Maximum number of metalayers in a header (`BLOSC2_MAX_METALAYERS`).
const MAX_METALAYERS: u32 = 16;
/// Maximum number of variable-length metalayers in a trailer (`BLOSC2_MAX_VLMETALAYERS`).
const MAX_VLMETALAYERS: u32 = 8 * 1024;
/// Number of filter slots in the header's filter pipeline (`BLOSC2_MAX_FILTERS`).
pub const MAX_FILTERS: usize = 6;
/// Codec id meaning "user-defined codec; the real id is in the udcodec byte" (`BLOSC_UDCODEC_FORMAT`).
const UDCODEC_FORMAT: u8 = 6;

/// Errors from parsing a Blosc2 frame or its `b2nd` metalayer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The prefix is shorter than the header: supply at least `needed` bytes from the start of
    /// the frame. When the prefix is too short to hold even the header-size field, `needed` is
    /// [`HEADER_MIN_LEN`] (a lower bound).
    #[error("frame header needs {needed} bytes, got {got}")]
    NeedMore { needed: usize, got: usize },
    /// The bytes do not start with the msgpack-encoded `b2frame` magic.
    #[error("not a Blosc2 frame (bad magic)")]
    BadMagic,
    /// A msgpack value is missing, of the wrong type, or runs past the bytes present.
    #[error("malformed frame field `{field}` at byte {offset}")]
    Malformed { field: &'static str, offset: usize },
    /// A numeric field is outside what the format (or a sane limit) allows.
    #[error("frame field `{field}` = {value} is out of range ({rule})")]
    OutOfRange {
        field: &'static str,
        value: i128,
        rule: &'static str,
    },
    /// A well-formed feature this reader does not support (sparse frames, 32-bit offsets, ...).
    #[error("unsupported frame feature: {what} = {value}")]
    Unsupported { what: &'static str, value: i64 },
    /// The header's frame length differs from the size of the object holding the frame.
    #[error("frame length {frame_len} differs from object size {object_len}")]
    FrameLenMismatch { frame_len: u64, object_len: u64 },
    /// `parse_index` was given a tail whose length differs from `index_range`.
    #[error("index bytes: expected {expected}, got {got}")]
    TailLen { expected: u64, got: usize },
    /// A chunk offset points outside the data chunks section.
    #[error("chunk {chunk}: offset {offset} outside the data section of {data_len} bytes")]
    ChunkOffset {
        chunk: usize,
        offset: i64,
        data_len: u64,
    },
    /// The offsets chunk or a vlmetalayer chunk could not be decoded.
    #[error("{what}: {source}")]
    Chunk {
        what: &'static str,
        #[source]
        source: CodecError,
    },
}

fn out_of_range(field: &'static str, value: impl Into<i128>, rule: &'static str) -> FrameError {
    FrameError::OutOfRange {
        field,
        value: value.into(),
        rule,
    }
}

/// The parsed header of a contiguous frame.
///
/// Source: `new_header_frame` and `get_header_info` in C-Blosc2 `frame.c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    /// Header length in bytes, metalayers included; the data chunks start here.
    pub header_len: usize,
    /// Whole frame length in bytes (header + chunks + offsets chunk + trailer).
    pub frame_len: u64,
    /// Uncompressed size in bytes of all data chunks.
    pub nbytes: i64,
    /// Compressed size in bytes of the data chunks section (offsets chunk excluded).
    pub cbytes: i64,
    /// Item size in bytes.
    pub typesize: usize,
    /// Default block size in bytes (0: chosen per chunk).
    pub blocksize: usize,
    /// Uncompressed chunk size in bytes (0: chunks of variable size).
    pub chunksize: usize,
    /// Frame format version (low nibble of the general flags).
    pub format_version: u8,
    /// Codec id (0 BLOSCLZ, 1 LZ4, 2 LZ4HC, 3 SNAPPY, 4 ZLIB, 5 ZSTD, >= 32 user-defined).
    pub codec: u8,
    /// Codec metadata byte.
    pub codec_meta: u8,
    /// Compression level (0..=9).
    pub clevel: u8,
    /// Split mode as in `blosc2.h`: 1 ALWAYS, 2 NEVER, 3 AUTO, 4 FORWARD_COMPAT.
    pub splitmode: u8,
    /// Filter pipeline codes, one per slot (0 = no filter, 1 SHUFFLE, 2 BITSHUFFLE, 3 DELTA,
    /// 4 TRUNC_PREC, 35 BYTEDELTA, ...).
    pub filters: [u8; MAX_FILTERS],
    /// Filter metadata, one per slot.
    pub filters_meta: [u8; MAX_FILTERS],
    /// Whether the trailer holds variable-length metalayers.
    pub has_vlmetalayers: bool,
    /// Fixed-size metalayers, in header order: `(name, content)` (content is usually msgpack).
    pub metalayers: Vec<(String, Vec<u8>)>,
    nchunks: usize,
}

impl FrameHeader {
    /// Parses the header from the first bytes of a frame.
    ///
    /// `prefix` must hold at least `header_len` bytes; extra bytes are ignored. If it is
    /// shorter, returns [`FrameError::NeedMore`] with the total length to supply, so a remote
    /// reader fetches exactly the shortfall. Errors: [`FrameError::BadMagic`],
    /// [`FrameError::Malformed`], [`FrameError::OutOfRange`] (header longer than the frame, data
    /// section past the frame end, negative sizes, too many chunks), [`FrameError::Unsupported`]
    /// (sparse frames, offsets other than 64-bit).
    pub fn parse(prefix: &[u8]) -> Result<FrameHeader, FrameError> {
        Self::parse_with_len(prefix, None)
    }

    /// As [`FrameHeader::parse`], and also checks `frame_len` against `object_len`, the size in
    /// bytes of the object that holds exactly this frame (a `.b2nd` file). Pass `None` for a frame
    /// embedded in a larger object.
    pub fn parse_with_len(
        prefix: &[u8],
        object_len: Option<u64>,
    ) -> Result<FrameHeader, FrameError> {
        // Bytes 1..10 are the magic (str 8); check whatever part of it is present first, so a
        // wrong object is reported as such rather than as "need more bytes".
        let mut expect = [0u8; 9];
        expect[0] = 0xa8;
        expect[1..].copy_from_slice(MAGIC);
        let present = prefix.len().min(10).saturating_sub(1);
        if prefix.len() > 1 && prefix[1..1 + present] != expect[..present] {
            return Err(FrameError::BadMagic);
        }
        // The header size is an int32 at bytes 10..15.
        if prefix.len() < 15 {
            return Err(FrameError::NeedMore {
                needed: HEADER_MIN_LEN,
                got: prefix.len(),
            });
        }
        let header_len = Cursor::new(prefix, 10).int("header_len")?;
        if header_len < HEADER_MIN_LEN as i64 || header_len > MAX_HEADER_LEN as i64 {
            return Err(out_of_range(
                "header_len",
                header_len,
                "between HEADER_MIN_LEN and MAX_HEADER_LEN",
            ));
        }
        let header_len = header_len as usize;
        if prefix.len() < header_len {
            return Err(FrameError::NeedMore {
                needed: header_len,
                got: prefix.len(),
            });
        }
        let h = &prefix[..header_len];
        let mut c = Cursor::new(h, 0);
        let items = c.array_len("header array")?;
        if items != 14 {
            return Err(FrameError::Unsupported {
                what: "header item count",
                value: items.into(),
            });
        }
        if c.str_bytes("magic")? != MAGIC {
            return Err(FrameError::BadMagic);
        }
        c.int("header_len")?;
        let frame_len = c.uint("frame_len")?;
        let flags = c.str_bytes("flags")?;
        let &[general, frame_type, codec_flags, other_flags] = flags else {
            return Err(FrameError::Malformed {
                field: "flags",
                offset: c.pos(),
            });
        };
        let nbytes = c.int("nbytes")?;
        let cbytes = c.int("cbytes")?;
        let typesize = c.int("typesize")?;
        let blocksize = c.int("blocksize")?;
        let chunksize = c.int("chunksize")?;
        c.int("nthreads_comp")?;
        c.int("nthreads_decomp")?;
        let has_vlmetalayers = c.bool("has_vlmetalayers")?;
        let (nfilters, pipeline) = c.fixext16("filter pipeline")?;

        // Flags (README_CFRAME_FORMAT.rst "general_flags", "frame_type").
        if (general >> 4) & 0x3 != 1 {
            return Err(FrameError::Unsupported {
                what: "chunk offsets width code (1 = 64-bit)",
                value: ((general >> 4) & 0x3).into(),
            });
        }
        if frame_type & 0x0f != 0 {
            return Err(FrameError::Unsupported {
                what: "frame type (0 = contiguous)",
                value: (frame_type & 0x0f).into(),
            });
        }
        if nfilters < 0 || nfilters as usize > MAX_FILTERS {
            return Err(out_of_range("nfilters", nfilters, "0..=6"));
        }
        let mut codec = codec_flags & 0x0f;
        if codec == UDCODEC_FORMAT {
            codec = pipeline[6];
        }

        // Sizes.
        if frame_len < header_len as u64 {
            return Err(out_of_range("frame_len", frame_len, "at least header_len"));
        }
        if let Some(object_len) = object_len {
            if object_len != frame_len {
                return Err(FrameError::FrameLenMismatch {
                    frame_len,
                    object_len,
                });
            }
        }
        if nbytes < 0 {
            return Err(out_of_range("nbytes", nbytes, "not negative"));
        }
        if cbytes < 0
            || (header_len as u64)
                .checked_add(cbytes as u64)
                .is_none_or(|e| e > frame_len)
        {
            return Err(out_of_range(
                "cbytes",
                cbytes,
                "data section within the frame",
            ));
        }
        if typesize <= 0 || typesize > i32::MAX as i64 {
            return Err(out_of_range("typesize", typesize, "positive int32"));
        }
        if !(0..=i32::MAX as i64).contains(&blocksize) {
            return Err(out_of_range("blocksize", blocksize, "non-negative int32"));
        }
        if !(0..=i32::MAX as i64).contains(&chunksize) {
            return Err(out_of_range("chunksize", chunksize, "non-negative int32"));
        }
        // Number of chunks (get_header_info): ceil(nbytes / chunksize) when both are known.
        let nchunks = if nbytes > 0 && chunksize > 0 {
            let n = (nbytes as u64).div_ceil(chunksize as u64);
            if n > MAX_CHUNKS as u64 {
                return Err(out_of_range("nchunks", n, "at most MAX_CHUNKS"));
            }
            n as usize
        } else {
            0
        };
        // The tail (offsets chunk + trailer) must at least hold a chunk header when there are
        // chunks, and the trailer's fixed end.
        let index_len = frame_len - header_len as u64 - cbytes as u64;
        let min_index = TRAILER_FIXED_LEN as u64
            + if nbytes > 0 {
                CHUNK_HEADER_LEN as u64
            } else {
                0
            };
        if index_len < min_index {
            return Err(out_of_range(
                "index length",
                index_len,
                "room for the offsets chunk and the trailer",
            ));
        }

        // Metalayers: [idx_size, {name: offset}, [bin contents]] (get_meta_from_header).
        if c.pos() != HEADER_MIN_LEN {
            return Err(FrameError::Malformed {
                field: "fixed header length",
                offset: c.pos(),
            });
        }
        let metalayers = read_metalayers(&mut c, h, MAX_METALAYERS, "metalayers")?;

        let mut filters = [0u8; MAX_FILTERS];
        let mut filters_meta = [0u8; MAX_FILTERS];
        filters.copy_from_slice(&pipeline[0..6]);
        filters_meta.copy_from_slice(&pipeline[8..14]);
        Ok(FrameHeader {
            header_len,
            frame_len,
            nbytes,
            cbytes,
            typesize: typesize as usize,
            blocksize: blocksize as usize,
            chunksize: chunksize as usize,
            format_version: general & 0x0f,
            codec,
            codec_meta: pipeline[7],
            clevel: codec_flags >> 4,
            splitmode: other_flags.wrapping_add(1),
            filters,
            filters_meta,
            has_vlmetalayers,
            metalayers,
            nchunks,
        })
    }

    /// Number of data chunks implied by the header: `ceil(nbytes / chunksize)`, as
    /// `get_header_info` computes it. It is 0 for an empty frame and also when `chunksize` is 0
    /// (chunks of variable size); then [`FrameIndex::chunks`] (from the offsets chunk) is the
    /// authority.
    pub fn nchunks(&self) -> usize {
        self.nchunks
    }

    /// Absolute byte range of the offsets chunk and the trailer: `header_len + cbytes ..
    /// frame_len`. Fetch these bytes and pass them to [`parse_index`].
    pub fn index_range(&self) -> Range<u64> {
        self.data_end()..self.frame_len
    }

    /// Absolute byte range of the data chunks section: `header_len .. header_len + cbytes`.
    pub fn data_range(&self) -> Range<u64> {
        self.header_len as u64..self.data_end()
    }

    fn data_end(&self) -> u64 {
        self.header_len as u64 + self.cbytes as u64
    }

    /// The content of the fixed-size metalayer `name` (e.g. `"b2nd"`), if present.
    pub fn metalayer(&self, name: &str) -> Option<&[u8]> {
        self.metalayers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Reads a metalayers section `[idx_size, {name: offset}, [bin ...]]` whose offsets are relative
/// to the start of `base` (the header, or the trailer for vlmetalayers). Returns `(name, raw
/// content)` pairs, each content checked to lie inside `base`.
fn read_metalayers(
    c: &mut Cursor<'_>,
    base: &[u8],
    max: u32,
    field: &'static str,
) -> Result<Vec<(String, Vec<u8>)>, FrameError> {
    if c.array_len(field)? != 3 {
        return Err(FrameError::Malformed {
            field,
            offset: c.pos(),
        });
    }
    c.uint("metalayers index size")?;
    let n = c.map_len("metalayers map")?;
    if n > max {
        return Err(out_of_range("number of metalayers", n, "format maximum"));
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let name = c.str("metalayer name")?.to_owned();
        let offset = c.int("metalayer offset")?;
        if offset < 0 || offset as u64 >= base.len() as u64 {
            return Err(out_of_range(
                "metalayer offset",
                offset,
                "inside its header or trailer",
            ));
        }
        let content = Cursor::new(base, offset as usize).bin("metalayer content")?;
        out.push((name, content.to_vec()));
    }
    if c.array_len("metalayer contents")? != n {
        return Err(FrameError::Malformed {
            field: "metalayer contents",
            offset: c.pos(),
        });
    }
    Ok(out)
}

/// Kinds of special-value chunks a frame encodes in its offsets (no bytes stored).
///
/// Source: `frame_special_chunk` in `frame.c`: byte 7 of the little-endian offset has bit 7 set
/// and one of `BLOSC2_SPECIAL_ZERO` (1), `BLOSC2_SPECIAL_NAN` (2), `BLOSC2_SPECIAL_UNINIT` (4)
/// as a bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecialKind {
    /// Every byte is zero.
    Zeros,
    /// Every item is a NaN (float32 or float64 per typesize).
    Nan,
    /// Uninitialised: C-Blosc2 leaves the destination untouched; chunkwise yields zeros.
    Uninit,
}

impl SpecialKind {
    /// Fills `out` with this special value for items of `typesize` bytes (NaN as the
    /// little-endian IEEE quiet NaN, as `blosc2_chunk_nans` writes it).
    /// Errors if NaN is asked for a typesize other than 4 or 8 (C-Blosc2 refuses those too).
    pub fn fill(self, typesize: usize, out: &mut [u8]) -> Result<(), FrameError> {
        match self {
            SpecialKind::Zeros | SpecialKind::Uninit => out.fill(0),
            SpecialKind::Nan => {
                let pattern: &[u8] = match typesize {
                    4 => &[0x00, 0x00, 0xc0, 0x7f],
                    8 => &[0, 0, 0, 0, 0, 0, 0xf8, 0x7f],
                    _ => {
                        return Err(FrameError::Unsupported {
                            what: "NaN chunk typesize",
                            value: typesize as i64,
                        })
                    }
                };
                for (i, b) in out.iter_mut().enumerate() {
                    *b = pattern[i % typesize];
                }
            }
        }
        Ok(())
    }
}

/// Where a data chunk lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkLocation {
    /// Stored at `offset`, absolute in the frame (`header_len` + the relative offset). Its
    /// length is the `cbytes` of its own 32-byte chunk header.
    Stored { offset: u64 },
    /// Not stored: every item has a special value.
    Special(SpecialKind),
}

/// The decoded offsets chunk and trailer of a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameIndex {
    /// One location per data chunk, in chunk order.
    pub chunks: Vec<ChunkLocation>,
    /// Variable-length metalayers from the trailer: `(name, content)`, the content being the
    /// decoded msgpack bytes (the trailer stores each as a Blosc2 chunk).
    pub vlmetalayers: Vec<(String, Vec<u8>)>,
    /// Sorted distinct absolute start offsets of stored chunks, then the end of the data section.
    bounds: Vec<u64>,
}

impl FrameIndex {
    /// Number of data chunks.
    pub fn nchunks(&self) -> usize {
        self.chunks.len()
    }

    /// The decoded content of the variable-length metalayer `name`, if present.
    pub fn vlmetalayer(&self, name: &str) -> Option<&[u8]> {
        self.vlmetalayers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Absolute byte range that holds stored chunk `i`, known from the offsets alone: from its
    /// offset to the next larger stored offset, the last one ending at `header_len + cbytes`.
    ///
    /// The range is exact for frames written once (chunks back to back, as python-blosc2 and
    /// `frame_from_schunk` write them). It can be longer than the chunk when a chunk was rewritten
    /// in place (`frame_update_chunk` appends the new version and leaves the old bytes unused); a
    /// reader that needs the exact length fetches the 32-byte chunk header first and reads its
    /// `cbytes`. Returns `None` for special-value chunks and for `i >= nchunks`.
    pub fn chunk_range(&self, i: usize) -> Option<Range<u64>> {
        let ChunkLocation::Stored { offset } = *self.chunks.get(i)? else {
            return None;
        };
        // `bounds` is sorted and holds every stored offset, then the data end (> all offsets).
        let k = self.bounds.partition_point(|&b| b <= offset);
        Some(offset..self.bounds[k])
    }
}

/// Parses the offsets chunk (at the start of `tail`) and the trailer (at its end).
///
/// `tail` must be exactly the bytes of [`FrameHeader::index_range`]. Errors:
/// [`FrameError::TailLen`], [`FrameError::Malformed`] (trailer markers, msgpack),
/// [`FrameError::OutOfRange`] (trailer length, offsets chunk size disagreeing with the number of
/// chunks), [`FrameError::ChunkOffset`] (a stored chunk outside the data section),
/// [`FrameError::Chunk`] (the offsets chunk or a vlmetalayer chunk does not decode).
///
/// Sources: `get_coffsets`, `get_coffset`, `frame_get_vlmetalayers`, `frame_update_trailer` in
/// `frame.c`.
pub fn parse_index(header: &FrameHeader, tail: &[u8]) -> Result<FrameIndex, FrameError> {
    let range = header.index_range();
    let expected = range.end - range.start;
    if tail.len() as u64 != expected {
        return Err(FrameError::TailLen {
            expected,
            got: tail.len(),
        });
    }
    let n = tail.len();
    // The trailer's fixed end: 0xce, u32 trailer_len, 0xd8 (fixext 16), fingerprint type, 16 bytes.
    if n < TRAILER_FIXED_LEN || tail[n - 23] != 0xce || tail[n - 18] != 0xd8 {
        return Err(FrameError::Malformed {
            field: "trailer length",
            offset: n.saturating_sub(23),
        });
    }
    let trailer_len = u32::from_be_bytes([tail[n - 22], tail[n - 21], tail[n - 20], tail[n - 19]]);
    if (trailer_len as usize) < TRAILER_FIXED_LEN || trailer_len as u64 > n as u64 {
        return Err(out_of_range(
            "trailer_len",
            trailer_len,
            "within the index bytes",
        ));
    }
    let trailer_start = n - trailer_len as usize;

    // Offsets chunk.
    let data_start = header.header_len as u64;
    let data_len = header.cbytes as u64;
    let mut chunks = Vec::new();
    if header.nbytes > 0 {
        let offsets_chunk = &tail[..trailer_start];
        let h = ChunkHeader::parse(offsets_chunk).map_err(|source| FrameError::Chunk {
            what: "offsets chunk",
            source,
        })?;
        let nchunks = if header.chunksize > 0 {
            header.nchunks
        } else {
            // Variable-size chunks: the offsets chunk is the only count.
            if h.nbytes % 8 != 0 {
                return Err(out_of_range(
                    "offsets chunk nbytes",
                    h.nbytes as u64,
                    "a multiple of 8",
                ));
            }
            h.nbytes / 8
        };
        if nchunks > MAX_CHUNKS {
            return Err(out_of_range(
                "nchunks",
                nchunks as u64,
                "at most MAX_CHUNKS",
            ));
        }
        if h.nbytes != nchunks * 8 {
            return Err(out_of_range(
                "offsets chunk nbytes",
                h.nbytes as u64,
                "8 x the number of chunks in the header",
            ));
        }
        let (_, raw) = decode_embedded_chunk("offsets chunk", offsets_chunk, nchunks * 8)?;
        chunks.reserve_exact(nchunks);
        for (i, word) in raw.chunks_exact(8).enumerate() {
            let off = i64::from_le_bytes(word.try_into().expect("8-byte slice"));
            chunks.push(location(i, off, data_start, data_len)?);
        }
    }

    // Trailer: [version, vlmetalayers, trailer_len, fingerprint].
    let t = &tail[trailer_start..];
    let mut c = Cursor::new(t, 0);
    if c.array_len("trailer array")? != 4 {
        return Err(FrameError::Malformed {
            field: "trailer array",
            offset: trailer_start,
        });
    }
    c.int("trailer version")?;
    let raw_vl = read_metalayers(&mut c, t, MAX_VLMETALAYERS, "vlmetalayers")?;
    let mut vlmetalayers = Vec::with_capacity(raw_vl.len());
    for (name, content) in raw_vl {
        let (_, value) = decode_embedded_chunk("vlmetalayer chunk", &content, MAX_VLMETALAYER_LEN)?;
        vlmetalayers.push((name, value));
    }

    let mut bounds: Vec<u64> = chunks
        .iter()
        .filter_map(|c| match c {
            ChunkLocation::Stored { offset } => Some(*offset),
            ChunkLocation::Special(_) => None,
        })
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.push(data_start + data_len);
    Ok(FrameIndex {
        chunks,
        vlmetalayers,
        bounds,
    })
}

/// Maps one offset from the offsets chunk to a location, checking stored chunks lie in the data
/// section with room for at least a chunk header.
fn location(
    chunk: usize,
    off: i64,
    data_start: u64,
    data_len: u64,
) -> Result<ChunkLocation, FrameError> {
    if off < 0 {
        let kind = match (off as u64 >> 56) as u8 {
            0x81 => SpecialKind::Zeros,
            0x82 => SpecialKind::Nan,
            0x84 => SpecialKind::Uninit,
            _ => {
                return Err(FrameError::ChunkOffset {
                    chunk,
                    offset: off,
                    data_len,
                })
            }
        };
        return Ok(ChunkLocation::Special(kind));
    }
    if (off as u64).saturating_add(CHUNK_HEADER_LEN as u64) > data_len {
        return Err(FrameError::ChunkOffset {
            chunk,
            offset: off,
            data_len,
        });
    }
    Ok(ChunkLocation::Stored {
        offset: data_start + off as u64,
    })
}

/// Decodes one whole Blosc2 chunk at the start of `src` (the offsets chunk or a vlmetalayer
/// value) with the chunk decoder, refusing to decode more than `max_nbytes` bytes.
/// Returns the header and the decoded bytes.
fn decode_embedded_chunk(
    what: &'static str,
    src: &[u8],
    max_nbytes: usize,
) -> Result<(ChunkHeader, Vec<u8>), FrameError> {
    let wrap = |source| FrameError::Chunk { what, source };
    let h = ChunkHeader::parse(src).map_err(wrap)?;
    if h.cbytes > src.len() {
        return Err(wrap(CodecError::Truncated {
            what: "chunk",
            needed: h.cbytes,
            available: src.len(),
        }));
    }
    if h.nbytes > max_nbytes {
        return Err(out_of_range(
            what,
            h.nbytes as u64,
            "decoded size within the frame's limits",
        ));
    }
    let data = decode_chunk(&src[..h.cbytes]).map_err(wrap)?;
    Ok((h, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_offsets_map_to_kinds() {
        let z = i64::from_le_bytes([0, 0, 0, 0, 0, 0, 0, 0x81]);
        let nan = i64::from_le_bytes([0, 0, 0, 0, 0, 0, 0, 0x82]);
        let un = i64::from_le_bytes([0, 0, 0, 0, 0, 0, 0, 0x84]);
        let bad = i64::from_le_bytes([0, 0, 0, 0, 0, 0, 0, 0x90]);
        assert_eq!(
            location(0, z, 100, 50).unwrap(),
            ChunkLocation::Special(SpecialKind::Zeros)
        );
        assert_eq!(
            location(0, nan, 100, 50).unwrap(),
            ChunkLocation::Special(SpecialKind::Nan)
        );
        assert_eq!(
            location(0, un, 100, 50).unwrap(),
            ChunkLocation::Special(SpecialKind::Uninit)
        );
        assert!(location(0, bad, 100, 50).is_err());
        assert_eq!(
            location(1, 18, 100, 50).unwrap(),
            ChunkLocation::Stored { offset: 118 }
        );
        // 19 + 32 > 50: no room for a chunk header.
        assert!(matches!(
            location(1, 19, 100, 50),
            Err(FrameError::ChunkOffset {
                chunk: 1,
                offset: 19,
                data_len: 50
            })
        ));
    }

    #[test]
    fn chunk_ranges_follow_sorted_offsets() {
        // Chunk 1 was rewritten and moved past chunk 2; chunk 3 is special; chunk 4 shares
        // chunk 0's bytes. Data section ends at 400.
        let chunks = vec![
            ChunkLocation::Stored { offset: 100 },
            ChunkLocation::Stored { offset: 300 },
            ChunkLocation::Stored { offset: 200 },
            ChunkLocation::Special(SpecialKind::Zeros),
            ChunkLocation::Stored { offset: 100 },
        ];
        let index = FrameIndex {
            chunks,
            vlmetalayers: vec![],
            bounds: vec![100, 200, 300, 400],
        };
        assert_eq!(index.chunk_range(0), Some(100..200));
        assert_eq!(index.chunk_range(1), Some(300..400));
        assert_eq!(index.chunk_range(2), Some(200..300));
        assert_eq!(index.chunk_range(3), None);
        assert_eq!(index.chunk_range(4), Some(100..200));
        assert_eq!(index.chunk_range(5), None);
    }

    #[test]
    fn nan_fill_patterns() {
        let mut b = [0u8; 8];
        SpecialKind::Nan.fill(4, &mut b).unwrap();
        assert!(f32::from_le_bytes(b[..4].try_into().unwrap()).is_nan());
        assert!(f32::from_le_bytes(b[4..].try_into().unwrap()).is_nan());
        SpecialKind::Nan.fill(8, &mut b).unwrap();
        assert!(f64::from_le_bytes(b).is_nan());
        assert!(SpecialKind::Nan.fill(2, &mut b).is_err());
        SpecialKind::Zeros.fill(8, &mut b).unwrap();
        assert_eq!(b, [0; 8]);
    }
}
