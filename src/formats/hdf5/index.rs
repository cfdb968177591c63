//! Chunk indexes fetched level by level before `hdf5-reader` walks them.
//!
//! Restart-on-miss walks an index depth first and pays a round trip for every node that is
//! not held yet (`docs/facts.md`: 129 rounds for a 10,000-chunk version 2 B-tree, 70 for an
//! extensible array). Here the nodes of one level are fetched together, each with its exact
//! size (known from the index header or from the parent node), in one
//! [`Discovery::fetch_round`]; the crate's collector then walks an index that is wholly held.
//!
//! Only the fields that locate children are parsed here, mirroring the HDF5 File Format
//! Specification version 3 (section III.A.2 "Version 2 B-trees", III.H "Extensible Array");
//! a node that does not parse ends its branch quietly, and the crate's full walk that
//! follows reports the error. Fixed arrays need no help: their data block is one read whose
//! size the header gives, fetched exactly by the restart driver. Every walk is bounded:
//! at most [`MAX_LEVELS`] levels and [`MAX_INDEX_NODES`] nodes, no node fetched twice, no
//! node past the end of the source.

use super::discover::BTreeV1Index;
use super::store::Discovery;
use super::Hdf5Error;
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::storage::Storage;
use hdf5_reader::Hdf5File;
use std::collections::HashSet;
use std::ops::Range;

/// Most levels a prefetch walks (the crate refuses B-trees deeper than 64 too).
pub const MAX_LEVELS: usize = 64;

/// Most index nodes one prefetch fetches (a 10,000-chunk index has a few hundred); past this
/// the prefetch stops and the restart driver fetches what the walk still misses.
pub const MAX_INDEX_NODES: usize = 1 << 20;

/// Default over-read allowed when the nodes of one index level are merged, as a fraction of
/// the level's bytes (see [`budget_gap`]): 25%, a bound on what a slow link pays.
///
/// Measured with `chunkwise bench index-merge` (h5py's 10,000-chunk files, 40 ms, six
/// connections): a file written in chunk order keeps each B-tree v1 leaf (2,616 bytes) about
/// 64 chunks (~67 KB) from the next, so 25% merges one gap: 177 requests to 176, 31 waves
/// either way. Fewer waves need the chunk bytes between the leaves: 16x over-read (7.8 MB)
/// gives 64 requests in 13 waves, 2x faster at 12.5 and 125 MB/s but 2x slower at
/// 2.5 MB/s; 64x (11.7 MB, 3 waves) 5x faster at 125 MB/s, 3x slower at 2.5 MB/s. Without
/// knowing the link, the bounded cost is kept.
pub const DEFAULT_INDEX_OVER_READ: f64 = 0.25;

/// The largest merge gap whose bridged bytes stay within `over_read` times the bytes of the
/// `sorted` ranges (sorted by start): bridging every gap up to the returned size reads at most
/// `over_read * wanted` bytes that were not asked for. Bridging the smallest gaps first saves
/// the most requests per byte over-read: on HTTP/1.1 a browser runs six requests at a time,
/// so a level of 157 B-tree leaves is 27 waves of round trips, and every six requests merged
/// away save one. `0` (or a non-finite or negative `over_read`) bridges nothing.
pub fn budget_gap(sorted: &[Range<u64>], over_read: f64) -> u64 {
    if !(over_read.is_finite() && over_read > 0.0) {
        return 0;
    }
    let mut gaps: Vec<u64> = Vec::new();
    let mut wanted = 0u64;
    let mut end = None::<u64>;
    for r in sorted {
        let start = end.map_or(r.start, |e| r.start.max(e));
        match end {
            Some(e) if r.start > e => gaps.push(r.start - e),
            _ => {}
        }
        wanted = wanted.saturating_add(r.end.saturating_sub(start));
        end = Some(end.map_or(r.end, |e| e.max(r.end)));
    }
    let budget = (wanted as f64 * over_read).min(u64::MAX as f64) as u64;
    gaps.sort_unstable();
    let (mut spent, mut gap) = (0u64, 0u64);
    for (i, &g) in gaps.iter().enumerate() {
        // All gaps of this size are bridged together (a merge gap bridges every gap up to it).
        spent = spent.saturating_add(g);
        if gaps.get(i + 1) == Some(&g) {
            continue;
        }
        if spent > budget {
            break;
        }
        gap = g;
    }
    gap
}

/// Where a chunked dataset's chunk index starts, as its data layout message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexRoot {
    /// Version 1 B-tree (layout message version 1 to 3).
    BTreeV1(BTreeV1Index),
    /// Version 2 B-tree: absolute address of its header (`BTHD`).
    BTreeV2(IndexAt),
    /// Extensible array: absolute address of its header (`EAHD`).
    ExtensibleArray(IndexAt),
    /// Fixed array, single chunk, implicit: nothing to prefetch level by level.
    Flat,
}

/// The address of an index header and the superblock's field sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexAt {
    /// Absolute byte offset of the index header.
    pub header: u64,
    /// Superblock "size of offsets" (bytes).
    pub offset_size: u8,
    /// Superblock "size of lengths" (bytes).
    pub length_size: u8,
    /// Superblock base address, added to every address read from the index.
    pub base: u64,
}

fn undefined(a: u64, offset_size: u8) -> bool {
    a == u64::MAX || (offset_size < 8 && a == (1u64 << (8 * offset_size as u32)) - 1)
}

/// Discovery step: where the chunk index of the dataset at `path` starts (`None` when the
/// dataset is not chunked or its index was never allocated).
///
/// # Errors
/// The crate's errors (missing path, malformed object header).
pub fn index_step(file: &Hdf5File, path: &str) -> hdf5_reader::error::Result<Option<IndexRoot>> {
    let ds = file.dataset(path)?;
    let header = file.get_or_parse_header(ds.address())?;
    let sb = file.superblock();
    for m in &header.messages {
        let HdfMessage::DataLayout(l) = m else {
            continue;
        };
        let DataLayout::Chunked {
            address,
            chunk_indexing,
            ..
        } = &l.layout
        else {
            return Ok(None);
        };
        if undefined(*address, sb.offset_size) {
            return Ok(None);
        }
        let at = IndexAt {
            header: address.saturating_add(sb.base_address),
            offset_size: sb.offset_size,
            length_size: sb.length_size,
            base: sb.base_address,
        };
        return Ok(Some(match chunk_indexing {
            None => IndexRoot::BTreeV1(BTreeV1Index {
                root: at.header,
                ndim: ds.shape().len(),
                offset_size: sb.offset_size,
                // Version 0 superblocks do not store K; 32 is the default (File Format
                // Specification, "Superblock").
                k: if sb.indexed_storage_k == 0 {
                    32
                } else {
                    sb.indexed_storage_k
                },
            }),
            Some(ChunkIndexing::BTreeV2) => IndexRoot::BTreeV2(at),
            Some(ChunkIndexing::ExtensibleArray { .. }) => IndexRoot::ExtensibleArray(at),
            Some(_) => IndexRoot::Flat,
        }));
    }
    Ok(None)
}

/// Fetches the chunk index that starts at `root`, level by level.
///
/// # Errors
/// I/O errors; [`Hdf5Error::Invalid`] past the driver's round limit. Malformed nodes are
/// not errors here (the walk that follows reports them).
pub async fn prefetch(d: &mut Discovery<'_>, root: &IndexRoot) -> Result<(), Hdf5Error> {
    match root {
        IndexRoot::BTreeV1(i) => d.prefetch_btree_v1(i).await,
        IndexRoot::BTreeV2(at) => prefetch_btree_v2(d, at).await,
        IndexRoot::ExtensibleArray(at) => prefetch_extensible_array(d, at).await,
        IndexRoot::Flat => Ok(()),
    }
}

/// Little-endian reader over held bytes; every read is bounds-checked.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, at: 0 }
    }
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn uint(&mut self, n: usize) -> Option<u64> {
        if n > 8 {
            return None;
        }
        let s = self.bytes(n)?;
        Some(s.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64))
    }
    fn u8(&mut self) -> Option<u8> {
        self.bytes(1).map(|s| s[0])
    }
}

fn held(d: &Discovery<'_>, r: &Range<u64>) -> Option<Vec<u8>> {
    let n = usize::try_from(r.end.checked_sub(r.start)?).ok()?;
    d.store().read_range(r.start, n).ok().map(|b| b.to_vec())
}

/// Bytes needed to store `n` (at least 1), as libhdf5's `H5VM_limit_enc_size`.
fn enc_size(n: u64) -> usize {
    (n.max(1).ilog2() / 8 + 1) as usize
}

/// Widths of the two record counts beside each child address of a version 2 B-tree internal
/// node at `depth` (File Format Specification III.A.2, "Version 2 B-tree Internal Node":
/// "Number of Records for Child Node" is sized for the most records a leaf holds, "Total
/// Number of Records in Child Node" for the most records a subtree of that height holds;
/// libhdf5 `H5B2__hdr_init`).
fn btree_v2_count_sizes(
    node_size: u64,
    record_size: u64,
    offset_size: u64,
    depth: u16,
) -> (usize, usize) {
    // Leaf and internal nodes: signature 4, version 1, type 1, checksum 4.
    let overhead = 10u64;
    if record_size == 0 || node_size <= overhead {
        return (1, 0);
    }
    let leaf = (node_size - overhead) / record_size;
    let child = enc_size(leaf);
    let mut subtree = leaf;
    let mut total = 0usize;
    for _ in 1..depth {
        let pointer = offset_size + (child + total) as u64;
        let reserved = overhead + pointer;
        let records = if node_size <= reserved {
            0
        } else {
            (node_size - reserved) / (record_size + pointer)
        };
        subtree = (records + 1)
            .saturating_mul(subtree)
            .saturating_add(records);
        total = enc_size(subtree);
    }
    (child, total)
}

/// Version 2 B-tree: the header (`BTHD`, its size from the field sizes), then each level of
/// nodes (all `node_size` bytes); internal nodes (`BTIN`) give their children's addresses
/// and record counts.
async fn prefetch_btree_v2(d: &mut Discovery<'_>, at: &IndexAt) -> Result<(), Hdf5Error> {
    let (os, ls) = (at.offset_size, at.length_size);
    // Signature 4, version 1, type 1, node size 4, record size 2, depth 2, split 1, merge 1,
    // root address, records in root 2, total records, checksum 4.
    let header_len = 18 + os as u64 + 2 + ls as u64 + 4;
    let hr = at.header..at.header.saturating_add(header_len);
    d.fetch_round(std::slice::from_ref(&hr)).await?;
    let Ok(h) =
        hdf5_reader::btree_v2::BTreeV2Header::parse_at_storage(&**d.store(), at.header, os, ls)
    else {
        return Ok(());
    };
    if undefined(h.root_node_address, os) || h.num_records_in_root == 0 || h.depth > 64 {
        return Ok(());
    }
    let node = h.node_size as u64;
    let rec = h.record_size as u64;
    if !(10..=super::store::MAX_MISS_BYTES).contains(&node) {
        return Ok(());
    }
    // (address, records, depth) of the nodes of one level.
    let mut level = vec![(
        h.root_node_address.saturating_add(at.base),
        h.num_records_in_root as u64,
        h.depth,
    )];
    let mut seen = HashSet::new();
    let mut nodes = 0usize;
    for _ in 0..MAX_LEVELS {
        level.retain(|(a, _, _)| *a < d.store().source_len() && seen.insert(*a));
        nodes += level.len();
        if level.is_empty() || nodes > MAX_INDEX_NODES {
            break;
        }
        let want: Vec<Range<u64>> = level
            .iter()
            .map(|(a, _, _)| *a..a.saturating_add(node))
            .collect();
        d.fetch_round(&want).await?;
        let mut next = Vec::new();
        for (a, nrec, depth) in &level {
            if *depth == 0 {
                continue;
            }
            let Some(buf) = held(d, &(*a..a + node)) else {
                continue;
            };
            let mut r = Reader::new(&buf);
            if r.bytes(4) != Some(b"BTIN") || r.u8() != Some(0) || r.u8() != Some(h.btree_type) {
                continue;
            }
            let Some(skip) = nrec.checked_mul(rec).and_then(|n| usize::try_from(n).ok()) else {
                continue;
            };
            if r.bytes(skip).is_none() {
                continue;
            }
            let (cw, tw) = btree_v2_count_sizes(node, rec, os as u64, *depth);
            for _ in 0..=*nrec {
                let (Some(child), Some(n)) = (r.uint(os as usize), r.uint(cw)) else {
                    break;
                };
                if *depth > 1 && r.bytes(tw).is_none() {
                    break;
                }
                if !undefined(child, os) && n > 0 {
                    next.push((child.saturating_add(at.base), n, depth - 1));
                }
            }
        }
        level = next;
    }
    Ok(())
}

/// Creation parameters of an extensible array (File Format Specification III.H,
/// "Extensible Array Header").
struct EaParams {
    element_size: u64,
    max_nelmts_bits: u8,
    idx_blk_elmts: u64,
    data_blk_min_elmts: u64,
    sec_blk_min_data_ptrs: u64,
    page_nelmts: u64,
    offset_size: u8,
    index_block: u64,
}

impl EaParams {
    /// Bytes of the block offset field of secondary and data blocks.
    fn sizeof_nelmts(&self) -> u64 {
        (self.max_nelmts_bits as u64).div_ceil(8)
    }
    /// Signature, version, client id, header address, block offset.
    fn block_prefix(&self) -> u64 {
        6 + self.offset_size as u64 + self.sizeof_nelmts()
    }
    /// `(elements per data block, data blocks)` of each super block: super block `u` holds
    /// `2^floor(u/2)` data blocks of `2^ceil(u/2) * data_blk_min_elmts` elements
    /// (libhdf5 `H5EA__hdr_init`).
    fn super_blocks(&self) -> Vec<(u64, u64)> {
        let n = (self.max_nelmts_bits as u32)
            .saturating_sub(self.data_blk_min_elmts.trailing_zeros())
            + 1;
        (0..n.min(64))
            .map(|u| {
                (
                    self.data_blk_min_elmts
                        .checked_shl(u.div_ceil(2))
                        .unwrap_or(u64::MAX),
                    1u64.checked_shl(u / 2).unwrap_or(u64::MAX),
                )
            })
            .collect()
    }
    /// Super blocks whose data blocks the index block addresses directly, and how many data
    /// block addresses it holds (libhdf5 `H5EA__iblock_alloc`).
    fn direct(&self, nsblks: usize) -> (usize, u64) {
        let sblks = (2 * self.sec_blk_min_data_ptrs.trailing_zeros() as usize).min(nsblks);
        (sblks, 2 * (self.sec_blk_min_data_ptrs - 1))
    }
    /// Pages of a data block of `elmts` elements (0: not paged).
    fn pages(&self, elmts: u64) -> u64 {
        if self.page_nelmts == 0 || elmts <= self.page_nelmts {
            0
        } else {
            elmts.div_ceil(self.page_nelmts)
        }
    }
    /// Bytes of a data block of `elmts` elements: the prefix, then either the elements and a
    /// checksum, or a checksum and every page (elements and a checksum each).
    fn data_block_len(&self, elmts: u64) -> Option<u64> {
        let pages = self.pages(elmts);
        if pages == 0 {
            self.block_prefix()
                .checked_add(elmts.checked_mul(self.element_size)?)?
                .checked_add(4)
        } else {
            let page = self
                .page_nelmts
                .checked_mul(self.element_size)?
                .checked_add(4)?;
            self.block_prefix()
                .checked_add(4)?
                .checked_add(pages.checked_mul(page)?)
        }
    }
}

fn parse_ea_header(b: &[u8], os: u8, ls: u8) -> Option<EaParams> {
    let mut r = Reader::new(b);
    if r.bytes(4)? != b"EAHD" || r.u8()? != 0 {
        return None;
    }
    let _client = r.u8()?;
    let element_size = r.u8()? as u64;
    let max_nelmts_bits = r.u8()?;
    let idx_blk_elmts = r.u8()? as u64;
    let data_blk_min_elmts = r.u8()? as u64;
    let sec_blk_min_data_ptrs = r.u8()? as u64;
    let page_bits = r.u8()?;
    // Six statistics of "size of lengths" bytes each.
    r.bytes(6 * ls as usize)?;
    let index_block = r.uint(os as usize)?;
    if !data_blk_min_elmts.is_power_of_two()
        || !sec_blk_min_data_ptrs.is_power_of_two()
        || max_nelmts_bits > 64
        || page_bits >= 32
        || element_size == 0
    {
        return None;
    }
    Some(EaParams {
        element_size,
        max_nelmts_bits,
        idx_blk_elmts,
        data_blk_min_elmts,
        sec_blk_min_data_ptrs,
        page_nelmts: if page_bits == 0 { 0 } else { 1u64 << page_bits },
        offset_size: os,
        index_block,
    })
}

/// Extensible array: the header (`EAHD`), the index block (`EAIB`, its size from the
/// header), then the secondary blocks (`EASB`) and the data blocks the index block
/// addresses directly (`EADB`), then the data blocks of the secondary blocks: four levels,
/// each block with its exact size.
async fn prefetch_extensible_array(d: &mut Discovery<'_>, at: &IndexAt) -> Result<(), Hdf5Error> {
    let (os, ls) = (at.offset_size, at.length_size);
    let header_len = 12 + 6 * ls as u64 + os as u64 + 4;
    let hr = at.header..at.header.saturating_add(header_len);
    d.fetch_round(std::slice::from_ref(&hr)).await?;
    let Some(p) = held(d, &hr).and_then(|b| parse_ea_header(&b, os, ls)) else {
        return Ok(());
    };
    if undefined(p.index_block, os) {
        return Ok(());
    }
    let sblks = p.super_blocks();
    let (direct_sblks, direct_ptrs) = p.direct(sblks.len());
    let secondary_ptrs = (sblks.len() - direct_sblks) as u64;
    let osz = os as u64;
    let Some(ib_len) = (|| {
        (6 + osz)
            .checked_add(p.idx_blk_elmts.checked_mul(p.element_size)?)?
            .checked_add(direct_ptrs.checked_mul(osz)?)?
            .checked_add(secondary_ptrs.checked_mul(osz)?)?
            .checked_add(4)
    })() else {
        return Ok(());
    };
    let ib_at = p.index_block.saturating_add(at.base);
    let ib = ib_at..ib_at.saturating_add(ib_len);
    d.fetch_round(std::slice::from_ref(&ib)).await?;
    let Some(buf) = held(d, &ib) else {
        return Ok(());
    };
    let mut r = Reader::new(&buf);
    if r.bytes(4) != Some(b"EAIB") || r.u8() != Some(0) {
        return Ok(());
    }
    let skip = 1 + os as usize + (p.idx_blk_elmts * p.element_size) as usize;
    if r.bytes(skip).is_none() {
        return Ok(());
    }
    let len = d.store().source_len();
    let mut want: Vec<Range<u64>> = Vec::new();
    // Direct data blocks, in super block order.
    let mut ptrs = (0..direct_ptrs).map_while(|_| r.uint(os as usize));
    'direct: for &(elmts, n) in &sblks[..direct_sblks] {
        for _ in 0..n {
            let Some(a) = ptrs.next() else {
                break 'direct;
            };
            if !undefined(a, os) {
                if let Some(l) = p.data_block_len(elmts) {
                    want.push(
                        a.saturating_add(at.base)..a.saturating_add(at.base).saturating_add(l),
                    );
                }
            }
        }
    }
    drop(ptrs);
    // Secondary blocks: prefix, page bitmap (paged data blocks only), data block addresses,
    // checksum.
    let mut secondaries: Vec<(Range<u64>, u64, u64)> = Vec::new();
    for &(elmts, n) in &sblks[direct_sblks..] {
        let Some(a) = r.uint(os as usize) else {
            break;
        };
        if undefined(a, os) {
            continue;
        }
        let bitmap = n.saturating_mul(p.pages(elmts).div_ceil(8));
        let l = p
            .block_prefix()
            .saturating_add(bitmap)
            .saturating_add(n.saturating_mul(osz))
            .saturating_add(4);
        let a = a.saturating_add(at.base);
        secondaries.push((a..a.saturating_add(l), elmts, bitmap));
    }
    want.extend(secondaries.iter().map(|(r, _, _)| r.clone()));
    want.retain(|r| r.start < len && r.end - r.start <= super::store::MAX_MISS_BYTES);
    want.truncate(MAX_INDEX_NODES);
    d.fetch_round(&want).await?;
    let mut blocks: Vec<Range<u64>> = Vec::new();
    for (sr, elmts, bitmap) in &secondaries {
        let Some(buf) = held(d, sr) else {
            continue;
        };
        let mut r = Reader::new(&buf);
        if r.bytes(4) != Some(b"EASB") || r.u8() != Some(0) {
            continue;
        }
        let skip = (p.block_prefix() - 5) as usize + *bitmap as usize;
        if r.bytes(skip).is_none() {
            continue;
        }
        let Some(l) = p.data_block_len(*elmts) else {
            continue;
        };
        while let Some(a) = r.uint(os as usize) {
            if r.at + 4 > buf.len() {
                // The last field is the checksum, not an address.
                break;
            }
            if !undefined(a, os) && blocks.len() < MAX_INDEX_NODES {
                let a = a.saturating_add(at.base);
                blocks.push(a..a.saturating_add(l));
            }
        }
    }
    blocks.retain(|r| r.start < len && r.end - r.start <= super::store::MAX_MISS_BYTES);
    d.fetch_round(&blocks).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_gap_bridges_the_smallest_gaps_within_the_budget() {
        // 4 nodes of 100 bytes (400 wanted), gaps 30, 10, 60.
        let r = vec![0..100, 130..230, 240..340, 400..500];
        assert_eq!(budget_gap(&r, 0.0), 0);
        assert_eq!(budget_gap(&r, f64::NAN), 0);
        assert_eq!(budget_gap(&r, 0.02), 0);
        assert_eq!(budget_gap(&r, 0.025), 10);
        assert_eq!(budget_gap(&r, 0.1), 30);
        assert_eq!(budget_gap(&r, 0.25), 60);
        // Equal gaps are bridged together or not at all: 3 gaps of 10 cost 30.
        let r = vec![0..100, 110..210, 220..320, 330..430];
        assert_eq!(budget_gap(&r, 0.07), 0);
        assert_eq!(budget_gap(&r, 0.08), 10);
        // Overlapping ranges count once and have no gap.
        assert_eq!(budget_gap(&[0..100, 50..150, 160..170], 0.1), 10);
        assert_eq!(budget_gap(&[], 1.0), 0);
    }

    #[test]
    fn btree_v2_count_widths_follow_libhdf5() {
        // A 2048-byte node of 24-byte records: 84 records per leaf, one byte to count them;
        // below the root of a depth-2 tree, subtrees hold up to 62 * 84 + 61 = 5,269 records:
        // two bytes.
        assert_eq!(btree_v2_count_sizes(2048, 24, 8, 1), (1, 0));
        let (c, t) = btree_v2_count_sizes(2048, 24, 8, 2);
        assert_eq!((c, t), (1, 2));
        assert_eq!(enc_size(255), 1);
        assert_eq!(enc_size(256), 2);
        assert_eq!(btree_v2_count_sizes(5, 24, 8, 3), (1, 0));
    }

    #[test]
    fn extensible_array_geometry_follows_libhdf5() {
        let p = EaParams {
            element_size: 8,
            max_nelmts_bits: 32,
            idx_blk_elmts: 4,
            data_blk_min_elmts: 16,
            sec_blk_min_data_ptrs: 4,
            page_nelmts: 1024,
            offset_size: 8,
            index_block: 0,
        };
        let s = p.super_blocks();
        assert_eq!(s.len(), 29);
        assert_eq!(&s[..5], &[(16, 1), (32, 1), (32, 2), (64, 2), (64, 4)]);
        assert_eq!(p.direct(s.len()), (4, 6));
        // Prefix: 4 + 1 + 1 + 8 + 4 = 18 bytes.
        assert_eq!(p.data_block_len(16), Some(18 + 16 * 8 + 4));
        assert_eq!(p.data_block_len(2048), Some(18 + 4 + 2 * (1024 * 8 + 4)));
    }
}
