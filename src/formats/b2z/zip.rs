//! The ZIP directory of a `.b2z` archive, parsed sans I/O from the byte ranges read so far.
//!
//! A `.b2z` is a plain ZIP archive (PKWARE APPNOTE.TXT 6.3.x) whose members are stored
//! uncompressed. Reading one remotely starts at its end: [`parse_directory`] takes the pieces
//! of the archive known so far (usually one suffix read of [`TAIL_BYTES`]) and either returns
//! the [`Directory`] or names the one range it needs next ([`Step::Need`]): the end of central
//! directory record (4.3.16) beyond the tail, the ZIP64 end of central directory locator and
//! record (4.3.15, 4.3.14), or the central directory (4.3.12) starting before the tail. Each
//! member's data range then comes from its local file header (4.3.7) through
//! [`Entry::data_range`].
//!
//! The layout is taken strictly, so that every byte has one meaning: the central directory
//! ends exactly where the ZIP64 end record (or, without ZIP64, the end record) begins, the
//! ZIP64 record ends where its locator begins, and the end record's comment ends the archive.
//! Python's `zipfile` (which python-blosc2 writes and reads `.b2z` with) assumes the same
//! adjacency and shifts every offset by any gap (data prepended to the archive); a gap is an
//! [`ZipError::Invalid`] here instead. Every count, size and offset is checked against the
//! bytes before it is used: no allocation is sized by an unchecked field, no arithmetic
//! overflows, and nothing asked for lies outside the last [`MAX_DIRECTORY_BYTES`] of the
//! archive.

use bytes::Bytes;
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

/// The suffix length the first request should ask for (`bytes=-N`): 64 KiB.
pub const TAIL_BYTES: u64 = 64 * 1024;
/// Length of the fixed part of a local file header (APPNOTE 4.3.7).
pub const LOCAL_HEADER_LEN: u64 = 30;
/// The most [`parse_directory`] reads: the directory (central directory to the end of the
/// archive) must lie in the last 64 MiB, and every range it asks for does.
pub const MAX_DIRECTORY_BYTES: u64 = 64 << 20;
/// The most members a directory may list.
pub const MAX_ENTRIES: u64 = 1_000_000;

/// Fixed length of the end of central directory record (4.3.16).
const END_LEN: u64 = 22;
/// How far back from the end the end record may start: its fixed part and the longest
/// comment (65,535 bytes).
const END_SEARCH: u64 = END_LEN + 65_535;
/// Length of the ZIP64 end of central directory locator (4.3.15).
const LOCATOR_LEN: u64 = 20;
/// Fixed length of the ZIP64 end of central directory record (4.3.14).
const ZIP64_END_LEN: u64 = 56;
/// Bytes before the end record asked for with it: a locator and a ZIP64 record without
/// extensible data, as writers place them.
const BEFORE_END: u64 = LOCATOR_LEN + ZIP64_END_LEN;
/// Fixed length of a central directory file header (4.3.12).
const CENTRAL_LEN: u64 = 46;

const SIG_LOCAL: u32 = 0x0403_4b50;
const SIG_CENTRAL: u32 = 0x0201_4b50;
const SIG_END: u32 = 0x0605_4b50;
const SIG_ZIP64_END: u32 = 0x0606_4b50;
const SIG_LOCATOR: u32 = 0x0706_4b50;
/// Header ID of the ZIP64 extended information extra field (4.5.3).
const ZIP64_EXTRA_ID: u16 = 0x0001;

/// General purpose bit 0: the member is encrypted (4.4.4).
const FLAG_ENCRYPTED: u16 = 1;
/// General purpose bit 3: CRC-32 and sizes are in a data descriptor after the data; the local
/// header holds zeros (4.4.4).
const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
/// General purpose bit 11: the name is UTF-8 (4.4.4, appendix D).
const FLAG_UTF8: u16 = 1 << 11;

/// One member, from its central directory header (ZIP64 extra field applied).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The name as stored: UTF-8 when it is (always when general purpose bit 11 is set),
    /// else decoded as IBM code page 437 (APPNOTE appendix D).
    pub name: String,
    /// Compression method (4.4.5): 0 = stored, 8 = deflate, ...
    pub method: u16,
    /// General purpose bit flag (4.4.4); bit 0: encrypted, bit 3: data descriptor.
    pub flags: u16,
    /// CRC-32 of the uncompressed data.
    pub crc32: u32,
    /// Bytes of the member's data in the archive.
    pub compressed_size: u64,
    /// Bytes of the member uncompressed.
    pub size: u64,
    /// Offset of the member's local file header in the archive.
    pub header_offset: u64,
}

/// The central directory: entries in directory order, and the byte range from the central
/// directory's start to the end of the archive (central directory, ZIP64 records, end record).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Directory {
    /// Members in central directory order.
    pub entries: Vec<Entry>,
    /// From the central directory's first byte to the end of the archive.
    pub tail_range: Range<u64>,
}

/// What [`parse_directory`] needs next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The directory, validated.
    Done(Directory),
    /// Read this absolute range of the archive (bytes not known yet) and call again with it.
    Need(Range<u64>),
}

/// Errors. `Invalid` = the archive violates the format (truncated, a central directory outside
/// the file, entries overlapping, a size beyond the archive, a bad name); `Unsupported` = a valid
/// member we do not read (compressed, encrypted), naming the member and the method.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipError {
    /// The archive violates the ZIP format, or exceeds a limit of this reader
    /// ([`MAX_DIRECTORY_BYTES`], [`MAX_ENTRIES`], one disk).
    #[error("{0}")]
    Invalid(String),
    /// A valid member this reader does not read: compressed or encrypted.
    #[error("member {member}: {detail}")]
    Unsupported {
        /// The member's name.
        member: String,
        /// What it uses, with the method by name and number (`deflate (method 8)`).
        detail: String,
    },
}

/// What the local file header of a member gives ([`Entry::data_range`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalHeader {
    /// The member's data: this absolute range of the archive.
    Data(Range<u64>),
    /// The local header is longer than the bytes given: this many bytes from `header_offset`
    /// are needed in total.
    Need(u64),
}

fn invalid(detail: impl Into<String>) -> ZipError {
    ZipError::Invalid(detail.into())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// The pieces of the archive known so far.
struct Known<'a> {
    pieces: Vec<(u64, &'a [u8])>,
    /// The known bytes as sorted, disjoint, non-adjacent ranges.
    merged: Vec<Range<u64>>,
}

impl<'a> Known<'a> {
    fn new(len: u64, known: &'a [(u64, Bytes)]) -> Result<Self, ZipError> {
        let mut pieces = Vec::with_capacity(known.len());
        for (start, bytes) in known {
            let end = start.checked_add(bytes.len() as u64);
            if end.is_none_or(|end| end > len) {
                return Err(invalid(format!(
                    "known bytes at {start} ({} bytes) extend past the archive's {len} bytes",
                    bytes.len()
                )));
            }
            if !bytes.is_empty() {
                pieces.push((*start, bytes.as_ref()));
            }
        }
        let mut ranges: Vec<Range<u64>> = pieces
            .iter()
            .map(|(s, b)| *s..*s + b.len() as u64)
            .collect();
        crate::sort::sort_by_key(&mut ranges, |r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Ok(Known { pieces, merged })
    }

    /// The smallest range holding every byte of `r` not known, `None` when all are.
    fn missing(&self, r: Range<u64>) -> Option<Range<u64>> {
        let (mut first, mut end) = (r.start, r.end);
        if let Some(m) = self
            .merged
            .iter()
            .find(|m| m.start <= first && first < m.end)
        {
            first = m.end;
        }
        if first >= end {
            return None;
        }
        if let Some(m) = self.merged.iter().find(|m| m.start < end && end <= m.end) {
            end = m.start;
        }
        (first < end).then_some(first..end)
    }

    /// The bytes of `r`, when all are known. `r` is bounded by the caller (at most
    /// [`MAX_DIRECTORY_BYTES`]).
    fn get(&self, r: Range<u64>) -> Option<Cow<'a, [u8]>> {
        if let Some((s, b)) = self
            .pieces
            .iter()
            .find(|(s, b)| *s <= r.start && r.end <= *s + b.len() as u64)
        {
            return Some(Cow::Borrowed(
                &b[(r.start - s) as usize..(r.end - s) as usize],
            ));
        }
        if self.missing(r.clone()).is_some() {
            return None;
        }
        let mut out = vec![0u8; (r.end - r.start) as usize];
        for (s, b) in &self.pieces {
            let (lo, hi) = (r.start.max(*s), r.end.min(*s + b.len() as u64));
            if lo < hi {
                out[(lo - r.start) as usize..(hi - r.start) as usize]
                    .copy_from_slice(&b[(lo - s) as usize..(hi - s) as usize]);
            }
        }
        Some(Cow::Owned(out))
    }

    /// Start of the known run of bytes that ends the archive (`len` when its last byte is not
    /// known).
    fn suffix_start(&self, len: u64) -> u64 {
        match self.merged.last() {
            Some(m) if m.end == len => m.start,
            _ => len,
        }
    }
}

/// What the end records say about the central directory.
struct EndRecord {
    entries: u64,
    cd_size: u64,
    cd_offset: u64,
    /// Where the central directory must end: the ZIP64 end record's offset, or the end
    /// record's.
    cd_end: u64,
}

/// Parses the directory from the bytes known so far: `known` lists (absolute start, bytes)
/// pieces of an archive of `len` bytes (usually one: the suffix read). Returns `Need(range)`
/// when a piece is missing (the end record not in the tail, a ZIP64 record, or the central
/// directory starting before the tail); the caller reads it and calls again with it added.
///
/// Each `Need` names bytes not yet known, inside the last [`MAX_DIRECTORY_BYTES`] of the
/// archive; starting from a suffix of any length there are at most 3 before `Done` or an
/// error (from no known bytes, the first asks for the last 65,633 bytes). Validates: the end
/// record found by scanning back at most 65,557 bytes (22 + a comment of up to 65,535) and its
/// comment ending the archive; one disk; the entry counts consistent with each other, with
/// the ZIP64 record and with the bytes (each header at least 46 bytes, at most
/// [`MAX_ENTRIES`], the headers filling the central directory exactly); the central directory
/// inside the file and ending where the end records begin; every member's local header and
/// data (`30 + name + compressed_size` bytes from `header_offset`) before the central
/// directory, no two overlapping; names not empty, without NUL or `\`, not absolute (`/x`,
/// `C:x`), without a `..` component, no two alike.
///
/// # Errors
/// [`ZipError::Invalid`] naming the first violation (and for pieces extending past `len`).
pub fn parse_directory(len: u64, known: &[(u64, Bytes)]) -> Result<Step, ZipError> {
    let k = Known::new(len, known)?;
    if len < END_LEN {
        return Err(invalid(format!(
            "not a ZIP archive: {len} bytes is shorter than an end of central directory record \
             (22 bytes)"
        )));
    }
    let end_at = match find_end(&k, len)? {
        Ok(at) => at,
        Err(need) => return Ok(Step::Need(need)),
    };
    let end = match end_record(&k, len, end_at)? {
        Ok(end) => check_place(len, end)?,
        Err(need) => return Ok(Step::Need(need)),
    };
    let cd = end.cd_offset..end.cd_end;
    let Some(bytes) = k.get(cd.clone()) else {
        return Ok(match k.missing(cd) {
            Some(need) => Step::Need(need),
            None => return Err(invalid("central directory bytes unavailable")),
        });
    };
    let entries = central_directory(&bytes, &end)?;
    Ok(Step::Done(Directory {
        entries,
        tail_range: end.cd_offset..len,
    }))
}

/// The offset of the end of central directory record, or the range to read for it.
///
/// The record is the last signature `PK\x05\x06` in the final 65,557 bytes whose comment
/// length makes its comment end the archive (APPNOTE 4.3.16: the comment is the last field).
fn find_end(k: &Known<'_>, len: u64) -> Result<Result<u64, Range<u64>>, ZipError> {
    let window = len.saturating_sub(END_SEARCH);
    let start = k.suffix_start(len).max(window);
    if len - start >= END_LEN {
        if let Some(tail) = k.get(start..len) {
            for rel in (0..=tail.len() - END_LEN as usize).rev() {
                if u32_at(&tail, rel) != SIG_END {
                    continue;
                }
                let at = start + rel as u64;
                let comment = u64::from(u16_at(&tail, rel + 20));
                if at + END_LEN + comment == len {
                    return Ok(Ok(at));
                }
            }
        }
    }
    if start > window {
        // Part of the search window is not known yet: ask for it, with the bytes before it
        // where a ZIP64 locator and record would be.
        if let Some(need) = k.missing(window.saturating_sub(BEFORE_END)..start) {
            return Ok(Err(need));
        }
    }
    Err(invalid(format!(
        "not a ZIP archive (or truncated): no end of central directory record whose comment \
         ends the {len}-byte archive in its last {} bytes",
        len - window
    )))
}

/// The central directory's place and count from the end record at `at` and, when a ZIP64
/// locator precedes it, the ZIP64 end record; or the range to read for them.
fn end_record(k: &Known<'_>, len: u64, at: u64) -> Result<Result<EndRecord, Range<u64>>, ZipError> {
    let Some(e) = k.get(at..at + END_LEN) else {
        return Err(invalid("end of central directory record unavailable"));
    };
    let disk = u16_at(&e, 4);
    let cd_disk = u16_at(&e, 6);
    let on_disk = u16_at(&e, 8);
    let total = u16_at(&e, 10);
    let cd_size = u32_at(&e, 12);
    let cd_offset = u32_at(&e, 16);
    // When the end record gives the central directory's offset (not saturated), a read that
    // is missing records before the end record also takes the central directory, which
    // precedes them: one round trip instead of two.
    let with_cd = |from: u64| {
        let cd = u64::from(cd_offset);
        if cd_offset != 0xFFFF_FFFF && cd <= at && len - cd <= MAX_DIRECTORY_BYTES {
            from.min(cd)
        } else {
            from
        }
    };
    let mut locator = None;
    if at >= LOCATOR_LEN {
        let r = at - LOCATOR_LEN..at;
        match k.get(r.clone()) {
            Some(b) if u32_at(&b, 0) == SIG_LOCATOR => locator = Some(b),
            Some(_) => {}
            None => {
                let from = with_cd(at.saturating_sub(BEFORE_END));
                return Ok(Err(k.missing(from..at).unwrap_or(r)));
            }
        }
    }
    let Some(loc) = locator else {
        if disk != 0 || cd_disk != 0 {
            return Err(invalid(format!(
                "archive spans disks (end record: disk {disk}, central directory on disk \
                 {cd_disk}); only single-disk archives are read"
            )));
        }
        if on_disk != total {
            return Err(invalid(format!(
                "end record counts {on_disk} entries on this disk but {total} in all"
            )));
        }
        return Ok(Ok(EndRecord {
            entries: u64::from(total),
            cd_size: u64::from(cd_size),
            cd_offset: u64::from(cd_offset),
            cd_end: at,
        }));
    };
    // ZIP64 end of central directory locator (4.3.15).
    let loc_at = at - LOCATOR_LEN;
    let z64_disk = u32_at(&loc, 4);
    let z64_at = u64_at(&loc, 8);
    let disks = u32_at(&loc, 16);
    if z64_disk != 0 || disks > 1 {
        return Err(invalid(format!(
            "archive spans disks (ZIP64 locator: record on disk {z64_disk}, {disks} disks); \
             only single-disk archives are read"
        )));
    }
    if z64_at.checked_add(ZIP64_END_LEN).is_none_or(|e| e > loc_at) {
        return Err(invalid(format!(
            "ZIP64 locator puts the ZIP64 end record at {z64_at}, which does not fit before \
             the locator at {loc_at}"
        )));
    }
    if len - z64_at > MAX_DIRECTORY_BYTES {
        return Err(too_big(len - z64_at));
    }
    let r = z64_at..z64_at + ZIP64_END_LEN;
    let Some(z) = k.get(r.clone()) else {
        return Ok(Err(k.missing(with_cd(z64_at)..r.end).unwrap_or(r)));
    };
    // ZIP64 end of central directory record (4.3.14).
    if u32_at(&z, 0) != SIG_ZIP64_END {
        return Err(invalid(format!(
            "no ZIP64 end of central directory record at {z64_at}, where the locator points"
        )));
    }
    let record_size = u64_at(&z, 4);
    if record_size < ZIP64_END_LEN - 12
        || z64_at
            .checked_add(12)
            .and_then(|s| s.checked_add(record_size))
            != Some(loc_at)
    {
        return Err(invalid(format!(
            "ZIP64 end record at {z64_at} declares {record_size} bytes after its first 12, \
             which do not end at the locator at {loc_at}"
        )));
    }
    let z_disk = u32_at(&z, 16);
    let z_cd_disk = u32_at(&z, 20);
    let z_on_disk = u64_at(&z, 24);
    let z_total = u64_at(&z, 32);
    let z_cd_size = u64_at(&z, 40);
    let z_cd_offset = u64_at(&z, 48);
    if z_disk != 0 || z_cd_disk != 0 {
        return Err(invalid(format!(
            "archive spans disks (ZIP64 end record: disk {z_disk}, central directory on disk \
             {z_cd_disk}); only single-disk archives are read"
        )));
    }
    if z_on_disk != z_total {
        return Err(invalid(format!(
            "ZIP64 end record counts {z_on_disk} entries on this disk but {z_total} in all"
        )));
    }
    // A field of the end record that is not saturated (0xFFFF, 0xFFFFFFFF) must agree with
    // the ZIP64 record (4.4.1.4: only fields too small to hold the value are set to -1).
    let agree = |name: &str, small: u64, saturated: u64, big: u64| {
        if small != saturated && small != big {
            Err(invalid(format!(
                "end record's {name} {small} disagrees with the ZIP64 end record's {big}"
            )))
        } else {
            Ok(())
        }
    };
    agree("entry count", u64::from(total), 0xFFFF, z_total)?;
    agree(
        "entries on this disk",
        u64::from(on_disk),
        0xFFFF,
        z_on_disk,
    )?;
    agree(
        "central directory size",
        u64::from(cd_size),
        0xFFFF_FFFF,
        z_cd_size,
    )?;
    agree(
        "central directory offset",
        u64::from(cd_offset),
        0xFFFF_FFFF,
        z_cd_offset,
    )?;
    agree("disk number", u64::from(disk), 0xFFFF, u64::from(z_disk))?;
    agree(
        "central directory disk",
        u64::from(cd_disk),
        0xFFFF,
        u64::from(z_cd_disk),
    )?;
    Ok(Ok(EndRecord {
        entries: z_total,
        cd_size: z_cd_size,
        cd_offset: z_cd_offset,
        cd_end: z64_at,
    }))
}

fn too_big(bytes: u64) -> ZipError {
    invalid(format!(
        "the archive's directory spans its last {bytes} bytes, more than the {} MiB read",
        MAX_DIRECTORY_BYTES >> 20
    ))
}

/// Checks the central directory's place and count against the archive.
fn check_place(len: u64, e: EndRecord) -> Result<EndRecord, ZipError> {
    if e.cd_offset.checked_add(e.cd_size) != Some(e.cd_end) {
        return Err(invalid(format!(
            "central directory at {} of {} bytes does not end where the end records begin \
             ({}) in the {len}-byte archive",
            e.cd_offset, e.cd_size, e.cd_end
        )));
    }
    if e.entries > MAX_ENTRIES {
        return Err(invalid(format!(
            "directory lists {} entries, more than the {MAX_ENTRIES} read",
            e.entries
        )));
    }
    if e.entries * CENTRAL_LEN > e.cd_size {
        return Err(invalid(format!(
            "directory lists {} entries but its {} bytes hold at most {}",
            e.entries,
            e.cd_size,
            e.cd_size / CENTRAL_LEN
        )));
    }
    if len - e.cd_offset > MAX_DIRECTORY_BYTES {
        return Err(too_big(len - e.cd_offset));
    }
    Ok(e)
}

/// The entries of the central directory `cd` (all its bytes), checked: headers filling it
/// exactly, names, members before the directory and not overlapping.
fn central_directory(cd: &[u8], end: &EndRecord) -> Result<Vec<Entry>, ZipError> {
    // `check_place` bounded the count by the bytes in hand (46 per header).
    let mut entries = Vec::with_capacity(end.entries as usize);
    let mut spans = Vec::with_capacity(end.entries as usize);
    let mut pos = 0usize;
    for i in 0..end.entries {
        let at = end.cd_offset + pos as u64;
        let Some(h) = cd.get(pos..pos + CENTRAL_LEN as usize) else {
            return Err(invalid(format!(
                "central directory header {i} at {at} is cut off by the end of the central \
                 directory"
            )));
        };
        if u32_at(h, 0) != SIG_CENTRAL {
            return Err(invalid(format!(
                "no central directory file header signature at {at} (header {i} of {})",
                end.entries
            )));
        }
        let flags = u16_at(h, 8);
        let method = u16_at(h, 10);
        let crc32 = u32_at(h, 16);
        let name_len = usize::from(u16_at(h, 28));
        let extra_len = usize::from(u16_at(h, 30));
        let comment_len = usize::from(u16_at(h, 32));
        let name_start = pos + CENTRAL_LEN as usize;
        let extra_start = name_start + name_len;
        let next = extra_start + extra_len + comment_len;
        if next > cd.len() {
            return Err(invalid(format!(
                "central directory header {i} at {at} ({} bytes with name, extra field and \
                 comment) runs past the end of the central directory",
                next - pos
            )));
        }
        let name = decode_name(&cd[name_start..extra_start], flags)
            .map_err(|e| invalid(format!("central directory header {i} at {at}: {e}")))?;
        let mut sizes = Zip64Fields {
            size: u64::from(u32_at(h, 24)),
            compressed_size: u64::from(u32_at(h, 20)),
            header_offset: u64::from(u32_at(h, 42)),
            disk: u32::from(u16_at(h, 34)),
        };
        sizes
            .apply(&cd[extra_start..extra_start + extra_len])
            .map_err(|e| invalid(format!("member {name:?}: {e}")))?;
        if sizes.disk != 0 {
            return Err(invalid(format!(
                "member {name:?} starts on disk {}; only single-disk archives are read",
                sizes.disk
            )));
        }
        check_name(&name).map_err(|e| invalid(format!("member {name:?}: {e}")))?;
        let span_end = sizes
            .header_offset
            .checked_add(LOCAL_HEADER_LEN + name_len as u64)
            .and_then(|e| e.checked_add(sizes.compressed_size));
        if span_end.is_none_or(|e| e > end.cd_offset) {
            return Err(invalid(format!(
                "member {name:?}: its local header at {} and {} bytes of data do not fit \
                 before the central directory at {}",
                sizes.header_offset, sizes.compressed_size, end.cd_offset
            )));
        }
        spans.push((sizes.header_offset, span_end.unwrap_or(0), entries.len()));
        entries.push(Entry {
            name,
            method,
            flags,
            crc32,
            compressed_size: sizes.compressed_size,
            size: sizes.size,
            header_offset: sizes.header_offset,
        });
        pos = next;
    }
    if pos != cd.len() {
        return Err(invalid(format!(
            "central directory of {} bytes has {} bytes after its {} headers",
            cd.len(),
            cd.len() - pos,
            end.entries
        )));
    }
    let mut seen = HashSet::with_capacity(entries.len());
    for e in &entries {
        if !seen.insert(e.name.as_str()) {
            return Err(invalid(format!("two members are named {:?}", e.name)));
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        let ((_, a_end, a), (b_start, _, b)) = (w[0], w[1]);
        if b_start < a_end {
            return Err(invalid(format!(
                "members {:?} and {:?} overlap (bytes {}..{} and from {b_start})",
                entries[a].name, entries[b].name, w[0].0, a_end
            )));
        }
    }
    Ok(entries)
}

/// The fields a ZIP64 extended information extra field may carry (APPNOTE 4.5.3), as the
/// central directory header gives them, then with the extra field applied.
struct Zip64Fields {
    size: u64,
    compressed_size: u64,
    header_offset: u64,
    disk: u32,
}

impl Zip64Fields {
    /// Applies the ZIP64 extra field of `extra`, if any: it holds, in this order, the size,
    /// compressed size, header offset and disk number whose header fields are saturated
    /// (0xFFFFFFFF, 0xFFFF), and only those (4.5.3). A saturated field without a ZIP64 extra
    /// field keeps its value (Python's `zipfile` does the same).
    fn apply(&mut self, extra: &[u8]) -> Result<(), String> {
        let Some(mut z) = zip64_block(extra)? else {
            return Ok(());
        };
        let mut take = |what: &str, n: usize| -> Result<u64, String> {
            if z.len() < n {
                return Err(format!("its ZIP64 extra field lacks the {what}"));
            }
            let v = if n == 8 {
                u64_at(z, 0)
            } else {
                u64::from(u32_at(z, 0))
            };
            z = &z[n..];
            Ok(v)
        };
        if self.size == 0xFFFF_FFFF {
            self.size = take("size", 8)?;
        }
        if self.compressed_size == 0xFFFF_FFFF {
            self.compressed_size = take("compressed size", 8)?;
        }
        if self.header_offset == 0xFFFF_FFFF {
            self.header_offset = take("local header offset", 8)?;
        }
        if self.disk == 0xFFFF {
            self.disk = take("disk number", 4)? as u32;
        }
        Ok(())
    }
}

/// The data of the ZIP64 extra field (header ID 0x0001) in `extra`, a sequence of
/// (ID, length, data) blocks (4.5.1). Trailing bytes too few for a block header are ignored,
/// as Python's `zipfile` does.
///
/// # Errors
/// A block running past the extra field, or two ZIP64 blocks.
fn zip64_block(mut extra: &[u8]) -> Result<Option<&[u8]>, String> {
    let mut found = None;
    while extra.len() >= 4 {
        let id = u16_at(extra, 0);
        let n = usize::from(u16_at(extra, 2));
        let Some(data) = extra.get(4..4 + n) else {
            return Err(format!(
                "extra field block {id:#06x} of {n} bytes runs past the extra field"
            ));
        };
        if id == ZIP64_EXTRA_ID {
            if found.is_some() {
                return Err("two ZIP64 extra fields".into());
            }
            found = Some(data);
        }
        extra = &extra[4 + n..];
    }
    Ok(found)
}

/// IBM code page 437, bytes 0x80 to 0xFF (bytes below are ASCII), as Python's `cp437` codec
/// maps them.
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐\
└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

/// A member name from its stored bytes: UTF-8 when general purpose bit 11 says so (an error
/// if it is not), else UTF-8 when the bytes are, else code page 437 (APPNOTE appendix D).
fn decode_name(raw: &[u8], flags: u16) -> Result<String, String> {
    match std::str::from_utf8(raw) {
        Ok(s) => Ok(s.to_string()),
        Err(_) if flags & FLAG_UTF8 != 0 => Err(format!(
            "name {:?} is flagged UTF-8 (general purpose bit 11) but is not",
            String::from_utf8_lossy(raw)
        )),
        Err(_) => {
            let high: Vec<char> = CP437_HIGH.chars().collect();
            Ok(raw
                .iter()
                .map(|&b| {
                    if b < 0x80 {
                        char::from(b)
                    } else {
                        high[usize::from(b - 0x80)]
                    }
                })
                .collect())
        }
    }
}

/// Checks a member name: not empty, no NUL, not absolute (`/x`, `C:`), no `..` component.
/// APPNOTE 4.4.17.1: names are relative, with forward slashes, and no drive or device letter.
/// A backslash is a character of the name (python-blosc2 writes keys such as `a\.b`, and
/// members are keys here, never paths on a disk).
fn check_name(name: &str) -> Result<(), String> {
    let b = name.as_bytes();
    if b.is_empty() {
        return Err("empty name".into());
    }
    if b.contains(&0) {
        return Err("name contains NUL".into());
    }
    if b[0] == b'/' {
        return Err("absolute name".into());
    }
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Err("name starts with a drive letter".into());
    }
    if name.split('/').any(|c| c == "..") {
        return Err("name has a `..` component".into());
    }
    Ok(())
}

/// The compression method's name and number (APPNOTE 4.4.5), as `deflate (method 8)`.
pub fn method_name(method: u16) -> String {
    let name = match method {
        0 => "stored",
        1 => "shrink",
        2..=5 => "reduce",
        6 => "implode",
        8 => "deflate",
        9 => "deflate64",
        10 => "PKWARE DCL implode",
        12 => "bzip2",
        14 => "lzma",
        16 => "IBM z/OS CMPSC",
        18 => "IBM TERSE",
        19 => "IBM LZ77 z",
        20 | 93 => "zstd",
        94 => "mp3",
        95 => "xz",
        96 => "jpeg",
        97 => "wavpack",
        98 => "ppmd",
        99 => "AE-x encryption",
        _ => return format!("method {method}"),
    };
    format!("{name} (method {method})")
}

impl Entry {
    /// `Ok` when the member is stored (method 0), unencrypted (flag bit 0 clear) and its
    /// compressed size equals its size.
    ///
    /// # Errors
    /// [`ZipError::Unsupported`] naming the member and what it uses: `encrypted (general
    /// purpose flag bit 0; stored (method 0))`, `compressed with deflate (method 8)`, ...;
    /// [`ZipError::Invalid`] for a stored member whose two sizes differ.
    pub fn check_stored(&self) -> Result<(), ZipError> {
        if self.flags & FLAG_ENCRYPTED != 0 {
            return Err(ZipError::Unsupported {
                member: self.name.clone(),
                detail: format!(
                    "encrypted (general purpose flag bit 0; {}); only unencrypted members are \
                     read",
                    method_name(self.method)
                ),
            });
        }
        if self.method != 0 {
            return Err(ZipError::Unsupported {
                member: self.name.clone(),
                detail: format!(
                    "compressed with {}; only stored (method 0) members are read",
                    method_name(self.method)
                ),
            });
        }
        if self.compressed_size != self.size {
            return Err(invalid(format!(
                "member {:?} is stored but its compressed size {} differs from its size {}",
                self.name, self.compressed_size, self.size
            )));
        }
        Ok(())
    }

    /// The member's data range in the archive of `len` bytes, from its local file header
    /// (APPNOTE 4.3.7) `local`: bytes from `header_offset`, at least the first
    /// [`LOCAL_HEADER_LEN`]. Returns [`LocalHeader::Need`] with the bytes needed in total
    /// when `local` is shorter than the header with its name and extra field. The data starts
    /// after the extra field (whatever it holds) and spans `compressed_size` bytes.
    ///
    /// # Errors
    /// [`ZipError::Invalid`] when the signature is not `PK\x03\x04`; the flags, method or
    /// name differ from the central directory's; without a data descriptor (flag bit 3), the
    /// CRC-32 or a size (one not saturated, or one in a well-formed ZIP64 extra field)
    /// differs; or the data ends past `len`.
    pub fn data_range(&self, local: &[u8], len: u64) -> Result<LocalHeader, ZipError> {
        if local.len() < LOCAL_HEADER_LEN as usize {
            return Ok(LocalHeader::Need(LOCAL_HEADER_LEN));
        }
        let bad = |detail: String| {
            invalid(format!(
                "member {:?}: local header at {}: {detail}",
                self.name, self.header_offset
            ))
        };
        if u32_at(local, 0) != SIG_LOCAL {
            return Err(bad("no local file header signature".into()));
        }
        let flags = u16_at(local, 6);
        let method = u16_at(local, 8);
        if flags != self.flags {
            return Err(bad(format!(
                "flags {flags:#06x} differ from the central directory's {:#06x}",
                self.flags
            )));
        }
        if method != self.method {
            return Err(bad(format!(
                "method {method} differs from the central directory's {}",
                self.method
            )));
        }
        let name_len = usize::from(u16_at(local, 26));
        let extra_len = usize::from(u16_at(local, 28));
        let header_len = LOCAL_HEADER_LEN as usize + name_len + extra_len;
        if local.len() < header_len {
            return Ok(LocalHeader::Need(header_len as u64));
        }
        let name_end = LOCAL_HEADER_LEN as usize + name_len;
        let name = decode_name(&local[LOCAL_HEADER_LEN as usize..name_end], flags).map_err(bad)?;
        if name != self.name {
            return Err(bad(format!(
                "names {name:?} where the central directory says {:?}",
                self.name
            )));
        }
        if flags & FLAG_DATA_DESCRIPTOR == 0 {
            let crc = u32_at(local, 14);
            if crc != self.crc32 {
                return Err(bad(format!(
                    "CRC-32 {crc:#010x} differs from the central directory's {:#010x}",
                    self.crc32
                )));
            }
            let mut csize = u64::from(u32_at(local, 18));
            let mut size = u64::from(u32_at(local, 22));
            // 4.5.3: in a local header, the ZIP64 extra field holds both sizes.
            if csize == 0xFFFF_FFFF || size == 0xFFFF_FFFF {
                if let Ok(Some(z)) = zip64_block(&local[name_end..header_len]) {
                    if z.len() >= 16 {
                        size = u64_at(z, 0);
                        csize = u64_at(z, 8);
                    }
                }
            }
            for (what, local_v, central) in [
                ("compressed size", csize, self.compressed_size),
                ("size", size, self.size),
            ] {
                if local_v != 0xFFFF_FFFF && local_v != central {
                    return Err(bad(format!(
                        "{what} {local_v} differs from the central directory's {central}"
                    )));
                }
            }
        }
        let start = self.header_offset.checked_add(header_len as u64);
        let end = start.and_then(|s| s.checked_add(self.compressed_size));
        match (start, end) {
            (Some(start), Some(end)) if end <= len => Ok(LocalHeader::Data(start..end)),
            _ => Err(bad(format!(
                "its {} bytes of data after a {header_len}-byte header end past the archive's \
                 {len} bytes",
                self.compressed_size
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Fixtures: tests/fixtures/b2z/zip, written by tests/fixtures/gen_zip.py (Python's
    //! `zipfile`, Info-ZIP `zip`), with what each holds in expected.json as the writer
    //! recorded it.
    use super::*;
    use serde_json::Value;

    fn dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/b2z/zip")
    }

    fn fixture(name: &str) -> Vec<u8> {
        let p = dir().join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
    }

    fn expected(name: &str) -> Value {
        let p = dir().join("expected.json");
        let all: Value = serde_json::from_slice(
            &std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
        .expect("expected.json parses");
        let v = all[name].clone();
        assert!(v.is_object(), "expected.json has no {name}");
        assert_eq!(v["len"].as_u64(), Some(fixture(name).len() as u64));
        v
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    /// Parses `bytes` from its last `tail` bytes, serving every Need from `bytes`, checking
    /// that each names bytes not known yet inside the archive and the directory window, and
    /// that there are at most 3. Returns the result and the ranges asked for.
    fn parse(bytes: &[u8], tail: u64) -> (Result<Directory, ZipError>, Vec<Range<u64>>) {
        let len = bytes.len() as u64;
        let start = len.saturating_sub(tail);
        let mut known = vec![(start, Bytes::copy_from_slice(&bytes[start as usize..]))];
        let mut needs = Vec::new();
        loop {
            match parse_directory(len, &known) {
                Ok(Step::Done(d)) => return (Ok(d), needs),
                Err(e) => return (Err(e), needs),
                Ok(Step::Need(r)) => {
                    assert!(r.start < r.end && r.end <= len, "need {r:?} of {len} bytes");
                    assert!(
                        r.start >= len.saturating_sub(MAX_DIRECTORY_BYTES),
                        "need {r:?} outside the directory window"
                    );
                    for (s, b) in &known {
                        let (ks, ke) = (*s, s + b.len() as u64);
                        assert!(
                            r.start < ks || r.start >= ke,
                            "need {r:?} starts in known {ks}..{ke}"
                        );
                        assert!(
                            r.end <= ks || r.end > ke,
                            "need {r:?} ends in known {ks}..{ke}"
                        );
                    }
                    needs.push(r.clone());
                    assert!(needs.len() <= 3, "more than 3 needs: {needs:?}");
                    known.push((
                        r.start,
                        Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]),
                    ));
                }
            }
        }
    }

    /// The member's data through `data_range`, reading its local header as a caller would:
    /// 30 bytes, then what `Need` says.
    fn data<'a>(bytes: &'a [u8], e: &Entry) -> Result<&'a [u8], ZipError> {
        let len = bytes.len() as u64;
        let at = e.header_offset as usize;
        let mut want = LOCAL_HEADER_LEN as usize;
        for _ in 0..2 {
            let local = &bytes[at..(at + want).min(bytes.len())];
            match e.data_range(local, len)? {
                LocalHeader::Data(r) => return Ok(&bytes[r.start as usize..r.end as usize]),
                LocalHeader::Need(n) => {
                    assert!(
                        n as usize > local.len(),
                        "need {n} with {} given",
                        local.len()
                    );
                    want = n as usize;
                }
            }
        }
        panic!("data_range asked twice for more");
    }

    /// Checks the directory against the writer's record, and every stored member's data.
    fn check(name: &str, bytes: &[u8], d: &Directory) {
        let exp = expected(name);
        let members = exp["members"].as_array().expect("members");
        assert_eq!(d.entries.len(), members.len(), "{name}");
        if let Some(cd) = exp["cd_offset"].as_u64() {
            assert_eq!(d.tail_range, cd..bytes.len() as u64, "{name}");
        }
        for (e, m) in d.entries.iter().zip(members) {
            assert_eq!(e.name, m["name"].as_str().unwrap(), "{name}");
            assert_eq!(
                u64::from(e.method),
                m["method"].as_u64().unwrap(),
                "{}",
                e.name
            );
            assert_eq!(
                u64::from(e.crc32),
                m["crc32"].as_u64().unwrap(),
                "{}",
                e.name
            );
            assert_eq!(e.size, m["size"].as_u64().unwrap(), "{}", e.name);
            let csize = m["compressed_size"].as_u64().unwrap();
            assert_eq!(e.compressed_size, csize, "{}", e.name);
            if let Some(f) = m["flags"].as_u64() {
                assert_eq!(u64::from(e.flags), f, "{}", e.name);
            }
            if let Some(o) = m["header_offset"].as_u64() {
                assert_eq!(e.header_offset, o, "{}", e.name);
            }
            if let Some(p) = m["payload"].as_str() {
                e.check_stored().expect("stored member");
                assert_eq!(data(bytes, e).expect("data"), hex(p), "{}", e.name);
            }
        }
    }

    fn done(name: &str, tail: u64) -> (Vec<u8>, Directory, Vec<Range<u64>>) {
        let bytes = fixture(name);
        let (d, needs) = parse(&bytes, tail);
        let d = d.unwrap_or_else(|e| panic!("{name}: {e}"));
        check(name, &bytes, &d);
        (bytes, d, needs)
    }

    #[test]
    fn archive_smaller_than_the_tail_parses_from_one_read() {
        for name in [
            "stored.zip",
            "comment.zip",
            "extra.zip",
            "descriptor.zip",
            "zip64.zip",
        ] {
            let (bytes, _, needs) = done(name, TAIL_BYTES);
            assert!((bytes.len() as u64) < TAIL_BYTES);
            assert_eq!(needs, Vec::<Range<u64>>::new(), "{name}");
        }
    }

    #[test]
    fn suffix_alone_when_it_holds_the_central_directory() {
        let bytes = fixture("stored.zip");
        let cd = expected("stored.zip")["cd_offset"].as_u64().unwrap();
        let (_, d, needs) = done("stored.zip", bytes.len() as u64 - cd);
        assert!(needs.is_empty());
        assert_eq!(d.entries.last().unwrap().name, "embed.b2e");
    }

    #[test]
    fn tail_missing_the_central_directory_start_needs_it_once() {
        let bytes = fixture("stored.zip");
        let len = bytes.len() as u64;
        let cd = expected("stored.zip")["cd_offset"].as_u64().unwrap();
        let (_, _, needs) = done("stored.zip", 60);
        assert_eq!(needs, vec![cd..len - 60]);
        // From the end record alone, too.
        let (_, _, needs) = done("stored.zip", 22);
        assert_eq!(needs, vec![cd..len - 22]);
        // Locator bytes missing, the end record's offset saturated: the locator region first.
        let mut b = bytes.clone();
        let end = b.len() - 22;
        put(&mut b, end + 16, &[0xFF; 4]);
        let (r, needs) = parse(&b, 22);
        assert_eq!(needs, vec![len - 98..len - 22]);
        assert!(matches!(r, Err(ZipError::Invalid(m)) if m.contains("does not end where")));
        // From no bytes: the search window first, which here is the whole archive.
        let r = parse_directory(len, &[]).unwrap();
        assert_eq!(r, Step::Need(0..len));
    }

    #[test]
    fn zip64_end_records_and_extra_fields() {
        let (bytes, d, needs) = done("zip64.zip", TAIL_BYTES);
        assert!(needs.is_empty());
        let len = bytes.len() as u64;
        let cd = expected("zip64.zip")["cd_offset"].as_u64().unwrap();
        // Saturated fields in the end record and the central headers, as written.
        assert_eq!(&bytes[bytes.len() - 22..][8..20], &[0xFF; 12]);
        assert_eq!(d.entries, done("stored.zip", TAIL_BYTES).1.entries);
        // The locator in the tail, the ZIP64 record outside: it is asked for, then the
        // central directory.
        let (_, _, needs) = done("zip64.zip", 42);
        assert_eq!(needs, vec![len - 98..len - 42, cd..len - 98]);
        // Only the end record: the locator and the record come in one read.
        let (_, _, needs) = done("zip64.zip", 22);
        assert_eq!(needs, vec![len - 98..len - 22, cd..len - 98]);
        // Only the locator's last bytes.
        let (_, _, needs) = done("zip64.zip", 30);
        assert_eq!(needs, vec![len - 98..len - 30, cd..len - 98]);
        // An end record that gives the offset (not saturated): the records and the central
        // directory in one read.
        let mut b = bytes.clone();
        let end = b.len() - 22;
        put(&mut b, end + 16, &(cd as u32).to_le_bytes());
        for tail in [22, 42] {
            let (r, needs) = parse(&b, tail);
            assert_eq!(needs, vec![cd..len - tail]);
            assert_eq!(r.expect("offset given").entries, d.entries);
        }
    }

    #[test]
    fn archive_comment() {
        let (bytes, ..) = done("comment.zip", TAIL_BYTES);
        let len = bytes.len();
        assert_eq!(u16_at(&bytes, len - 300 - 2), 300, "the fixture's comment");
        // An end record signature inside the comment, its comment length not ending the
        // archive, is passed over.
        let mut fake = bytes.clone();
        let at = len - 100;
        fake[at..at + 4].copy_from_slice(&SIG_END.to_le_bytes());
        fake[at + 20..at + 22].copy_from_slice(&7u16.to_le_bytes());
        let (d, _) = parse(&fake, TAIL_BYTES);
        check("comment.zip", &fake, &d.expect("comment with a signature"));
    }

    #[test]
    fn end_record_beyond_the_tail_is_asked_for() {
        // stored.zip with the longest comment: its end record starts before the last 64 KiB.
        let mut bytes = fixture("stored.zip");
        let end = bytes.len() - 22;
        bytes[end + 20..end + 22].copy_from_slice(&0xFFFFu16.to_le_bytes());
        bytes.extend((0..0xFFFFu32).map(|i| (i % 251) as u8));
        let len = bytes.len() as u64;
        let (d, needs) = parse(&bytes, TAIL_BYTES);
        let window = len - 65_557 - 76;
        let cd = expected("stored.zip")["cd_offset"].as_u64().unwrap();
        assert_eq!(needs, vec![window..len - TAIL_BYTES, cd..window]);
        let d = d.expect("long comment");
        assert_eq!(d.entries, done("stored.zip", TAIL_BYTES).1.entries);
        assert_eq!(d.tail_range.end, len);
    }

    #[test]
    fn compressed_and_encrypted_members_are_unsupported_by_name() {
        let (_, d, _) = done("methods.zip", TAIL_BYTES);
        let got: Vec<_> = d.entries.iter().map(|e| e.check_stored()).collect();
        assert_eq!(got[0], Ok(()));
        for (e, what) in d.entries[1..].iter().zip([
            "deflate (method 8)",
            "bzip2 (method 12)",
            "lzma (method 14)",
        ]) {
            match e.check_stored() {
                Err(ZipError::Unsupported { member, detail }) => {
                    assert_eq!(member, e.name);
                    assert!(detail.contains(what), "{detail}");
                }
                other => panic!("{}: {other:?}", e.name),
            }
        }
        let (_, d, _) = done("encrypted.zip", TAIL_BYTES);
        for e in &d.entries {
            assert_eq!(e.method, 0);
            match e.check_stored() {
                Err(ZipError::Unsupported { member, detail }) => {
                    assert_eq!(member, e.name);
                    assert!(detail.starts_with("encrypted"), "{detail}");
                    assert!(detail.contains("(method 0)"), "{detail}");
                }
                other => panic!("{}: {other:?}", e.name),
            }
        }
        assert_eq!(
            ZipError::Unsupported {
                member: "a".into(),
                detail: format!("compressed with {}", method_name(93)),
            }
            .to_string(),
            "member a: compressed with zstd (method 93)"
        );
        assert_eq!(method_name(77), "method 77");
    }

    #[test]
    fn local_headers_with_extra_fields_and_data_descriptors() {
        // zipfile: our own extra field in both headers, a ZIP64 one in the local header only.
        let (bytes, d, _) = done("extra.zip", TAIL_BYTES);
        let lens: Vec<u16> = d
            .entries
            .iter()
            .map(|e| u16_at(&bytes, e.header_offset as usize + 28))
            .collect();
        assert_eq!(lens, vec![16, 20, 0], "the fixture's local extra fields");
        // Info-ZIP: extended timestamp and Unix extra fields.
        let (bytes, d, _) = done("infozip.zip", TAIL_BYTES);
        assert!(d
            .entries
            .iter()
            .all(|e| u16_at(&bytes, e.header_offset as usize + 28) > 0));
        // Data descriptors: zeros in the local header.
        let (bytes, d, _) = done("descriptor.zip", TAIL_BYTES);
        for e in &d.entries {
            assert_eq!(e.flags & FLAG_DATA_DESCRIPTOR, FLAG_DATA_DESCRIPTOR);
            assert_eq!(&bytes[e.header_offset as usize + 14..][..12], &[0; 12]);
        }
    }

    #[test]
    fn data_range_checks_the_local_header() {
        let (bytes, d, _) = done("stored.zip", TAIL_BYTES);
        let len = bytes.len() as u64;
        let e = &d.entries[1];
        let at = e.header_offset as usize;
        let local = &bytes[at..at + 30 + e.name.len()];
        let start = e.header_offset + 30 + e.name.len() as u64;
        assert_eq!(
            e.data_range(local, len),
            Ok(LocalHeader::Data(start..start + e.size))
        );
        assert_eq!(e.data_range(&local[..29], len), Ok(LocalHeader::Need(30)));
        assert_eq!(e.data_range(&local[..31], len), Ok(LocalHeader::Need(36)));
        let mutated = |at: usize, v: &[u8]| {
            let mut l = local.to_vec();
            l[at..at + v.len()].copy_from_slice(v);
            e.data_range(&l, len)
        };
        for (at, v, what) in [
            (0, &b"PK\x01\x02"[..], "signature"),
            (6, &[1, 0][..], "flags"),
            (8, &[8, 0][..], "method"),
            (14, &[0, 0, 0, 0][..], "CRC-32"),
            (18, &[1, 0, 0, 0][..], "compressed size"),
            (22, &[1, 0, 0, 0][..], "size"),
            (30, &b"c"[..], "names"),
        ] {
            match mutated(at, v) {
                Err(ZipError::Invalid(m)) => assert!(m.contains(what), "{what}: {m}"),
                other => panic!("{what}: {other:?}"),
            }
        }
        // Data past the archive (a shorter `len`), a compressed size of 2^63 or 2^64 - 1.
        assert!(matches!(
            e.data_range(local, start + e.size - 1),
            Err(ZipError::Invalid(_))
        ));
        for big in [1u64 << 63, u64::MAX] {
            let huge = Entry {
                compressed_size: big,
                ..e.clone()
            };
            let mut l = local.to_vec();
            l[18..26].copy_from_slice(&[0xFF; 8]);
            assert!(matches!(
                huge.data_range(&l, len),
                Err(ZipError::Invalid(_))
            ));
            let far = Entry {
                header_offset: big,
                ..e.clone()
            };
            assert!(matches!(
                far.data_range(local, len),
                Err(ZipError::Invalid(_))
            ));
        }
    }

    /// Offset of central header `i` of `bytes` (a non-ZIP64 archive).
    fn central_at(bytes: &[u8], i: usize) -> usize {
        let end = bytes.len() - 22 - usize::from(u16_at(bytes, bytes.len() - 2));
        let mut pos = u32_at(bytes, end + 16) as usize;
        for _ in 0..i {
            pos += 46
                + usize::from(u16_at(bytes, pos + 28))
                + usize::from(u16_at(bytes, pos + 30))
                + usize::from(u16_at(bytes, pos + 32));
        }
        pos
    }

    fn invalid_with(bytes: &[u8], words: &str) {
        for tail in [TAIL_BYTES, 22] {
            match parse(bytes, tail).0 {
                Err(ZipError::Invalid(m)) => assert!(m.contains(words), "{words:?} not in {m:?}"),
                other => panic!("wanted Invalid({words:?}), got {other:?}"),
            }
        }
    }

    fn put(bytes: &mut [u8], at: usize, v: &[u8]) {
        bytes[at..at + v.len()].copy_from_slice(v);
    }

    #[test]
    fn truncated_archives_are_invalid() {
        let bytes = fixture("stored.zip");
        invalid_with(
            &bytes[..bytes.len() - 1],
            "no end of central directory record",
        );
        invalid_with(
            &bytes[..bytes.len() / 2],
            "no end of central directory record",
        );
        invalid_with(
            &bytes[..21],
            "shorter than an end of central directory record",
        );
        invalid_with(&bytes[1..], "does not end where the end records begin");
        assert!(matches!(parse_directory(0, &[]), Err(ZipError::Invalid(_))));
        // Pieces past the archive are the caller's error, typed.
        let piece = [(10, Bytes::from_static(&[0; 20]))];
        assert!(matches!(
            parse_directory(25, &piece),
            Err(ZipError::Invalid(_))
        ));
        let piece = [(u64::MAX, Bytes::from_static(&[0; 2]))];
        assert!(matches!(
            parse_directory(25, &piece),
            Err(ZipError::Invalid(_))
        ));
    }

    #[test]
    fn end_record_violations_are_invalid() {
        let bytes = fixture("stored.zip");
        let end = bytes.len() - 22;
        let len = bytes.len() as u32;
        let m = |at: usize, v: &[u8]| {
            let mut b = bytes.clone();
            put(&mut b, end + at, v);
            b
        };
        // Central directory outside the file, or not ending at the end record.
        invalid_with(&m(16, &(len + 100).to_le_bytes()), "does not end where");
        invalid_with(&m(16, &u32::MAX.to_le_bytes()), "does not end where");
        invalid_with(&m(12, &u32::MAX.to_le_bytes()), "does not end where");
        invalid_with(&m(12, &1u32.to_le_bytes()), "does not end where");
        // Absurd or inconsistent counts.
        invalid_with(&m(8, &[0xFF, 0xFF, 0xFF, 0xFF]), "hold at most");
        invalid_with(&m(8, &[5, 0, 5, 0]), "hold at most");
        invalid_with(&m(8, &[3, 0, 3, 0]), "bytes after its 3 headers");
        invalid_with(&m(8, &[3, 0]), "entries on this disk");
        invalid_with(&m(4, &[1, 0]), "spans disks");
        // A bad central header signature.
        let mut b = bytes.clone();
        put(&mut b, central_at(&bytes, 2), b"PK\x03\x04");
        invalid_with(&b, "no central directory file header signature");
    }

    #[test]
    fn member_violations_are_invalid() {
        let bytes = fixture("stored.zip");
        let c: Vec<usize> = (0..4).map(|i| central_at(&bytes, i)).collect();
        let name_at = |i: usize| c[i] + 46;
        let cd = expected("stored.zip")["cd_offset"].as_u64().unwrap() as u32;
        // "grp/big.b2nd" (12 bytes) renamed in place.
        for (name, words) in [
            (&b"../gbig.b2nd"[..], "`..` component"),
            (b"grp/../.b2nd", "`..` component"),
            (b"/grpbig.b2nd", "absolute"),
            (b"C:grpbig.b2n", "drive letter"),
            (b"grp/b\0g.b2nd", "NUL"),
        ] {
            let mut b = bytes.clone();
            put(&mut b, name_at(0), name);
            invalid_with(&b, words);
        }
        // Flagged UTF-8 but not UTF-8.
        let mut b = bytes.clone();
        put(&mut b, name_at(0), &[0xFF]);
        put(&mut b, c[0] + 8, &FLAG_UTF8.to_le_bytes());
        invalid_with(&b, "not");
        // "b.b2nd" renamed "a.b2nd".
        let mut b = bytes.clone();
        put(&mut b, name_at(2), b"a");
        invalid_with(&b, "two members are named \"a.b2nd\"");
        // "b.b2nd" moved into "a.b2nd".
        let a_offset = u32_at(&bytes, c[1] + 42);
        let mut b = bytes.clone();
        put(&mut b, c[2] + 42, &(a_offset + 10).to_le_bytes());
        invalid_with(&b, "overlap");
        // Two members at one offset.
        let mut b = bytes.clone();
        put(&mut b, c[2] + 42, &a_offset.to_le_bytes());
        invalid_with(&b, "overlap");
        // A size beyond the archive, or into the central directory.
        for size in [0x7FFF_FFFFu32, cd, u32::MAX] {
            let mut b = bytes.clone();
            put(&mut b, c[3] + 20, &size.to_le_bytes());
            invalid_with(&b, "do not fit before the central directory");
        }
        // A header offset past the central directory.
        let mut b = bytes.clone();
        put(&mut b, c[3] + 42, &cd.to_le_bytes());
        invalid_with(&b, "do not fit before the central directory");
        // A name, extra field or comment running past the directory.
        for at in [28, 30, 32] {
            let mut b = bytes.clone();
            put(&mut b, c[3] + at, &[0xFF, 0xFF]);
            invalid_with(&b, "runs past the end of the central directory");
        }
        // A member on another disk.
        let mut b = bytes.clone();
        put(&mut b, c[1] + 34, &[1, 0]);
        invalid_with(&b, "disk 1");
        // A malformed extra field: a block longer than the field.
        let mut b = bytes.clone();
        put(&mut b, c[3] + 30, &[4, 0]);
        put(&mut b, c[3] + 32, &[0, 0]);
        let next = name_at(3) + 9;
        let mut b2 = b[..next].to_vec();
        b2.extend([0x34, 0x12, 9, 0]);
        b2.extend(&b[next..]);
        let n = b2.len();
        let cd_size = u32_at(&b2, n - 10) + 4;
        put(&mut b2, n - 10, &cd_size.to_le_bytes());
        invalid_with(&b2, "runs past the extra field");
    }

    #[test]
    fn names_are_checked_and_decoded() {
        assert!(check_name("").is_err());
        assert!(check_name("..").is_err());
        assert!(check_name("a/..").is_err());
        assert_eq!(check_name("a/b..c/.d/x.b2nd"), Ok(()));
        // python-blosc2 keys such as `a\.b` (an escaped dot) are names, not paths
        assert_eq!(check_name("_indexes/a\\.c/summary.block.b2nd"), Ok(()));
        assert_eq!(
            check_name("d:"),
            Err("name starts with a drive letter".into())
        );
        assert_eq!(CP437_HIGH.chars().count(), 128);
        // Python: bytes([0x80, 0x9b, 0xe1, 0xff, 0x41]).decode("cp437") == "Ç¢ß\xa0A".
        assert_eq!(
            decode_name(&[0x80, 0x9b, 0xe1, 0xff, 0x41], 0),
            Ok("Ç¢ß\u{a0}A".into())
        );
        assert_eq!(decode_name("é".as_bytes(), FLAG_UTF8), Ok("é".into()));
        assert!(decode_name(&[0xe9], FLAG_UTF8).is_err());
    }

    /// Offsets in zip64.zip: the central headers' ZIP64 extra fields, the ZIP64 record.
    fn zip64_layout(bytes: &[u8]) -> (Vec<usize>, usize) {
        let len = bytes.len();
        let z64 = len - 22 - 20 - 56;
        let mut pos = u64_at(bytes, z64 + 48) as usize;
        let mut extras = Vec::new();
        while pos < z64 {
            let n = usize::from(u16_at(bytes, pos + 28));
            let x = usize::from(u16_at(bytes, pos + 30));
            let at = pos + 46 + n;
            assert_eq!(
                u16_at(bytes, at),
                ZIP64_EXTRA_ID,
                "the fixture's ZIP64 extra field"
            );
            extras.push(at + 4);
            pos += 46 + n + x + usize::from(u16_at(bytes, pos + 32));
        }
        (extras, z64)
    }

    #[test]
    fn zip64_violations_are_invalid() {
        let bytes = fixture("zip64.zip");
        let len = bytes.len();
        let (extras, z64) = zip64_layout(&bytes);
        let loc = len - 42;
        let m = |at: usize, v: &[u8]| {
            let mut b = bytes.clone();
            put(&mut b, at, v);
            b
        };
        let huge = (1u64 << 63).to_le_bytes();
        let max = u64::MAX.to_le_bytes();
        // Sizes and offsets of 2^63 and 2^64 - 1 in the ZIP64 extra field (size, compressed
        // size, header offset).
        for v in [huge, max] {
            invalid_with(
                &m(extras[0] + 8, &v),
                "do not fit before the central directory",
            );
            invalid_with(
                &m(extras[3] + 16, &v),
                "do not fit before the central directory",
            );
        }
        // The uncompressed size is not bounded by the archive (a stored member's sizes must
        // agree, which check_stored checks).
        let (d, _) = parse(&m(extras[0], &huge), TAIL_BYTES);
        let e = &d
            .expect("a big size alone is not a directory error")
            .entries[0];
        assert_eq!(e.size, 1 << 63);
        assert!(matches!(e.check_stored(), Err(ZipError::Invalid(_))));
        // ZIP64 record: counts, size, offset.
        invalid_with(
            &m(
                z64 + 24,
                &[&(1u64 << 40).to_le_bytes()[..], &(1u64 << 40).to_le_bytes()].concat(),
            ),
            "more than the 1000000",
        );
        invalid_with(&m(z64 + 24, &max), "entries on this disk");
        invalid_with(&m(z64 + 40, &huge), "does not end where");
        invalid_with(&m(z64 + 48, &0u64.to_le_bytes()), "does not end where");
        // An end record field not saturated must agree.
        invalid_with(&m(len - 22 + 10, &[3, 0]), "disagrees");
        let mut b = m(z64 + 40, &huge);
        put(&mut b, z64 + 48, &huge);
        invalid_with(&b, "does not end where");
        let mut b = m(z64 + 40, &max);
        put(&mut b, z64 + 48, &max);
        invalid_with(&b, "does not end where");
        invalid_with(&m(z64 + 4, &max), "do not end at the locator");
        invalid_with(
            &m(z64 + 4, &45u64.to_le_bytes()),
            "do not end at the locator",
        );
        invalid_with(
            &m(z64, b"PK\x05\x06"),
            "no ZIP64 end of central directory record",
        );
        invalid_with(&m(z64 + 16, &[1, 0, 0, 0]), "spans disks");
        // Locator: the record's offset, disks.
        for v in [huge, max, ((len - 50) as u64).to_le_bytes()] {
            invalid_with(&m(loc + 8, &v), "does not fit before the locator");
        }
        invalid_with(&m(loc + 16, &[2, 0, 0, 0]), "spans disks");
        invalid_with(&m(loc + 4, &[1, 0, 0, 0]), "spans disks");
        // A ZIP64 extra field too short for the saturated fields.
        invalid_with(&m(extras[1] - 2, &[16, 0]), "lacks the local header offset");
    }

    /// Every byte of every fixture changed, and every truncation: a directory or a typed
    /// error, and `data_range` on every entry likewise (the bounds are checked in `parse`).
    #[test]
    fn damaged_archives_never_panic() {
        for name in [
            "stored.zip",
            "comment.zip",
            "methods.zip",
            "extra.zip",
            "descriptor.zip",
            "zip64.zip",
            "infozip.zip",
            "encrypted.zip",
        ] {
            let bytes = fixture(name);
            let try_all = |b: &[u8]| {
                for tail in [TAIL_BYTES, 60] {
                    if let (Ok(d), _) = parse(b, tail) {
                        for e in &d.entries {
                            let _ = e.check_stored();
                            let at = (e.header_offset as usize).min(b.len());
                            let _ = e.data_range(&b[at..], b.len() as u64);
                            let _ = e.data_range(&b[at..(at + 30).min(b.len())], b.len() as u64);
                        }
                    }
                }
            };
            for i in 0..bytes.len() {
                for v in [0u8, 0xFF, bytes[i] ^ 1] {
                    let mut b = bytes.clone();
                    b[i] = v;
                    try_all(&b);
                }
            }
            for n in 0..bytes.len() {
                try_all(&bytes[..n]);
                try_all(&bytes[n..]);
            }
        }
    }
}
