//! Blosc2 NDim arrays stored as contiguous frames (`.b2nd`).
//!
//! Discovery reads the frame header (one bounded read from the start, extended by exactly the
//! shortfall if the header is longer), the `b2nd` metalayer inside it, then the offsets chunk
//! and trailer at the end of the frame (one read of [`FrameHeader::index_range`], none when the
//! opener read the frame's tail with its head: [`B2ndArray::open_with_tail`]). Chunks are
//! then located by their offsets; a stored chunk spans from its offset to the next stored
//! offset (chunks are written back to back, C-Blosc2 `frame.c`), the last one to the end of
//! the data section. Special-value chunks (zeros, NaN, uninitialised) are never fetched.
//!
//! Attributes are the frame's variable-length metalayers (python-blosc2 `arr.vlmeta`), read
//! from the trailer with the index ([`crate::codec::blosc2::vlmeta`]); so the discovery seed,
//! which keeps the index bytes, has them too. python-blosc2 names no dimensions: `dims` is
//! `None`.

use super::{ArrayFormat, ArrayInfo, ChunkDecodeError, ChunkPlace, FormatError};
use crate::codec::blosc2::b2nd::B2ndMeta;
use crate::codec::blosc2::frame::{self, ChunkLocation, FrameHeader, FrameIndex, SpecialKind};
use crate::codec::blosc2::{decode_chunk, ChunkHeader};
use crate::dtype::DType;
use crate::io::{ByteRange, RangeSource};
use crate::selection::Grid;
use bytes::Bytes;
use std::ops::Range;

const FORMAT: &str = "b2nd";

pub use super::signature::is_b2nd_frame as is_frame;

/// A discovered `.b2nd` array.
#[derive(Debug, Clone)]
pub struct B2ndArray {
    location: String,
    header: FrameHeader,
    /// The frame header's bytes, kept for the discovery seed.
    header_bytes: Bytes,
    /// The offsets chunk and trailer, kept for the discovery seed.
    index_bytes: Bytes,
    meta: B2ndMeta,
    grid: Grid,
    dtype: DType,
    /// Per chunk (linear index): stored byte range, or the special value.
    places: Vec<Place>,
    source_len: u64,
    /// The vlmeta, as attributes.
    attrs: crate::attrs::Attrs,
    /// Format name [`ArrayFormat::info`] reports: `b2nd`, or `b2z` for a leaf of a `.b2z`.
    format_name: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Stored(Range<u64>),
    Special(SpecialKind),
}

fn invalid(location: &str, detail: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid {
        location: location.to_string(),
        format: FORMAT,
        detail: detail.to_string(),
    }
}

/// A frame error as the format's: a well-formed frame feature this reader does not read (a
/// sparse frame's `chunks.b2frame`, 32-bit offsets, ...) is `UNSUPPORTED`, anything else
/// `INVALID_DATA`.
fn frame_error(location: &str, e: frame::FrameError) -> FormatError {
    match e {
        frame::FrameError::Unsupported { .. } => FormatError::Unsupported {
            location: location.to_string(),
            format: FORMAT,
            detail: e.to_string(),
        },
        e => invalid(location, e),
    }
}

impl B2ndArray {
    /// Discovers a `.b2nd` frame. `head` holds the first bytes of the source (at least the
    /// frame's magic) and `len` its total size; at most two more reads follow (the rest of a
    /// long header, and the offsets chunk with the trailer), none if `head` holds everything.
    ///
    /// # Errors
    /// [`FormatError::Invalid`] for a malformed frame, metalayer or index; I/O errors
    /// ([`crate::Error::Io`]).
    pub async fn open(source: &dyn RangeSource, head: Bytes, len: u64) -> crate::Result<B2ndArray> {
        Self::open_with_tail(source, head, None, len).await
    }

    /// [`B2ndArray::open`] with the last bytes of the source already read: `tail` is their
    /// start offset and the bytes up to `len`. The index (offsets chunk and trailer) is
    /// taken from `head` or `tail` where they hold it; only a part neither holds is read
    /// (one request).
    ///
    /// # Errors
    /// As [`B2ndArray::open`].
    pub async fn open_with_tail(
        source: &dyn RangeSource,
        head: Bytes,
        tail: Option<(u64, Bytes)>,
        len: u64,
    ) -> crate::Result<B2ndArray> {
        let location = source.location().to_string();
        let mut head = head;
        let header = loop {
            match FrameHeader::parse(&head) {
                Ok(h) => break h,
                Err(frame::FrameError::NeedMore { needed, .. }) if needed > head.len() => {
                    let needed = (needed as u64).min(len);
                    if needed <= head.len() as u64 {
                        return Err(
                            invalid(&location, "frame header longer than the source").into()
                        );
                    }
                    let more = source
                        .read(ByteRange::bounded(head.len() as u64..needed))
                        .await?;
                    let mut v = head.to_vec();
                    v.extend_from_slice(&more.bytes);
                    head = Bytes::from(v);
                }
                Err(e) => return Err(frame_error(&location, e).into()),
            }
        };
        if header.frame_len != len {
            return Err(invalid(
                &location,
                format!(
                    "frame length {} but the source has {len} bytes",
                    header.frame_len
                ),
            )
            .into());
        }
        let index_range = header.index_range();
        if index_range.start > index_range.end || index_range.end > len {
            return Err(invalid(&location, "offsets chunk outside the frame").into());
        }
        // The tail read with the head, when it reaches the source's end.
        let tail = tail.filter(|(start, bytes)| start.checked_add(bytes.len() as u64) == Some(len));
        let tail = if index_range.end <= head.len() as u64 {
            head.slice(index_range.start as usize..index_range.end as usize)
        } else if let Some((start, bytes)) = tail.filter(|(start, _)| *start < index_range.end) {
            if index_range.start >= start {
                bytes.slice((index_range.start - start) as usize..)
            } else {
                // The tail holds the index's end: read its start only.
                let more = source
                    .read(ByteRange::bounded(index_range.start..start))
                    .await?
                    .bytes;
                let mut v = Vec::with_capacity((index_range.end - index_range.start) as usize);
                v.extend_from_slice(&more);
                v.extend_from_slice(&bytes);
                Bytes::from(v)
            }
        } else {
            source
                .read(ByteRange::bounded(index_range.clone()))
                .await?
                .bytes
        };
        let header_bytes = head.slice(..header.header_len.min(head.len()));
        Ok(Self::from_parts(location, header_bytes, tail, len)?)
    }

    /// Builds the array from the bytes discovery read, without I/O: `header` the frame header
    /// (its first [`FrameHeader::header_len`] bytes), `index` the bytes of
    /// [`FrameHeader::index_range`] (offsets chunk and trailer), `len` the source size. This
    /// is how a cached discovery seed ([`B2ndSeed`]) reopens a frame.
    ///
    /// # Errors
    /// [`FormatError::Invalid`] or [`FormatError::Unsupported`] as [`B2ndArray::open`].
    pub fn from_parts(
        location: String,
        header_bytes: Bytes,
        index: Bytes,
        len: u64,
    ) -> Result<B2ndArray, FormatError> {
        let header = FrameHeader::parse(&header_bytes).map_err(|e| frame_error(&location, e))?;
        if header.frame_len != len {
            return Err(invalid(
                &location,
                format!(
                    "frame length {} but the source has {len} bytes",
                    header.frame_len
                ),
            ));
        }
        let meta_bytes = header
            .metalayer("b2nd")
            .ok_or_else(|| FormatError::Unsupported {
                location: location.clone(),
                format: FORMAT,
                detail: "frame has no b2nd metalayer (a plain super-chunk, not an NDim array)"
                    .into(),
            })?;
        if let Some(detail) = carrier(&header) {
            return Err(FormatError::Unsupported {
                location: location.clone(),
                format: FORMAT,
                detail,
            });
        }
        let meta = B2ndMeta::parse(meta_bytes).map_err(|e| invalid(&location, e))?;
        let dtype = DType::parse(&meta.dtype).map_err(|e| FormatError::Unsupported {
            location: location.clone(),
            format: FORMAT,
            detail: e.to_string(),
        })?;
        if dtype.itemsize != header.typesize {
            return Err(invalid(
                &location,
                format!(
                    "dtype {} but frame typesize {}",
                    meta.dtype, header.typesize
                ),
            ));
        }
        // An empty array (a zero extent) has no chunk; python-blosc2 writes its chunk and
        // block shapes as zeros, which the grid takes as extents of 1 (the chunk count stays 0).
        let (chunks, blocks) = if meta.shape.contains(&0) {
            let one = |v: &[u64]| v.iter().map(|&x| x.max(1)).collect::<Vec<u64>>();
            (one(&meta.chunkshape), one(&meta.blockshape))
        } else {
            (meta.chunkshape.clone(), meta.blockshape.clone())
        };
        let grid =
            Grid::new(meta.shape.clone(), chunks, blocks).map_err(|e| invalid(&location, e))?;
        let nchunks = grid
            .nchunks()
            .ok_or_else(|| invalid(&location, "chunk count overflows"))?;
        let chunk_bytes = grid
            .decoded_chunk_items()
            .ok()
            .and_then(|n| n.checked_mul(dtype.itemsize as u64))
            .ok_or_else(|| invalid(&location, "chunk size overflows"))?;
        if header.chunksize as u64 != chunk_bytes && nchunks > 0 {
            return Err(invalid(
                &location,
                format!(
                    "frame chunksize {} but the b2nd geometry needs {chunk_bytes} bytes per chunk",
                    header.chunksize
                ),
            ));
        }
        let index_range = header.index_range();
        if index.len() as u64 != index_range.end.saturating_sub(index_range.start) {
            return Err(invalid(
                &location,
                format!(
                    "index holds {} bytes, the frame says {index_range:?}",
                    index.len()
                ),
            ));
        }
        let parsed = frame::parse_index(&header, &index).map_err(|e| frame_error(&location, e))?;
        let places = chunk_places(&location, &parsed, nchunks)?;
        let attrs = crate::codec::blosc2::vlmeta::attrs(&parsed.vlmetalayers);
        Ok(B2ndArray {
            location,
            header,
            header_bytes,
            index_bytes: index,
            meta,
            grid,
            dtype,
            places,
            source_len: len,
            attrs,
            format_name: FORMAT,
        })
    }

    /// This frame as a leaf of a `.b2z` container: [`ArrayFormat::info`] reports format
    /// `b2z` (and `source_bytes` the member's size).
    pub fn in_b2z(mut self) -> B2ndArray {
        self.format_name = "b2z";
        self
    }

    /// The bytes needed to rebuild this array with [`B2ndArray::from_parts`]: frame header
    /// and index (offsets chunk plus trailer).
    pub fn parts(&self) -> (Bytes, Bytes) {
        (self.header_bytes.clone(), self.index_bytes.clone())
    }

    /// The `b2nd` metalayer.
    pub fn meta(&self) -> &B2ndMeta {
        &self.meta
    }

    /// The frame header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }
}

/// Stored range of each chunk (from the offsets alone, [`FrameIndex::chunk_range`]) or its
/// special value.
fn chunk_places(
    location: &str,
    index: &FrameIndex,
    nchunks: u64,
) -> Result<Vec<Place>, FormatError> {
    if index.chunks.len() as u64 != nchunks {
        return Err(invalid(
            location,
            format!(
                "offsets chunk lists {} chunks, geometry needs {nchunks}",
                index.chunks.len()
            ),
        ));
    }
    index
        .chunks
        .iter()
        .enumerate()
        .map(|(i, c)| match c {
            ChunkLocation::Stored { .. } => index
                .chunk_range(i)
                .map(Place::Stored)
                .ok_or_else(|| invalid(location, format!("chunk {i} has no stored range"))),
            ChunkLocation::Special(k) => Ok(Place::Special(*k)),
        })
        .collect()
}

/// Codec and filters of a frame, e.g. `LZ4(5) + SHUFFLE`.
fn describe_codecs(h: &FrameHeader) -> String {
    let codec = match h.codec {
        0 => "BLOSCLZ".to_string(),
        1 => "LZ4".to_string(),
        2 => "LZ4HC".to_string(),
        3 => "SNAPPY".to_string(),
        4 => "ZLIB".to_string(),
        5 => "ZSTD".to_string(),
        n => format!("codec {n}"),
    };
    let mut parts = vec![format!("{codec}({})", h.clevel)];
    for (&f, &m) in h.filters.iter().zip(&h.filters_meta) {
        let name = match f {
            0 => continue,
            1 => "SHUFFLE".to_string(),
            2 => "BITSHUFFLE".to_string(),
            3 => "DELTA".to_string(),
            4 => format!("TRUNC_PREC({})", m as i8),
            35 => "BYTEDELTA".to_string(),
            n => format!("filter {n}"),
        };
        parts.push(name);
    }
    parts.join(" + ")
}

impl ArrayFormat for B2ndArray {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn dtype(&self) -> DType {
        self.dtype
    }

    fn info(&self) -> ArrayInfo {
        ArrayInfo {
            format: self.format_name,
            shape: self.grid.shape.clone(),
            dtype: self.dtype.to_string(),
            chunks: self.grid.chunks.clone(),
            blocks: self.grid.blocks.clone(),
            codecs: describe_codecs(&self.header),
            nchunks: Some(self.places.len() as u64),
            // numpy's nbytes, as the other formats report it; the frame header's uncompressed
            // size counts edge chunks padded to whole chunks.
            nbytes: ArrayInfo::nbytes_of(&self.grid.shape, self.dtype.itemsize),
            cbytes: self.header.cbytes.max(0) as u64,
            source_bytes: self.source_len,
        }
    }

    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError> {
        let place = self
            .places
            .get(chunk as usize)
            .ok_or_else(|| invalid(&self.location, format!("chunk {chunk} outside the grid")))?;
        Ok(match place {
            Place::Stored(r) => ChunkPlace::Stored(r.clone()),
            Place::Special(k) => {
                let mut one = vec![0u8; self.dtype.itemsize];
                k.fill(self.dtype.itemsize, &mut one)
                    .map_err(|e| invalid(&self.location, e))?;
                ChunkPlace::Fill(one)
            }
        })
    }

    fn decode(&self, chunk: u64, stored: &[u8]) -> Result<Vec<u8>, FormatError> {
        let err = |source: ChunkDecodeError| FormatError::Chunk {
            location: self.location.clone(),
            chunk,
            range: None,
            source,
        };
        let h = ChunkHeader::parse(stored).map_err(|e| err(e.into()))?;
        if let Some(e) = self.blosc2_header_error(&h) {
            return Err(err(e));
        }
        decode_chunk(stored).map_err(|e| err(e.into()))
    }

    fn blosc2_blocks(&self) -> bool {
        // b2nd chunks hold blocks of `blockshape` in C order (C-Blosc2 b2nd.c), exactly the
        // planner's layout, and blocksize == prod(blockshape) * itemsize.
        self.header.blocksize as u64 == self.grid.block_items() * self.dtype.itemsize as u64
    }

    fn payload_is_blosc2(&self) -> bool {
        true
    }

    fn blosc2_header_error(&self, h: &ChunkHeader) -> Option<ChunkDecodeError> {
        (h.nbytes != self.header.chunksize).then(|| {
            ChunkDecodeError::Layout(format!(
                "chunk holds {} bytes, frame chunks hold {}",
                h.nbytes, self.header.chunksize
            ))
        })
    }

    /// The vlmeta ([`crate::codec::blosc2::vlmeta`]).
    fn attrs(&self) -> crate::attrs::Attrs {
        self.attrs.clone()
    }

    fn seed(&self) -> Option<crate::formats::Seed> {
        use crate::formats::FormatSeed;
        Some(
            B2ndSeed {
                header: self.header_bytes.clone(),
                index: self.index_bytes.clone(),
            }
            .to_seed(),
        )
    }
}

/// The discovery seed of a frame: the bytes [`B2ndArray::from_parts`] takes, as lower-case
/// hexadecimal in records (`{"header": "<hex>", "index": "<hex>"}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct B2ndSeed {
    /// The frame header ([`FrameHeader::header_len`] bytes).
    #[serde(with = "hex_bytes")]
    pub header: Bytes,
    /// The offsets chunk and trailer ([`FrameHeader::index_range`]).
    #[serde(with = "hex_bytes")]
    pub index: Bytes,
}

impl crate::formats::FormatSeed for B2ndSeed {
    const FORMAT: &'static str = "b2nd";
    const VERSION: u32 = 1;
}

impl B2ndSeed {
    /// The frame this seed describes, for the source at `location` of `len` bytes.
    ///
    /// # Errors
    /// As [`B2ndArray::from_parts`] (an inconsistent seed; callers take it as a miss).
    pub fn rebuild(&self, location: &str, len: u64) -> Result<B2ndArray, FormatError> {
        B2ndArray::from_parts(
            location.to_string(),
            self.header.clone(),
            self.index.clone(),
            len,
        )
    }
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(b: &bytes::Bytes, s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(b.len() * 2);
        for x in b.iter() {
            out.push_str(&format!("{x:02x}"));
        }
        s.serialize_str(&out)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bytes::Bytes, D::Error> {
        let s = String::deserialize(d)?;
        let bad = || serde::de::Error::custom("not hexadecimal");
        if !s.len().is_multiple_of(2) {
            return Err(bad());
        }
        (0..s.len())
            .step_by(2)
            .map(|i| {
                s.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(bad)
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(bytes::Bytes::from)
    }
}

/// Why a frame is a python-blosc2 carrier whose chunks do not hold the array's values, or
/// `None` for an array. python-blosc2 4.x marks such frames with a fixed metalayer
/// (blosc2/b2objects.py, proxy.py; `remote_array.py` lists them as internal carriers):
/// - `b2o` (`{"kind": ..., "version": 1}`): a persisted object, its chunks left
///   uninitialised: a lazy expression or function (`LazyExpr.save`) computed from other
///   arrays, or a reference to another source (a Caterva2 array, ...). Read as a frame, it
///   would give zeros without an error;
/// - `proxy-source`: a `blosc2.Proxy`'s local copy of another source, whose chunks not yet
///   fetched are uninitialised, and so also read as zeros.
///
/// Both are refused (`UNSUPPORTED`) when opened, naming what they are.
fn carrier(header: &FrameHeader) -> Option<String> {
    use crate::attrs::AttrValue;
    if let Some(b2o) = header.metalayer("b2o") {
        let kind = match crate::codec::blosc2::vlmeta::value_of(b2o) {
            AttrValue::Map(fields) => fields.into_iter().find_map(|(k, v)| match v {
                AttrValue::String(s) if k == "kind" => Some(s),
                _ => None,
            }),
            _ => None,
        };
        let kind = kind.unwrap_or_else(|| "unknown".into());
        return Some(format!(
            "a python-blosc2 object carrier (fixed metalayer b2o, kind {kind:?}): its values are \
             not stored in its chunks (python-blosc2 computes a lazy expression from other \
             arrays when it opens one; a reference points to another source): open the arrays \
             it refers to"
        ));
    }
    header.metalayer("proxy-source").map(|_| {
        "a python-blosc2 Proxy's local copy (fixed metalayer proxy-source): chunks it has not \
         fetched from its source hold no values: open the source"
            .into()
    })
}
