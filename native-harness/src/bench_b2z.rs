//! `chunkwise bench b2z`: chunkwise next to python-blosc2 4.14.1's own remote reader on two
//! `.b2z` workloads, through one `chunkwise serve --latency-ms` child process on 127.0.0.1:
//!
//! 1. `tree`: open `big.b2z` (a TreeStore of 20 leaves `/leaves/lNN`, > 8 MiB) and read
//!    element `[0, 0]` of each leaf, one leaf after the other;
//! 2. `table`: live rows `0..10000` of the columns `a`, `b`, `d` of `bench_table.b2z` (a CTable
//!    of 100,000 rows, 1,000 deleted).
//!
//! Both written by `tests/fixtures/gen_b2z.py --big DIR`; every value read is checked against
//! its manifests (`big.json`: each leaf's `first`; `bench_table.json` `bench_rows`: dtype,
//! first, last and SHA-256 of each column), by both tools: a wrong value fails the command.
//!
//! Each is measured cold and warm. chunkwise: cold is a new memory cache coordinator, warm a
//! second open in that coordinator. python-blosc2 (`scripts/bench_b2z_python.py`, a new
//! process per run): cold is its default MEMORY policy; its memory cache belongs to one
//! handle, so it warms across opens only with a DISK cache directory: one cold pass fills an
//! empty `cache_dir` (shown as its own row) and warm is the reopen on it.
//!
//! Requests and bytes are each tool's own counters (chunkwise [`chunkwise::io::Traffic`],
//! python-blosc2 `Traffic`), cross-checked against the server's log of the phase. Round trips
//! are Traffic's for chunkwise; for python-blosc2 (no such counter) they are estimated from
//! the server's log: each request is taken to have been in flight for the added latency
//! before its log line, and overlapping requests share a round trip ([`estimate_round_trips`]).

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::selection::Selection;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Columns of the table workload (those `bench_table.json` `bench_rows` describes).
const TABLE_COLUMNS: [&str; 3] = ["a", "b", "d"];

/// One measured phase of one run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Reader: `chunkwise`, `python-blosc2 4.14.1`, with a variant in parentheses.
    pub tool: String,
    /// `tree` or `table`.
    pub workload: String,
    /// `cold`, `cold, DISK` (python-blosc2 filling an empty cache directory) or `warm`.
    pub phase: String,
    /// Requests (the tool's own counter).
    pub requests: u64,
    /// Sequential round trips (chunkwise: Traffic; python-blosc2: estimated from the log).
    pub round_trips: Option<u64>,
    /// Body bytes received (the tool's own counter).
    pub bytes: u64,
    /// Milliseconds from the open to the last value checked.
    pub ms: f64,
    /// Requests in the server's log during the phase (the cross-check).
    pub log_requests: u64,
    /// Round trips estimated from the server's log ([`estimate_round_trips`]).
    pub log_round_trips: Option<u64>,
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
    /// Median round trips; `None` when not known.
    pub round_trips: Option<u64>,
    /// Whether `round_trips` is estimated from the server's log.
    pub estimated: bool,
    /// Median requests in the server's log.
    pub log_requests: u64,
    /// Median round trips estimated from the server's log.
    pub log_round_trips: Option<u64>,
    /// Median body bytes.
    pub bytes: u64,
    /// Median milliseconds.
    pub ms: f64,
    /// Runs measured.
    pub runs: usize,
}

/// What `python-blosc2` prints per phase (`scripts/bench_b2z_python.py`).
#[derive(serde::Deserialize)]
struct PyLine {
    tool: String,
    workload: String,
    phase: String,
    requests: u64,
    bytes: u64,
    ms: f64,
    t0: f64,
    t1: f64,
}

/// Seconds of `CLOCK_MONOTONIC` (the clock of Python's `time.monotonic()` on Linux), so that
/// this process's log timestamps and the Python script's phase times compare.
fn monotonic() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Writes `big.b2z`, `bench_table.b2z` and their manifests with the pinned python-blosc2
/// (`gen_b2z.py --big`) into a temporary directory (once; again when the manifests predate
/// `bench_rows`) and returns it.
///
/// # Errors
/// When the venv's python cannot run or the generator fails.
pub fn make_fixtures(repo: &Path) -> Result<PathBuf, String> {
    // Tests of one process call this at once: one writes, the others wait and find the
    // directory ready. (Each used to write into the same pid-named temporary and move it
    // away from under the others, which then failed with an empty message.)
    static WRITING: Mutex<()> = Mutex::new(());
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join("chunkwise-bench-b2z");
    let ready = |d: &Path| {
        d.join("big.json").exists()
            && std::fs::read_to_string(d.join("bench_table.json"))
                .is_ok_and(|s| s.contains("\"bench_rows\""))
    };
    if ready(&dir) {
        return Ok(dir);
    }
    // Written beside and renamed, so that a concurrent run never sees half a directory.
    let tmp = std::env::temp_dir().join(format!("chunkwise-bench-b2z.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let python = crate::venv_python();
    let out = Command::new(&python)
        .arg(repo.join("tests/fixtures/gen_b2z.py"))
        .arg("--big")
        .arg(&tmp)
        // python-blosc2 unpacks next to its temporaries: keep them out of the shared /tmp.
        .env("TMPDIR", std::env::temp_dir())
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} (scripts/setup.sh python): {e}",
                python.display()
            )
        })?;
    if !out.status.success() || !ready(&tmp) {
        return Err(format!(
            "gen_b2z.py --big failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::rename(&tmp, &dir).is_err() && !ready(&dir) {
        return Err(format!(
            "cannot move {} to {}",
            tmp.display(),
            dir.display()
        ));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(dir)
}

/// One line of the server's log, with the monotonic time (seconds) it arrived here.
#[derive(Debug, Clone)]
struct LogLine {
    at: f64,
    line: String,
}

/// `chunkwise serve` as a child process, its stderr log read line by line and timestamped.
struct Server {
    child: Child,
    base: String,
    log: Arc<Mutex<Vec<LogLine>>>,
}

impl Server {
    /// Starts `exe serve --root ROOT --port 0 --latency-ms L` and waits for its
    /// `serving ... at URL` line.
    fn start(exe: &Path, root: &Path, latency_ms: u64) -> Result<Server, String> {
        let mut child = Command::new(exe)
            .args(["serve", "--port", "0", "--latency-ms"])
            .arg(latency_ms.to_string())
            .arg("--root")
            .arg(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {} serve: {e}", exe.display()))?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let at = monotonic();
                if let Ok(mut l) = sink.lock() {
                    l.push(LogLine { at, line });
                }
            }
        });
        let mut first = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        let read = BufReader::new(stdout).read_line(&mut first);
        let base = match (read, first.rsplit_once(" at ")) {
            (Ok(n), Some((_, url))) if n > 0 => url.trim().to_string(),
            _ => {
                let mut server = Server {
                    child,
                    base: String::new(),
                    log,
                };
                server.stop();
                return Err(format!("chunkwise serve did not start: {first:?}"));
            }
        };
        Ok(Server { child, base, log })
    }

    fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.base.trim_end_matches('/'))
    }

    /// The request lines (not `cut` lines) logged between `t0` and `t1` (monotonic seconds),
    /// or up to 50 ms later but before `next` (the start of the next phase): a line is read
    /// here a moment after the server wrote it.
    fn requests_between(&self, t0: f64, t1: f64, next: f64) -> Vec<LogLine> {
        let end = (t1 + 0.05).min(next);
        std::thread::sleep(Duration::from_millis(60));
        self.log
            .lock()
            .map(|l| {
                l.iter()
                    .filter(|x| x.at >= t0 && x.at <= end && !x.line.starts_with("cut "))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sends SIGTERM to the child by its PID and waits for it (SIGKILL after 5 s).
    fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let pid = self.child.id() as libc::pid_t;
            // SAFETY: kill(2) on the PID of our own child, which has not been reaped.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(5);
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
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sequential round trips of requests whose log lines came at `times` (seconds), each taken
/// as in flight during the `latency_ms` before its line: the number of disjoint groups of
/// overlapping intervals (as chunkwise's Traffic counts requests started while none was in
/// flight). `None` without added latency (nothing to tell overlap by).
pub fn estimate_round_trips(times: &[f64], latency_ms: u64) -> Option<u64> {
    if latency_ms == 0 {
        return None;
    }
    let l = latency_ms as f64 / 1e3;
    let mut t: Vec<f64> = times.to_vec();
    t.sort_by(f64::total_cmp);
    let mut trips = 0;
    let mut end = f64::NEG_INFINITY;
    for x in t {
        if x - l > end {
            trips += 1;
        }
        end = end.max(x);
    }
    Some(trips)
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The leaves of big.json: (path, element [0, 0]), in the manifest's order.
fn leaves(manifest: &serde_json::Value) -> Result<Vec<(String, f64)>, String> {
    let obj = manifest["leaves"]
        .as_object()
        .ok_or("big.json has no leaves")?;
    obj.iter()
        .map(|(k, v)| {
            v["first"]
                .as_f64()
                .map(|f| (k.clone(), f))
                .ok_or_else(|| format!("big.json: {k} has no first"))
        })
        .collect()
}

fn err(e: chunkwise::Error) -> String {
    e.to_string()
}

/// Reads element [0, 0] of `path` in `store` and checks it is `want`.
async fn leaf_value(
    store: &chunkwise::store::RemoteStore,
    path: &str,
    want: f64,
) -> Result<(), String> {
    let sel = Selection::parse("0, 0").map_err(|e| e.to_string())?;
    let arr = store.get(path).await.map_err(err)?;
    let data = arr.read(&sel, &ReadOptions::default()).await.map_err(err)?;
    let got = match (data.dtype.to_string().as_str(), data.data.as_slice()) {
        ("<f8", b) if b.len() == 8 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
        (d, b) => {
            return Err(format!(
                "{path}[0, 0]: {d}, {} bytes, expected one <f8",
                b.len()
            ))
        }
    };
    if got.to_bits() != want.to_bits() {
        return Err(format!(
            "wrong value: {path}[0, 0] = {got:?}, expected {want:?}"
        ));
    }
    Ok(())
}

/// The tree workload once: open, then each leaf's [0, 0] (`concurrent`: all leaves at once).
async fn tree_once(
    url: &str,
    leaves: &[(String, f64)],
    coordinator: CacheCoordinator,
    concurrent: bool,
) -> Result<chunkwise::io::TrafficSnapshot, String> {
    let store = chunkwise::open::open_store(url, vec![], OpenOptions::default(), coordinator)
        .await
        .map_err(err)?;
    if concurrent {
        futures::future::try_join_all(leaves.iter().map(|(p, v)| leaf_value(&store, p, *v)))
            .await?;
    } else {
        for (p, v) in leaves {
            leaf_value(&store, p, *v).await?;
        }
    }
    Ok(store.traffic())
}

/// The table workload once: open, the CTable at `/`, live rows of [`TABLE_COLUMNS`], checked
/// against `bench_table.json` `bench_rows`.
async fn table_once(
    url: &str,
    manifest: &serde_json::Value,
    coordinator: CacheCoordinator,
) -> Result<chunkwise::io::TrafficSnapshot, String> {
    let rows = &manifest["bench_rows"];
    let (start, stop) = (
        rows["start"].as_u64().ok_or("bench_rows.start")?,
        rows["stop"].as_u64().ok_or("bench_rows.stop")?,
    );
    let store = chunkwise::open::open_store(url, vec![], OpenOptions::default(), coordinator)
        .await
        .map_err(err)?;
    let table = store.table("/").await.map_err(err)?;
    let names: Vec<String> = TABLE_COLUMNS.iter().map(|s| s.to_string()).collect();
    let got = table
        .read_rows(start, stop, Some(&names), &ReadOptions::default())
        .await
        .map_err(err)?;
    if got.nrows != stop - start {
        return Err(format!(
            "wrong value: {} rows read, expected {}",
            got.nrows,
            stop - start
        ));
    }
    for (name, data) in &got.columns {
        let want = &rows["columns"][name];
        let dtype = data.dtype.to_string();
        if want["dtype"].as_str() != Some(dtype.as_str()) {
            return Err(format!(
                "wrong value: column {name} is {dtype}, expected {}",
                want["dtype"]
            ));
        }
        let item = data.dtype.itemsize;
        let value = |i: usize| -> serde_json::Value {
            let b = &data.data[i * item..(i + 1) * item];
            match dtype.as_str() {
                "<i8" => i64::from_le_bytes(b.try_into().expect("8")).into(),
                "<i4" => i32::from_le_bytes(b.try_into().expect("4")).into(),
                "<f8" => f64::from_le_bytes(b.try_into().expect("8")).into(),
                _ => serde_json::Value::Null,
            }
        };
        let n = data.data.len() / item.max(1);
        if n as u64 != stop - start
            || value(0) != want["first"]
            || value(n - 1) != want["last"]
            || chunkwise::cache::identity::sha256_hex(&data.data) != want["sha256"]
        {
            return Err(format!(
                "wrong value: column {name} rows {start}..{stop} differ from the data written \
                 (first {} last {}, expected {} {})",
                value(0),
                value(n.saturating_sub(1)),
                want["first"],
                want["last"]
            ));
        }
    }
    Ok(store.traffic())
}

/// Median of `v` (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Everything measured: the samples of every run, in order.
pub struct Measured {
    /// Per run and phase.
    pub samples: Vec<Sample>,
    /// Differences between a tool's counter and the server's log, as text.
    pub notes: Vec<String>,
}

/// Runs both workloads `runs` times with each tool through one server (`exe serve`, added
/// latency `latency_ms`) over the fixtures in `dir` ([`make_fixtures`]).
///
/// # Errors
/// A wrong value read by either tool; a failed open or read; the server or the Python
/// script not starting.
pub async fn run(
    exe: &Path,
    repo: &Path,
    dir: &Path,
    latency_ms: u64,
    runs: u32,
) -> Result<Measured, String> {
    let big = read_json(&dir.join("big.json"))?;
    let table_manifest = read_json(&dir.join("bench_table.json"))?;
    let leaves = leaves(&big)?;
    let server = Server::start(exe, dir, latency_ms)?;
    let mut samples = Vec::new();
    let mut notes = Vec::new();
    let big_url = server.url("big.b2z");
    let table_url = server.url("bench_table.b2z");
    for _ in 0..runs {
        for (tool, workload) in [
            ("chunkwise", "tree"),
            ("chunkwise (20 leaves at once)", "tree"),
            ("chunkwise", "table"),
        ] {
            let coordinator = CacheCoordinator::memory(chunkwise::cache::DEFAULT_MAX_CACHE_BYTES);
            for phase in ["cold", "warm"] {
                let t0 = monotonic();
                let clock = Instant::now();
                let traffic = match workload {
                    "tree" => {
                        tree_once(&big_url, &leaves, coordinator.clone(), tool != "chunkwise")
                            .await?
                    }
                    _ => table_once(&table_url, &table_manifest, coordinator.clone()).await?,
                };
                let ms = clock.elapsed().as_secs_f64() * 1e3;
                let t1 = monotonic();
                let logged = server.requests_between(t0, t1, f64::INFINITY);
                let times: Vec<f64> = logged.iter().map(|l| l.at).collect();
                if logged.len() as u64 != traffic.requests {
                    notes.push(format!(
                        "{tool} {workload} {phase}: Traffic {} requests, server log {}",
                        traffic.requests,
                        logged.len()
                    ));
                }
                samples.push(Sample {
                    tool: tool.into(),
                    workload: workload.into(),
                    phase: phase.into(),
                    requests: traffic.requests,
                    round_trips: Some(traffic.round_trips),
                    bytes: traffic.bytes,
                    ms,
                    log_requests: logged.len() as u64,
                    log_round_trips: estimate_round_trips(&times, latency_ms),
                });
            }
        }
        for workload in ["tree", "table"] {
            let lines = python_run(repo, &server.base, dir, workload).await?;
            let nexts: Vec<f64> = lines.iter().skip(1).map(|l| l.t0).collect();
            for (i, line) in lines.into_iter().enumerate() {
                let next = nexts.get(i).copied().unwrap_or(f64::INFINITY);
                let logged = server.requests_between(line.t0, line.t1, next);
                if logged.len() as u64 != line.requests {
                    notes.push(format!(
                        "{} {} {}: its Traffic {} requests, server log {}",
                        line.tool,
                        line.workload,
                        line.phase,
                        line.requests,
                        logged.len()
                    ));
                }
                let times: Vec<f64> = logged.iter().map(|l| l.at).collect();
                samples.push(Sample {
                    tool: line.tool,
                    workload: line.workload,
                    phase: line.phase,
                    requests: line.requests,
                    round_trips: estimate_round_trips(&times, latency_ms),
                    bytes: line.bytes,
                    ms: line.ms,
                    log_requests: logged.len() as u64,
                    log_round_trips: estimate_round_trips(&times, latency_ms),
                });
            }
        }
    }
    drop(server);
    Ok(Measured { samples, notes })
}

/// One run of `scripts/bench_b2z_python.py` (a new process) on `workload`.
async fn python_run(
    repo: &Path,
    base: &str,
    dir: &Path,
    workload: &str,
) -> Result<Vec<PyLine>, String> {
    let python = crate::venv_python();
    let script = repo.join("scripts/bench_b2z_python.py");
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg(base)
        .arg(dir)
        .arg(workload)
        .arg("--runs")
        .arg("1")
        // Not from the blosc2 package directory: its random.py shadows the stdlib there.
        .current_dir(std::env::temp_dir());
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {workload} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let lines: Vec<PyLine> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("bench_b2z_python.py: {e}: {l}")))
        .collect::<Result<_, _>>()?;
    if lines.is_empty() {
        return Err("bench_b2z_python.py printed no run".into());
    }
    Ok(lines)
}

/// The medians per (tool, workload, phase), in the order first measured.
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
            let med = |f: &dyn Fn(&Sample) -> f64| median(of.iter().map(|s| f(s)).collect());
            let opt = |f: &dyn Fn(&Sample) -> Option<u64>| {
                of.iter()
                    .all(|s| f(s).is_some())
                    .then(|| med(&|s| f(s).unwrap_or(0) as f64).round() as u64)
            };
            let round_trips = opt(&|s| s.round_trips);
            let log_round_trips = opt(&|s| s.log_round_trips);
            Row {
                estimated: !tool.starts_with("chunkwise"),
                requests: med(&|s| s.requests as f64).round() as u64,
                round_trips,
                log_requests: med(&|s| s.log_requests as f64).round() as u64,
                log_round_trips,
                bytes: med(&|s| s.bytes as f64).round() as u64,
                ms: med(&|s| s.ms),
                runs: of.len(),
                tool,
                workload,
                phase,
            }
        })
        .collect()
}

/// The rows as a text table, then chunkwise / python-blosc2 ratios per workload and phase.
pub fn format_table(latency_ms: u64, runs: u32, rows: &[Row], notes: &[String]) -> String {
    let mut s = format!(
        ".b2z: tree = big.b2z, [0, 0] of 20 leaves; table = bench_table.b2z, live rows 0..10000 \
         of 3 columns\nover 127.0.0.1 with {latency_ms} ms added per request, median of {runs} runs\n\
         {:<30} {:<8} {:<10} {:>8} {:>11} {:>10} {:>9} | {:>8} {:>8}\n",
        "tool", "workload", "phase", "requests", "round trips", "bytes", "ms", "log req", "log rt"
    );
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
    for r in rows {
        let rt = match r.round_trips {
            Some(n) if r.estimated => format!("~{n}"),
            Some(n) => n.to_string(),
            None => "-".into(),
        };
        s += &format!(
            "{:<30} {:<8} {:<10} {:>8} {:>11} {:>10} {:>9.1} | {:>8} {:>8}\n",
            r.tool,
            r.workload,
            r.phase,
            r.requests,
            rt,
            r.bytes,
            r.ms,
            r.log_requests,
            opt(r.log_round_trips)
        );
    }
    s += "\nchunkwise / python-blosc2 (sequential chunkwise rows; below 1 is chunkwise ahead)\n";
    s += &format!(
        "{:<8} {:<6} {:>8} {:>11} {:>7} {:>7}\n",
        "workload", "phase", "requests", "round trips", "bytes", "ms"
    );
    let ratio = |a: f64, b: f64| {
        if b == 0.0 {
            if a == 0.0 {
                "0/0".to_string()
            } else {
                "inf".to_string()
            }
        } else {
            format!("{:.2}", a / b)
        }
    };
    for workload in ["tree", "table"] {
        for phase in ["cold", "warm"] {
            let find = |pred: &dyn Fn(&Row) -> bool| {
                rows.iter()
                    .find(|r| r.workload == workload && r.phase == phase && pred(r))
            };
            let (Some(c), Some(p)) = (
                find(&|r| r.tool == "chunkwise"),
                find(&|r| r.tool.starts_with("python-blosc2")),
            ) else {
                continue;
            };
            let rt = match (c.round_trips, p.round_trips) {
                (Some(a), Some(b)) => ratio(a as f64, b as f64),
                _ => "-".into(),
            };
            s += &format!(
                "{:<8} {:<6} {:>8} {:>11} {:>7} {:>7}\n",
                workload,
                phase,
                ratio(c.requests as f64, p.requests as f64),
                rt,
                ratio(c.bytes as f64, p.bytes as f64),
                ratio(c.ms, p.ms)
            );
        }
    }
    s += "\nchunkwise: cold = a new memory cache coordinator; warm = a second open in it.\n\
          python-blosc2: a new process per run (ms excludes start-up and imports); cold = its\n\
          default MEMORY policy; `cold, DISK` fills an empty cache_dir; warm = the reopen on that\n\
          cache_dir (its MEMORY cache belongs to one handle: a second open costs the cold requests).\n\
          ~ round trips: estimated from the server's log (requests overlapping within the latency).\n\
          log req, log rt: requests in the server's log during the phase, and the round trips\n\
          estimated from it the same way for every row (a check of the estimate on chunkwise).\n";
    for n in notes {
        s += &format!("note: {n}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::estimate_round_trips;

    #[test]
    fn overlapping_requests_share_a_round_trip() {
        // Three sequential requests 45 ms apart, then two at once, at 40 ms latency.
        let t = [0.0, 0.045, 0.090, 0.140, 0.141];
        assert_eq!(estimate_round_trips(&t, 40), Some(4));
        assert_eq!(estimate_round_trips(&[0.2, 0.0, 0.1], 40), Some(3));
        assert_eq!(estimate_round_trips(&[], 40), Some(0));
        assert_eq!(estimate_round_trips(&t, 0), None);
    }
}
