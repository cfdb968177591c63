//! Chunk geometry of one chunked HDF5 dataset: array shape, chunk shape, element size, filters,
//! and each chunk's stored size.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::ChunkTraceError;

/// Largest rank HDF5 accepts (`H5S_MAX_RANK`).
pub const MAX_RANK: usize = 32;

/// Largest number of chunk records a geometry may list (bounds memory for untrusted input).
pub const MAX_LISTED_CHUNKS: usize = 1 << 22;

/// One allocated chunk as the chunk index reports it (`H5Dget_chunk_info`).
///
/// `coords` are scaled chunk coordinates (chunk index per dimension, not element offsets).
/// `stored_size` is the chunk's size in the file in bytes (after filters); `0` marks a chunk that
/// is not allocated (HDF5 never stores an allocated chunk of length 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredChunk {
    /// Scaled chunk coordinates, one per dimension.
    pub coords: Vec<u64>,
    /// File address in bytes, when known (informational; the simulator does not need it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// Stored (on-disk) size in bytes; `0` = not allocated.
    pub stored_size: u64,
}

/// The chunk geometry the simulator needs, in the form an HDF5 reader can fill in.
///
/// JSON form (`chunkwise chunk-trace --geometry G.json`):
///
/// ```json
/// { "shape": [64, 64], "chunk_shape": [32, 32], "element_size": 4, "filtered": true,
///   "chunks": [ { "coords": [0, 0], "stored_size": 1335 }, { "coords": [0, 1], "stored_size": 1334 } ],
///   "default_stored_size": null }
/// ```
///
/// - `shape`: dataset dimensions in elements; `chunk_shape`: chunk dimensions in elements (each > 0).
/// - `element_size`: bytes per element of the file datatype.
/// - `filtered`: whether the dataset has a filter pipeline (any filter, e.g. deflate).
/// - `chunks`: stored size per chunk. A chunk not listed is allocated with `default_stored_size`,
///   or, when that is absent, with its decoded size (right for unfiltered data).
///
/// Every chunk decodes to the same number of bytes, `product(chunk_shape) * element_size`, edge
/// chunks included: HDF5 stores and caches partial edge chunks at full size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkGeometry {
    /// Dataset dimensions in elements.
    pub shape: Vec<u64>,
    /// Chunk dimensions in elements.
    pub chunk_shape: Vec<u64>,
    /// Bytes per element.
    pub element_size: u64,
    /// Whether a filter pipeline is applied to chunks.
    pub filtered: bool,
    /// Stored size of each listed chunk.
    #[serde(default)]
    pub chunks: Vec<StoredChunk>,
    /// Stored size in bytes of chunks not listed in `chunks`.
    #[serde(default)]
    pub default_stored_size: Option<u64>,
}

/// A validated geometry with the derived quantities the simulator uses.
#[derive(Debug, Clone)]
pub struct Grid {
    pub(crate) shape: Vec<u64>,
    pub(crate) chunk_shape: Vec<u64>,
    /// Chunks along each dimension, counting a partial edge chunk (`ceil(shape / chunk)`).
    pub(crate) chunks_per_dim: Vec<u64>,
    /// Row-major strides over `chunks_per_dim` (linear chunk index = dot(scaled, down)).
    pub(crate) down: Vec<u64>,
    pub(crate) element_size: u64,
    /// Decoded bytes of every chunk (`layout.u.chunk.size` in the C library).
    pub(crate) chunk_bytes: u64,
    pub(crate) filtered: bool,
    stored: HashMap<u64, u64>,
    default_stored: u64,
}

impl ChunkGeometry {
    /// Checks the geometry and derives chunk counts and sizes.
    ///
    /// Errors with [`ChunkTraceError::InvalidGeometry`] when ranks differ or are 0 or above 32,
    /// a chunk dimension or the element size is 0, the decoded chunk size does not fit in 32 bits
    /// (HDF5's limit), the chunk count overflows 64 bits, or a listed chunk lies outside the grid.
    pub fn validate(&self) -> Result<Grid, ChunkTraceError> {
        let bad = |m: String| Err(ChunkTraceError::InvalidGeometry(m));
        let rank = self.shape.len();
        if rank == 0 || rank > MAX_RANK {
            return bad(format!("rank {rank} outside 1..={MAX_RANK}"));
        }
        if self.chunk_shape.len() != rank {
            return bad(format!(
                "chunk_shape has rank {}, shape has rank {rank}",
                self.chunk_shape.len()
            ));
        }
        if self.chunk_shape.contains(&0) {
            return bad("chunk dimensions must be > 0".into());
        }
        if self.element_size == 0 {
            return bad("element_size must be > 0".into());
        }
        let mut chunk_bytes = self.element_size;
        for &c in &self.chunk_shape {
            chunk_bytes = chunk_bytes.saturating_mul(c);
        }
        if chunk_bytes > u64::from(u32::MAX) {
            return bad(format!(
                "decoded chunk size {chunk_bytes} bytes exceeds HDF5's 4 GiB chunk limit"
            ));
        }
        let chunks_per_dim: Vec<u64> = self
            .shape
            .iter()
            .zip(&self.chunk_shape)
            .map(|(&s, &c)| s.div_ceil(c))
            .collect();
        let mut down = vec![1u64; rank];
        for u in (0..rank.saturating_sub(1)).rev() {
            down[u] = match down[u + 1].checked_mul(chunks_per_dim[u + 1]) {
                Some(v) => v,
                None => return bad("number of chunks overflows 64 bits".into()),
            };
        }
        if down[0].checked_mul(chunks_per_dim[0]).is_none() {
            return bad("number of chunks overflows 64 bits".into());
        }
        if self.chunks.len() > MAX_LISTED_CHUNKS {
            return bad(format!(
                "{} chunk records listed, at most {MAX_LISTED_CHUNKS} accepted",
                self.chunks.len()
            ));
        }
        let mut stored = HashMap::with_capacity(self.chunks.len());
        for c in &self.chunks {
            if c.coords.len() != rank {
                return bad(format!("chunk {:?} has rank {}", c.coords, c.coords.len()));
            }
            if c.coords.iter().zip(&chunks_per_dim).any(|(&s, &n)| s >= n) {
                return bad(format!(
                    "chunk {:?} outside the chunk grid {chunks_per_dim:?}",
                    c.coords
                ));
            }
            let linear: u64 = c.coords.iter().zip(&down).map(|(&s, &d)| s * d).sum();
            if stored.insert(linear, c.stored_size).is_some() {
                return bad(format!("chunk {:?} listed twice", c.coords));
            }
        }
        Ok(Grid {
            shape: self.shape.clone(),
            chunk_shape: self.chunk_shape.clone(),
            chunks_per_dim,
            down,
            element_size: self.element_size,
            chunk_bytes,
            filtered: self.filtered,
            stored,
            default_stored: self.default_stored_size.unwrap_or(chunk_bytes),
        })
    }
}

impl Grid {
    /// Rank of the dataset.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Decoded bytes of one chunk.
    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Whether chunks pass through a filter pipeline.
    pub fn filtered(&self) -> bool {
        self.filtered
    }

    /// Bytes per element.
    pub fn element_size(&self) -> u64 {
        self.element_size
    }

    /// Chunks along each dimension (`ceil(shape / chunk_shape)`).
    pub fn chunks_per_dim(&self) -> &[u64] {
        &self.chunks_per_dim
    }

    /// Row-major linear index of a chunk from its scaled coordinates.
    pub fn linear_index(&self, scaled: &[u64]) -> u64 {
        scaled.iter().zip(&self.down).map(|(&s, &d)| s * d).sum()
    }

    /// Scaled coordinates of a chunk from its linear index.
    pub fn scaled_coords(&self, mut linear: u64) -> Vec<u64> {
        let mut out = vec![0; self.rank()];
        for (o, &d) in out.iter_mut().zip(&self.down) {
            *o = linear / d;
            linear %= d;
        }
        out
    }

    /// Stored size in bytes of a chunk (`0` = not allocated).
    pub fn stored_size(&self, linear: u64) -> u64 {
        self.stored
            .get(&linear)
            .copied()
            .unwrap_or(self.default_stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom() -> ChunkGeometry {
        ChunkGeometry {
            shape: vec![10, 7],
            chunk_shape: vec![4, 3],
            element_size: 2,
            filtered: true,
            chunks: vec![StoredChunk {
                coords: vec![2, 1],
                address: None,
                stored_size: 9,
            }],
            default_stored_size: Some(11),
        }
    }

    #[test]
    fn derives_grid() {
        let g = geom().validate().unwrap();
        assert_eq!(g.chunks_per_dim(), &[3, 3]);
        assert_eq!(g.chunk_bytes(), 24);
        assert_eq!(g.linear_index(&[2, 1]), 7);
        assert_eq!(g.scaled_coords(7), vec![2, 1]);
        assert_eq!(g.stored_size(7), 9);
        assert_eq!(g.stored_size(0), 11);
    }

    #[test]
    fn rejects_bad_input() {
        let mut g = geom();
        g.chunk_shape = vec![0, 3];
        assert!(g.validate().is_err());
        let mut g = geom();
        g.chunks[0].coords = vec![3, 0];
        assert!(g.validate().is_err());
        let mut g = geom();
        g.chunk_shape = vec![1 << 20, 1 << 20];
        g.shape = vec![1 << 20, 1 << 20];
        assert!(g.validate().is_err());
        let mut g = geom();
        g.shape = vec![];
        g.chunk_shape = vec![];
        assert!(g.validate().is_err());
    }
}
