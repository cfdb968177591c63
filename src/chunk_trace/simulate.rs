//! Running a trace through the simulated cache, with per-selection and total counts.

use serde::{Deserialize, Serialize};

use super::cache::{AccessOutcome, CacheConfig, ChunkCache, HashForm};
use super::geometry::{ChunkGeometry, Grid};
use super::trace::{chunk_accesses, ChunkAccess, Trace};
use super::ChunkTraceError;

/// Most selections a trace may hold.
pub const MAX_SELECTIONS: usize = 1 << 24;

/// Counts of one selection or of a whole trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Whole-chunk reads from the file (raw chunk reads).
    pub reads: u64,
    /// Stored bytes of those reads.
    pub raw_bytes: u64,
    /// Chunk accesses served from the cache.
    pub hits: u64,
    /// Cache entries preempted (slot collisions and pruning).
    pub evictions: u64,
    /// Inferred decoded bytes: whole-chunk reads times the decoded chunk size.
    pub decoded_bytes: u64,
    /// Element-wise reads of unfiltered chunks too large for the cache (not chunk reads).
    pub direct_reads: u64,
    /// Bytes selected by the application (points times element size).
    pub selected_bytes: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.reads += o.reads;
        self.raw_bytes = self.raw_bytes.saturating_add(o.raw_bytes);
        self.hits += o.hits;
        self.evictions += o.evictions;
        self.decoded_bytes = self.decoded_bytes.saturating_add(o.decoded_bytes);
        self.direct_reads += o.direct_reads;
        self.selected_bytes = self.selected_bytes.saturating_add(o.selected_bytes);
    }

    /// Decoded bytes per selected byte (0 when nothing was selected).
    pub fn decode_ratio(&self) -> f64 {
        if self.selected_bytes == 0 {
            0.0
        } else {
            self.decoded_bytes as f64 / self.selected_bytes as f64
        }
    }
}

/// What one selection did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionReport {
    /// Its counts.
    #[serde(flatten)]
    pub counts: Counts,
    /// Scaled coordinates of the chunks read whole from the file, in order.
    pub read_chunks: Vec<Vec<u64>>,
}

/// A trace's result under one cache configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulationReport {
    /// Settings the cache ran with (after [`CacheConfig::effective`]).
    pub config: CacheConfig,
    /// Slot hashing used.
    pub hash_form: HashForm,
    /// Decoded bytes per chunk.
    pub chunk_bytes: u64,
    /// One entry per selection.
    pub selections: Vec<SelectionReport>,
    /// Sums over all selections.
    pub total: Counts,
    /// `total.decoded_bytes / total.selected_bytes`.
    pub decode_ratio: f64,
}

/// Most chunk accesses a whole trace may map to (bounds the memory of [`trace_accesses`]).
pub const MAX_TRACE_ACCESSES: u64 = 1 << 24;

/// Maps every selection of `trace` to its chunk accesses (see [`chunk_accesses`]).
///
/// Errors: an invalid selection (its index is named), more than [`MAX_SELECTIONS`] selections or
/// more than [`MAX_TRACE_ACCESSES`] chunk accesses in total.
pub fn trace_accesses(
    grid: &Grid,
    trace: &Trace,
) -> Result<Vec<Vec<ChunkAccess>>, ChunkTraceError> {
    if trace.selections.len() > MAX_SELECTIONS {
        return Err(ChunkTraceError::InvalidSelection(format!(
            "{} selections, at most {MAX_SELECTIONS}",
            trace.selections.len()
        )));
    }
    let mut total = 0u64;
    let mut out = Vec::with_capacity(trace.selections.len());
    for (i, s) in trace.selections.iter().enumerate() {
        let acc = chunk_accesses(grid, s).map_err(|e| match e {
            ChunkTraceError::InvalidSelection(m) => {
                ChunkTraceError::InvalidSelection(format!("selection {i}: {m}"))
            }
            other => other,
        })?;
        total += acc.len() as u64;
        if total > MAX_TRACE_ACCESSES {
            return Err(ChunkTraceError::InvalidSelection(format!(
                "trace maps to more than {MAX_TRACE_ACCESSES} chunk accesses"
            )));
        }
        out.push(acc);
    }
    Ok(out)
}

/// Replays pre-mapped accesses (one inner list per `H5Dread`) through a fresh cache.
pub fn simulate_accesses(
    grid: &Grid,
    accesses: &[Vec<ChunkAccess>],
    config: CacheConfig,
    form: HashForm,
) -> Result<SimulationReport, ChunkTraceError> {
    let mut cache = ChunkCache::new(grid, config, form)?;
    let chunk_bytes = grid.chunk_bytes();
    let mut selections = Vec::with_capacity(accesses.len());
    let mut total = Counts::default();
    for sel in accesses {
        let mut c = Counts::default();
        let mut read_chunks = Vec::new();
        for a in sel {
            c.selected_bytes += a.points * grid.element_size();
            match cache.access(&a.scaled, a.points, grid.stored_size(a.linear))? {
                AccessOutcome::Hit => c.hits += 1,
                AccessOutcome::Miss {
                    raw_bytes, evicted, ..
                } => {
                    c.evictions += u64::from(evicted);
                    if raw_bytes > 0 {
                        c.reads += 1;
                        c.raw_bytes += raw_bytes;
                        c.decoded_bytes += chunk_bytes;
                        read_chunks.push(a.scaled.clone());
                    }
                }
                AccessOutcome::Direct { .. } => c.direct_reads += 1,
            }
        }
        total.add(&c);
        selections.push(SelectionReport {
            counts: c,
            read_chunks,
        });
    }
    Ok(SimulationReport {
        config: cache.config(),
        hash_form: form,
        chunk_bytes,
        decode_ratio: total.decode_ratio(),
        selections,
        total,
    })
}

/// Runs `trace` on a dataset of `geometry` with a fresh cache of `config` and slot hashing
/// `form`: every selection is one `H5Dread`, its chunks visited in ascending chunk index.
///
/// Errors: invalid geometry, selection or `w0` (see [`ChunkGeometry::validate`],
/// [`chunk_accesses`], [`CacheConfig::validate`]).
pub fn simulate(
    geometry: &ChunkGeometry,
    trace: &Trace,
    config: CacheConfig,
    form: HashForm,
) -> Result<SimulationReport, ChunkTraceError> {
    let grid = geometry.validate()?;
    let accesses = trace_accesses(&grid, trace)?;
    simulate_accesses(&grid, &accesses, config, form)
}
