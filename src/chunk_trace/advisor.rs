//! Advice for a trace: which chunks are reused, what cache would read each chunk once, what
//! grouping would save, and how a plain byte-bounded LRU of compressed payloads compares.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::cache::{CacheConfig, HashForm};
use super::geometry::{ChunkGeometry, Grid};
use super::simulate::{simulate_accesses, trace_accesses};
use super::trace::{ChunkAccess, Trace};
use super::ChunkTraceError;

/// Most chunk accesses the searches for the smallest `nslots` / `nbytes` replay in total; past
/// it the search stops and reports what it found so far.
pub const SEARCH_BUDGET: u64 = 50_000_000;

/// Largest `nslots` the search tries.
pub const MAX_SEARCH_NSLOTS: u64 = 1 << 16;

/// A replay through a byte-bounded LRU keyed by chunk holding stored (compressed) payloads: no
/// slots, least recently used payloads evicted until the new one fits in `max_cache_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LruReplay {
    /// Capacity in stored bytes.
    pub max_cache_bytes: u64,
    /// Payload fetches (misses on allocated chunks).
    pub reads: u64,
    /// Stored bytes fetched.
    pub raw_bytes: u64,
    /// Accesses served from the LRU.
    pub hits: u64,
    /// Payloads evicted.
    pub evictions: u64,
}

/// What [`advise`] found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// Settings the trace was judged under.
    pub config: CacheConfig,
    /// Raw chunk reads under `config`.
    pub reads: u64,
    /// Stored bytes read under `config`.
    pub raw_bytes: u64,
    /// Distinct allocated chunks touched: the fewest reads any cache can reach.
    pub min_reads: u64,
    /// Chunks accessed more than once (scaled coordinates, ascending chunk index): the reuse set.
    pub reuse_set: Vec<Vec<u64>>,
    /// Most chunks that must stay cached at one time for every revisit to hit.
    pub peak_live_reuse: u64,
    /// Chunks of the reuse set read more than once under `config` (evicted before a revisit).
    pub reread_chunks: Vec<Vec<u64>>,
    /// Smallest `nslots` (with an ample `nbytes`) reaching `min_reads`, if found.
    pub min_nslots: Option<u64>,
    /// Smallest `nbytes` (with `config.nslots`, or `min_nslots` if that collides) reaching
    /// `min_reads`, if found; always a multiple of the decoded chunk size.
    pub min_nbytes: Option<u64>,
    /// Raw chunk reads under `config` with all accesses of each chunk made consecutive (chunks
    /// in order of first use, each access its own read).
    pub grouped_reads: u64,
    /// `reads - grouped_reads`.
    pub grouping_saves: i64,
    /// The same trace through a plain byte-bounded LRU of compressed payloads.
    pub lru: LruReplay,
}

fn reads_of(
    grid: &Grid,
    acc: &[Vec<ChunkAccess>],
    config: CacheConfig,
    form: HashForm,
) -> Result<u64, ChunkTraceError> {
    Ok(simulate_accesses(grid, acc, config, form)?.total.reads)
}

/// Replays `trace` through a byte-bounded LRU of stored payloads of capacity `max_cache_bytes`
/// (what chunkwise's own payload cache does). A payload larger than the capacity is fetched on
/// every access and never kept.
pub fn lru_replay(
    geometry: &ChunkGeometry,
    trace: &Trace,
    max_cache_bytes: u64,
) -> Result<LruReplay, ChunkTraceError> {
    let grid = geometry.validate()?;
    let acc = trace_accesses(&grid, trace)?;
    Ok(lru_over(&grid, &acc, max_cache_bytes))
}

fn lru_over(grid: &Grid, acc: &[Vec<ChunkAccess>], max_cache_bytes: u64) -> LruReplay {
    let mut out = LruReplay {
        max_cache_bytes,
        reads: 0,
        raw_bytes: 0,
        hits: 0,
        evictions: 0,
    };
    // key -> (size, stamp); stamp -> key orders by recency.
    let mut map: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut order: BTreeMap<u64, u64> = BTreeMap::new();
    let mut used = 0u64;
    let mut clock = 0u64;
    for a in acc.iter().flatten() {
        clock += 1;
        if let Some(&(size, stamp)) = map.get(&a.linear) {
            out.hits += 1;
            order.remove(&stamp);
            order.insert(clock, a.linear);
            map.insert(a.linear, (size, clock));
            continue;
        }
        let size = grid.stored_size(a.linear);
        if size == 0 {
            continue;
        }
        out.reads += 1;
        out.raw_bytes += size;
        if size > max_cache_bytes {
            continue;
        }
        while used + size > max_cache_bytes {
            let Some((&stamp, &key)) = order.iter().next() else {
                break;
            };
            order.remove(&stamp);
            if let Some((s, _)) = map.remove(&key) {
                used -= s;
            }
            out.evictions += 1;
        }
        map.insert(a.linear, (size, clock));
        order.insert(clock, a.linear);
        used += size;
    }
    out
}

/// Analyses `trace` on `geometry` under `config` and slot hashing `form`; `max_cache_bytes` sizes
/// the LRU comparison ([`lru_replay`]).
///
/// The searches replay the trace once per candidate, up to [`SEARCH_BUDGET`] accesses in total.
pub fn advise(
    geometry: &ChunkGeometry,
    trace: &Trace,
    config: CacheConfig,
    form: HashForm,
    max_cache_bytes: u64,
) -> Result<Advice, ChunkTraceError> {
    let grid = geometry.validate()?;
    let acc = trace_accesses(&grid, trace)?;
    let base = simulate_accesses(&grid, &acc, config, form)?;

    // Reuse: first and last access time of each chunk, and how many times it was read.
    let mut first: BTreeMap<u64, (u64, u64, u64)> = BTreeMap::new(); // linear -> (first, last, n)
    let mut t = 0u64;
    for a in acc.iter().flatten() {
        let e = first.entry(a.linear).or_insert((t, t, 0));
        e.1 = t;
        e.2 += 1;
        t += 1;
    }
    let reuse: Vec<u64> = first
        .iter()
        .filter(|(_, v)| v.2 > 1)
        .map(|(&k, _)| k)
        .collect();
    // Peak of simultaneously live reuse intervals [first, last].
    let mut events: Vec<(u64, i64)> = Vec::new();
    for &k in &reuse {
        let (f, l, _) = first[&k];
        events.push((f, 1));
        events.push((l, -1));
    }
    events.sort();
    let (mut live, mut peak) = (0i64, 0i64);
    for (_, d) in events {
        live += d;
        peak = peak.max(live);
    }
    let mut read_count: HashMap<Vec<u64>, u64> = HashMap::new();
    for s in &base.selections {
        for c in &s.read_chunks {
            *read_count.entry(c.clone()).or_default() += 1;
        }
    }
    let mut reread: Vec<Vec<u64>> = read_count
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(c, _)| c)
        .collect();
    crate::sort::sort_by_key(&mut reread, |c| grid.linear_index(c));

    let min_reads = first.keys().filter(|&&k| grid.stored_size(k) > 0).count() as u64;
    let trace_len = t.max(1);
    let mut budget = SEARCH_BUDGET;
    let chunk_bytes = grid.chunk_bytes();
    let ample = chunk_bytes.saturating_mul(first.len().max(1) as u64);

    let mut min_nslots = None;
    let mut ns = 1;
    while ns <= MAX_SEARCH_NSLOTS && budget >= trace_len {
        budget -= trace_len;
        let c = CacheConfig {
            nslots: ns,
            nbytes: ample,
            w0: config.w0,
        };
        if reads_of(&grid, &acc, c, form)? == min_reads {
            min_nslots = Some(ns);
            break;
        }
        ns += 1;
    }
    let search_slots = if config.nslots > 0
        && reads_of(
            &grid,
            &acc,
            CacheConfig {
                nbytes: ample,
                ..config
            },
            form,
        )? == min_reads
    {
        Some(config.nslots)
    } else {
        min_nslots
    };
    let mut min_nbytes = None;
    if let Some(nslots) = search_slots {
        let mut k = 1u64;
        while k <= first.len() as u64 && budget >= trace_len {
            budget -= trace_len;
            let c = CacheConfig {
                nslots,
                nbytes: k * chunk_bytes,
                w0: config.w0,
            };
            if reads_of(&grid, &acc, c, form)? == min_reads {
                min_nbytes = Some(k * chunk_bytes);
                break;
            }
            k += 1;
        }
    }

    // Grouped: every access its own read, chunks in order of first use.
    let mut rank_of: HashMap<u64, usize> = HashMap::new();
    for a in acc.iter().flatten() {
        let n = rank_of.len();
        rank_of.entry(a.linear).or_insert(n);
    }
    let mut flat: Vec<(usize, usize, &ChunkAccess)> = acc
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, a)| (rank_of[&a.linear], i, a))
        .collect();
    crate::sort::sort_by_key(&mut flat, |&(r, i, _)| (r, i));
    let grouped: Vec<Vec<ChunkAccess>> =
        flat.into_iter().map(|(_, _, a)| vec![a.clone()]).collect();
    let grouped_reads = reads_of(&grid, &grouped, config, form)?;

    Ok(Advice {
        config: base.config,
        reads: base.total.reads,
        raw_bytes: base.total.raw_bytes,
        min_reads,
        reuse_set: reuse.iter().map(|&k| grid.scaled_coords(k)).collect(),
        peak_live_reuse: peak as u64,
        reread_chunks: reread,
        min_nslots,
        min_nbytes,
        grouped_reads,
        grouping_saves: base.total.reads as i64 - grouped_reads as i64,
        lru: lru_over(&grid, &acc, max_cache_bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_trace::{
        experiment_geometry, experiment_trace, ExperimentOrder, EXPERIMENT_STORED_SIZES,
    };

    #[test]
    fn experiment_round_robin_advice() {
        let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
        let t = experiment_trace(ExperimentOrder::RoundRobin);
        let cfg = CacheConfig {
            nslots: 1,
            nbytes: 16384,
            w0: 0.0,
        };
        let a = advise(&g, &t, cfg, HashForm::Current, 4096).unwrap();
        assert_eq!(a.reads, 32);
        assert_eq!(a.min_reads, 4);
        assert_eq!(a.reuse_set.len(), 4);
        assert_eq!(a.peak_live_reuse, 4);
        assert_eq!(a.reread_chunks.len(), 4);
        // 2 x 2 chunks fold to slots 0..3: 4 slots separate them.
        assert_eq!(a.min_nslots, Some(4));
        assert_eq!(a.min_nbytes, Some(16384));
        assert_eq!(a.grouped_reads, 4);
        assert_eq!(a.grouping_saves, 28);
        // 4096 stored bytes hold three compressed chunks (1335 + 1334 + 1325 = 3994) but not four.
        assert_eq!(a.lru.reads, 32);
        let lru = lru_replay(&g, &t, 5328).unwrap();
        assert_eq!((lru.reads, lru.raw_bytes, lru.hits), (4, 5328, 28));
    }

    #[test]
    fn experiment_grouped_advice() {
        let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
        let t = experiment_trace(ExperimentOrder::Grouped);
        let cfg = CacheConfig {
            nslots: 1,
            nbytes: 4096,
            w0: 0.0,
        };
        let a = advise(&g, &t, cfg, HashForm::Current, 1 << 20).unwrap();
        assert_eq!((a.reads, a.min_reads, a.peak_live_reuse), (4, 4, 1));
        assert_eq!(a.min_nslots, Some(1));
        assert_eq!(a.min_nbytes, Some(4096));
        assert_eq!(a.grouping_saves, 0);
    }
}
