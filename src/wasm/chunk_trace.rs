//! JavaScript bindings of the HDF5 chunk-cache simulator (`crate::chunk_trace`).
//!
//! Geometries, traces and reports use the simulator's own JSON shapes (snake_case fields, the
//! same as `chunkwise chunk-trace --json`), so files written for the CLI can be passed straight
//! in. Bad input throws an `Error` with `code` `INVALID_ARGUMENT` (wrong shape or type) or
//! `CHUNK_TRACE` (a geometry, selection or setting the simulator refuses).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{arg_error, js_error};
use crate::chunk_trace::{
    self as ct, CacheConfig, ChunkCache, ChunkGeometry, ExperimentOrder, HashForm, SplitMix64,
    Trace,
};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** One chunked dataset: shape and chunk shape in elements, bytes per element, whether a filter
 *  pipeline applies, and stored (on-disk) chunk sizes in bytes. Unlisted chunks are stored with
 *  `default_stored_size`, or their decoded size when that is absent. */
export interface ChunkGeometry {
  shape: number[]; chunk_shape: number[]; element_size: number; filtered: boolean;
  chunks?: { coords: number[]; stored_size: number; address?: number }[];
  default_stored_size?: number | null;
}
/** One H5Dread: element coordinates, or H5Sselect_hyperslab (stride and block default to 1). */
export type ChunkSelection =
  | { points: number[][] }
  | { hyperslab: { start: number[]; count: number[]; stride?: number[]; block?: number[] } };
export interface ChunkTrace { selections: ChunkSelection[] }
/** H5Pset_chunk_cache settings. Missing fields take HDF5 2.0's defaults (8191 slots, 8 MiB,
 *  w0 0.75). `hashForm` is the slot hash: "current" (HDF5 >= 1.10.5, default) or "pre-1.10.5". */
export interface ChunkCacheOptions {
  nslots?: number; nbytes?: number; w0?: number; hashForm?: "current" | "pre-1.10.5";
}
export interface ChunkCacheConfig { nslots: number; nbytes: number; w0: number }
/** Counts of one selection or a whole trace (bytes are bytes). */
export interface ChunkCounts {
  /** Whole-chunk reads from the file. */ reads: number;
  /** Stored bytes of those reads. */ raw_bytes: number;
  hits: number; evictions: number;
  /** Reads times the decoded chunk size. */ decoded_bytes: number;
  /** Element-wise reads of unfiltered chunks too large for the cache. */ direct_reads: number;
  /** Points selected times the element size. */ selected_bytes: number;
}
export interface ChunkSelectionReport extends ChunkCounts { read_chunks: number[][] }
export interface ChunkSimulationReport {
  /** Settings the cache ran with (0/0 when either was 0: cache disabled). */
  config: ChunkCacheConfig; hash_form: "current" | "pre1_10_5"; chunk_bytes: number;
  selections: ChunkSelectionReport[]; total: ChunkCounts;
  /** total.decoded_bytes / total.selected_bytes */ decode_ratio: number;
}
export interface ChunkCacheAdvice {
  config: ChunkCacheConfig; reads: number; raw_bytes: number;
  /** Distinct allocated chunks touched: the fewest reads any cache can reach. */ min_reads: number;
  /** Chunks accessed more than once (scaled coordinates). */ reuse_set: number[][];
  peak_live_reuse: number; reread_chunks: number[][];
  min_nslots: number | null; min_nbytes: number | null;
  grouped_reads: number; grouping_saves: number;
  lru: { max_cache_bytes: number; reads: number; raw_bytes: number; hits: number; evictions: number };
}
export interface ChunkTraceExperimentCase extends ChunkCounts {
  order: "round-robin" | "grouped"; nslots: number; nbytes: number; w0: number;
  /** Raw chunk reads measured with real HDF5 (1.10.8 and 2.0.0). */ expected_reads: number;
}
export interface ChunkTraceExperiment {
  geometry: ChunkGeometry;
  traces: { "round-robin": ChunkTrace; grouped: ChunkTrace };
  cases: ChunkTraceExperimentCase[];
}
export interface ChunkTraceBench {
  accesses: number; ms: number; hits: number; reads: number; evictions: number;
}
/** Runs `trace` on a dataset of `geometry` through a fresh simulated HDF5 chunk cache. */
export function simulateChunkCache(geometry: ChunkGeometry, trace: ChunkTrace,
  options?: ChunkCacheOptions): ChunkSimulationReport;
/** Reuse set, smallest sufficient nslots/nbytes, grouping gain and a plain-LRU comparison
 *  (`maxCacheBytes` of compressed payloads, default 256 MiB). */
export function adviseChunkCache(geometry: ChunkGeometry, trace: ChunkTrace,
  options?: ChunkCacheOptions & { maxCacheBytes?: number }): ChunkCacheAdvice;
/** The chunk-cache experiment: its geometry, both traces, and its six cases simulated. */
export function chunkTraceExperiment(): ChunkTraceExperiment;
/** A seeded random trace of `length` selections (same seed, same trace). */
export function randomChunkTrace(shape: number[], chunkShape: number[], seed: number,
  length: number): ChunkTrace;
/** Simulator throughput: `accesses` random accesses generated and replayed inside wasm. */
export function benchChunkTrace(accesses: number, seed: number): ChunkTraceBench;
"#;

/// Cache options as JS passes them (`{nslots, nbytes, w0, hashForm, maxCacheBytes}`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheOptions {
    nslots: Option<u64>,
    nbytes: Option<u64>,
    w0: Option<f64>,
    hash_form: Option<String>,
    max_cache_bytes: Option<u64>,
}

impl CacheOptions {
    /// Settings and hash form; missing fields take HDF5 2.0's defaults and the current hash.
    fn config(&self) -> Result<(CacheConfig, HashForm), JsValue> {
        let d = CacheConfig::HDF5_2_DEFAULT;
        let config = CacheConfig {
            nslots: self.nslots.unwrap_or(d.nslots),
            nbytes: self.nbytes.unwrap_or(d.nbytes),
            w0: self.w0.unwrap_or(d.w0),
        };
        config.validate().map_err(trace_error)?;
        let form = match &self.hash_form {
            None => HashForm::Current,
            Some(s) => s.parse::<HashForm>().map_err(trace_error)?,
        };
        Ok((config, form))
    }
}

fn trace_error(e: ct::ChunkTraceError) -> JsValue {
    js_error(&crate::Error::ChunkTrace(e))
}

/// Converts a JS value into `T` through its JSON text, naming the argument in the error.
fn from_js<T: serde::de::DeserializeOwned>(v: JsValue, what: &str) -> Result<T, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Err(arg_error(format!("{what} is required")));
    }
    let text = super::stringify(&v).map_err(|e| arg_error(format!("{what}: {e}")))?;
    serde_json::from_slice(text.as_bytes()).map_err(|e| arg_error(format!("{what}: {e}")))
}

fn options_from_js(v: JsValue) -> Result<CacheOptions, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(CacheOptions::default());
    }
    from_js(v, "options")
}

/// Converts a result into a plain JS object through its JSON text.
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v).map_err(|e| arg_error(format!("result: {e}")))?;
    super::parse_json(&text).map_err(|e| arg_error(format!("result: {e}")))
}

/// Runs `trace` (`{selections: [...]}`) on a dataset of `geometry` through a fresh cache of
/// `options` `{nslots, nbytes, w0, hashForm}`; returns the report (`total` and one entry per
/// selection with reads, raw bytes, hits, evictions, ...).
#[wasm_bindgen(js_name = simulateChunkCache, skip_typescript)]
pub fn simulate_chunk_cache(
    geometry: JsValue,
    trace: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let geometry: ChunkGeometry = from_js(geometry, "geometry")?;
    let trace: Trace = from_js(trace, "trace")?;
    let (config, form) = options_from_js(options)?.config()?;
    let report = ct::simulate(&geometry, &trace, config, form).map_err(trace_error)?;
    to_js(&report)
}

/// Advice for `trace` on `geometry` under `options` (plus `maxCacheBytes`, the capacity of the
/// plain-LRU comparison, default 256 MiB): see [`ct::advise`].
#[wasm_bindgen(js_name = adviseChunkCache, skip_typescript)]
pub fn advise_chunk_cache(
    geometry: JsValue,
    trace: JsValue,
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let geometry: ChunkGeometry = from_js(geometry, "geometry")?;
    let trace: Trace = from_js(trace, "trace")?;
    let options = options_from_js(options)?;
    let (config, form) = options.config()?;
    let lru_bytes = options.max_cache_bytes.unwrap_or(256 << 20);
    let advice = ct::advise(&geometry, &trace, config, form, lru_bytes).map_err(trace_error)?;
    to_js(&advice)
}

#[derive(Serialize)]
struct ExperimentCaseOut {
    order: ExperimentOrder,
    nslots: u64,
    nbytes: u64,
    w0: f64,
    expected_reads: u64,
    #[serde(flatten)]
    counts: ct::Counts,
}

#[derive(Serialize)]
struct Traces {
    #[serde(rename = "round-robin")]
    round_robin: Trace,
    grouped: Trace,
}

#[derive(Serialize)]
struct ExperimentOut {
    geometry: ChunkGeometry,
    traces: Traces,
    cases: Vec<ExperimentCaseOut>,
}

/// The chunk-cache experiment (64 x 64 `uint32`, four 32 x 32 gzip chunks, 32 scalar reads):
/// `{geometry, traces: {"round-robin", grouped}, cases}`, each case its settings, the reads real
/// HDF5 made (`expected_reads`) and the simulated totals.
#[wasm_bindgen(js_name = chunkTraceExperiment, skip_typescript)]
pub fn chunk_trace_experiment() -> Result<JsValue, JsValue> {
    let geometry = ct::experiment_geometry(ct::EXPERIMENT_STORED_SIZES);
    let mut cases = Vec::with_capacity(ct::EXPERIMENT_CASES.len());
    for c in ct::EXPERIMENT_CASES {
        let trace = ct::experiment_trace(c.order);
        let report =
            ct::simulate(&geometry, &trace, c.config, HashForm::Current).map_err(trace_error)?;
        cases.push(ExperimentCaseOut {
            order: c.order,
            nslots: c.config.nslots,
            nbytes: c.config.nbytes,
            w0: c.config.w0,
            expected_reads: c.expected_reads,
            counts: report.total,
        });
    }
    to_js(&ExperimentOut {
        geometry,
        traces: Traces {
            round_robin: ct::experiment_trace(ExperimentOrder::RoundRobin),
            grouped: ct::experiment_trace(ExperimentOrder::Grouped),
        },
        cases,
    })
}

/// A whole number in `0..=max` from a JS number, or an `INVALID_ARGUMENT` error naming `what`.
fn whole(v: f64, what: &str, max: f64) -> Result<u64, JsValue> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= max {
        Ok(v as u64)
    } else {
        Err(arg_error(format!(
            "{what} must be a whole number in 0..={max}, got {v}"
        )))
    }
}

/// Largest integer a JS number holds exactly (2^53 - 1).
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// Longest random trace [`random_chunk_trace`] builds.
const MAX_RANDOM_SELECTIONS: f64 = 1_000_000.0;

/// A seeded random trace (see [`ct::random_trace`]) of `length` selections, at most 1,000,000,
/// over a dataset of `shape` with chunks of `chunk_shape` (elements, same rank, chunks > 0).
#[wasm_bindgen(js_name = randomChunkTrace, skip_typescript)]
pub fn random_chunk_trace(
    shape: JsValue,
    chunk_shape: JsValue,
    seed: f64,
    length: f64,
) -> Result<JsValue, JsValue> {
    let shape: Vec<u64> = from_js(shape, "shape")?;
    let chunk_shape: Vec<u64> = from_js(chunk_shape, "chunkShape")?;
    let seed = whole(seed, "seed", MAX_SAFE)?;
    let length = whole(length, "length", MAX_RANDOM_SELECTIONS)? as usize;
    // Validate through a geometry so ranks and zero chunk sizes are refused, not divided by.
    ChunkGeometry {
        shape: shape.clone(),
        chunk_shape: chunk_shape.clone(),
        element_size: 1,
        filtered: true,
        chunks: vec![],
        default_stored_size: None,
    }
    .validate()
    .map_err(trace_error)?;
    to_js(&ct::random_trace(&shape, &chunk_shape, seed, length))
}

/// Elapsed milliseconds since an arbitrary origin: `performance.now()` where it exists (browsers,
/// workers, Node), else `Date.now()`.
fn now_ms() -> f64 {
    let global = js_sys::global();
    if let Ok(perf) = js_sys::Reflect::get(&global, &"performance".into()) {
        if let Ok(f) = js_sys::Reflect::get(&perf, &"now".into()) {
            if let Some(f) = f.dyn_ref::<js_sys::Function>() {
                if let Some(t) = f.call0(&perf).ok().and_then(|v| v.as_f64()) {
                    return t;
                }
            }
        }
    }
    js_sys::Date::now()
}

#[derive(Serialize)]
struct BenchOut {
    accesses: u64,
    ms: f64,
    hits: u64,
    reads: u64,
    evictions: u64,
}

/// Simulator throughput without JS in the loop: `accesses` (at most 2^32) accesses generated
/// and replayed inside wasm, the workload of the native `chunkwise bench chunk-trace` (a
/// 1000 x 1000 grid of 32 x 32 `u32` chunks stored in 1,500 bytes each, HDF5 2.0's default
/// cache, 90 % of accesses in a window of 3,000 chunks sliding by one every 1,000 accesses,
/// 10 % anywhere, 1 to 1,024 points each; seed 42 there). Returns `{accesses, ms, hits, reads,
/// evictions}`, `ms` the wall time of the replay loop.
#[wasm_bindgen(js_name = benchChunkTrace, skip_typescript)]
pub fn bench_chunk_trace(accesses: f64, seed: f64) -> Result<JsValue, JsValue> {
    let n = whole(accesses, "accesses", u32::MAX as f64)?;
    let seed = whole(seed, "seed", MAX_SAFE)?;
    let geometry = ChunkGeometry {
        shape: vec![32_000, 32_000],
        chunk_shape: vec![32, 32],
        element_size: 4,
        filtered: true,
        chunks: vec![],
        default_stored_size: Some(1500),
    };
    let grid = geometry.validate().map_err(trace_error)?;
    let mut cache = ChunkCache::new(&grid, CacheConfig::HDF5_2_DEFAULT, HashForm::Current)
        .map_err(trace_error)?;
    let mut rng = SplitMix64::new(seed);
    let total_chunks = 1_000_000u64;
    let start = now_ms();
    for i in 0..n {
        let linear = if rng.below(10) < 9 {
            (i / 1000 + rng.below(3000)) % total_chunks
        } else {
            rng.below(total_chunks)
        };
        let scaled = [linear / 1000, linear % 1000];
        let points = 1 + rng.below(1024);
        cache.access(&scaled, points, 1500).map_err(trace_error)?;
    }
    let ms = now_ms() - start;
    let st = cache.stats();
    to_js(&BenchOut {
        accesses: n,
        ms,
        hits: st.hits,
        reads: st.reads,
        evictions: st.evictions,
    })
}
