//! `chunkwise bench caterva2`: chunkwise's Caterva2 source next to python-blosc2 4.14.1's
//! `C2Array` (and `blosc2.Proxy` over it), on one real Caterva2 server (caterva2[server]
//! 2026.9.2, `scripts/caterva2-serve.py`) behind one latency proxy
//! (`scripts/latency_proxy.py`: each request held `latency_ms`, requests and body bytes
//! counted), in one run.
//!
//! Datasets: `tests/fixtures/gen_caterva2.py`, written into a temporary directory. Workloads
//! (those of `scripts/bench_caterva2_python.py`, which times python-blosc2):
//! - `preview`: open `@public/big/grid.b2nd` (float32 (1024, 1280), chunks (128, 128)) and
//!   read chunk (0, 0), `0:128, 0:128`;
//! - `band`: open it and read the first chunk row, 10 chunks, `0:128, 0:1280`;
//! - `small-of-big`: open `@public/big/one_chunk.b2nd` (float32 (512, 2048) in one 4 MiB
//!   chunk) and read `0:16, 0:16`.
//!
//! chunkwise phases: `cold` (a new memory cache coordinator), `warm` (a second open in that
//! coordinator), `cold, DISK` (a disk coordinator on a new empty directory), `warm, DISK` (a
//! new disk coordinator on that directory, as a new process would open it). python-blosc2's
//! phases are described in its script (`cold`, `warm` on the same handle, `cold, Proxy` and
//! `warm, Proxy` on its disk cache).
//!
//! Requests and bytes are the proxy's counts for both tools (reset before each phase);
//! chunkwise's own [`chunkwise::io::Traffic`] is kept beside as a cross-check. Every value
//! read is compared with the `.npy` the generator wrote, by both tools: a wrong value fails
//! the command.

use chunkwise::array::{OpenOptions, ReadOptions, SourceKind};
use chunkwise::cache::CacheCoordinator;
use chunkwise::selection::Selection;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// A 2-D selection of two step-1 ranges, `[(row start, row end), (column start, column end)]`.
pub type Box2 = [(u64, u64); 2];

/// One workload: its name, dataset path and selection.
pub const WORKLOADS: [(&str, &str, Box2); 3] = [
    ("preview", "@public/big/grid.b2nd", [(0, 128), (0, 128)]),
    ("band", "@public/big/grid.b2nd", [(0, 128), (0, 1280)]),
    (
        "small-of-big",
        "@public/big/one_chunk.b2nd",
        [(0, 16), (0, 16)],
    ),
];

/// One measured phase of one run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// `chunkwise` or `python-blosc2 C2Array`.
    pub tool: String,
    /// A workload of [`WORKLOADS`].
    pub workload: String,
    /// `cold`, `warm`, `cold, DISK`, `warm, DISK` (chunkwise); python-blosc2's own.
    pub phase: String,
    /// Requests the latency proxy forwarded during the phase.
    pub requests: u64,
    /// Response body bytes the proxy forwarded during the phase.
    pub bytes: u64,
    /// Milliseconds from the open to the last value checked.
    pub ms: f64,
    /// chunkwise's own request count (Traffic) for the phase; `None` for python-blosc2.
    #[serde(default)]
    pub own_requests: Option<u64>,
}

/// The median of the samples of one (tool, workload, phase).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// As [`Sample::tool`].
    pub tool: String,
    /// As [`Sample::workload`].
    pub workload: String,
    /// As [`Sample::phase`].
    pub phase: String,
    /// Median requests.
    pub requests: u64,
    /// Median body bytes.
    pub bytes: u64,
    /// Median milliseconds.
    pub ms: f64,
    /// Runs measured.
    pub runs: usize,
}

/// The Caterva2 server and its latency proxy, as the launcher started them.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    urlbase: String,
    stats: String,
}

impl Server {
    fn start(repo: &Path, roots: &Path, latency_ms: u64) -> Result<Server, String> {
        let python = crate::venv_python();
        let mut child = Command::new(&python)
            .arg(repo.join("scripts/caterva2-serve.py"))
            .arg("--roots")
            .arg(roots)
            .arg("--latency-ms")
            .arg(latency_ms.max(1).to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        let _ = BufReader::new(stdout).read_line(&mut line);
        let stdin = child.stdin.take();
        let mut server = Server {
            child,
            stdin,
            urlbase: String::new(),
            stats: String::new(),
        };
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|_| format!("the Caterva2 server did not start: {line:?}"))?;
        server.urlbase = v["urlbase"].as_str().unwrap_or_default().to_string();
        server.stats = v["stats_url"].as_str().unwrap_or_default().to_string();
        if server.urlbase.is_empty() || server.stats.is_empty() {
            return Err(format!("the launcher printed no proxy address: {line:?}"));
        }
        Ok(server)
    }

    /// `(requests, bytes)` the proxy counted since the last [`Server::reset`].
    fn counted(&self) -> Result<(u64, u64), String> {
        let body = loopback_http("GET", &self.stats)?;
        let v: serde_json::Value =
            serde_json::from_slice(&body).map_err(|e| format!("proxy stats: {e}"))?;
        Ok((
            v["requests"].as_u64().unwrap_or(0),
            v["bytes"].as_u64().unwrap_or(0),
        ))
    }

    fn reset(&self) -> Result<(), String> {
        let url = format!("{}reset", self.stats.trim_end_matches("stats"));
        loopback_http("POST", &url).map(|_| ())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The launcher stops the server and removes its state when its stdin closes.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.0 request to a `http://127.0.0.1:PORT/...` URL (the proxy's own routes);
/// answers the body of a 2xx answer.
fn loopback_http(method: &str, url: &str) -> Result<Vec<u8>, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: not http"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut s = std::net::TcpStream::connect(host).map_err(|e| format!("{host}: {e}"))?;
    write!(
        s,
        "{method} /{path} HTTP/1.0\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).map_err(|e| e.to_string())?;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the proxy's answer has no head")?;
    let head = String::from_utf8_lossy(&answer[..split]);
    if !head.starts_with("HTTP/1.1 2") && !head.starts_with("HTTP/1.0 2") {
        return Err(format!(
            "{method} {url}: {}",
            head.lines().next().unwrap_or("")
        ));
    }
    Ok(answer[split + 4..].to_vec())
}

/// Writes the datasets with the pinned python-blosc2 (`gen_caterva2.py`) into a new
/// temporary directory and returns it.
///
/// # Errors
/// When the venv's python cannot run or the generator fails.
pub fn make_fixtures(repo: &Path) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("chunkwise-bench-caterva2-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let python = crate::venv_python();
    let out = Command::new(&python)
        .arg(repo.join("tests/fixtures/gen_caterva2.py"))
        .arg(&dir)
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} (scripts/setup.sh python): {e}",
                python.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "gen_caterva2.py failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(dir)
}

/// The expected bytes of `sel` (two step-1 ranges) of the dataset `path`, from its `.npy`.
fn expected(fixture: &Path, path: &str, sel: Box2) -> Result<Vec<u8>, String> {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture.join("manifest.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    let entry = manifest["datasets"]
        .as_array()
        .and_then(|a| a.iter().find(|d| d["path"] == path))
        .ok_or_else(|| format!("{path} is not in the manifest"))?;
    let npy = fixture.join(entry["npy"].as_str().unwrap_or_default());
    let npy = chunkwise::npy::read_npy(&std::fs::read(&npy).map_err(|e| e.to_string())?)?;
    let item = npy.data.len() as u64 / npy.shape.iter().product::<u64>().max(1);
    let cols = npy.shape[1];
    let mut out = Vec::new();
    for r in sel[0].0..sel[0].1 {
        let start = ((r * cols + sel[1].0) * item) as usize;
        let end = ((r * cols + sel[1].1) * item) as usize;
        out.extend_from_slice(&npy.data[start..end]);
    }
    Ok(out)
}

/// One chunkwise phase: open `path` in `coordinator`, read `sel`, check the values.
async fn chunkwise_phase(
    server: &Server,
    coordinator: &CacheCoordinator,
    path: &str,
    sel: Box2,
    want: &[u8],
) -> Result<(f64, u64), String> {
    let selection = Selection::parse(&format!(
        "{}:{}, {}:{}",
        sel[0].0, sel[0].1, sel[1].0, sel[1].1
    ))
    .map_err(|e| e.to_string())?;
    let options = OpenOptions {
        source: SourceKind::Caterva2,
        path: Some(path.to_string()),
        ..Default::default()
    };
    let t = Instant::now();
    let arr = chunkwise::open::open_array(&server.urlbase, vec![], options, coordinator.clone())
        .await
        .map_err(|e| e.to_string())?;
    let got = arr
        .read(&selection, &ReadOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if got.data != want {
        return Err(format!("chunkwise: {path}[{sel:?}] differs from the .npy"));
    }
    Ok((ms, arr.traffic().requests))
}

/// Runs every workload `runs` times with both tools and returns the samples (chunkwise's
/// runs first, then python-blosc2's, all on one server).
///
/// # Errors
/// When the server does not start, a tool fails, or a value differs from the `.npy`.
pub async fn run(
    repo: &Path,
    fixture: &Path,
    latency_ms: u64,
    runs: usize,
) -> Result<Vec<Sample>, String> {
    let server = Server::start(repo, &fixture.join("roots"), latency_ms)?;
    let mut samples = Vec::new();
    let scratch = std::env::temp_dir().join(format!(
        "chunkwise-bench-caterva2-cache-{}",
        std::process::id()
    ));
    for run in 0..runs {
        for (name, path, sel) in WORKLOADS {
            let want = expected(fixture, path, sel)?;
            let disk = scratch.join(format!("{run}-{name}"));
            let _ = std::fs::remove_dir_all(&disk);
            let memory = CacheCoordinator::memory(1 << 30);
            for phase in ["cold", "warm", "cold, DISK", "warm, DISK"] {
                let coordinator = match phase {
                    "cold" | "warm" => memory.clone(),
                    _ => CacheCoordinator::disk(&disk, None).map_err(|e| e.to_string())?,
                };
                server.reset()?;
                let (ms, own) = chunkwise_phase(&server, &coordinator, path, sel, &want).await?;
                let (requests, bytes) = server.counted()?;
                samples.push(Sample {
                    tool: "chunkwise".into(),
                    workload: name.into(),
                    phase: phase.into(),
                    requests,
                    bytes,
                    ms,
                    own_requests: Some(own),
                });
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let python = crate::venv_python();
    let out = Command::new(&python)
        .arg(repo.join("scripts/bench_caterva2_python.py"))
        .arg("--urlbase")
        .arg(&server.urlbase)
        .arg("--stats-url")
        .arg(&server.stats)
        .arg("--fixture")
        .arg(fixture)
        .arg("--runs")
        .arg(runs.to_string())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "bench_caterva2_python.py failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let s: Sample = serde_json::from_str(line)
            .map_err(|e| format!("bench_caterva2_python.py printed {line:?}: {e}"))?;
        samples.push(s);
    }
    Ok(samples)
}

/// Medians per (tool, workload, phase), in first-seen order.
pub fn summarise(samples: &[Sample]) -> Vec<Row> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for s in samples {
        let k = (s.tool.clone(), s.workload.clone(), s.phase.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(tool, workload, phase)| {
            let of: Vec<&Sample> = samples
                .iter()
                .filter(|s| s.tool == tool && s.workload == workload && s.phase == phase)
                .collect();
            let med_u = |f: &dyn Fn(&Sample) -> u64| {
                let mut v: Vec<u64> = of.iter().map(|s| f(s)).collect();
                v.sort_unstable();
                v[v.len() / 2]
            };
            let mut ms: Vec<f64> = of.iter().map(|s| s.ms).collect();
            ms.sort_by(f64::total_cmp);
            Row {
                requests: med_u(&|s| s.requests),
                bytes: med_u(&|s| s.bytes),
                ms: ms[ms.len() / 2],
                runs: of.len(),
                tool,
                workload,
                phase,
            }
        })
        .collect()
}

/// The table `chunkwise bench caterva2` prints: per workload, each tool's phases.
pub fn format_table(latency_ms: u64, runs: usize, rows: &[Row]) -> String {
    let mut out = format!(
        "Caterva2 (caterva2[server] 2026.9.2 on 127.0.0.1, {latency_ms} ms added per request \
         by a forwarding proxy that counts requests and body bytes); medians of {runs} runs\n"
    );
    out.push_str(&format!(
        "{:<13} {:<22} {:<12} {:>8} {:>10} {:>9}\n",
        "workload", "tool", "phase", "requests", "bytes", "ms"
    ));
    for (name, _, _) in WORKLOADS {
        for r in rows.iter().filter(|r| r.workload == name) {
            out.push_str(&format!(
                "{:<13} {:<22} {:<12} {:>8} {:>10} {:>9.1}\n",
                r.workload, r.tool, r.phase, r.requests, r.bytes, r.ms
            ));
        }
    }
    out
}
