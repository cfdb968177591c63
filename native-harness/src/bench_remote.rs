//! `chunkwise bench remote`: cold open plus a one-chunk preview over the loopback range server
//! with added latency, for a small (< 8 MiB) and a large (> 8 MiB) `.b2nd`, then a warm
//! re-read. Prints requests, bytes, sequential round trips and wall time side by side.

use crate::serve::{spawn, ServeOptions};
use crate::source::{open_array, open_array_cached};
use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One measured case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RemoteRow {
    /// What was read.
    pub case: String,
    /// Size of the source file in bytes.
    pub source_bytes: u64,
    /// Requests for open plus the preview.
    pub requests: u64,
    /// Body bytes for open plus the preview.
    pub bytes: u64,
    /// Sequential round trips for open plus the preview.
    pub round_trips: u64,
    /// Milliseconds from open to the preview's values.
    pub cold_ms: f64,
    /// Requests made by reading the same preview again.
    pub warm_requests: u64,
    /// Milliseconds of that warm read.
    pub warm_ms: f64,
}

/// Measures the cases with `latency_ms` added per request. `big` is a > 8 MiB `.b2nd` and
/// `small` a < 8 MiB one; both are served from their directories.
pub async fn run(latency_ms: u64, small: &Path, big: &Path) -> Result<Vec<RemoteRow>, String> {
    let mut rows = Vec::new();
    for (label, file) in [
        ("small .b2nd (held whole)", small),
        ("large .b2nd (> 8 MiB)", big),
    ] {
        let dir = file.parent().ok_or("file has no directory")?.to_path_buf();
        let server = spawn(ServeOptions {
            root: dir,
            port: 0,
            latency_ms,
            quiet: true,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or("bad file name")?;
        let url = server.url(name);
        let t0 = Instant::now();
        let arr = open_array(&url, vec![], OpenOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let chunks = arr.chunks().to_vec();
        let sel_txt: Vec<String> = chunks.iter().map(|c| format!("0:{c}")).collect();
        let sel = Selection::parse(&sel_txt.join(",")).map_err(|e| e.to_string())?;
        arr.read(&sel, &ReadOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let cold_ms = t0.elapsed().as_secs_f64() * 1e3;
        let cold = arr.traffic();
        let t1 = Instant::now();
        arr.read(&sel, &ReadOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let warm_ms = t1.elapsed().as_secs_f64() * 1e3;
        rows.push(RemoteRow {
            case: format!("{label}: {}", name),
            source_bytes: std::fs::metadata(file).map(|m| m.len()).unwrap_or(0),
            requests: cold.requests,
            bytes: cold.bytes,
            round_trips: cold.round_trips,
            cold_ms,
            warm_requests: arr.traffic().requests - cold.requests,
            warm_ms,
        });
        server.shutdown().await;
    }
    Ok(rows)
}

/// The rows as a text table.
pub fn format_table(latency_ms: u64, rows: &[RemoteRow]) -> String {
    let mut s = format!(
        "cold open + one-chunk preview over 127.0.0.1 with {latency_ms} ms added per request\n\
         {:<48} {:>12} {:>8} {:>10} {:>11} {:>9} {:>13} {:>8}\n",
        "case",
        "source B",
        "requests",
        "bytes",
        "round trips",
        "cold ms",
        "warm requests",
        "warm ms"
    );
    for r in rows {
        s += &format!(
            "{:<48} {:>12} {:>8} {:>10} {:>11} {:>9.1} {:>13} {:>8.2}\n",
            r.case,
            r.source_bytes,
            r.requests,
            r.bytes,
            r.round_trips,
            r.cold_ms,
            r.warm_requests,
            r.warm_ms
        );
    }
    s
}

/// Writes the large fixture with the pinned python-blosc2 (`gen_blosc2.py --big`) into a
/// temporary directory and returns its path.
pub fn make_big_fixture(repo: &Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join("chunkwise-bench-remote");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    if let Some(p) = find_b2nd(&dir) {
        return Ok(p);
    }
    let python = crate::venv_python();
    let status = std::process::Command::new(&python)
        .arg(repo.join("tests/fixtures/gen_blosc2.py"))
        .arg("--big")
        .arg(&dir)
        .status()
        .map_err(|e| {
            format!(
                "cannot run {} (scripts/setup.sh python): {e}",
                python.display()
            )
        })?;
    if !status.success() {
        return Err("gen_blosc2.py --big failed".into());
    }
    find_b2nd(&dir).ok_or_else(|| "no .b2nd written".into())
}

fn find_b2nd(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "b2nd"))
}

/// One measured HDF5 case of `chunkwise bench remote`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hdf5Row {
    /// What was read.
    pub case: String,
    /// Size of the source file in bytes.
    pub source_bytes: u64,
    /// Stored (compressed) bytes of the previewed chunk.
    pub chunk_bytes: u64,
    /// Requests for open plus the one-chunk preview.
    pub requests: u64,
    /// Body bytes for open plus the preview.
    pub bytes: u64,
    /// Sequential round trips for open plus the preview.
    pub round_trips: u64,
    /// Milliseconds from open to the preview's values (cold).
    pub first_preview_ms: f64,
    /// Requests of reopening and previewing again in a new `RemoteArray` sharing the first
    /// one's cache coordinator (warm: discovery record and converted chunk held).
    pub reopen_requests: u64,
    /// Milliseconds of that reopen plus preview.
    pub reopen_ms: f64,
}

/// Writes the HDF5 benchmark files with the pinned h5py (`gen_hdf5_index.py --bench`) into
/// a temporary directory and returns it: `bench_large.h5` (40 MB float32, gzip + shuffle)
/// and `bench_small.h5` (< 8 MiB), dataset `/data`, chunks 250 x 500.
pub fn make_hdf5_fixtures(repo: &Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join("chunkwise-bench-remote-hdf5");
    if dir.join("bench_large.h5").exists() && dir.join("bench_small.h5").exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let python = crate::venv_python();
    let status = std::process::Command::new(&python)
        .arg(repo.join("tests/fixtures/gen_hdf5_index.py"))
        .arg("--bench")
        .arg(&dir)
        .status()
        .map_err(|e| {
            format!(
                "cannot run {} (scripts/setup.sh python): {e}",
                python.display()
            )
        })?;
    if !status.success() {
        return Err("gen_hdf5_index.py --bench failed".into());
    }
    Ok(dir)
}

/// Measures cold open plus a one-chunk preview (`/data[0:250, 0:500]`, the first chunk) of
/// the files in `dir` (from [`make_hdf5_fixtures`]) through the loopback server with
/// `latency_ms` added per request, then a warm reopen plus the same preview.
pub async fn run_hdf5(latency_ms: u64, dir: &Path) -> Result<Vec<Hdf5Row>, String> {
    let server = spawn(ServeOptions {
        root: dir.to_path_buf(),
        port: 0,
        latency_ms,
        quiet: true,
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for (label, name) in [
        ("small HDF5 (held whole)", "bench_small.h5"),
        ("large HDF5 (> 8 MiB)", "bench_large.h5"),
    ] {
        let url = server.url(name);
        let options = || OpenOptions {
            path: Some("/data".into()),
            ..Default::default()
        };
        let sel = Selection::parse("0:250, 0:500").map_err(|e| e.to_string())?;
        // One cache coordinator for both opens: the reopen finds the discovery record and
        // the converted chunk.
        let coordinator =
            chunkwise::cache::CacheCoordinator::memory(chunkwise::cache::DEFAULT_MAX_CACHE_BYTES);
        let t0 = Instant::now();
        let arr = open_array_cached(&url, vec![], options(), coordinator.clone())
            .await
            .map_err(|e| e.to_string())?;
        arr.read(&sel, &ReadOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let first_preview_ms = t0.elapsed().as_secs_f64() * 1e3;
        let cold = arr.traffic();
        let t1 = Instant::now();
        let again = open_array_cached(&url, vec![], options(), coordinator)
            .await
            .map_err(|e| e.to_string())?;
        again
            .read(&sel, &ReadOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let reopen_ms = t1.elapsed().as_secs_f64() * 1e3;
        let src = chunkwise::io::http::HttpSource::new(url.clone()).map_err(|e| e.to_string())?;
        let h5 = chunkwise::formats::hdf5::Hdf5Array::open_source(&src, Some("/data"), 64 * 1024)
            .await
            .map_err(|e| e.to_string())?;
        let chunk_bytes = h5
            .chunk_map()
            .iter()
            .find(|c| c.offset.iter().all(|&o| o == 0))
            .map(|c| c.size)
            .unwrap_or(0);
        rows.push(Hdf5Row {
            case: format!("{label}: {name}"),
            source_bytes: std::fs::metadata(dir.join(name))
                .map(|m| m.len())
                .unwrap_or(0),
            chunk_bytes,
            requests: cold.requests,
            bytes: cold.bytes,
            round_trips: cold.round_trips,
            first_preview_ms,
            reopen_requests: again.traffic().requests,
            reopen_ms,
        });
    }
    server.shutdown().await;
    Ok(rows)
}

/// The HDF5 rows as a text table.
pub fn format_hdf5_table(latency_ms: u64, rows: &[Hdf5Row]) -> String {
    let mut s = format!(
        "HDF5: cold open + one-chunk preview over 127.0.0.1 with {latency_ms} ms added per request\n\
         {:<40} {:>10} {:>9} {:>8} {:>10} {:>11} {:>13} {:>15} {:>9}\n",
        "case",
        "source B",
        "chunk B",
        "requests",
        "bytes",
        "round trips",
        "1st preview ms",
        "reopen requests",
        "reopen ms"
    );
    for r in rows {
        s += &format!(
            "{:<40} {:>10} {:>9} {:>8} {:>10} {:>11} {:>13.1} {:>15} {:>9.1}\n",
            r.case,
            r.source_bytes,
            r.chunk_bytes,
            r.requests,
            r.bytes,
            r.round_trips,
            r.first_preview_ms,
            r.reopen_requests,
            r.reopen_ms
        );
    }
    s += "reopen: a new RemoteArray in the same cache coordinator (warm discovery and payload)\n";
    s
}

/// Runs `scripts/bench-hdf5-js/bench.mjs` (h5wasm and jsfive, installed by `npm install`
/// in that directory) on the same files through a server with the same latency, and
/// returns its table, or why it could not run.
pub async fn run_hdf5_js(repo: &Path, latency_ms: u64, dir: &Path) -> Result<String, String> {
    let js = repo.join("scripts/bench-hdf5-js");
    if !js.join("node_modules/h5wasm").exists() || !js.join("node_modules/jsfive").exists() {
        return Err(format!(
            "h5wasm/jsfive not installed: run `npm install` in {}",
            js.display()
        ));
    }
    let server = spawn(ServeOptions {
        root: dir.to_path_buf(),
        port: 0,
        latency_ms,
        quiet: true,
        ..Default::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    let base = server.url("");
    let script = js.join("bench.mjs");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("node")
            .arg(script)
            .arg(base)
            .output()
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| format!("cannot run node: {e}"))?;
    server.shutdown().await;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
