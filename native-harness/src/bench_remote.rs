//! `chunkwise bench remote`: cold open plus a one-chunk preview over the loopback range server
//! with added latency, for a small (< 8 MiB) and a large (> 8 MiB) `.b2nd`, then a warm
//! re-read. Prints requests, bytes, sequential round trips and wall time side by side.

use crate::serve::{spawn, ServeOptions};
use crate::source::open_array;
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
    let venv = std::env::var("CHUNKWISE_VENV").unwrap_or_else(|_| {
        format!(
            "{}/.cache/chunkwise/venv",
            std::env::var("HOME").unwrap_or_default()
        )
    });
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg(repo.join("tests/fixtures/gen_blosc2.py"))
        .arg("--big")
        .arg(&dir)
        .status()
        .map_err(|e| {
            format!("cannot run the Python venv at {venv} (scripts/setup.sh python): {e}")
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
