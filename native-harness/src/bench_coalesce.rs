//! `chunkwise bench coalesce` and `chunkwise bench index-merge`: how the coalescing options
//! and the merging of one HDF5 chunk-index level trade requests against bytes, measured over
//! the loopback range server with added latency and a simulated shared link
//! ([`crate::serve::ServeOptions::bandwidth`]).
//!
//! A browser on HTTP/1.1 runs six requests per origin at a time; [`Limited`] emulates that
//! cap natively and counts the waves of requests: the longest chain of requests each started
//! only after an earlier one finished, the sequential round trips a run pays.

use crate::serve::{spawn, ServeOptions};
use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CachePolicy;
use chunkwise::io::{ByteRange, Fetched, IoError, RangeSource};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A [`RangeSource`] that lets at most `limit` requests of `inner` run at once (a browser's
/// connections per origin) and counts waves: a request's wave is one more than the highest
/// wave among the requests finished before it started.
pub struct Limited<S> {
    inner: S,
    permits: Arc<tokio::sync::Semaphore>,
    finished_wave: AtomicU64,
    max_wave: AtomicU64,
}

impl<S> Limited<S> {
    /// `inner` with at most `limit` (at least 1) requests in flight.
    pub fn new(inner: S, limit: usize) -> Self {
        Limited {
            inner,
            permits: Arc::new(tokio::sync::Semaphore::new(limit.max(1))),
            finished_wave: AtomicU64::new(0),
            max_wave: AtomicU64::new(0),
        }
    }

    /// Waves of requests so far (sequential round trips).
    pub fn waves(&self) -> u64 {
        self.max_wave.load(Ordering::SeqCst)
    }
}

#[async_trait::async_trait]
impl<S: RangeSource> RangeSource for Limited<S> {
    fn location(&self) -> &str {
        self.inner.location()
    }
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| IoError::Cancelled)?;
        let wave = self.finished_wave.load(Ordering::SeqCst) + 1;
        self.max_wave.fetch_max(wave, Ordering::SeqCst);
        let r = self.inner.read(range).await;
        self.finished_wave.fetch_max(wave, Ordering::SeqCst);
        r
    }
}

/// One measured cell.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cell {
    /// Workload (file and selection) or index type.
    pub case: String,
    /// Added latency per request, ms.
    pub latency_ms: u64,
    /// Simulated link bandwidth, bytes per second (0: unlimited).
    pub bandwidth: u64,
    /// The setting measured: a coalescing gap in bytes, or an index over-read fraction.
    pub setting: String,
    /// Requests made.
    pub requests: u64,
    /// Waves of requests (sequential round trips) with six connections.
    pub waves: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Milliseconds.
    pub ms: f64,
}

/// The cells as a text table.
pub fn format_table(title: &str, setting: &str, cells: &[Cell]) -> String {
    let mut s = format!(
        "{title}\n{:<34} {:>7} {:>9} {:>10} {:>8} {:>6} {:>10} {:>8}\n",
        "case", "lat ms", "bw MB/s", setting, "requests", "waves", "bytes", "ms"
    );
    for c in cells {
        let bw = if c.bandwidth == 0 {
            "inf".to_string()
        } else {
            format!("{:.1}", c.bandwidth as f64 / 1e6)
        };
        let waves = if c.waves == 0 {
            "-".to_string()
        } else {
            c.waves.to_string()
        };
        s += &format!(
            "{:<34} {:>7} {:>9} {:>10} {:>8} {:>6} {:>10} {:>8.1}\n",
            c.case, c.latency_ms, bw, c.setting, c.requests, waves, c.bytes, c.ms
        );
    }
    s
}

/// Writes the 10,000-chunk index files (`gen_hdf5_index.py --index`) into a temporary
/// directory once and returns it.
pub fn make_index_fixtures(repo: &Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join("chunkwise-bench-index-merge");
    if dir.join("idx_btree_v1.h5").exists() && dir.join("idx_earray.h5").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let status = std::process::Command::new(crate::venv_python())
        .arg(repo.join("tests/fixtures/gen_hdf5_index.py"))
        .arg("--index")
        .arg(&dir)
        .status()
        .map_err(|e| format!("cannot run the venv python (scripts/setup.sh python): {e}"))?;
    if !status.success() {
        return Err("gen_hdf5_index.py --index failed".into());
    }
    Ok(dir)
}

/// Opens `/data` of each 10,000-chunk index file in `dir` (B-tree v1, B-tree v2,
/// extensible array) through six connections, with each over-read fraction of
/// [`chunkwise::formats::hdf5::Hdf5Source::with_index_over_read`], at `latency_ms` and each
/// bandwidth; every open must find all 10,000 chunks.
pub async fn run_index_merge(
    dir: &Path,
    latency_ms: u64,
    connections: usize,
    bandwidths: &[u64],
    fractions: &[f64],
) -> Result<Vec<Cell>, String> {
    use chunkwise::formats::hdf5::{discover::Layout, Hdf5Source};
    let mut cells = Vec::new();
    for &bandwidth in bandwidths {
        let server = spawn(ServeOptions {
            root: dir.to_path_buf(),
            latency_ms,
            bandwidth,
            quiet: true,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
        for name in ["btree_v1", "btree_v2", "earray"] {
            for &f in fractions {
                let traffic = chunkwise::io::Traffic::new();
                let http =
                    chunkwise::io::http::HttpSource::new(server.url(&format!("idx_{name}.h5")))
                        .map_err(|e| e.to_string())?;
                let src = Limited::new(
                    chunkwise::io::Counted::new(http, traffic.clone()),
                    connections,
                );
                let t0 = Instant::now();
                let head = src
                    .read(ByteRange::bounded(0..64 * 1024))
                    .await
                    .map_err(|e| e.to_string())?;
                let mut h =
                    Hdf5Source::new(&src, head.bytes, head.info.len).with_index_over_read(f);
                let meta = h.dataset("/data").await.map_err(|e| e.to_string())?;
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                let Layout::Chunked { entries, .. } = &meta.layout else {
                    return Err(format!("idx_{name}.h5: not chunked"));
                };
                if entries.len() != 10_000 {
                    return Err(format!(
                        "idx_{name}.h5: {} chunks, not 10,000",
                        entries.len()
                    ));
                }
                let t = traffic.snapshot();
                cells.push(Cell {
                    case: format!("idx_{name}.h5 open"),
                    latency_ms,
                    bandwidth,
                    setting: format!("{f}"),
                    requests: t.requests,
                    waves: src.waves(),
                    bytes: t.bytes,
                    ms,
                });
            }
        }
        server.shutdown().await;
    }
    Ok(cells)
}

/// The workloads of [`run_coalesce`]: (case, directory key, file or store, array path,
/// selection). Directory keys: `zarr` (bench_zarr stores), `b2nd` (the large frame),
/// `hdf5` (bench_large.h5).
pub const WORKLOADS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "zarr sharded band 0:256,:",
        "zarr",
        "bench_sharded.zarr",
        "/temperature",
        "0:256, :",
    ),
    (
        "zarr sharded every 2nd 0:128,::256",
        "zarr",
        "bench_sharded.zarr",
        "/temperature",
        "0:128, ::256",
    ),
    (
        "b2nd every 2nd 0:250,::500",
        "b2nd",
        "big_f4.b2nd",
        "",
        "0:250, ::500",
    ),
    (
        "b2nd every 2nd, 32 chunks :,::500",
        "b2nd",
        "big_f4.b2nd",
        "",
        ":, ::500",
    ),
    ("b2nd column :,0:250", "b2nd", "big_f4.b2nd", "", ":, 0:250"),
    (
        "hdf5 every 2nd 0:250,::1000",
        "hdf5",
        "bench_large.h5",
        "/data",
        "0:250, ::1000",
    ),
];

/// Reads each of [`WORKLOADS`] after a separate open, for each latency, bandwidth and gap
/// (`max_merged_bytes` as given), and measures the read alone: requests, bytes, ms. Waves
/// are not counted here (the read runs its own six requests at a time).
pub async fn run_coalesce(
    dirs: &[(&str, PathBuf)],
    latencies: &[u64],
    bandwidths: &[u64],
    gaps: &[u64],
    max_merged_bytes: Option<u64>,
) -> Result<Vec<Cell>, String> {
    let mut cells = Vec::new();
    for &latency_ms in latencies {
        for &bandwidth in bandwidths {
            for (key, dir) in dirs {
                let server = spawn(ServeOptions {
                    root: dir.clone(),
                    latency_ms,
                    bandwidth,
                    quiet: true,
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?;
                for (case, k, file, path, select) in WORKLOADS {
                    if k != key {
                        continue;
                    }
                    let sel = Selection::parse(select).map_err(|e| e.to_string())?;
                    let mut reference: Option<Vec<u8>> = None;
                    for &gap in gaps {
                        let options = OpenOptions {
                            cache: CachePolicy::None,
                            path: (!path.is_empty()).then(|| path.to_string()),
                            coalesce_gap: gap,
                            max_merged_bytes,
                            ..Default::default()
                        };
                        let arr = crate::source::open_array(&server.url(file), vec![], options)
                            .await
                            .map_err(|e| format!("{file}: {e}"))?;
                        let before = arr.traffic();
                        let t0 = Instant::now();
                        let got = arr
                            .read(&sel, &ReadOptions::default())
                            .await
                            .map_err(|e| format!("{file}: {e}"))?;
                        let ms = t0.elapsed().as_secs_f64() * 1e3;
                        let t = arr.traffic().since(before);
                        // Every gap reads the same values.
                        match &reference {
                            None => reference = Some(got.data),
                            Some(r) if *r != got.data => {
                                return Err(format!("{case}: values differ at gap {gap}"))
                            }
                            Some(_) => {}
                        }
                        cells.push(Cell {
                            case: case.to_string(),
                            latency_ms,
                            bandwidth,
                            setting: gap.to_string(),
                            requests: t.requests,
                            waves: 0,
                            bytes: t.bytes,
                            ms,
                        });
                    }
                }
                server.shutdown().await;
            }
        }
    }
    Ok(cells)
}

/// `chunkwise bench coalesce`: makes the `bench remote` files, runs [`run_coalesce`] and
/// returns the table (or JSON cells).
///
/// # Errors
/// A fixture that cannot be made, a failed open or read, values that differ between gaps.
pub async fn coalesce_command(
    repo: &Path,
    latencies: &[u64],
    bandwidths: &[u64],
    gaps: &[u64],
    max_merged_bytes: Option<u64>,
    json: bool,
) -> Result<String, String> {
    let big = crate::bench_remote::make_big_fixture(repo)?;
    let dirs = [
        ("zarr", crate::bench_zarr::make_stores(repo)?),
        ("b2nd", big.parent().map(PathBuf::from).unwrap_or_default()),
        ("hdf5", crate::bench_remote::make_hdf5_fixtures(repo)?),
    ];
    let cells = run_coalesce(&dirs, latencies, bandwidths, gaps, max_merged_bytes).await?;
    Ok(if json {
        serde_json::to_string(&cells).map_err(|e| e.to_string())? + "\n"
    } else {
        format_table(
            "read only (after open), 6 requests at a time",
            "gap B",
            &cells,
        )
    })
}

/// `chunkwise bench index-merge`: makes the index files, runs [`run_index_merge`] and
/// returns the table (or JSON cells).
///
/// # Errors
/// A fixture that cannot be made, a failed open, an open that misses chunks.
pub async fn index_merge_command(
    repo: &Path,
    latency_ms: u64,
    connections: usize,
    bandwidths: &[u64],
    fractions: &[f64],
    json: bool,
) -> Result<String, String> {
    let dir = make_index_fixtures(repo)?;
    let cells = run_index_merge(&dir, latency_ms, connections, bandwidths, fractions).await?;
    Ok(if json {
        serde_json::to_string(&cells).map_err(|e| e.to_string())? + "\n"
    } else {
        format_table(
            &format!("open (head, metadata, chunk index), {connections} requests at a time"),
            "over-read",
            &cells,
        )
    })
}
