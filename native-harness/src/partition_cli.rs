//! `chunkwise partition` and `chunkwise resolve`: plain functions behind the subcommands, and a
//! benchmark of the partitioner at scale.
//!
//! ```text
//! chunkwise partition STORE_OR_ARRAYS_JSON [--scope S] [--previous M.json] [--policy P.json]
//!                     [--dry-run] [--out M.json]
//! chunkwise resolve M.json KEY
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use chunkwise::partition::zarr::{read_arrays, DirStore, DEFAULT_EXCLUDE};
use chunkwise::partition::{
    arrays_from_json_text, diff, partition, resolve, Array, Json, KeyEncoding, Manifest, Policy,
    ResolutionKind, Resolver, GIB,
};

/// Partition a local Zarr store directory or an arrays JSON file and report what changed.
///
/// - `input`: a store directory (arrays read from its metadata and listing sizes) or a JSON file
///   holding a list of arrays (`path`, `shape`, `chunks`, `itemsize`, and optionally `shards`,
///   `stored_bytes`, `nobjects_seen`, `is_coordinate`, `key_encoding`).
/// - `scope`: the manifest scope; defaults to the directory's name for a store, `""` for an
///   arrays file.
/// - `previous`: the manifest in effect; its blobs and pins are carried.
/// - `policy`: a policy JSON object (absent fields default, unknown fields ignored); defaults to
///   the previous manifest's policy, then to the built-in defaults.
/// - `dry_run`: report only, write nothing.
/// - `out`: where to write the manifest; without it the manifest goes back to `previous` when
///   given, else its text is appended to the returned report.
///
/// A repartition that changes anything but `generated_at` and provenance is written with the
/// epoch bumped; one that changes nothing is not written at all.
///
/// Returns the report to print: `warning: ...` lines, the diff (`+`, `-`, `~` lines or
/// `(no change)`), then what was written. Errors are messages naming the file and the field.
pub fn partition_command(
    input: &Path,
    scope: Option<&str>,
    previous: Option<&Path>,
    policy: Option<&Path>,
    dry_run: bool,
    out: Option<&Path>,
) -> Result<String, String> {
    let mut report = String::new();
    let (arrays, default_scope) = if input.is_dir() {
        let found = read_arrays(&DirStore::new(input), "", &DEFAULT_EXCLUDE)
            .map_err(|e| format!("{}: {e}", input.display()))?;
        for w in &found.warnings {
            let _ = writeln!(report, "warning: {w}");
        }
        let name = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (found.arrays, name)
    } else {
        let text = read(input)?;
        let arrays =
            arrays_from_json_text(&text).map_err(|e| format!("{}: {e}", input.display()))?;
        (arrays, String::new())
    };
    partition_arrays(
        arrays,
        default_scope,
        report,
        scope,
        previous,
        policy,
        dry_run,
        out,
    )
}

/// `chunkwise partition URL`: the arrays of a remote Zarr store from its consolidated
/// metadata (`zarr.json` with `consolidated_metadata`, or `.zmetadata`), fetched over HTTP
/// range reads; no chunk object is read, so stored bytes are the model's estimate. The rest
/// is as [`partition_command`]; the default scope is the store's last path segment.
pub async fn partition_remote_command(
    url: &str,
    scope: Option<&str>,
    previous: Option<&Path>,
    policy: Option<&Path>,
    dry_run: bool,
    out: Option<&Path>,
) -> Result<String, String> {
    let open = |u: &str| -> std::sync::Arc<dyn chunkwise::io::RangeSource> {
        match chunkwise::io::http::HttpSource::new(u) {
            Ok(s) => std::sync::Arc::new(s),
            // An unusable client only happens with broken TLS setup; report it per read.
            Err(e) => std::sync::Arc::new(FailingSource(u.to_string(), e)),
        }
    };
    let store = chunkwise::partition::remote::consolidated_metadata(&open, url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let found = read_arrays(&store, "", &DEFAULT_EXCLUDE).map_err(|e| format!("{url}: {e}"))?;
    let mut report = String::new();
    for w in &found.warnings {
        let _ = writeln!(report, "warning: {w}");
    }
    let _ = writeln!(
        report,
        "note: stored bytes of a remote store are estimated (uncompressed sizes): HTTP cannot list it"
    );
    let name = url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    partition_arrays(
        found.arrays,
        name,
        report,
        scope,
        previous,
        policy,
        dry_run,
        out,
    )
}

/// A source that fails every read with the error that prevented building it.
struct FailingSource(String, chunkwise::io::IoError);

#[async_trait::async_trait]
impl chunkwise::io::RangeSource for FailingSource {
    fn location(&self) -> &str {
        &self.0
    }
    async fn read(
        &self,
        _range: chunkwise::io::ByteRange,
    ) -> Result<chunkwise::io::Fetched, chunkwise::io::IoError> {
        Err(self.1.clone())
    }
}

/// The shared tail of the partition commands: apply scope, previous manifest and policy,
/// report the diff, write the manifest.
#[allow(clippy::too_many_arguments)]
fn partition_arrays(
    arrays: Vec<Array>,
    default_scope: String,
    mut report: String,
    scope: Option<&str>,
    previous: Option<&Path>,
    policy: Option<&Path>,
    dry_run: bool,
    out: Option<&Path>,
) -> Result<String, String> {
    let scope = scope.map(str::to_owned).unwrap_or(default_scope);
    let previous_manifest = match previous {
        Some(p) => Some(Manifest::loads(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };
    let policy = match policy {
        Some(p) => {
            let json = Json::parse(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))?;
            Some(Policy::from_json(&json, "policy").map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => None,
    };

    let now = now_iso8601();
    let result = partition(
        &scope,
        &arrays,
        policy.as_ref(),
        previous_manifest.as_ref(),
        &now,
    )
    .map_err(|e| e.to_string())?;
    for w in &result.warnings {
        let _ = writeln!(report, "warning: {w}");
    }
    let d = diff(previous_manifest.as_ref(), &result.manifest);
    report.push_str(&d.describe());
    report.push('\n');

    let manifest = match &previous_manifest {
        None => Some(result.manifest),
        Some(prev) if definitions_equal(prev, &result.manifest) => None,
        Some(_) => Some(result.manifest.bumped(&now)),
    };
    let Some(manifest) = manifest else {
        report.push_str("nothing to write\n");
        return Ok(report);
    };
    if dry_run {
        let _ = writeln!(report, "dry run: epoch {} not written", manifest.epoch);
        return Ok(report);
    }
    match out.or(previous) {
        Some(path) => {
            let mut text = manifest.dumps();
            text.push('\n');
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            let _ = writeln!(
                report,
                "wrote {} (epoch {})",
                path.display(),
                manifest.epoch
            );
        }
        None => {
            report.push_str(&manifest.dumps());
            report.push('\n');
        }
    }
    Ok(report)
}

/// Whether two manifests define the same thing (everything but time stamp, producer and
/// provenance).
fn definitions_equal(a: &Manifest, b: &Manifest) -> bool {
    a.scope == b.scope
        && a.blobs == b.blobs
        && a.hot_always == b.hot_always
        && a.pinned == b.pinned
        && a.policy == b.policy
}

/// Resolve one scope-relative key against a manifest file.
///
/// Returns one line: `<instance> blob <id> bucket <n>` for an archivable key (e.g.
/// `b_tas_2 blob b_tas bucket 2`), or `hot`, `pinned`, `unmanaged`.
pub fn resolve_command(manifest: &Path, key: &str) -> Result<String, String> {
    let m =
        Manifest::loads(&read(manifest)?).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let r = resolve(&m, key);
    Ok(match r.kind {
        ResolutionKind::Blob => format!(
            "{} blob {} bucket {}",
            r.blob_id.unwrap_or_default(),
            r.definition_id.unwrap_or_default(),
            r.bucket_index.unwrap_or_default()
        ),
        other => other.as_str().to_owned(),
    })
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The current UTC time as blobmap writes it: `2026-08-03T09:12:00+00:00`.
pub fn now_iso8601() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    iso8601(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS+00:00` (proleptic Gregorian, UTC).
pub fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from a day count (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Peak and current resident set size in KiB, from `/proc/self/status` (`VmHWM`, `VmRSS`).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// CPU time of this process in seconds (user + system), from `/proc/self/stat` in clock ticks of
/// 1/100 s (Linux's USER_HZ). Unlike wall time it does not grow when other processes load the
/// machine.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// A synthetic scope of `n` arrays under `g<i/100>/v<i>`: one in ten is 150 GiB (bucketed), the
/// rest 1 GiB, a few coordinates; encodings rotate through all three.
pub fn synthetic_arrays(n: usize) -> Vec<Array> {
    (0..n)
        .map(|i| {
            let mut a = Array::new(
                &format!("g{}/v{}", i / 100, i),
                &[100_000, 412, 424],
                &[128, 412, 424],
                4,
            );
            a.stored_bytes = Some(if i % 10 == 0 { 150 * GIB } else { GIB });
            a.is_coordinate = i % 1000 == 1;
            a.key_encoding = [
                KeyEncoding::V3Slash,
                KeyEncoding::V2Slash,
                KeyEncoding::V2Flat,
            ][i % 3];
            a
        })
        .collect()
}

/// Time and memory to partition 100,000 arrays and to resolve 1,000,000 keys, as a table.
///
/// Memory is the process's resident set from `/proc/self/status`: the peak (`VmHWM`) after each
/// step and the growth of `VmRSS` across it, so it includes the inputs the step was handed.
pub fn bench() -> String {
    const ARRAYS: usize = 100_000;
    const KEYS: u64 = 1_000_000;
    let mut rows: Vec<(String, f64, f64, String, u64, u64)> = Vec::new();
    let mut step = |name: &str, secs: f64, note: String, before: ((u64, u64), f64)| {
        let after = memory_kib();
        rows.push((
            name.to_owned(),
            secs,
            cpu_seconds() - before.1,
            note,
            after.0,
            after.1.saturating_sub(before.0 .1),
        ));
    };

    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let arrays = synthetic_arrays(ARRAYS);
    step(
        "build 100,000 arrays",
        t.elapsed().as_secs_f64(),
        String::new(),
        before,
    );

    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let first = partition(
        "bench/scope",
        &arrays,
        None,
        None,
        "2026-12-01T00:00:00+00:00",
    )
    .expect("synthetic arrays are valid");
    let m = first.manifest;
    step(
        "partition (fresh)",
        t.elapsed().as_secs_f64(),
        format!(
            "{} blobs, {} hot patterns",
            m.blobs.len(),
            m.hot_always.len()
        ),
        before,
    );

    let grown: Vec<Array> = arrays
        .iter()
        .map(|a| {
            let mut g = a.clone();
            g.shape[0] *= 2;
            g.stored_bytes = a.stored_bytes.map(|s| s * 2);
            g
        })
        .collect();
    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let again = partition(
        "bench/scope",
        &grown,
        None,
        Some(&m),
        "2026-12-02T00:00:00+00:00",
    )
    .expect("synthetic arrays are valid")
    .manifest;
    let d = diff(Some(&m), &again);
    step(
        "repartition after growth + diff",
        t.elapsed().as_secs_f64(),
        format!("diff empty: {}", d.is_empty()),
        before,
    );
    drop(grown);

    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let text = m.dumps();
    let back = Manifest::loads(&text).expect("own output reads back");
    step(
        "manifest JSON write + read",
        t.elapsed().as_secs_f64(),
        format!("{} bytes, equal: {}", text.len(), back == m),
        before,
    );
    drop(back);

    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let mut resolver = Resolver::new();
    resolver.add(&m);
    step(
        "build resolver",
        t.elapsed().as_secs_f64(),
        format!("{} prefixes", resolver.len()),
        before,
    );

    let before = (memory_kib(), cpu_seconds());
    let t = Instant::now();
    let mut key = String::new();
    let mut archivable = 0u64;
    for k in 0..KEYS {
        let a = &arrays[(k % ARRAYS as u64) as usize];
        key.clear();
        let i = k % 700;
        let _ = match a.key_encoding {
            KeyEncoding::V3Slash => write!(key, "bench/scope/{}/c/{i}/0/0", a.path),
            KeyEncoding::V2Slash => write!(key, "bench/scope/{}/{i}/0/0", a.path),
            KeyEncoding::V2Flat => write!(key, "bench/scope/{}/{i}.0.0", a.path),
        };
        if resolver.lookup(&key).archivable() {
            archivable += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    step(
        "resolve 1,000,000 keys",
        secs,
        format!(
            "{:.0} ns/key, {} archivable",
            secs * 1e9 / KEYS as f64,
            archivable
        ),
        before,
    );

    let mut out = String::from(
        "| step | wall (ms) | CPU (ms) | peak RSS (MiB) | RSS growth (MiB) | notes |\n\
         |---|---:|---:|---:|---:|---|\n",
    );
    for (name, secs, cpu, note, peak, growth) in rows {
        let _ = writeln!(
            out,
            "| {name} | {:.1} | {:.0} | {:.1} | {:.1} | {note} |",
            secs * 1e3,
            cpu * 1e3,
            peak as f64 / 1024.0,
            growth as f64 / 1024.0
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00+00:00");
        // date -u -d @1785748320 +%FT%T == 2026-08-03T09:12:00
        assert_eq!(iso8601(1_785_748_320), "2026-08-03T09:12:00+00:00");
        // 2000-02-29 (a leap day in a century leap year): 951782400
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00+00:00");
    }
}
