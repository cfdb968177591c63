//! HDF5 raw-data chunk-cache simulator and trace analysis: pure logic, no I/O.
//!
//! HDF5 keeps, per open dataset, a cache of decoded chunks bounded by a byte budget
//! (`rdcc_nbytes`) and a hash table of `rdcc_nslots` slots, pruned with the weight `rdcc_w0`.
//! This module replays a trace of selections (one `H5Dread` each) through a model of that cache
//! that follows `H5Dchunk.c` step for step, and counts what the real library does: whole-chunk
//! reads from the file, their stored bytes, hits, evictions, and the decoded volume.
//!
//! - [`ChunkGeometry`]: array shape, chunk shape, element size, filters, stored chunk sizes.
//! - [`Trace`] / [`Selection`]: points and hyperslabs; [`chunk_accesses`] gives the chunks of
//!   one selection in the order HDF5 visits them.
//! - [`ChunkCache`]: the cache itself; [`simulate`] runs a whole trace.
//! - [`advise`]: reuse set, smallest sufficient `nbytes`/`nslots`, gains from grouping, and a
//!   replay through a plain byte-bounded LRU of compressed payloads for comparison.
//! - [`EXPERIMENT_CASES`]: the six cases of the chunk-cache experiment.
//!
//! The model checks against HDF5 1.10.8 and 2.0.0 read for read (`native-harness` tests).

mod advisor;
mod cache;
mod experiment;
mod geometry;
mod simulate;
mod trace;

pub use advisor::{advise, lru_replay, Advice, LruReplay};
pub use cache::{AccessOutcome, CacheConfig, CacheStats, ChunkCache, HashForm};
pub use experiment::{
    experiment_geometry, ExperimentCase, EXPERIMENT_CASES, EXPERIMENT_STORED_SIZES,
};
pub use geometry::{ChunkGeometry, Grid, StoredChunk, MAX_LISTED_CHUNKS, MAX_RANK};
pub use simulate::{
    simulate, simulate_accesses, trace_accesses, Counts, SelectionReport, SimulationReport,
    MAX_SELECTIONS, MAX_TRACE_ACCESSES,
};
pub use trace::{
    chunk_accesses, experiment_trace, random_trace, selected_points, ChunkAccess, ExperimentOrder,
    Hyperslab, Selection, SplitMix64, Trace, MAX_CHUNKS_PER_SELECTION,
};

/// Errors of the chunk-cache simulator. Bad input is reported, never panics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkTraceError {
    /// The chunk geometry is unusable (ranks, zero sizes, overflow, chunks outside the grid).
    #[error("invalid chunk geometry: {0}")]
    InvalidGeometry(String),
    /// A selection does not fit the dataset or is too large to map.
    #[error("invalid selection: {0}")]
    InvalidSelection(String),
    /// Cache settings out of range (`w0` outside [0, 1]).
    #[error("invalid cache settings: {0}")]
    InvalidConfig(String),
}
