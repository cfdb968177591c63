//! The fetch plan of one read, as a value: for each touched chunk how it is served (a fill
//! value, bytes in the metadata, a cache hit, a whole-chunk fetch, a Blosc2 block read or a
//! load by the format), and how the whole-chunk fetches merge into requests.
//!
//! [`FetchPlan::new`] is pure: it takes what the lookups found and decides, so tests assert
//! on it without I/O. The pipeline then carries it out ([`super::read`]).

use crate::io::{coalesce_ranges, CoalesceOptions, CoalescePlan, IoError};
use std::ops::Range;

/// What locating a touched chunk and asking the payload cache found: the input of
/// [`FetchPlan::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Not stored: every element is the fill value.
    Fill,
    /// Stored bytes held in the metadata (an HDF5 compact dataset).
    Inline,
    /// In the payload cache (stored bytes, a converted chunk, or a chunk known absent).
    Hit,
    /// Stored at this absolute byte range of the source; not cached.
    Stored(Range<u64>),
    /// An object of its own that the format loads ([`crate::formats::ChunkLoader`]); not
    /// cached.
    Loaded,
}

/// How one touched chunk is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Written from the fill value, no bytes.
    Fill,
    /// Decoded from the bytes in the metadata.
    Inline,
    /// Served from the payload cache.
    Hit,
    /// Fetched whole: this stored range, merged with others as [`FetchPlan::merged`] says.
    Whole(Range<u64>),
    /// A Blosc2 chunk at this stored range of which only `blocks` (block-linear indexes) are
    /// read: first the chunk header and block offsets, then those blocks' streams.
    Blocks {
        /// The stored chunk.
        range: Range<u64>,
        /// The blocks the selection touches.
        blocks: Vec<u64>,
    },
    /// Loaded by the format, at most the read's concurrency objects at a time.
    Load,
}

/// One touched chunk of a [`FetchPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChunk {
    /// Linear C-order index of the chunk in the grid.
    pub chunk: u64,
    /// How it is served.
    pub step: Step,
}

/// When a stored Blosc2 chunk is read block by block rather than whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRule {
    /// Blocks per chunk.
    pub nblocks: u64,
    /// Stored chunks at least this large (bytes) may be read by blocks
    /// ([`crate::array::OpenOptions::block_read_min_bytes`]).
    pub min_chunk_bytes: u64,
}

impl BlockRule {
    /// Whether a stored chunk of `stored_bytes` bytes of which the selection touches
    /// `touched` blocks is read by blocks: large enough, more than one block, and at most half
    /// of its blocks touched (a block read costs one more round trip, for the chunk header
    /// and block offsets, and saves the untouched blocks' bytes).
    pub fn by_blocks(&self, stored_bytes: u64, touched: u64) -> bool {
        stored_bytes >= self.min_chunk_bytes && self.nblocks > 1 && touched * 2 <= self.nblocks
    }
}

/// The plan of one read. Chunks are listed in the order the selection planner gives them
/// (C order of their grid coordinates), each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchPlan {
    /// Every touched chunk and how it is served.
    pub chunks: Vec<PlannedChunk>,
    /// The chunks fetched whole with their stored ranges, in the order `merged.placements`
    /// follows.
    pub whole: Vec<(u64, Range<u64>)>,
    /// How the whole-chunk ranges merge into requests ([`coalesce_ranges`]).
    pub merged: CoalescePlan,
    /// The chunks read by blocks: stored range and touched blocks.
    pub blocks: Vec<(u64, Range<u64>, Vec<u64>)>,
    /// The chunks the format loads, sorted.
    pub loads: Vec<u64>,
}

impl FetchPlan {
    /// Decides how each chunk of `found` is served. `touched_blocks(chunk)` lists the blocks
    /// (block-linear indexes) the selection touches in a chunk; it is asked only for stored
    /// chunks when `blocks` is given (formats whose chunks are Blosc2 chunks with blocks).
    ///
    /// # Errors
    /// [`IoError::InvalidRange`] for an empty stored range.
    pub fn new(
        found: Vec<(u64, Found)>,
        touched_blocks: impl Fn(u64) -> Vec<u64>,
        blocks: Option<BlockRule>,
        coalesce: &CoalesceOptions,
    ) -> Result<FetchPlan, IoError> {
        let mut plan = FetchPlan {
            chunks: Vec::with_capacity(found.len()),
            whole: Vec::new(),
            merged: CoalescePlan::default(),
            blocks: Vec::new(),
            loads: Vec::new(),
        };
        for (chunk, f) in found {
            let step = match f {
                Found::Fill => Step::Fill,
                Found::Inline => Step::Inline,
                Found::Hit => Step::Hit,
                Found::Loaded => {
                    plan.loads.push(chunk);
                    Step::Load
                }
                Found::Stored(range) => {
                    let touched = blocks.map(|_| touched_blocks(chunk));
                    match (blocks, touched) {
                        (Some(rule), Some(t))
                            if rule.by_blocks(range.end - range.start, t.len() as u64) =>
                        {
                            plan.blocks.push((chunk, range.clone(), t.clone()));
                            Step::Blocks { range, blocks: t }
                        }
                        _ => {
                            plan.whole.push((chunk, range.clone()));
                            Step::Whole(range)
                        }
                    }
                }
            };
            plan.chunks.push(PlannedChunk { chunk, step });
        }
        plan.loads.sort_unstable();
        plan.merge(coalesce)?;
        Ok(plan)
    }

    /// Adds chunks to the whole-chunk fetches (Blosc2 chunks whose block read found they
    /// cannot be split, such as special-value chunks) and merges again.
    ///
    /// # Errors
    /// As [`FetchPlan::new`].
    pub fn add_whole(
        &mut self,
        chunks: Vec<(u64, Range<u64>)>,
        coalesce: &CoalesceOptions,
    ) -> Result<(), IoError> {
        if chunks.is_empty() {
            return Ok(());
        }
        let at: std::collections::HashMap<u64, usize> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.chunk, i))
            .collect();
        for (chunk, range) in &chunks {
            if let Some(&i) = at.get(chunk) {
                self.chunks[i].step = Step::Whole(range.clone());
            }
        }
        self.whole.extend(chunks);
        self.merge(coalesce)
    }

    fn merge(&mut self, coalesce: &CoalesceOptions) -> Result<(), IoError> {
        let ranges: Vec<Range<u64>> = self.whole.iter().map(|(_, r)| r.clone()).collect();
        self.merged = coalesce_ranges(&ranges, coalesce.max_gap, coalesce.max_len)?;
        Ok(())
    }

    /// How many chunks take each step: `(fill, inline, hit, whole, blocks, load)`.
    pub fn counts(&self) -> [usize; 6] {
        let mut n = [0usize; 6];
        for c in &self.chunks {
            n[match c.step {
                Step::Fill => 0,
                Step::Inline => 1,
                Step::Hit => 2,
                Step::Whole(_) => 3,
                Step::Blocks { .. } => 4,
                Step::Load => 5,
            }] += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max_gap: u64) -> CoalesceOptions {
        CoalesceOptions {
            max_gap,
            max_len: None,
            concurrency: 6,
        }
    }

    #[test]
    fn hits_fills_and_merged_fetches() {
        // Chunks 0 and 2 are adjacent on disk with a 10-byte gap; chunk 3 is far away.
        let found = vec![
            (0, Found::Stored(0..100)),
            (1, Found::Hit),
            (2, Found::Stored(110..200)),
            (3, Found::Stored(10_000..10_100)),
            (4, Found::Fill),
            (5, Found::Inline),
        ];
        let plan = FetchPlan::new(found, |_| unreachable!(), None, &opts(64)).unwrap();
        assert_eq!(plan.counts(), [1, 1, 1, 3, 0, 0]);
        assert_eq!(plan.merged.fetches, vec![0..200, 10_000..10_100]);
        assert_eq!(
            plan.whole,
            vec![(0, 0..100), (2, 110..200), (3, 10_000..10_100)]
        );
        assert_eq!(plan.merged.placements[1].fetch, 0);
        assert_eq!(plan.merged.placements[1].within, 110..200);
        // A smaller gap splits the first pair.
        let found = vec![(0, Found::Stored(0..100)), (2, Found::Stored(110..200))];
        let plan = FetchPlan::new(found, |_| unreachable!(), None, &opts(5)).unwrap();
        assert_eq!(plan.merged.fetches, vec![0..100, 110..200]);
    }

    #[test]
    fn large_sparsely_touched_blosc2_chunks_read_by_blocks() {
        let rule = BlockRule {
            nblocks: 8,
            min_chunk_bytes: 1000,
        };
        let touched = |chunk: u64| match chunk {
            0 => vec![0, 1],          // 2 of 8: by blocks
            1 => vec![0, 1, 2, 3, 4], // 5 of 8: whole
            _ => vec![7],             // small chunk: whole
        };
        let found = vec![
            (0, Found::Stored(0..5000)),
            (1, Found::Stored(5000..10_000)),
            (2, Found::Stored(10_000..10_500)),
        ];
        let mut plan = FetchPlan::new(found, touched, Some(rule), &opts(0)).unwrap();
        assert_eq!(
            plan.chunks[0].step,
            Step::Blocks {
                range: 0..5000,
                blocks: vec![0, 1]
            }
        );
        assert_eq!(plan.chunks[1].step, Step::Whole(5000..10_000));
        assert_eq!(plan.chunks[2].step, Step::Whole(10_000..10_500));
        assert_eq!(plan.merged.fetches, vec![5000..10_500]);
        // A chunk whose blocks cannot be split falls back to a whole fetch, merged again.
        plan.add_whole(vec![(0, 0..5000)], &opts(0)).unwrap();
        assert_eq!(plan.chunks[0].step, Step::Whole(0..5000));
        assert_eq!(plan.merged.fetches, vec![0..10_500]);
        // Exactly half the blocks still reads by blocks; one block per chunk never does.
        assert!(rule.by_blocks(1000, 4));
        assert!(!rule.by_blocks(999, 1));
        let single = BlockRule {
            nblocks: 1,
            min_chunk_bytes: 0,
        };
        assert!(!single.by_blocks(1 << 20, 0));
    }

    #[test]
    fn loads_are_sorted_and_empty_ranges_refused() {
        let found = vec![(9, Found::Loaded), (3, Found::Loaded), (4, Found::Hit)];
        let plan = FetchPlan::new(found, |_| vec![], None, &opts(0)).unwrap();
        assert_eq!(plan.loads, vec![3, 9]);
        assert!(plan.merged.fetches.is_empty());
        let bad = vec![(0, Found::Stored(5..5))];
        assert!(matches!(
            FetchPlan::new(bad, |_| vec![], None, &opts(0)),
            Err(IoError::InvalidRange { .. })
        ));
    }
}
