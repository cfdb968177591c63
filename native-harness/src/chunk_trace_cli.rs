//! `chunkwise chunk-trace`: the HDF5 chunk-cache simulator from the command line, side by side
//! with real HDF5 builds (1.10.8 through Debian's h5py, 2.0.0 through the venv's h5py).
//!
//! The real measurements run `tests/oracles/hdf5_chunk_trace.py` (embedded here) once per build,
//! all cases batched: cases go in as JSON on stdin, results come back as JSON on stdout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use chunkwise::chunk_trace::{
    advise, experiment_trace, simulate, CacheConfig, ChunkCache, ChunkGeometry, HashForm,
    SplitMix64, StoredChunk, Trace, EXPERIMENT_CASES,
};
use serde::{Deserialize, Serialize};

/// The oracle script, run with `python -c`.
pub const ORACLE_SCRIPT: &str = include_str!("../../tests/oracles/hdf5_chunk_trace.py");

/// One case for the oracle: a dataset written with h5py (libver v110) and a trace read from it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OracleCase {
    /// Free-form identifier, echoed back.
    pub id: String,
    /// Dataset shape in elements.
    pub shape: Vec<u64>,
    /// Chunk shape in elements.
    pub chunks: Vec<u64>,
    /// numpy dtype string, e.g. `<u4`.
    pub dtype: String,
    /// gzip level, or none for an unfiltered dataset.
    pub gzip: Option<u32>,
    /// Array content: `arange` (0, 1, 2, ... row-major) or `mod251`.
    pub data: String,
    /// Leave every third chunk (linear index 1, 4, 7, ...) unwritten, hence not allocated.
    #[serde(default)]
    pub holes: bool,
    /// `rdcc_nslots`.
    pub nslots: u64,
    /// `rdcc_nbytes`.
    pub nbytes: u64,
    /// `rdcc_w0`.
    pub w0: f64,
    /// Selections, one `H5Dread` each.
    pub trace: Trace,
}

impl OracleCase {
    /// Bytes per element of `dtype` (the digits after the kind letter).
    pub fn element_size(&self) -> Result<u64, String> {
        dtype_size(&self.dtype)
    }

    /// Cache settings of the case.
    pub fn config(&self) -> CacheConfig {
        CacheConfig {
            nslots: self.nslots,
            nbytes: self.nbytes,
            w0: self.w0,
        }
    }
}

fn dtype_size(dtype: &str) -> Result<u64, String> {
    dtype
        .trim_start_matches(['<', '>', '=', '|'])
        .get(1..)
        .and_then(|d| d.parse().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("unsupported dtype {dtype:?}"))
}

/// Driver reads of one selection as the oracle classified them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OracleSelection {
    /// Scaled coordinates of each chunk read whole, in driver order.
    pub reads: Vec<Vec<u64>>,
    /// Stored bytes of those reads.
    pub raw_bytes: u64,
    /// Reads outside every chunk (metadata).
    pub other_reads: u64,
}

/// The oracle's answer for one case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OracleResult {
    /// The case's id.
    pub id: String,
    /// Whether the case ran cleanly (settings matched, values right, no ambiguous reads).
    pub ok: bool,
    /// What went wrong, if not ok.
    pub error: Option<String>,
    /// Effective `(nslots, nbytes, w0)` of the open dataset.
    #[serde(default)]
    pub effective: Option<(u64, u64, f64)>,
    /// Chunk addresses and stored sizes from `get_chunk_info`.
    #[serde(default)]
    pub chunks: Option<Vec<StoredChunk>>,
    /// Per selection.
    #[serde(default)]
    pub selections: Option<Vec<OracleSelection>>,
    /// Total raw chunk reads.
    #[serde(default)]
    pub reads: Option<u64>,
    /// Total stored bytes read.
    #[serde(default)]
    pub raw_bytes: Option<u64>,
}

/// A whole oracle run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OracleOutput {
    /// HDF5 version the h5py in use links (`h5py.version.hdf5_version`).
    pub hdf5_version: String,
    /// h5py version.
    pub h5py_version: String,
    /// One result per case, in input order.
    pub results: Vec<OracleResult>,
}

impl OracleOutput {
    /// Key for JSON output, e.g. `hdf5_1_10_8`.
    pub fn label(&self) -> String {
        format!("hdf5_{}", self.hdf5_version.replace('.', "_"))
    }
}

/// A Python interpreter whose h5py links one HDF5 build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealBuild {
    /// Human name, e.g. `HDF5 1.10.8 (Debian h5py)`.
    pub name: &'static str,
    /// The interpreter.
    pub python: PathBuf,
}

/// The two builds: Debian's `/usr/bin/python3` with python3-h5py (libhdf5 1.10.8; override with
/// `CHUNKWISE_PYTHON_HDF5_1_10`) and the venv's python with h5py 3.16 (HDF5 2.0.0; venv at
/// `CHUNKWISE_VENV` or `~/.cache/chunkwise/venv`). Both are installed by `scripts/setup.sh`.
pub fn real_builds() -> Vec<RealBuild> {
    let debian = std::env::var_os("CHUNKWISE_PYTHON_HDF5_1_10")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/python3"));
    vec![
        RealBuild {
            name: "HDF5 1.10.8 (Debian python3-h5py)",
            python: debian,
        },
        RealBuild {
            name: "HDF5 2.0.0 (venv h5py 3.16)",
            python: crate::venv_python(),
        },
    ]
}

/// Checks that `build`'s interpreter imports h5py; returns its HDF5 version, or an error that
/// says how to install it.
pub fn check_build(build: &RealBuild) -> Result<String, String> {
    let out = Command::new(&build.python)
        .args(["-c", "import h5py; print(h5py.version.hdf5_version)"])
        .output()
        .map_err(|e| {
            format!(
                "{}: cannot run {}: {e}; install with scripts/setup.sh",
                build.name,
                build.python.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "{}: {} cannot import h5py ({}); install with scripts/setup.sh",
            build.name,
            build.python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs all `cases` in one oracle process under `python`.
pub fn run_oracle(python: &Path, cases: &[OracleCase]) -> Result<OracleOutput, String> {
    #[derive(Serialize)]
    struct Input<'a> {
        cases: &'a [OracleCase],
    }
    let input = serde_json::to_vec(&Input { cases }).map_err(|e| e.to_string())?;
    let mut child = Command::new(python)
        .args(["-c", ORACLE_SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // Write from a thread so a full stdout pipe cannot deadlock us.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer
        .join()
        .map_err(|_| "writer thread panicked".to_string())?
        .map_err(|e| format!("writing cases to the oracle: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "oracle under {} failed: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let parsed: OracleOutput = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("oracle output is not the expected JSON: {e}"))?;
    if parsed.results.len() != cases.len() {
        return Err(format!(
            "oracle returned {} results for {} cases",
            parsed.results.len(),
            cases.len()
        ));
    }
    Ok(parsed)
}

/// Runs `cases` under every build, in parallel (one process each).
pub fn run_all_builds(cases: &[OracleCase]) -> Result<Vec<OracleOutput>, String> {
    let builds = real_builds();
    for b in &builds {
        check_build(b)?;
    }
    let handles: Vec<_> = builds
        .into_iter()
        .map(|b| {
            let cases = cases.to_vec();
            std::thread::spawn(move || {
                run_oracle(&b.python, &cases).map_err(|e| format!("{}: {e}", b.name))
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "oracle thread panicked".to_string())?)
        .collect()
}

/// The geometry of `case` as the real file stores it (chunk sizes from the oracle's
/// `get_chunk_info`).
pub fn geometry_from_oracle(
    case: &OracleCase,
    result: &OracleResult,
) -> Result<ChunkGeometry, String> {
    let chunks = result
        .chunks
        .clone()
        .ok_or_else(|| format!("case {}: no chunk list", case.id))?;
    Ok(ChunkGeometry {
        shape: case.shape.clone(),
        chunk_shape: case.chunks.clone(),
        element_size: case.element_size()?,
        filtered: case.gzip.is_some(),
        chunks,
        // Chunks missing from the index are not allocated.
        default_stored_size: Some(0),
    })
}

/// The experiment's cases for the oracle: 64 x 64 `<u4` `arange`, 32 x 32 chunks, gzip 6.
pub fn experiment_oracle_cases() -> Vec<OracleCase> {
    EXPERIMENT_CASES
        .iter()
        .enumerate()
        .map(|(i, c)| OracleCase {
            id: format!("experiment-{i}"),
            shape: vec![64, 64],
            chunks: vec![32, 32],
            dtype: "<u4".into(),
            gzip: Some(6),
            data: "arange".into(),
            holes: false,
            nslots: c.config.nslots,
            nbytes: c.config.nbytes,
            w0: c.config.w0,
            trace: experiment_trace(c.order),
        })
        .collect()
}

/// Options of `chunkwise chunk-trace`.
#[derive(Debug, Clone, Default)]
pub struct ChunkTraceArgs {
    /// Reproduce the experiment table.
    pub experiment: bool,
    /// Geometry JSON file ([`ChunkGeometry`]).
    pub geometry: Option<PathBuf>,
    /// A geometry already in hand (from an HDF5 dataset's chunk map); wins over `geometry`.
    pub geometry_value: Option<ChunkGeometry>,
    /// Trace JSON file ([`Trace`]).
    pub trace: Option<PathBuf>,
    /// `rdcc_nslots` (default 8191, HDF5 2.0).
    pub nslots: Option<u64>,
    /// `rdcc_nbytes` (default 8 MiB, HDF5 2.0).
    pub nbytes: Option<u64>,
    /// `rdcc_w0` (default 0.75).
    pub w0: Option<f64>,
    /// Slot hashing: current (HDF5 1.10.5 and later, the default) or that of HDF5 up to 1.10.4.
    pub hash_form: HashForm,
    /// Capacity in bytes of the plain LRU compared by the advisor (default: `nbytes`).
    pub max_cache_bytes: Option<u64>,
    /// Print JSON instead of a table.
    pub json: bool,
    /// Also measure with both real HDF5 builds.
    pub real: bool,
}

#[derive(Debug, Clone, Serialize)]
struct Counted {
    reads: u64,
    raw_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
struct CaseRow {
    order: String,
    nslots: u64,
    nbytes: u64,
    w0: f64,
    reads: u64,
    raw_bytes: u64,
    #[serde(flatten)]
    real: serde_json::Map<String, serde_json::Value>,
}

fn real_rows(cases: &[OracleCase], rows: &mut [CaseRow]) -> Result<Vec<String>, String> {
    let outs = run_all_builds(cases)?;
    let mut labels = Vec::new();
    for out in outs {
        let label = out.label();
        for (row, r) in rows.iter_mut().zip(&out.results) {
            if !r.ok {
                return Err(format!(
                    "{label}, case {}: {}",
                    r.id,
                    r.error.clone().unwrap_or_default()
                ));
            }
            let c = Counted {
                reads: r.reads.unwrap_or(0),
                raw_bytes: r.raw_bytes.unwrap_or(0),
            };
            row.real.insert(
                label.clone(),
                serde_json::to_value(c).map_err(|e| e.to_string())?,
            );
        }
        labels.push(label);
    }
    Ok(labels)
}

fn table(rows: &[CaseRow], labels: &[String]) -> String {
    let mut s = String::from("order        nslots   nbytes    w0  sim reads  sim raw bytes");
    for l in labels {
        s += &format!("  {l} reads/bytes");
    }
    s.push('\n');
    for r in rows {
        s += &format!(
            "{:<12} {:>6} {:>8} {:>5} {:>10} {:>14}",
            r.order, r.nslots, r.nbytes, r.w0, r.reads, r.raw_bytes
        );
        for l in labels {
            if let Some(v) = r.real.get(l) {
                s += &format!(
                    "  {:>width$}",
                    format!("{}/{}", v["reads"], v["raw_bytes"]),
                    width = l.len() + 12
                );
            }
        }
        s.push('\n');
    }
    s
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path, what: &str) -> Result<T, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// Runs `chunkwise chunk-trace` and returns what to print.
///
/// `--experiment`: the six cases of the experiment table, simulated (with `real`, also measured
/// on HDF5 1.10.8 and 2.0.0). `--geometry G --trace T`: one trace under the given settings, with
/// the advisor's findings in text mode; with `real`, a file of that geometry (unsigned integers of
/// `element_size` bytes, gzip 6 when filtered) is written and read by both builds.
pub fn run(args: &ChunkTraceArgs) -> Result<String, String> {
    let form = args.hash_form;
    if args.experiment {
        let geometry = chunkwise::chunk_trace::experiment_geometry(
            chunkwise::chunk_trace::EXPERIMENT_STORED_SIZES,
        );
        let mut rows = Vec::new();
        for c in EXPERIMENT_CASES {
            let r = simulate(&geometry, &experiment_trace(c.order), c.config, form)
                .map_err(|e| e.to_string())?;
            rows.push(CaseRow {
                order: c.order.name().into(),
                nslots: c.config.nslots,
                nbytes: c.config.nbytes,
                w0: c.config.w0,
                reads: r.total.reads,
                raw_bytes: r.total.raw_bytes,
                real: Default::default(),
            });
        }
        let labels = if args.real {
            real_rows(&experiment_oracle_cases(), &mut rows)?
        } else {
            vec![]
        };
        return if args.json {
            serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())
        } else {
            Ok(table(&rows, &labels))
        };
    }
    let Some(tpath) = &args.trace else {
        return Err(
            "chunk-trace needs --experiment, or a trace (--trace T.json) with SOURCE \
                    --path P or --geometry G.json"
                .into(),
        );
    };
    let geometry: ChunkGeometry = match (&args.geometry_value, &args.geometry) {
        (Some(g), _) => g.clone(),
        (None, Some(gpath)) => read_json(gpath, "geometry")?,
        (None, None) => return Err("chunk-trace needs SOURCE --path P or --geometry G.json".into()),
    };
    let trace: Trace = read_json(tpath, "trace")?;
    let d = CacheConfig::HDF5_2_DEFAULT;
    let config = CacheConfig {
        nslots: args.nslots.unwrap_or(d.nslots),
        nbytes: args.nbytes.unwrap_or(d.nbytes),
        w0: args.w0.unwrap_or(d.w0),
    };
    let report = simulate(&geometry, &trace, config, form).map_err(|e| e.to_string())?;
    let mut rows = vec![CaseRow {
        order: "trace".into(),
        nslots: config.nslots,
        nbytes: config.nbytes,
        w0: config.w0,
        reads: report.total.reads,
        raw_bytes: report.total.raw_bytes,
        real: Default::default(),
    }];
    let labels = if args.real {
        let size = geometry.element_size;
        if ![1, 2, 4, 8].contains(&size) {
            return Err(format!(
                "--real needs an element size of 1, 2, 4 or 8 bytes, not {size}"
            ));
        }
        let case = OracleCase {
            id: "trace".into(),
            shape: geometry.shape.clone(),
            chunks: geometry.chunk_shape.clone(),
            dtype: format!("<u{size}"),
            gzip: geometry.filtered.then_some(6),
            data: "arange".into(),
            holes: false,
            nslots: config.nslots,
            nbytes: config.nbytes,
            w0: config.w0,
            trace: trace.clone(),
        };
        real_rows(&[case], &mut rows)?
    } else {
        vec![]
    };
    if args.json {
        return serde_json::to_string_pretty(&rows).map_err(|e| e.to_string());
    }
    let mut s = table(&rows, &labels);
    let t = &report.total;
    s += &format!(
        "hits {}  evictions {}  decoded bytes {}  selected bytes {}  decoded/selected {:.1}\n",
        t.hits, t.evictions, t.decoded_bytes, t.selected_bytes, report.decode_ratio
    );
    if t.direct_reads > 0 {
        s += &format!(
            "{} element-wise direct reads: unfiltered chunks larger than nbytes bypass the cache\n",
            t.direct_reads
        );
    }
    let a = advise(
        &geometry,
        &trace,
        config,
        form,
        args.max_cache_bytes.unwrap_or(config.nbytes),
    )
    .map_err(|e| e.to_string())?;
    s += &format!(
        "reuse set: {} chunks revisited, at most {} needed at once; {} read more than once\n",
        a.reuse_set.len(),
        a.peak_live_reuse,
        a.reread_chunks.len()
    );
    let opt = |v: Option<u64>| v.map_or("not found".to_string(), |v| v.to_string());
    s += &format!(
        "fewest reads possible {}; smallest nslots reaching it {}; smallest nbytes {}\n",
        a.min_reads,
        opt(a.min_nslots),
        opt(a.min_nbytes)
    );
    s += &format!(
        "grouping accesses by chunk: {} reads ({} fewer)\n",
        a.grouped_reads, a.grouping_saves
    );
    s += &format!(
        "plain LRU of compressed payloads, {} bytes: {} reads, {} bytes, {} hits\n",
        a.lru.max_cache_bytes, a.lru.reads, a.lru.raw_bytes, a.lru.hits
    );
    Ok(s)
}

/// Simulator throughput on a 10-million-access trace (native): a 1000 x 1000 grid of 32 x 32
/// `u32` chunks, HDF5 2.0 default cache (8191 slots, 8 MiB = 2048 decoded chunks, w0 0.75), 90 %
/// of accesses in a sliding window of 3000 chunks and 10 % anywhere, 1 to 1024 points each.
pub fn bench() -> String {
    bench_n(10_000_000)
}

/// [`bench`] with `n` accesses.
pub fn bench_n(n: u64) -> String {
    let geometry = ChunkGeometry {
        shape: vec![32_000, 32_000],
        chunk_shape: vec![32, 32],
        element_size: 4,
        filtered: true,
        chunks: vec![],
        default_stored_size: Some(1500),
    };
    let grid = match geometry.validate() {
        Ok(g) => g,
        Err(e) => return format!("bench geometry invalid: {e}"),
    };
    let mut cache = match ChunkCache::new(&grid, CacheConfig::HDF5_2_DEFAULT, HashForm::Current) {
        Ok(c) => c,
        Err(e) => return format!("bench cache invalid: {e}"),
    };
    let mut rng = SplitMix64::new(42);
    let total_chunks = 1_000_000u64;
    let start = Instant::now();
    for i in 0..n {
        let linear = if rng.below(10) < 9 {
            (i / 1000 + rng.below(3000)) % total_chunks
        } else {
            rng.below(total_chunks)
        };
        let scaled = [linear / 1000, linear % 1000];
        let points = 1 + rng.below(1024);
        if cache.access(&scaled, points, 1500).is_err() {
            return format!("bench access to chunk {scaled:?} refused");
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let st = cache.stats();
    format!(
        "chunk-cache simulator: {n} accesses in {secs:.3} s = {:.1} M accesses/s (hits {}, reads {}, evictions {})",
        n as f64 / secs / 1e6,
        st.hits,
        st.reads,
        st.evictions
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_sizes() {
        assert_eq!(dtype_size("<u4"), Ok(4));
        assert_eq!(dtype_size("|u1"), Ok(1));
        assert_eq!(dtype_size("<f8"), Ok(8));
        assert!(dtype_size("u").is_err());
    }

    #[test]
    fn experiment_table_simulated() {
        let out = run(&ChunkTraceArgs {
            experiment: true,
            json: true,
            ..Default::default()
        })
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let reads: Vec<u64> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["reads"].as_u64().unwrap())
            .collect();
        assert_eq!(reads, vec![4, 32, 4, 32, 32, 32]);
        assert_eq!(v[0]["order"], "round-robin");
        assert_eq!(v[1]["raw_bytes"], 42624);
    }

    /// `cargo test --release -p native-harness --lib bench_ten_million -- --ignored --nocapture`
    #[test]
    #[ignore = "benchmark; run in release"]
    fn bench_ten_million() {
        println!("{}", bench());
    }

    #[test]
    fn bench_runs() {
        let s = bench_n(10_000);
        assert!(s.contains("10000 accesses"), "{s}");
    }
}
