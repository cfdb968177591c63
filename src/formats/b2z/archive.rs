//! The archive of a `.b2z`: its ZIP directory learnt by bounded ranges, and its members
//! read in place.
//!
//! Discovery (spec: remote cache design, ".b2z archives"; facts: "B2Z containers"):
//! - one suffix request (`bytes=-`[`zip::TAIL_BYTES`], identity encoding) learns the size,
//!   the validators and the ZIP tail (end of central directory record, ZIP64 records,
//!   central directory) at once; a tail missing part of them is completed by exact reads
//!   ([`zip::parse_directory`] says which);
//! - an archive of at most `small_source_bytes` (8 MiB) is then held whole: the tail itself
//!   when it covered the archive, else one more request for the rest. Those bytes are the
//!   small-source copy the cache coordinator persists (shared with HDF5's), and every member
//!   is read from them;
//! - a larger archive keeps range reads, through [`Validated`] so that every answer matches
//!   the identity of the first.
//!
//! A member is read through a [`Window`] of the archive: a `.b2nd` frame's offsets become
//! archive offsets, and nothing of the member is copied.

use super::zip::{self, Directory, Entry, LocalHeader, Step};
use crate::formats::FormatError;
use crate::io::memory::MemorySource;
use crate::io::{ByteRange, IoError, RangeSource, SourceInfo, Validated, Window};
use bytes::Bytes;
use std::ops::Range;
use std::sync::Arc;

const FORMAT: &str = "b2z";

/// A member up to this size (bytes) is prefetched whole with its local header (facts:
/// python-blosc2's remote reader, 64 KiB).
pub const WHOLE_MEMBER_BYTES: u64 = 64 * 1024;
/// Headroom for the local header (30 bytes, the name and an extra field) read with a
/// prefetched member (4 KiB, as python-blosc2).
pub const LOCAL_HEADER_HEADROOM: u64 = 4096;
/// The prefix read of a larger member: its local header and the frame header (16 KiB).
pub const MEMBER_PREFIX_BYTES: u64 = 16 * 1024;
/// The suffix read of a larger member with its prefix (8 KiB): where a frame keeps its
/// offsets chunk and trailer. Asked in the same round as the prefixes, a member's suffix
/// and the next member's prefix are neighbours in a python-blosc2 archive and merge into
/// one request, so listing needs no second round for most frames.
pub const MEMBER_SUFFIX_BYTES: u64 = 8 * 1024;

pub(crate) fn invalid(location: &str, detail: impl std::fmt::Display) -> FormatError {
    FormatError::Invalid {
        location: location.to_string(),
        format: FORMAT,
        detail: detail.to_string(),
    }
}

pub(crate) fn zip_error(location: &str, e: zip::ZipError) -> FormatError {
    match e {
        zip::ZipError::Invalid(d) => invalid(location, d),
        zip::ZipError::Unsupported { member, detail } => FormatError::Unsupported {
            location: location.to_string(),
            format: FORMAT,
            detail: format!("member {member}: {detail}"),
        },
    }
}

/// `range` of the archive from the first of `pieces` (absolute start, bytes) that covers it.
fn covering(pieces: &[(u64, Bytes)], range: &Range<u64>) -> Option<Bytes> {
    pieces.iter().find_map(|(start, b)| {
        let end = start + b.len() as u64;
        (*start <= range.start && range.end <= end)
            .then(|| b.slice((range.start - start) as usize..(range.end - start) as usize))
    })
}

/// An archive whose directory is known.
pub struct Archive {
    /// Where member reads go: the whole archive in memory, or the (validated) transport.
    source: Arc<dyn RangeSource>,
    info: SourceInfo,
    directory: Directory,
    /// Bytes read at discovery (the tail, pieces of the directory), served without a request.
    captured: Vec<(u64, Bytes)>,
    /// The whole archive, when held.
    whole: Option<Bytes>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("location", &self.info.location)
            .field("len", &self.info.len)
            .field("members", &self.directory.entries.len())
            .field("whole", &self.whole.is_some())
            .finish()
    }
}

/// The bytes of one member read at discovery: where its data lies in the archive and the
/// first bytes of that data (all of it for a member up to [`WHOLE_MEMBER_BYTES`]).
#[derive(Debug, Clone)]
pub struct MemberPrefix {
    /// The member's data range in the archive.
    pub data: Range<u64>,
    /// The first bytes of the data.
    pub prefix: Bytes,
    /// The last bytes of the data, for a member larger than [`WHOLE_MEMBER_BYTES`] whose
    /// end was where its central directory entry placed it (empty otherwise).
    pub suffix: Bytes,
}

impl MemberPrefix {
    /// Whether the prefix holds the whole member.
    pub fn is_whole(&self) -> bool {
        self.prefix.len() as u64 == self.data.end - self.data.start
    }
}

impl Archive {
    /// Discovers the archive behind `transport` (cold): the suffix read, the rest of the
    /// directory if the tail misses some, and for an archive up to `small_source_bytes` its
    /// whole bytes (returned as the second value, to become the small-source copy).
    ///
    /// # Errors
    /// I/O errors (a server ignoring `Range` on a large object fails in the range layer);
    /// [`FormatError::Invalid`] for a malformed ZIP tail.
    pub async fn discover(
        transport: Arc<dyn RangeSource>,
        small_source_bytes: u64,
    ) -> crate::Result<(Archive, Option<Bytes>)> {
        let location = transport.location().to_string();
        let tail = match transport.read(ByteRange::Suffix(zip::TAIL_BYTES)).await {
            Err(IoError::RangeNotSatisfiable { len: 0, .. }) => {
                return Err(
                    invalid(&location, "an empty object (0 bytes) is no ZIP archive").into(),
                )
            }
            other => other?,
        };
        let info = tail.info.clone();
        let len = info.len;
        let mut whole = tail
            .whole
            .clone()
            .filter(|w| w.len() as u64 == len)
            .or_else(|| (tail.range == (0..len)).then(|| tail.bytes.clone()));
        if whole.is_none() && len <= small_source_bytes {
            // One more request for what the tail did not bring; then the archive is held.
            let rest = transport
                .read(ByteRange::bounded(0..tail.range.start))
                .await?;
            if rest.range != (0..tail.range.start) {
                return Err(IoError::BadContentRange {
                    location,
                    detail: format!("asked 0..{}, got {:?}", tail.range.start, rest.range),
                }
                .into());
            }
            let mut v = Vec::with_capacity(len as usize);
            v.extend_from_slice(&rest.bytes);
            v.extend_from_slice(&tail.bytes);
            whole = Some(Bytes::from(v));
        }
        let source: Arc<dyn RangeSource> = match &whole {
            Some(w) => Arc::new(MemorySource::with_info(info.clone(), w.clone())),
            None => Arc::new(Validated::new(transport.clone(), info.clone())),
        };
        let mut captured = vec![(tail.range.start, tail.bytes.clone())];
        if let Some(w) = &whole {
            captured = vec![(0, w.clone())];
        }
        let directory = loop {
            match zip::parse_directory(len, &captured).map_err(|e| zip_error(&location, e))? {
                Step::Done(d) => break d,
                Step::Need(r) => {
                    let got = crate::io::read_exact(&*source, r.clone()).await?;
                    captured.push((r.start, got));
                }
            }
        };
        let keep = whole.clone();
        Ok((
            Archive {
                source,
                info,
                directory,
                captured,
                whole,
            },
            keep.filter(|w| w.len() as u64 <= small_source_bytes),
        ))
    }

    /// The archive from what an earlier discovery recorded (warm): `directory` and the
    /// identity `info`, reading through `whole` (the small-source copy) when held, else
    /// through `transport` with every answer checked against `info`.
    pub fn from_parts(
        transport: Arc<dyn RangeSource>,
        info: SourceInfo,
        directory: Directory,
        whole: Option<Bytes>,
    ) -> Archive {
        let source: Arc<dyn RangeSource> = match &whole {
            Some(w) => Arc::new(MemorySource::with_info(info.clone(), w.clone())),
            None => Arc::new(Validated::new(transport, info.clone())),
        };
        let captured = whole.iter().map(|w| (0, w.clone())).collect();
        Archive {
            source,
            info,
            directory,
            captured,
            whole,
        }
    }

    /// Size and validators of the archive.
    pub fn info(&self) -> &SourceInfo {
        &self.info
    }

    /// The central directory.
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// Whether the whole archive is held in memory.
    pub fn is_whole(&self) -> bool {
        self.whole.is_some()
    }

    /// The member named `name` (as stored: `g/data.b2nd`).
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.directory.entries.iter().find(|e| e.name == name)
    }

    /// `range` of the archive from the bytes held (no request), if they cover it.
    fn held(&self, range: &Range<u64>) -> Option<Bytes> {
        covering(&self.captured, range)
    }

    /// Reads `range` of the archive: from the bytes held when they cover it, else one
    /// request.
    async fn read(&self, range: Range<u64>) -> crate::Result<Bytes> {
        if let Some(b) = self.held(&range) {
            return Ok(b);
        }
        Ok(crate::io::read_exact(&*self.source, range).await?)
    }

    /// The members' prefixes ([`MemberPrefix`]) of `entries`, read concurrently: a member up
    /// to [`WHOLE_MEMBER_BYTES`] whole with [`LOCAL_HEADER_HEADROOM`] for its local header,
    /// a larger one's first [`MEMBER_PREFIX_BYTES`]; a local header longer than that read is
    /// completed by one more read. Entries must be stored ([`Entry::check_stored`]).
    ///
    /// # Errors
    /// [`FormatError::Unsupported`] for a compressed or encrypted member (naming it and its
    /// method); [`FormatError::Invalid`] for a bad local header; I/O errors.
    pub async fn member_prefixes(
        &self,
        entries: &[&Entry],
        concurrency: usize,
    ) -> crate::Result<Vec<MemberPrefix>> {
        let location = &self.info.location;
        for e in entries {
            e.check_stored().map_err(|z| zip_error(location, z))?;
        }
        let len = self.info.len;
        let ranges: Vec<Range<u64>> = entries
            .iter()
            .map(|e| {
                let want = if e.size <= WHOLE_MEMBER_BYTES {
                    zip::LOCAL_HEADER_LEN + e.size + LOCAL_HEADER_HEADROOM
                } else {
                    MEMBER_PREFIX_BYTES
                };
                e.header_offset..e.header_offset.saturating_add(want).min(len)
            })
            .collect();
        // Where a larger member's data ends if its local header has no extra field (as
        // python-blosc2 writes them): its suffix is asked for there, and used only if the
        // local header confirms that end.
        let guessed_end = |e: &Entry| {
            e.header_offset
                .saturating_add(zip::LOCAL_HEADER_LEN)
                .saturating_add(e.name.len() as u64)
                .saturating_add(e.size)
        };
        let suffixes: Vec<Option<Range<u64>>> = entries
            .iter()
            .map(|e| {
                let end = guessed_end(e);
                (e.size > WHOLE_MEMBER_BYTES && end <= len)
                    .then(|| end - MEMBER_SUFFIX_BYTES.min(e.size)..end)
            })
            .collect();
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .chain(suffixes.iter().flatten())
            .filter(|r| r.start < r.end && self.held(r).is_none())
            .cloned()
            .collect();
        // Neighbouring members' prefixes merge when the gap is small (members are small and
        // contiguous in a python-blosc2 archive), bounded so one read stays modest.
        let merged = crate::io::coalesce_ranges(&missing, 64 * 1024, Some(8 << 20))?.fetches;
        let fetched = self.source.read_many(&merged, concurrency.max(1)).await?;
        let pieces: Vec<(u64, Bytes)> = merged.iter().map(|r| r.start).zip(fetched).collect();
        let slice_of = |r: &Range<u64>| self.held(r).or_else(|| covering(&pieces, r));
        let mut out = Vec::with_capacity(entries.len());
        for ((e, r), sr) in entries.iter().zip(&ranges).zip(&suffixes) {
            let mut bytes = slice_of(r)
                .ok_or_else(|| invalid(location, format!("member {}: prefix not read", e.name)))?;
            let data = loop {
                match e
                    .data_range(&bytes, len)
                    .map_err(|z| zip_error(location, z))?
                {
                    LocalHeader::Data(d) => break d,
                    LocalHeader::Need(n) => {
                        if n <= bytes.len() as u64 {
                            return Err(invalid(
                                location,
                                format!("member {}: local header", e.name),
                            )
                            .into());
                        }
                        let end = e.header_offset.saturating_add(n).min(len);
                        bytes = self.read(e.header_offset..end).await?;
                        if (bytes.len() as u64) < n {
                            return Err(invalid(
                                location,
                                format!("member {}: local header runs past the archive", e.name),
                            )
                            .into());
                        }
                    }
                }
            };
            let in_prefix = (data.start - e.header_offset) as usize;
            let prefix = if in_prefix <= bytes.len() {
                let take = ((data.end - data.start) as usize).min(bytes.len() - in_prefix);
                bytes.slice(in_prefix..in_prefix + take)
            } else {
                Bytes::new()
            };
            let suffix = match sr {
                Some(sr) if sr.end == data.end => slice_of(sr).unwrap_or_default(),
                _ => Bytes::new(),
            };
            out.push(MemberPrefix {
                data,
                prefix,
                suffix,
            });
        }
        Ok(out)
    }

    /// The member whose data lies at `data` of the archive, as a source of its own, named
    /// `{archive} member {name}` in messages (after the URL, so that redacting the URL's
    /// query in a message keeps the member's name).
    pub fn member_source(&self, data: Range<u64>, name: &str) -> Arc<dyn RangeSource> {
        Arc::new(Window::new(
            self.source.clone(),
            data,
            format!("{} member {name}", self.info.location),
        ))
    }

    /// Reads `range` of a member's data `data` (offsets inside the member), from the held
    /// bytes when they cover it.
    pub async fn read_member(&self, data: &Range<u64>, range: Range<u64>) -> crate::Result<Bytes> {
        let abs = data.start + range.start..data.start + range.end;
        if abs.end > data.end {
            return Err(invalid(&self.info.location, "read past the end of a member").into());
        }
        self.read(abs).await
    }
}
