//! `embed.b2e`: the embedded store of a `.b2z` (python-blosc2 `EmbedStore`).
//!
//! The member is a Blosc2 super-chunk frame of one-byte items (no `b2nd` metalayer), with a
//! metalayer `b2tree` (a TreeStore) or `b2dict` (a DictStore) and the vlmetalayer
//! `estore_metadata`, msgpack `{"embed_map": {key: {"offset", "length"}}, "current_offset"}`.
//! Each embedded leaf is a complete Blosc2 frame (a `.b2nd` array, or a `__vlmeta__`
//! super-chunk holding a group's attributes) at `offset..offset + length` of the super-chunk's
//! decoded byte stream; a key mapping to `{"urlbase", "path"}` is a reference to a Caterva2
//! dataset, not data held here (python-blosc2 `embed_store.py`, facts: "B2Z containers").
//!
//! [`EmbedStream`] serves that decoded byte stream as a [`RangeSource`]: a read decodes only
//! the super-chunk's chunks that cover it (fetched through the member's window, so in place
//! and counted), and an embedded leaf then opens as any `.b2nd` through a
//! [`crate::io::Window`] of the stream.

use crate::attrs::AttrValue;
use crate::codec::blosc2::frame::{self, ChunkLocation, FrameHeader, FrameIndex};
use crate::formats::FormatError;
use crate::io::{ByteRange, Fetched, IoError, RangeSource, SourceInfo};
use bytes::Bytes;
use std::ops::Range;
use std::sync::Arc;

const FORMAT: &str = "b2z";

/// Largest decoded byte stream an embedded store may claim (1 GiB): a bound on what one
/// read decodes, not on the archive.
pub const MAX_STREAM_BYTES: u64 = 1 << 30;

/// Which python-blosc2 container wrote the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// `blosc2.TreeStore` (metalayer `b2tree`): keys are paths of a hierarchy.
    Tree,
    /// `blosc2.DictStore` (metalayer `b2dict`): keys are flat names (which may hold `/`).
    Dict,
}

/// What one key of the embed map names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum EmbedEntry {
    /// A frame at this range of the decoded byte stream.
    Frame(Range<u64>),
    /// A reference to a remote (Caterva2) dataset: not data of this archive.
    Remote { urlbase: String, path: String },
}

/// The parsed `embed.b2e` frame: its header, its chunk offsets, its kind and its map.
#[derive(Debug, Clone)]
pub struct EmbedStore {
    header: FrameHeader,
    index: FrameIndex,
    /// The frame header's bytes and the offsets chunk plus trailer, kept for seeds.
    header_bytes: Bytes,
    index_bytes: Bytes,
    kind: StoreKind,
    entries: Vec<(String, EmbedEntry)>,
}

fn invalid(location: &str, detail: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid {
        location: location.to_string(),
        format: FORMAT,
        detail: format!("embed.b2e: {detail}"),
    }
}

impl EmbedStore {
    /// The embedded store from its frame header bytes (at least
    /// [`FrameHeader::header_len`]) and the bytes of [`FrameHeader::index_range`], for a
    /// member of `len` bytes.
    ///
    /// # Errors
    /// [`FormatError::Invalid`] for a malformed frame, a missing `b2tree`/`b2dict`
    /// metalayer or `estore_metadata`, or map entries outside the decoded stream.
    pub fn from_parts(
        location: &str,
        header_bytes: Bytes,
        index_bytes: Bytes,
        len: u64,
    ) -> Result<EmbedStore, FormatError> {
        let header = FrameHeader::parse(&header_bytes).map_err(|e| invalid(location, e))?;
        if header.frame_len != len {
            return Err(invalid(
                location,
                format!(
                    "frame length {} but the member has {len} bytes",
                    header.frame_len
                ),
            ));
        }
        let kind = if header.metalayer("b2tree").is_some() {
            StoreKind::Tree
        } else if header.metalayer("b2dict").is_some() {
            StoreKind::Dict
        } else {
            return Err(invalid(location, "no b2tree or b2dict metalayer"));
        };
        if header.typesize != 1 || header.chunksize == 0 {
            return Err(invalid(
                location,
                format!(
                    "a byte stream has typesize 1 and chunks of some bytes (typesize {}, chunksize {})",
                    header.typesize, header.chunksize
                ),
            ));
        }
        let nbytes = u64::try_from(header.nbytes).unwrap_or(u64::MAX);
        if nbytes > MAX_STREAM_BYTES {
            return Err(invalid(location, format!("{nbytes} decoded bytes claimed")));
        }
        let index = frame::parse_index(&header, &index_bytes).map_err(|e| invalid(location, e))?;
        let need = nbytes.div_ceil(header.chunksize as u64);
        if index.chunks.len() as u64 != need {
            return Err(invalid(
                location,
                format!(
                    "{} chunks for {nbytes} bytes in chunks of {}",
                    index.chunks.len(),
                    header.chunksize
                ),
            ));
        }
        let meta = index
            .vlmetalayer("estore_metadata")
            .ok_or_else(|| invalid(location, "no estore_metadata vlmetalayer"))?;
        let entries = embed_map(location, meta, nbytes)?;
        Ok(EmbedStore {
            header,
            index,
            header_bytes,
            index_bytes,
            kind,
            entries,
        })
    }

    /// The bytes [`EmbedStore::from_parts`] takes: frame header, offsets chunk and trailer.
    pub fn parts(&self) -> (Bytes, Bytes) {
        (self.header_bytes.clone(), self.index_bytes.clone())
    }

    /// TreeStore or DictStore.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// Keys of the embed map (`/a`, `/g/__vlmeta__`) and what each names, in map order.
    pub fn entries(&self) -> &[(String, EmbedEntry)] {
        &self.entries
    }

    /// Bytes of the decoded stream.
    pub fn stream_len(&self) -> u64 {
        u64::try_from(self.header.nbytes).unwrap_or(0)
    }

    /// The frame header (whose `frame_len` is the member's size).
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }
}

/// The embed map of the msgpack `estore_metadata`, every frame inside the `nbytes`-byte
/// stream.
fn embed_map(
    location: &str,
    msgpack: &[u8],
    nbytes: u64,
) -> Result<Vec<(String, EmbedEntry)>, FormatError> {
    let AttrValue::Map(top) = crate::codec::blosc2::vlmeta::value_of(msgpack) else {
        return Err(invalid(location, "estore_metadata is not a msgpack map"));
    };
    let Some((_, AttrValue::Map(map))) = top.iter().find(|(k, _)| k == "embed_map") else {
        return Err(invalid(location, "estore_metadata holds no embed_map"));
    };
    let int = |v: &AttrValue| match v {
        AttrValue::Int(i) => u64::try_from(*i).ok(),
        AttrValue::UInt(u) => Some(*u),
        _ => None,
    };
    let mut out = Vec::with_capacity(map.len());
    for (key, v) in map {
        let AttrValue::Map(fields) = v else {
            return Err(invalid(location, format!("entry {key:?} is not a map")));
        };
        let get = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let entry = match (get("offset"), get("length"), get("urlbase"), get("path")) {
            (Some(o), Some(l), _, _) => {
                let (o, l) = int(o).zip(int(l)).ok_or_else(|| {
                    invalid(location, format!("entry {key:?}: bad offset or length"))
                })?;
                let end = o.checked_add(l).filter(|&e| e <= nbytes).ok_or_else(|| {
                    invalid(
                        location,
                        format!("entry {key:?} ({o}+{l}) outside the {nbytes}-byte stream"),
                    )
                })?;
                EmbedEntry::Frame(o..end)
            }
            (_, _, Some(AttrValue::String(u)), Some(AttrValue::String(p))) => EmbedEntry::Remote {
                urlbase: u.clone(),
                path: p.clone(),
            },
            _ => return Err(invalid(location, format!("entry {key:?}: unknown shape"))),
        };
        out.push((key.clone(), entry));
    }
    Ok(out)
}

/// The decoded byte stream of an embedded store, read by range: each read fetches (through
/// `member`, the window of `embed.b2e` in the archive) and decodes only the chunks covering
/// it.
pub struct EmbedStream {
    store: Arc<EmbedStore>,
    member: Arc<dyn RangeSource>,
    location: String,
    info: SourceInfo,
}

impl EmbedStream {
    /// The stream of `store`, whose member bytes `member` serves, named `location`.
    pub fn new(store: Arc<EmbedStore>, member: Arc<dyn RangeSource>, location: String) -> Self {
        let info = SourceInfo {
            location: location.clone(),
            len: store.stream_len(),
            ..Default::default()
        };
        EmbedStream {
            store,
            member,
            location,
            info,
        }
    }
}

fn stream_error(location: &str, detail: impl std::fmt::Display) -> IoError {
    // A corrupt embedded store surfaces through the I/O interface the leaf reader uses;
    // `BadContentRange` is the variant for "these bytes are not what was asked".
    IoError::BadContentRange {
        location: location.to_string(),
        detail: format!("embed.b2e: {detail}"),
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl RangeSource for EmbedStream {
    fn location(&self) -> &str {
        &self.location
    }

    /// Decodes the chunks covering `range` of the stream (their stored bytes read
    /// concurrently, at most 6 at a time) and returns the asked bytes.
    ///
    /// # Errors
    /// The member's I/O errors; a chunk that does not decode to its share of the stream.
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        let len = self.store.stream_len();
        let r = range.resolve(&self.location, len)?;
        let cs = self.store.header.chunksize as u64;
        let first = r.start / cs;
        let last = r.end.div_ceil(cs);
        let mut stored = Vec::new();
        let mut wanted = Vec::new();
        for i in first..last {
            match &self.store.index.chunks[i as usize] {
                ChunkLocation::Stored { .. } => {
                    let sr = self.store.index.chunk_range(i as usize).ok_or_else(|| {
                        stream_error(&self.location, format!("chunk {i} has no range"))
                    })?;
                    stored.push(sr);
                    wanted.push(i);
                }
                ChunkLocation::Special(_) => {}
            }
        }
        let fetched = self.member.read_many(&stored, 6).await?;
        let mut out = vec![0u8; (r.end - r.start) as usize];
        let mut fetched = wanted.into_iter().zip(fetched);
        let mut next = fetched.next();
        for i in first..last {
            let chunk_start = i * cs;
            let chunk_end = (chunk_start + cs).min(len);
            let decoded: Vec<u8> = match &next {
                Some((j, bytes)) if *j == i => {
                    let d = crate::codec::blosc2::decode_chunk(bytes)
                        .map_err(|e| stream_error(&self.location, format!("chunk {i}: {e}")))?;
                    next = fetched.next();
                    d
                }
                _ => {
                    let mut d = vec![0u8; (chunk_end - chunk_start) as usize];
                    if let ChunkLocation::Special(k) = &self.store.index.chunks[i as usize] {
                        k.fill(1, &mut d)
                            .map_err(|e| stream_error(&self.location, e))?;
                    }
                    d
                }
            };
            if decoded.len() as u64 != chunk_end - chunk_start {
                return Err(stream_error(
                    &self.location,
                    format!(
                        "chunk {i} decodes to {} bytes, the stream needs {}",
                        decoded.len(),
                        chunk_end - chunk_start
                    ),
                ));
            }
            let from = r.start.max(chunk_start);
            let to = r.end.min(chunk_end);
            out[(from - r.start) as usize..(to - r.start) as usize].copy_from_slice(
                &decoded[(from - chunk_start) as usize..(to - chunk_start) as usize],
            );
        }
        Ok(Fetched {
            range: r,
            bytes: Bytes::from(out),
            info: self.info.clone(),
            whole: None,
        })
    }
}
