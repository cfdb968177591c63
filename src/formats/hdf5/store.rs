//! Running the synchronous `hdf5-reader` crate over async range reads.
//!
//! [`SparseStore`] implements the crate's `Storage` over the byte ranges fetched so far; a read
//! of bytes it does not hold records the range as a miss and fails. [`Discovery::run`] runs a
//! discovery step, fetches every recorded miss (aligned readahead, merged, one
//! [`read_coalesced`] batch per round) and reruns the step, until a step records no miss.
//!
//! Two rules keep this correct (`docs/facts.md`, "HDF5 discovery over async range reads"):
//! a step is rerun whenever it recorded a miss, even if it returned `Ok` (the crate silently
//! drops a soft link whose target read failed); and every attempt builds a fresh `Hdf5File`
//! (the crate caches headers and shared-message tables, including their load errors).

use super::Hdf5Error;
use crate::io::{read_coalesced, CoalesceOptions, RangeSource};
use bytes::Bytes;
use hdf5_reader::storage::{Storage, StorageBuffer};
use hdf5_reader::Hdf5File;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Largest single read the crate may ask a [`SparseStore`] for (64 MiB); a larger one is a
/// malformed length, not a fetch.
pub const MAX_MISS_BYTES: u64 = 64 << 20;

/// Requests one index round aims for (four waves of six concurrent requests): the merge gap
/// of [`Discovery::fetch_round`] grows until the round needs no more.
pub const INDEX_ROUND_REQUESTS: usize = 24;

/// Requests of one index round in flight at once (256).
pub const INDEX_ROUND_CONCURRENCY: usize = 256;

/// Largest gap (bytes) an index round bridges: 32 KiB (zarrita's choice; `docs/facts.md`
/// "Range coalescing").
pub const INDEX_GAP_CAP: u64 = 32 * 1024;

/// The smallest merge gap that joins `sorted` ranges into at most `max_requests` fetches,
/// capped at `cap` bytes. Keeping the `max_requests - 1` widest gaps as splits moves the
/// fewest bytes for that many requests.
pub fn round_gap(sorted: &[Range<u64>], max_requests: usize, cap: u64) -> u64 {
    let mut gaps: Vec<u64> = Vec::new();
    let mut end = None::<u64>;
    for r in sorted {
        if let Some(e) = end {
            if r.start > e {
                gaps.push(r.start - e);
            }
        }
        end = Some(end.map_or(r.end, |e| e.max(r.end)));
    }
    if gaps.len() < max_requests.max(1) {
        return 0;
    }
    crate::sort::sort_by(&mut gaps, |a, b| b.cmp(a));
    gaps[max_requests.max(1) - 1].min(cap)
}

/// The bytes of a source fetched so far, as disjoint pieces keyed by start offset.
///
/// An insert costs what it adds: it keeps its bytes as one piece (no copy) and trims the
/// pieces it overlaps (the later bytes win). Pieces that touch are joined lazily, by a read
/// that crosses them: when they hold at most twice the bytes read they are joined into one
/// piece (later reads of them copy nothing), else only the bytes read are copied. So every
/// byte copied is paid for by a read of at least half as many bytes, and discovery's rounds
/// of inserts stay linear in the bytes fetched.
#[derive(Debug)]
pub struct SparseStore {
    len: u64,
    spans: Mutex<BTreeMap<u64, Bytes>>,
    misses: Mutex<Vec<Range<u64>>>,
    /// Replacement bytes the crate's parsers see instead of the source's ([`Masked`]).
    patches: Mutex<BTreeMap<u64, Bytes>>,
    /// Bytes copied by inserts and lookups (tests bound it).
    #[cfg(test)]
    copied: std::sync::atomic::AtomicU64,
}

impl SparseStore {
    /// An empty store for a source of `len` bytes.
    pub fn new(len: u64) -> Self {
        SparseStore {
            len,
            spans: Mutex::new(BTreeMap::new()),
            misses: Mutex::new(Vec::new()),
            patches: Mutex::new(BTreeMap::new()),
            #[cfg(test)]
            copied: Default::default(),
        }
    }

    /// Size of the source in bytes.
    pub fn source_len(&self) -> u64 {
        self.len
    }

    /// Adds the bytes of `start..start + bytes.len()`, replacing what is held of that range.
    /// Bytes beyond the source's end are ignored. Copies nothing.
    pub fn insert(&self, start: u64, bytes: Bytes) {
        let end = (start.saturating_add(bytes.len() as u64)).min(self.len);
        if end <= start {
            return;
        }
        let bytes = bytes.slice(..(end - start) as usize);
        let mut spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        // Pieces are disjoint and sorted: those overlapping `start..end` are the last ones
        // starting before `end` that end after `start`.
        let overlapping: Vec<u64> = spans
            .range(..end)
            .rev()
            .take_while(|(s, b)| **s + b.len() as u64 > start)
            .map(|(s, _)| *s)
            .collect();
        for s in overlapping {
            let Some(b) = spans.remove(&s) else { continue };
            let e = s + b.len() as u64;
            if s < start {
                spans.insert(s, b.slice(..(start - s) as usize));
            }
            if e > end {
                spans.insert(end, b.slice((end - s) as usize..));
            }
        }
        spans.insert(start, bytes);
    }

    /// Whether every byte of `r` is held.
    pub fn holds(&self, r: &Range<u64>) -> bool {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        Self::cover(&spans, r.start, r.end.saturating_sub(r.start)).is_some()
    }

    /// The starts of the touching pieces that hold `offset..offset + len` (`len > 0`), in
    /// order, or `None` when a byte of it is missing.
    fn cover(spans: &BTreeMap<u64, Bytes>, offset: u64, len: u64) -> Option<Vec<u64>> {
        let end = offset.checked_add(len)?;
        let (&first, b) = spans.range(..=offset).next_back()?;
        let mut reached = first + b.len() as u64;
        if reached <= offset && len > 0 {
            return None;
        }
        let mut starts = vec![first];
        while reached < end {
            let b = spans.get(&reached)?;
            starts.push(reached);
            reached += b.len() as u64;
        }
        Some(starts)
    }

    /// The held bytes of `offset..offset + len` (`len > 0`), as a buffer and the position of
    /// the range in it; `None` when a byte is missing.
    fn find(&self, offset: u64, len: u64) -> Option<(Bytes, usize)> {
        let mut spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        let starts = Self::cover(&spans, offset, len)?;
        let first = starts[0];
        if starts.len() == 1 {
            return Some((spans[&first].clone(), (offset - first) as usize));
        }
        let last = *starts.last()?;
        let pieces_end = last + spans[&last].len() as u64;
        let joined_len = pieces_end - first;
        if joined_len <= len.saturating_mul(2) {
            // Join the pieces: later reads across them copy nothing.
            let mut joined = Vec::with_capacity(joined_len as usize);
            for s in &starts {
                if let Some(b) = spans.remove(s) {
                    joined.extend_from_slice(&b);
                }
            }
            self.count_copy(joined.len());
            let joined = Bytes::from(joined);
            spans.insert(first, joined.clone());
            return Some((joined, (offset - first) as usize));
        }
        // Pieces much larger than the read: copy only the bytes read.
        let end = offset + len;
        let mut out = Vec::with_capacity(len as usize);
        for s in &starts {
            let b = &spans[s];
            let lo = offset.max(*s) - s;
            let hi = end.min(s + b.len() as u64) - s;
            out.extend_from_slice(&b[lo as usize..hi as usize]);
        }
        self.count_copy(out.len());
        Some((Bytes::from(out), 0))
    }

    #[cfg(test)]
    fn count_copy(&self, n: usize) {
        self.copied
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }

    #[cfg(not(test))]
    fn count_copy(&self, _n: usize) {}

    /// Takes the misses recorded since the last call.
    pub fn take_misses(&self) -> Vec<Range<u64>> {
        std::mem::take(&mut *self.misses.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes the crate's parsers see `bytes` at `start` instead of the source's bytes (see
    /// [`Masked`]); reads of [`SparseStore`] itself still give the source's bytes.
    pub fn patch(&self, start: u64, bytes: Bytes) {
        self.patches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(start, bytes);
    }

    /// Whether any patch is held.
    pub fn patched(&self) -> bool {
        !self
            .patches
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> u64 {
        let spans = self.spans.lock().unwrap_or_else(|e| e.into_inner());
        spans.values().map(|b| b.len() as u64).sum()
    }
}

struct Owner(Bytes);
impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Storage for SparseStore {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let n = len as u64;
        let end = offset
            .checked_add(n)
            .ok_or(hdf5_reader::error::Error::OffsetOutOfBounds(offset))?;
        if end > self.len {
            return Err(hdf5_reader::error::Error::UnexpectedEof {
                offset,
                needed: n,
                available: self.len.saturating_sub(offset),
            });
        }
        if n == 0 {
            return Ok(StorageBuffer::from_vec(Vec::new()));
        }
        match self.find(offset, n) {
            Some((b, at)) => StorageBuffer::from_shared_owner(Arc::new(Owner(b)), at, len),
            None => {
                self.misses
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(offset..end);
                Err(hdf5_reader::error::Error::Io(std::io::Error::other(
                    "range not fetched yet",
                )))
            }
        }
    }
}

/// The store as the crate's parsers see it: the source's bytes with the store's patches
/// laid over them. A patch hides a broken attribute storage from the crate, which loads a
/// dataset's attributes when it opens it (`attrs::dense_mask`); attributes themselves are
/// read from the unpatched store ([`Discovery::run_raw`]).
pub struct Masked(pub Arc<SparseStore>);

impl Storage for Masked {
    fn len(&self) -> u64 {
        self.0.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let buf = self.0.read_range(offset, len)?;
        let end = offset + len as u64;
        let patches = self.0.patches.lock().unwrap_or_else(|e| e.into_inner());
        let over: Vec<(&u64, &Bytes)> = patches
            .range(..end)
            .filter(|(s, b)| **s + b.len() as u64 > offset)
            .collect();
        if over.is_empty() {
            return Ok(buf);
        }
        let mut v = buf.to_vec();
        for (&s, b) in over {
            let lo = s.max(offset);
            let hi = (s + b.len() as u64).min(end);
            v[(lo - offset) as usize..(hi - offset) as usize]
                .copy_from_slice(&b[(lo - s) as usize..(hi - s) as usize]);
        }
        Ok(StorageBuffer::from_vec(v))
    }
}

/// Drives discovery steps over a [`SparseStore`], fetching what they miss.
pub struct Discovery<'a> {
    source: &'a dyn RangeSource,
    store: Arc<SparseStore>,
    /// Misses are widened to multiples of this many bytes (default 64 KiB).
    pub readahead: u64,
    /// Rounds of fetching one [`Discovery::run`] may take before giving up (default 512).
    pub max_rounds: usize,
    /// Concurrent range requests per round.
    pub concurrency: usize,
    /// Over-read allowed when one index level is merged, as a fraction of its bytes
    /// (default [`super::index::DEFAULT_INDEX_OVER_READ`], see [`super::index::budget_gap`]).
    pub index_over_read: f64,
    rounds: usize,
}

impl<'a> Discovery<'a> {
    /// A driver reading misses from `source` into `store`.
    pub fn new(source: &'a dyn RangeSource, store: Arc<SparseStore>) -> Self {
        Discovery {
            source,
            store,
            readahead: 64 * 1024,
            max_rounds: 512,
            concurrency: 6,
            index_over_read: super::index::DEFAULT_INDEX_OVER_READ,
            rounds: 0,
        }
    }

    /// Rounds of fetching done so far (each one [`read_coalesced`] batch).
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// The store.
    pub fn store(&self) -> &Arc<SparseStore> {
        &self.store
    }

    /// Runs `step` on a fresh `Hdf5File` until an attempt records no miss, fetching the
    /// misses of each failed attempt in one batch.
    ///
    /// # Errors
    /// The step's error once it ran without a miss ([`Hdf5Error::Reader`]); I/O errors;
    /// [`Hdf5Error::Invalid`] when the step asks for an absurd range or needs more than
    /// [`Discovery::max_rounds`] rounds.
    pub async fn run<T, F>(&mut self, step: F) -> Result<T, Hdf5Error>
    where
        F: Fn(&Hdf5File) -> hdf5_reader::error::Result<T>,
    {
        self.run_on(step, true).await
    }

    /// [`Discovery::run`] on the source's bytes without the store's patches (for reading
    /// attributes as stored).
    ///
    /// # Errors
    /// As [`Discovery::run`].
    pub async fn run_raw<T, F>(&mut self, step: F) -> Result<T, Hdf5Error>
    where
        F: Fn(&Hdf5File) -> hdf5_reader::error::Result<T>,
    {
        self.run_on(step, false).await
    }

    async fn run_on<T, F>(&mut self, step: F, masked: bool) -> Result<T, Hdf5Error>
    where
        F: Fn(&Hdf5File) -> hdf5_reader::error::Result<T>,
    {
        loop {
            let misses = {
                let storage: Arc<dyn Storage> = if masked && self.store.patched() {
                    Arc::new(Masked(self.store.clone()))
                } else {
                    self.store.clone()
                };
                let result = Hdf5File::from_storage(storage).and_then(|f| step(&f));
                let misses = self.store.take_misses();
                if misses.is_empty() {
                    return result.map_err(Hdf5Error::from);
                }
                misses
            };
            self.rounds += 1;
            if self.rounds > self.max_rounds {
                return Err(Hdf5Error::Invalid(format!(
                    "discovery needed more than {} rounds of reads",
                    self.max_rounds
                )));
            }
            self.fetch(&misses).await?;
        }
    }

    /// Fetches the nodes of a version 1 B-tree chunk index level by level, each level in
    /// one round, so the index walk that follows finds every node held. Walking depth
    /// first with restart-on-miss would cost a round per scattered node instead
    /// (`docs/facts.md`: 38 rounds for 10,000 chunks at 64 KiB readahead, 3 level by level).
    /// A node that does not parse ends the prefetch quietly: the walk that follows reports
    /// the error.
    ///
    /// # Errors
    /// I/O errors; [`Hdf5Error::Invalid`] past [`Discovery::max_rounds`].
    pub async fn prefetch_btree_v1(
        &mut self,
        index: &super::discover::BTreeV1Index,
    ) -> Result<(), Hdf5Error> {
        use hdf5_reader::btree_v1::BTreeV1Node;
        let len = self.store.source_len();
        let node = index.node_bytes();
        let mut level = vec![index.root];
        let mut seen = std::collections::HashSet::new();
        // A B-tree deeper than 64 levels is malformed.
        for _ in 0..64 {
            level.retain(|a| *a < len && seen.insert(*a));
            if level.is_empty() {
                break;
            }
            let want: Vec<Range<u64>> = level.iter().map(|&a| a..(a + node).min(len)).collect();
            self.fetch_round(&want).await?;
            // A node wider than 2K (a K the superblock does not tell): its exact length from
            // its header, in one more round.
            let header = 8 + 2 * index.offset_size as u64;
            let mut exact: Vec<Range<u64>> = Vec::new();
            for &a in &level {
                if let Ok(h) = self.store.read_range(a, header.min(len - a) as usize) {
                    if h.len() >= 8 {
                        let used = u16::from_le_bytes([h[6], h[7]]) as u64;
                        exact.push(a..(a + index.node_bytes_with(used)).min(len));
                    }
                }
            }
            self.fetch_round(&exact).await?;
            let mut next = Vec::new();
            for r in &exact {
                let a = r.start;
                let Ok(buf) = self.store.read_range(a, (r.end - r.start) as usize) else {
                    continue;
                };
                let mut cursor = hdf5_reader::io::Cursor::new(&buf);
                let Ok(parsed) =
                    BTreeV1Node::parse(&mut cursor, index.offset_size, 8, Some(index.ndim as u32))
                else {
                    continue;
                };
                if parsed.level > 0 {
                    next.extend(parsed.children);
                }
            }
            self.store.take_misses();
            level = next;
        }
        Ok(())
    }

    /// Fetches the ranges of `want` not held yet as one round (none if all are held), each
    /// exactly as asked: no readahead, since the caller knows the sizes (index nodes whose
    /// size the parent or the index header gives). Ranges are clamped to the source.
    ///
    /// Scattered index nodes sit between chunk data, so the merge gap is chosen per round:
    /// the smallest gap that leaves at most [`INDEX_ROUND_REQUESTS`] requests, but never more
    /// than [`INDEX_GAP_CAP`]. The cap keeps the bytes near the index's size: a B-tree's
    /// leaves written between every few dozen chunks would otherwise merge into the whole
    /// file. The price is more requests in the round: they are all started at once (up to
    /// [`INDEX_ROUND_CONCURRENCY`]), one round trip where the transport runs them
    /// concurrently (native HTTP, HTTP/2); a browser on HTTP/1.1 queues them six at a time.
    ///
    /// # Errors
    /// I/O errors; [`Hdf5Error::Invalid`] for a range over [`MAX_MISS_BYTES`] or past
    /// [`Discovery::max_rounds`].
    pub async fn fetch_round(&mut self, want: &[Range<u64>]) -> Result<(), Hdf5Error> {
        let len = self.store.source_len();
        let mut want: Vec<Range<u64>> = want
            .iter()
            .map(|r| r.start.min(len)..r.end.min(len))
            .filter(|r| r.end > r.start && !self.store.holds(r))
            .collect();
        if want.is_empty() {
            return Ok(());
        }
        if let Some(r) = want.iter().find(|r| r.end - r.start > MAX_MISS_BYTES) {
            return Err(Hdf5Error::Invalid(format!(
                "an index node of {} bytes at {} (larger than {MAX_MISS_BYTES})",
                r.end - r.start,
                r.start
            )));
        }
        self.rounds += 1;
        if self.rounds > self.max_rounds {
            return Err(Hdf5Error::Invalid(format!(
                "discovery needed more than {} rounds of reads",
                self.max_rounds
            )));
        }
        crate::sort::sort_by_key(&mut want, |r| (r.start, r.end));
        let gap = round_gap(&want, INDEX_ROUND_REQUESTS, INDEX_GAP_CAP)
            .max(super::index::budget_gap(&want, self.index_over_read));
        let opts = CoalesceOptions {
            max_gap: gap,
            max_len: None,
            concurrency: self.concurrency.max(INDEX_ROUND_CONCURRENCY),
        };
        let got = read_coalesced(self.source, &want, &opts).await?;
        for (r, b) in want.iter().zip(got) {
            self.store.insert(r.start, b);
        }
        Ok(())
    }

    async fn fetch(&self, misses: &[Range<u64>]) -> Result<(), Hdf5Error> {
        let len = self.store.source_len();
        let ra = self.readahead.max(1);
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for m in misses {
            if m.end - m.start > MAX_MISS_BYTES {
                return Err(Hdf5Error::Invalid(format!(
                    "a read of {} bytes at {} (larger than {MAX_MISS_BYTES})",
                    m.end - m.start,
                    m.start
                )));
            }
            // A miss of a readahead or more (a fixed-array data block, a large heap) is
            // fetched as asked: widening it would only add unrelated bytes.
            let (start, end) = if m.end - m.start >= ra {
                (m.start, m.end.min(len))
            } else {
                (
                    m.start / ra * ra,
                    m.end.div_ceil(ra).saturating_mul(ra).min(len),
                )
            };
            if !self.store.holds(&(start..end)) {
                ranges.push(start..end);
            }
        }
        crate::sort::sort_by_key(&mut ranges, |r| r.start);
        let mut merged: Vec<Range<u64>> = Vec::new();
        for r in ranges {
            match merged.last_mut() {
                Some(l) if r.start <= l.end => l.end = l.end.max(r.end),
                _ => merged.push(r),
            }
        }
        if merged.is_empty() {
            return Err(Hdf5Error::Invalid(
                "a read missed bytes that are held".into(),
            ));
        }
        let opts = CoalesceOptions {
            max_gap: ra,
            max_len: None,
            concurrency: self.concurrency,
        };
        let got = read_coalesced(self.source, &merged, &opts).await?;
        for (r, b) in merged.iter().zip(got) {
            self.store.insert(r.start, b);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_gap_keeps_the_widest_gaps_as_splits() {
        let r = vec![0..10, 20..30, 1000..1010, 1015..1020, 5000..5010];
        // Gaps 10, 970, 5, 3980: two requests split only at the widest gap.
        assert_eq!(round_gap(&r, 2, u64::MAX), 970);
        assert_eq!(round_gap(&r, 3, u64::MAX), 10);
        assert_eq!(round_gap(&r, 5, u64::MAX), 0);
        assert_eq!(round_gap(&r, 2, 100), 100);
        let plan = crate::io::coalesce_ranges(&r, round_gap(&r, 2, u64::MAX), None).unwrap();
        assert_eq!(plan.fetches, vec![0..1020, 5000..5010]);
    }

    #[test]
    fn store_merges_and_records_misses() {
        let s = SparseStore::new(100);
        s.insert(10, Bytes::from(vec![1u8; 10]));
        s.insert(20, Bytes::from(vec![2u8; 5]));
        let b = s.read_range(15, 8).expect("held");
        assert_eq!(&b[..], &[1, 1, 1, 1, 1, 2, 2, 2]);
        assert!(s.read_range(24, 2).is_err());
        assert_eq!(s.take_misses(), vec![24..26]);
        assert!(s.read_range(99, 2).is_err());
        assert!(s.take_misses().is_empty(), "out of bounds is not a miss");
        s.insert(5, Bytes::from(vec![3u8; 30]));
        assert_eq!(s.held_bytes(), 30);
        assert_eq!(&s.read_range(34, 1).unwrap()[..], &[3]);
    }

    fn copied(s: &SparseStore) -> u64 {
        s.copied.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[test]
    fn inserts_cost_what_they_add() {
        // 256 adjacent 4 KiB pieces, as rounds of discovery add them, in an order that
        // appends, prepends and fills holes.
        const PIECE: usize = 4096;
        const N: usize = 256;
        let total = PIECE * N;
        let data: Vec<u8> = (0..total).map(|i| (i * 7 % 251) as u8).collect();
        let s = SparseStore::new(total as u64 + 10);
        let mut order: Vec<usize> = (N / 2..N).collect();
        order.extend((0..N / 2).rev().filter(|i| i % 2 == 0));
        order.extend((0..N / 2).filter(|i| i % 2 == 1));
        for &i in &order {
            let at = i * PIECE;
            s.insert(at as u64, Bytes::copy_from_slice(&data[at..at + PIECE]));
        }
        // N²/2 pieces' worth when each insert recopies its merged span.
        assert!(
            copied(&s) <= 2 * total as u64,
            "copied {} bytes",
            copied(&s)
        );
        assert_eq!(s.held_bytes(), total as u64);
        assert!(s.holds(&(0..total as u64)));
        assert!(!s.holds(&(0..total as u64 + 1)));
        // Reads within a piece, across one boundary, across many, and of everything: each
        // copies at most twice what it reads.
        let inserted = copied(&s);
        let mut read = 0;
        for (at, n) in [
            (10, 100),
            (PIECE - 3, 7),
            (5 * PIECE + 1, 3 * PIECE),
            (0, total),
            (total - 1, 1),
        ] {
            let b = s.read_range(at as u64, n).expect("held");
            assert_eq!(&b[..], &data[at..at + n], "{at}+{n}");
            read += n as u64;
        }
        assert!(
            copied(&s) - inserted <= 2 * read,
            "{}",
            copied(&s) - inserted
        );
        // The read of everything joined the pieces: reads copy nothing more.
        let before = copied(&s);
        for _ in 0..10 {
            let b = s.read_range(PIECE as u64 - 3, 7).unwrap();
            assert_eq!(&b[..], &data[PIECE - 3..PIECE + 4]);
        }
        let b = s.read_range(0, total).unwrap();
        assert_eq!(&b[..], &data[..]);
        assert_eq!(copied(&s), before);
        // A read past what is held is a miss.
        assert!(s.read_range(total as u64, 5).is_err());
        assert_eq!(s.take_misses(), vec![total as u64..total as u64 + 5]);
    }

    #[test]
    fn a_later_insert_overwrites_what_it_overlaps() {
        let s = SparseStore::new(100);
        s.insert(10, Bytes::from(vec![1u8; 10]));
        s.insert(30, Bytes::from(vec![2u8; 10]));
        s.insert(15, Bytes::from(vec![3u8; 20]));
        assert_eq!(s.held_bytes(), 30);
        let b = s.read_range(10, 30).unwrap();
        let mut want = vec![1u8; 5];
        want.extend([3u8; 20]);
        want.extend([2u8; 5]);
        assert_eq!(&b[..], &want[..]);
        // Inside a held piece, and covering several: the same rule.
        s.insert(12, Bytes::from(vec![4u8; 2]));
        s.insert(0, Bytes::from(vec![5u8; 50]));
        assert_eq!(s.held_bytes(), 50);
        assert_eq!(&s.read_range(0, 50).unwrap()[..], &[5u8; 50][..]);
        // Bytes past the source's end are dropped.
        s.insert(95, Bytes::from(vec![6u8; 10]));
        assert_eq!(s.held_bytes(), 55);
        assert_eq!(&s.read_range(95, 5).unwrap()[..], &[6u8; 5][..]);
    }
}
