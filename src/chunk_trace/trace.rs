//! Selection traces and their mapping to chunk accesses.
//!
//! # Trace JSON (`chunkwise chunk-trace --trace T.json`)
//!
//! ```json
//! { "selections": [
//!     { "points": [[3, 5], [40, 7]] },
//!     { "hyperslab": { "start": [0, 0], "count": [4, 2], "stride": [8, 16], "block": [2, 3] } }
//! ] }
//! ```
//!
//! Each selection is one `H5Dread`. `points` lists element coordinates (`H5Sselect_elements`);
//! `hyperslab` is `H5Sselect_hyperslab(H5S_SELECT_SET, start, stride, count, block)` with
//! `stride` and `block` defaulting to 1 per dimension. Coordinates are in elements.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::geometry::Grid;
use super::ChunkTraceError;

/// Most chunks one selection may touch, and most hyperslab blocks per dimension walked (bounds
/// time and memory for untrusted traces).
pub const MAX_CHUNKS_PER_SELECTION: u64 = 1 << 22;

/// A regular hyperslab (`H5Sselect_hyperslab`), in elements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hyperslab {
    /// First element per dimension.
    pub start: Vec<u64>,
    /// Number of blocks per dimension.
    pub count: Vec<u64>,
    /// Distance between block starts (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<Vec<u64>>,
    /// Block size (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Vec<u64>>,
}

impl Hyperslab {
    /// A box `start .. start + size` (stride and block 1).
    pub fn boxed(start: Vec<u64>, size: Vec<u64>) -> Self {
        Hyperslab {
            start,
            count: size,
            stride: None,
            block: None,
        }
    }
}

/// One `H5Dread` selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Element coordinates (`H5S_SEL_POINTS`).
    Points(Vec<Vec<u64>>),
    /// A regular hyperslab (`H5S_SEL_HYPERSLABS`).
    Hyperslab(Hyperslab),
}

/// A sequence of selections, each one `H5Dread` on the same open dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Trace {
    /// Selections in application order.
    pub selections: Vec<Selection>,
}

/// One chunk touched by one selection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkAccess {
    /// Row-major linear chunk index (HDF5's chunk index, the skip-list key).
    pub linear: u64,
    /// Scaled chunk coordinates.
    pub scaled: Vec<u64>,
    /// Selected elements inside the chunk.
    pub points: u64,
}

/// Chunks of one selection in the order `H5Dread` visits them: HDF5 builds a skip list of the
/// selected chunks keyed by linear chunk index (`H5D__chunk_io_init_selections`) and walks it in
/// ascending order, one lock/unlock per chunk, whatever the order of points in the selection.
///
/// Errors: rank mismatch, a coordinate outside the dataset, overlapping hyperslab blocks
/// (`block > stride`), or more than [`MAX_CHUNKS_PER_SELECTION`] chunks or blocks.
pub fn chunk_accesses(grid: &Grid, sel: &Selection) -> Result<Vec<ChunkAccess>, ChunkTraceError> {
    let rank = grid.rank();
    let bad = |m: String| Err(ChunkTraceError::InvalidSelection(m));
    match sel {
        Selection::Points(points) => {
            if points.len() as u64 > MAX_CHUNKS_PER_SELECTION {
                return bad(format!("{} points in one selection", points.len()));
            }
            let mut map: BTreeMap<u64, (Vec<u64>, u64)> = BTreeMap::new();
            for p in points {
                if p.len() != rank {
                    return bad(format!("point {p:?} has rank {}, dataset {rank}", p.len()));
                }
                if p.iter().zip(&grid.shape).any(|(&x, &s)| x >= s) {
                    return bad(format!("point {p:?} outside shape {:?}", grid.shape));
                }
                let scaled: Vec<u64> = p
                    .iter()
                    .zip(&grid.chunk_shape)
                    .map(|(&x, &c)| x / c)
                    .collect();
                let linear = grid.linear_index(&scaled);
                map.entry(linear).or_insert((scaled, 0)).1 += 1;
            }
            Ok(map
                .into_iter()
                .map(|(linear, (scaled, points))| ChunkAccess {
                    linear,
                    scaled,
                    points,
                })
                .collect())
        }
        Selection::Hyperslab(h) => {
            let ones = vec![1u64; rank];
            let stride = h.stride.as_ref().unwrap_or(&ones);
            let block = h.block.as_ref().unwrap_or(&ones);
            if h.start.len() != rank
                || h.count.len() != rank
                || stride.len() != rank
                || block.len() != rank
            {
                return bad(format!("hyperslab rank differs from dataset rank {rank}"));
            }
            // Per dimension: (chunk index, selected elements in it), ascending.
            let mut per_dim: Vec<Vec<(u64, u64)>> = Vec::with_capacity(rank);
            for u in 0..rank {
                let (start, count, stride, block) = (h.start[u], h.count[u], stride[u], block[u]);
                if count == 0 || block == 0 {
                    return Ok(Vec::new());
                }
                if count > 1 && stride < block {
                    return bad(format!(
                        "dimension {u}: stride {stride} < block {block} (blocks overlap)"
                    ));
                }
                if count > MAX_CHUNKS_PER_SELECTION {
                    return bad(format!("dimension {u}: {count} blocks"));
                }
                let last_end = (count - 1)
                    .checked_mul(stride)
                    .and_then(|v| v.checked_add(start))
                    .and_then(|v| v.checked_add(block));
                match last_end {
                    Some(e) if e <= grid.shape[u] => {}
                    _ => {
                        return bad(format!(
                            "dimension {u}: hyperslab extends past {}",
                            grid.shape[u]
                        ))
                    }
                }
                let c = grid.chunk_shape[u];
                let mut list: Vec<(u64, u64)> = Vec::new();
                let mut walked = 0u64;
                for i in 0..count {
                    let mut lo = start + i * stride;
                    let hi = lo + block;
                    while lo < hi {
                        let k = lo / c;
                        let end = hi.min((k + 1) * c);
                        match list.last_mut() {
                            Some((kk, n)) if *kk == k => *n += end - lo,
                            _ => list.push((k, end - lo)),
                        }
                        lo = end;
                        walked += 1;
                        if walked > MAX_CHUNKS_PER_SELECTION {
                            return bad(format!("dimension {u}: hyperslab too large to walk"));
                        }
                    }
                }
                per_dim.push(list);
            }
            let total: u64 = per_dim
                .iter()
                .fold(1u64, |a, l| a.saturating_mul(l.len() as u64));
            if total > MAX_CHUNKS_PER_SELECTION {
                return bad(format!("selection touches {total} chunks"));
            }
            let mut out = Vec::with_capacity(total as usize);
            let mut idx = vec![0usize; rank];
            loop {
                let scaled: Vec<u64> = (0..rank).map(|u| per_dim[u][idx[u]].0).collect();
                let points = (0..rank).map(|u| per_dim[u][idx[u]].1).product();
                out.push(ChunkAccess {
                    linear: grid.linear_index(&scaled),
                    scaled,
                    points,
                });
                // Row-major odometer: the last dimension varies fastest, giving ascending
                // linear indices.
                let mut u = rank;
                loop {
                    if u == 0 {
                        return Ok(out);
                    }
                    u -= 1;
                    idx[u] += 1;
                    if idx[u] < per_dim[u].len() {
                        break;
                    }
                    idx[u] = 0;
                }
            }
        }
    }
}

/// Number of selected elements of a selection (no validation beyond what
/// [`chunk_accesses`] does; use after it succeeded).
pub fn selected_points(accesses: &[ChunkAccess]) -> u64 {
    accesses.iter().map(|a| a.points).sum()
}

/// Visiting order of the chunk-cache experiment's 32 scalar selections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentOrder {
    /// A, B, C, D, A, B, ... eight rounds.
    RoundRobin,
    /// Eight values of A, then B, C, D.
    Grouped,
}

impl ExperimentOrder {
    /// Its name in tables and JSON: `round-robin` or `grouped`.
    pub fn name(self) -> &'static str {
        match self {
            ExperimentOrder::RoundRobin => "round-robin",
            ExperimentOrder::Grouped => "grouped",
        }
    }
}

/// The experiment's trace on its 64 x 64 array with 32 x 32 chunks: eight distinct scalars from
/// each of the chunks A (0,0), B (0,1), C (1,0), D (1,1), in `order`. Both orders select the same
/// 32 coordinates.
pub fn experiment_trace(order: ExperimentOrder) -> Trace {
    let chunks = [(0u64, 0u64), (0, 1), (1, 0), (1, 1)];
    let point =
        |(ci, cj): (u64, u64), k: u64| vec![ci * 32 + 3 + 4 * k, cj * 32 + (5 + 3 * k) % 32];
    let mut selections = Vec::with_capacity(32);
    match order {
        ExperimentOrder::RoundRobin => {
            for k in 0..8 {
                for &c in &chunks {
                    selections.push(Selection::Points(vec![point(c, k)]));
                }
            }
        }
        ExperimentOrder::Grouped => {
            for &c in &chunks {
                for k in 0..8 {
                    selections.push(Selection::Points(vec![point(c, k)]));
                }
            }
        }
    }
    Trace { selections }
}

/// SplitMix64: a small seeded generator, so traces are reproducible on every host and in wasm.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; modulo bias is irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// A seeded random trace of `len` selections over a dataset of `shape` with chunks of
/// `chunk_shape` (elements): scalars (about 45 %), small point sets, boxes up to two chunks wide,
/// whole chunks (so entries become fully read) and strided hyperslabs. Same seed, same trace.
pub fn random_trace(shape: &[u64], chunk_shape: &[u64], seed: u64, len: usize) -> Trace {
    let mut rng = SplitMix64::new(seed);
    let rank = shape.len();
    let mut selections = Vec::with_capacity(len);
    if shape.contains(&0) {
        return Trace { selections };
    }
    for _ in 0..len {
        let kind = rng.below(100);
        let sel = if kind < 45 {
            Selection::Points(vec![(0..rank).map(|u| rng.below(shape[u])).collect()])
        } else if kind < 60 {
            let n = 2 + rng.below(5);
            Selection::Points(
                (0..n)
                    .map(|_| (0..rank).map(|u| rng.below(shape[u])).collect())
                    .collect(),
            )
        } else if kind < 80 {
            let mut start = Vec::with_capacity(rank);
            let mut size = Vec::with_capacity(rank);
            for u in 0..rank {
                let s = rng.below(shape[u]);
                let max = (shape[u] - s).min(2 * chunk_shape[u]);
                start.push(s);
                size.push(1 + rng.below(max));
            }
            Selection::Hyperslab(Hyperslab::boxed(start, size))
        } else if kind < 92 {
            let mut start = Vec::with_capacity(rank);
            let mut size = Vec::with_capacity(rank);
            for u in 0..rank {
                let k = rng.below(shape[u].div_ceil(chunk_shape[u]));
                let s = k * chunk_shape[u];
                start.push(s);
                size.push(chunk_shape[u].min(shape[u] - s));
            }
            Selection::Hyperslab(Hyperslab::boxed(start, size))
        } else {
            let mut h = Hyperslab {
                start: vec![],
                count: vec![],
                stride: Some(vec![]),
                block: Some(vec![]),
            };
            for u in 0..rank {
                let block = 1 + rng.below(2.min(shape[u]));
                let stride = block + rng.below(chunk_shape[u] + 1);
                let start = rng.below(shape[u] - block + 1);
                let count = 1 + (shape[u] - start - block) / stride;
                let count = 1 + rng.below(count.min(6));
                h.start.push(start);
                h.count.push(count);
                h.stride.as_mut().unwrap().push(stride);
                h.block.as_mut().unwrap().push(block);
            }
            Selection::Hyperslab(h)
        };
        selections.push(sel);
    }
    Trace { selections }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_trace::geometry::ChunkGeometry;

    fn grid() -> Grid {
        ChunkGeometry {
            shape: vec![10, 7],
            chunk_shape: vec![4, 3],
            element_size: 4,
            filtered: false,
            chunks: vec![],
            default_stored_size: None,
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn points_sorted_by_chunk_index() {
        let g = grid();
        let sel = Selection::Points(vec![vec![9, 6], vec![0, 0], vec![1, 1], vec![5, 3]]);
        let a = chunk_accesses(&g, &sel).unwrap();
        let got: Vec<(u64, u64)> = a.iter().map(|c| (c.linear, c.points)).collect();
        assert_eq!(got, vec![(0, 2), (4, 1), (8, 1)]);
        assert!(chunk_accesses(&g, &Selection::Points(vec![vec![10, 0]])).is_err());
    }

    #[test]
    fn hyperslab_counts_per_chunk() {
        let g = grid();
        // Rows 2..6 (chunks 0: 2 rows, 1: 2 rows), cols 1..7 (chunk 0: 2, 1: 3, 2: 1).
        let sel = Selection::Hyperslab(Hyperslab::boxed(vec![2, 1], vec![4, 6]));
        let a = chunk_accesses(&g, &sel).unwrap();
        let got: Vec<(u64, u64)> = a.iter().map(|c| (c.linear, c.points)).collect();
        assert_eq!(got, vec![(0, 4), (1, 6), (2, 2), (3, 4), (4, 6), (5, 2)]);
        // Strided: rows {0, 5}, cols {0,1, 4,5} -> chunks (0,0):2 (0,1):2 (1,0):2 (1,1):2.
        let sel = Selection::Hyperslab(Hyperslab {
            start: vec![0, 0],
            count: vec![2, 2],
            stride: Some(vec![5, 4]),
            block: Some(vec![1, 2]),
        });
        let a = chunk_accesses(&g, &sel).unwrap();
        let got: Vec<(u64, u64)> = a.iter().map(|c| (c.linear, c.points)).collect();
        assert_eq!(got, vec![(0, 2), (1, 2), (3, 2), (4, 2)]);
        let overlap = Selection::Hyperslab(Hyperslab {
            start: vec![0, 0],
            count: vec![2, 1],
            stride: Some(vec![1, 1]),
            block: Some(vec![2, 1]),
        });
        assert!(chunk_accesses(&g, &overlap).is_err());
        let past = Selection::Hyperslab(Hyperslab::boxed(vec![8, 0], vec![3, 1]));
        assert!(chunk_accesses(&g, &past).is_err());
    }

    #[test]
    fn trace_json_round_trip() {
        let json = r#"{"selections":[{"points":[[3,5]]},{"hyperslab":{"start":[0,0],"count":[2,2],"stride":[4,4],"block":[1,2]}}]}"#;
        let t: Trace = serde_json::from_str(json).unwrap();
        assert_eq!(t.selections.len(), 2);
        assert_eq!(serde_json::to_string(&t).unwrap(), json);
    }

    #[test]
    fn experiment_orders_select_the_same_set() {
        let mut a: Vec<_> = experiment_trace(ExperimentOrder::RoundRobin).selections;
        let mut b: Vec<_> = experiment_trace(ExperimentOrder::Grouped).selections;
        assert_eq!(a.len(), 32);
        let key = |s: &Selection| format!("{s:?}");
        a.sort_by_key(key);
        b.sort_by_key(key);
        assert_eq!(a, b);
        a.dedup();
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn random_traces_are_valid_and_seeded() {
        let g = grid();
        let t = random_trace(&[10, 7], &[4, 3], 7, 200);
        for s in &t.selections {
            chunk_accesses(&g, s).unwrap();
        }
        assert_eq!(t, random_trace(&[10, 7], &[4, 3], 7, 200));
        assert_ne!(t, random_trace(&[10, 7], &[4, 3], 8, 200));
    }
}
