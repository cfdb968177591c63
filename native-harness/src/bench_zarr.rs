//! The Zarr rows of `chunkwise bench remote`: cold open + read, the same read again (warm),
//! and a reopen from remembered metadata, over the loopback range server with added latency,
//! for a v3, a sharded v3 and a consolidated v2 store written by zarr-python
//! (`gen_zarr.py --bench`); then zarrita.js (tests/e2e/zarr-bench.mjs, plain FetchStore and
//! with `withRangeCoalescing`) on the same stores and cases, when Node and the e2e packages
//! are installed.

use crate::serve::{spawn, ServeOptions};
use crate::source::open_zarr;
use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One measured case.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ZarrRow {
    /// What was read, and by which reader.
    pub case: String,
    /// Requests for open plus the read.
    pub requests: u64,
    /// Body bytes for open plus the read.
    pub bytes: u64,
    /// Sequential round trips for open plus the read (chunkwise only).
    #[serde(default)]
    pub round_trips: Option<u64>,
    /// Milliseconds from open to the read's values.
    pub cold_ms: f64,
    /// Requests made by the same read again on the same handle.
    pub warm_requests: u64,
    /// Milliseconds of that warm read.
    pub warm_ms: f64,
    /// Requests of a reopen from remembered metadata, sharing the first handle's payload
    /// cache, plus the read (chunkwise only; zarrita remembers nothing, so its reopen costs
    /// its cold requests).
    #[serde(default)]
    pub reopen_requests: Option<u64>,
}

/// (case, store directory name, array path, selection, the same as zarrita ranges).
const CASES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "v3 preview (1 chunk)",
        "bench_v3.zarr",
        "/temperature",
        "0:128, 0:128",
        "[[0,128],[0,128]]",
    ),
    (
        "v3 band (16 chunks)",
        "bench_v3.zarr",
        "/temperature",
        "0:256, :",
        "[[0,256],null]",
    ),
    (
        "sharded preview (1 inner chunk)",
        "bench_sharded.zarr",
        "/temperature",
        "0:128, 0:128",
        "[[0,128],[0,128]]",
    ),
    (
        "sharded band (16 inner, 2 shards)",
        "bench_sharded.zarr",
        "/temperature",
        "0:256, :",
        "[[0,256],null]",
    ),
    (
        "v2 preview (1 chunk)",
        "bench_v2.zarr",
        "/temperature",
        "0:128, 0:128",
        "[[0,128],[0,128]]",
    ),
];

/// Writes the bench stores with the pinned zarr-python (`gen_zarr.py --bench`) into a
/// temporary directory (once) and returns it.
pub fn make_stores(repo: &Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join("chunkwise-bench-zarr");
    if dir.join("bench_v2.zarr/.zmetadata").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let python = crate::venv_python();
    let status = std::process::Command::new(&python)
        .arg(repo.join("tests/fixtures/gen_zarr.py"))
        .arg("--bench")
        .arg(&dir)
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| {
            format!(
                "cannot run {} (scripts/setup.sh python): {e}",
                python.display()
            )
        })?;
    if !status.success() {
        return Err("gen_zarr.py --bench failed".into());
    }
    Ok(dir)
}

/// Measures every case with chunkwise, then with zarrita.js when `repo/tests/e2e` has it.
pub async fn run(latency_ms: u64, repo: &Path, stores: &Path) -> Result<Vec<ZarrRow>, String> {
    let server = spawn(ServeOptions {
        root: stores.to_path_buf(),
        port: 0,
        latency_ms,
        quiet: true,
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let err = |e: chunkwise::Error| e.to_string();
    let mut rows = Vec::new();
    for (case, store, path, select, _) in CASES {
        let url = server.url(store);
        let sel = Selection::parse(select).map_err(|e| e.to_string())?;
        let options = OpenOptions {
            path: Some(path.to_string()),
            ..Default::default()
        };
        let t0 = Instant::now();
        let coordinator =
            chunkwise::cache::CacheCoordinator::memory(chunkwise::cache::DEFAULT_MAX_CACHE_BYTES);
        let arr = open_zarr(&url, vec![], options.clone(), coordinator.clone())
            .await
            .map_err(err)?;
        arr.read(&sel, &ReadOptions::default()).await.map_err(err)?;
        let cold_ms = t0.elapsed().as_secs_f64() * 1e3;
        let cold = arr.traffic();
        let t1 = Instant::now();
        arr.read(&sel, &ReadOptions::default()).await.map_err(err)?;
        let warm_ms = t1.elapsed().as_secs_f64() * 1e3;
        let warm_requests = arr.traffic().requests - cold.requests;
        // Reopen in the same cache coordinator: remembered metadata and converted chunks.
        let again = open_zarr(&url, vec![], options, coordinator)
            .await
            .map_err(err)?;
        again
            .read(&sel, &ReadOptions::default())
            .await
            .map_err(err)?;
        rows.push(ZarrRow {
            case: format!("{case} [chunkwise]"),
            requests: cold.requests,
            bytes: cold.bytes,
            round_trips: Some(cold.round_trips),
            cold_ms,
            warm_requests,
            warm_ms,
            reopen_requests: Some(again.traffic().requests),
        });
    }
    let script = repo.join("tests/e2e/zarr-bench.mjs");
    if repo.join("tests/e2e/node_modules/zarrita").is_dir() {
        let cases: Vec<serde_json::Value> = CASES
            .iter()
            .map(|(case, store, path, _, ranges)| {
                serde_json::json!({
                    "case": case,
                    "store": server.url(store),
                    "path": path,
                    "select": serde_json::from_str::<serde_json::Value>(ranges).expect("ranges"),
                })
            })
            .collect();
        let arg = serde_json::to_string(&cases).expect("cases serialise");
        let script2 = script.clone();
        // Blocking child process on the blocking pool: the server keeps answering meanwhile.
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new("node")
                .arg(&script2)
                .arg(arg)
                .output()
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("node {}: {e}", script.display()))?;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            match serde_json::from_str::<ZarrRow>(line) {
                Ok(r) => rows.push(r),
                Err(_) => eprintln!("zarrita: {line}"),
            }
        }
    } else {
        eprintln!("zarrita rows skipped: run `npm ci` in tests/e2e (scripts/setup.sh)");
    }
    server.shutdown().await;
    Ok(rows)
}

/// The rows as a text table.
pub fn format_table(latency_ms: u64, rows: &[ZarrRow]) -> String {
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    let mut s = format!(
        "Zarr: cold open + read, warm read, reopen from remembered metadata; {latency_ms} ms per request\n\
         {:<56} {:>8} {:>9} {:>11} {:>9} {:>13} {:>8} {:>15}\n",
        "case", "requests", "bytes", "round trips", "cold ms", "warm requests", "warm ms", "reopen requests"
    );
    for r in rows {
        s += &format!(
            "{:<56} {:>8} {:>9} {:>11} {:>9.1} {:>13} {:>8.2} {:>15}\n",
            r.case,
            r.requests,
            r.bytes,
            opt(r.round_trips),
            r.cold_ms,
            r.warm_requests,
            r.warm_ms,
            opt(r.reopen_requests)
        );
    }
    s
}
