//! [`FsBackend`]: a directory of cached blobs, each published with a JSON marker (DISK
//! policy, native only). [`DiskStore`] does the file work synchronously; [`FsBackend`] runs
//! it on tokio's blocking pool (`spawn_blocking`), off the async executor.
//!
//! Layout of one namespace directory (`payload/`, `discovery/`, `sources/` under the cache
//! directory): for an entry whose key is `K`, `H = sha256_hex(K)`, the blob `H.blob` and its
//! marker `H.json` ([`super::marker::Marker`]).
//!
//! `version` is an opaque token naming the version of what the blob holds (for a complete
//! source copy, the source's ETag, else its Last-Modified and size; empty for payload and
//! records); `used` is the time of publication in milliseconds since the Unix epoch, and
//! later accesses set the marker's modification time: an entry's last use is the later of
//! the two, so the least recently used order survives a reopen ([`RECORD_USE_MS`]).
//!
//! Keys hold public URLs and salted fingerprints only ([`crate::cache::SourceKey`]):
//! nothing of a URL's query, its user info or a request header is written here. Directories
//! are created mode 0700 and files mode 0600; an existing directory that another user owns
//! or that other users can write to is refused ([`private_dir`]).
//!
//! Publication is atomic per file: the blob is written to a temporary file and renamed into
//! place, then the marker likewise, so a marker never names a blob still being written. A
//! reader trusts nothing else: a missing or unparsable marker, another schema version,
//! another key, a blob of another size, or a digest mismatch is a miss, and both files are
//! removed (a blob without a marker only once it is 10 minutes old: until then it may be
//! another process's publication, whose marker comes next). These names and fields are
//! private to chunkwise and may change with [`SCHEMA_VERSION`].

use super::{BackendError, Budget, CacheBackend, Entry, Usage, DEFAULT_MAX_ENTRIES};
use crate::cache::identity::sha256_hex;
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::marker::Marker;
pub use super::marker::{MAX_MARKER_BYTES, SCHEMA_VERSION};

/// A hit records itself only when the entry's recorded last use is at least this far (60 s,
/// in milliseconds) from now, so warm reads stay cheap: at most one record per entry per
/// minute, and the order kept on disk is right to within a minute.
///
/// A hit is recorded as the marker file's modification time (`File::set_modified`), not by
/// rewriting the marker's `used`. Measured here (ext4, 5,000 markers): about 13 µs per
/// entry, against about 70 µs for an atomic rewrite (a temporary file and a rename), which a
/// warm read in a new process a minute after the last one would pay for every entry it
/// touches. The marker's content also never changes after publication, so recording a use
/// cannot pair an old marker with a blob that another process has just published under the
/// same key. `used` (the publication time) orders entries whose modification times a copy
/// or backup tool reset (`cp` without `-p`): the later of the two is the last use, ties go
/// by `used`.
pub const RECORD_USE_MS: u64 = 60_000;

/// `t` in milliseconds since the Unix epoch (0 before it).
fn ms_since_epoch(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// One namespace directory of blobs with markers, bounded in entries and optionally in
/// bytes (least recently used entries are removed once the blobs' total exceeds `max_bytes`
/// or their number `max_entries`). Its methods block on file I/O: async callers use
/// [`FsBackend`].
#[derive(Debug)]
pub struct DiskStore {
    dir: PathBuf,
    max_bytes: Option<u64>,
    max_entries: u64,
    index: Mutex<Index>,
}

#[derive(Debug, Default)]
struct Index {
    tick: u64,
    /// hash -> (blob bytes, last use)
    entries: HashMap<String, (u64, u64)>,
    order: BTreeMap<u64, String>,
    total: u64,
    evictions: u64,
}

impl Index {
    fn touch(&mut self, hash: &str, bytes: u64) {
        self.tick += 1;
        let tick = self.tick;
        if let Some((b, t)) = self.entries.insert(hash.to_string(), (bytes, tick)) {
            self.order.remove(&t);
            self.total -= b;
        }
        self.order.insert(tick, hash.to_string());
        self.total += bytes;
    }
    fn forget(&mut self, hash: &str) {
        if let Some((b, t)) = self.entries.remove(hash) {
            self.order.remove(&t);
            self.total -= b;
        }
    }
}

impl DiskStore {
    /// Opens (creating it if needed) the namespace directory `dir`, bounded by `max_bytes`
    /// (`None`: no byte bound) and [`DEFAULT_MAX_ENTRIES`] entries
    /// ([`DiskStore::open_bounded`]).
    ///
    /// # Errors
    /// As [`DiskStore::open_bounded`].
    pub fn open(dir: PathBuf, max_bytes: Option<u64>) -> std::io::Result<DiskStore> {
        Self::open_bounded(dir, max_bytes, DEFAULT_MAX_ENTRIES)
    }

    /// Opens (creating it if needed) the namespace directory `dir`, bounded by `max_bytes`
    /// (`None`: no byte bound) and `max_entries`. Existing markers are scanned once to learn
    /// the entries' sizes, least recently used (by their recorded last use, [`RECORD_USE_MS`])
    /// first in the eviction order, and the bounds are applied.
    ///
    /// # Errors
    /// The directory cannot be created or listed, or is not private ([`private_dir`]).
    pub fn open_bounded(
        dir: PathBuf,
        max_bytes: Option<u64>,
        max_entries: u64,
    ) -> std::io::Result<DiskStore> {
        private_dir(&dir)?;
        let store = DiskStore {
            dir,
            max_bytes,
            max_entries,
            index: Mutex::new(Index::default()),
        };
        // One scan of the markers: entries of another schema (older ones could hold
        // credentials in their keys) and damaged markers go; the sizes of the others are
        // learned, least recently used (recorded last use; ties by publication time) first in
        // eviction order.
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&store.dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().to_string();
            if let Some(hash) = name.strip_suffix(".json") {
                let Some(m) = read_marker(&entry.path()) else {
                    store.drop_files(hash);
                    continue;
                };
                found.push((m.last_use(), m.used, hash.to_string(), m.bytes));
            } else if name.starts_with(".tmp-") && is_stale(&entry) {
                // A temporary file left by a process that died before its rename. A recent
                // one may be another process's write in progress: its rename would fail.
                let _ = std::fs::remove_file(entry.path());
            }
        }
        found.sort();
        let mut g = store.lock();
        for (_, _, hash, bytes) in found {
            g.touch(&hash, bytes);
        }
        drop(g);
        store.evict();
        Ok(store)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn paths(&self, hash: &str) -> (PathBuf, PathBuf) {
        (
            self.dir.join(format!("{hash}.blob")),
            self.dir.join(format!("{hash}.json")),
        )
    }

    fn drop_files(&self, hash: &str) {
        let (blob, marker) = self.paths(hash);
        // Marker first: without it the blob is never trusted.
        let _ = std::fs::remove_file(marker);
        let _ = std::fs::remove_file(blob);
    }

    /// The blob stored under `key`, verified against its marker; `None` (and the entry
    /// removed) when anything does not match. A hit is recorded as the entry's last use
    /// (in the marker, at most once per [`RECORD_USE_MS`]).
    pub fn get(&self, key: &str) -> Option<Bytes> {
        self.get_versioned(key).map(|(b, _)| b)
    }

    /// As [`DiskStore::get`], with the version token the blob was published with
    /// ([`DiskStore::put_versioned`]; empty when none was given).
    pub fn get_versioned(&self, key: &str) -> Option<(Bytes, String)> {
        let hash = sha256_hex(key.as_bytes());
        let (blob, marker) = self.paths(&hash);
        let found = read_marker(&marker)
            .filter(|m| m.key == key)
            .and_then(|m| Some((read_checked(&blob, &m, self.max_bytes)?, m)));
        match found {
            Some((data, m)) => {
                self.lock().touch(&hash, data.len() as u64);
                let now = std::time::SystemTime::now();
                if ms_since_epoch(now).abs_diff(m.last_use()) >= RECORD_USE_MS {
                    // A failure (a read-only directory) only leaves the older time on disk.
                    let _ = std::fs::File::options()
                        .write(true)
                        .open(&marker)
                        .and_then(|f| f.set_modified(now));
                }
                Some((data, m.version))
            }
            None => {
                // A blob without a marker may be another process's publication in progress
                // (its marker is renamed into place after it): removed only once stale.
                // Removing it now would leave that marker without its blob.
                if marker.exists() || std::fs::metadata(&blob).is_ok_and(|m| is_stale_file(&m)) {
                    self.drop_files(&hash);
                }
                self.lock().forget(&hash);
                None
            }
        }
    }

    /// Publishes `bytes` under `key` with an empty version token
    /// ([`DiskStore::put_versioned`]).
    ///
    /// # Errors
    /// As [`DiskStore::put_versioned`].
    pub fn put(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.put_versioned(key, bytes, "")
    }

    /// Publishes `bytes` under `key` (blob, then marker; each through a temporary file and a
    /// rename) with the version token `version` and now as its last use, then evicts least
    /// recently used entries beyond the bounds. An entry larger than the byte bound is not
    /// stored (an older one under `key` is removed).
    ///
    /// # Errors
    /// A file cannot be written; no trusted entry is left under `key`.
    pub fn put_versioned(&self, key: &str, bytes: &[u8], version: &str) -> std::io::Result<()> {
        let hash = sha256_hex(key.as_bytes());
        if self.max_bytes.is_some_and(|m| bytes.len() as u64 > m) {
            self.drop_files(&hash);
            self.lock().forget(&hash);
            return Ok(());
        }
        let (blob, marker) = self.paths(&hash);
        // An old marker must not outlive the blob it described.
        let _ = std::fs::remove_file(&marker);
        let json = Marker::new(key, bytes, version).to_json();
        let written = write_atomic(&self.dir, &blob, bytes)
            .and_then(|()| write_atomic(&self.dir, &marker, &json));
        if let Err(e) = written {
            self.drop_files(&hash);
            self.lock().forget(&hash);
            return Err(e);
        }
        self.lock().touch(&hash, bytes.len() as u64);
        self.evict();
        Ok(())
    }

    /// Removes the entry under `key`.
    pub fn remove(&self, key: &str) {
        let hash = sha256_hex(key.as_bytes());
        self.drop_files(&hash);
        self.lock().forget(&hash);
    }

    /// Removes every entry whose key starts with `prefix` (one scan of the markers; used
    /// when a source changed, which is rare). Returns how many were removed.
    ///
    /// # Errors
    /// The directory cannot be listed.
    pub fn remove_prefix(&self, prefix: &str) -> std::io::Result<u64> {
        let found = self.list(prefix)?;
        for (hash, _) in &found {
            self.drop_files(hash);
            self.lock().forget(hash);
        }
        Ok(found.len() as u64)
    }

    /// The entries whose key starts with `prefix`, as (hash, entry with the marker's size):
    /// one scan of the markers.
    ///
    /// # Errors
    /// The directory cannot be listed.
    pub fn list(&self, prefix: &str) -> std::io::Result<Vec<(String, Entry)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let Some(hash) = name.strip_suffix(".json") else {
                continue;
            };
            if let Some(m) = read_marker(&entry.path()).filter(|m| m.key.starts_with(prefix)) {
                out.push((
                    hash.to_string(),
                    Entry {
                        key: m.key,
                        bytes: m.bytes,
                    },
                ));
            }
        }
        Ok(out)
    }

    fn evict(&self) {
        let max = self.max_bytes.unwrap_or(u64::MAX);
        loop {
            let victim = {
                let mut g = self.lock();
                if g.total <= max && g.entries.len() as u64 <= self.max_entries {
                    return;
                }
                let Some((_, h)) = g.order.pop_first() else {
                    return;
                };
                if let Some((b, _)) = g.entries.remove(&h) {
                    g.total -= b;
                    g.evictions += 1;
                }
                h
            };
            self.drop_files(&victim);
        }
    }

    /// (entries, blob bytes, evictions since it was opened).
    pub fn usage(&self) -> (u64, u64, u64) {
        let g = self.lock();
        (g.entries.len() as u64, g.total, g.evictions)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The filesystem backend: a [`DiskStore`] whose file work (reads, writes, SHA-256 over
/// whole blobs, directory scans) runs on tokio's blocking pool (`spawn_blocking`), so the
/// async executor keeps running other tasks meanwhile. Outside a tokio runtime (a caller
/// driving the futures with another executor) the work runs inline. Cloning shares it.
#[derive(Debug, Clone)]
pub struct FsBackend {
    store: Arc<DiskStore>,
}

impl FsBackend {
    /// Opens (creating it if needed) the namespace directory `dir` within `budget`
    /// (`budget.bytes == u64::MAX`: no byte bound), as [`DiskStore::open_bounded`].
    ///
    /// # Errors
    /// As [`DiskStore::open_bounded`].
    pub fn open(dir: PathBuf, budget: Budget) -> std::io::Result<FsBackend> {
        let max_bytes = (budget.bytes != u64::MAX).then_some(budget.bytes);
        Ok(FsBackend {
            store: Arc::new(DiskStore::open_bounded(dir, max_bytes, budget.entries)?),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// Runs `work` on the store off the async executor.
    async fn blocking<T: Send + 'static>(
        &self,
        what: &str,
        work: impl FnOnce(&DiskStore) -> std::io::Result<T> + Send + 'static,
    ) -> Result<T, BackendError> {
        let store = self.store.clone();
        let run = move || work(&store);
        let result = match tokio::runtime::Handle::try_current() {
            Ok(h) => h
                .spawn_blocking(run)
                .await
                .map_err(|e| BackendError::Storage {
                    backend: "fs",
                    detail: format!("{what}: blocking task did not finish: {e}"),
                })?,
            Err(_) => run(),
        };
        result.map_err(|e| BackendError::Storage {
            backend: "fs",
            detail: format!("{what} in {}: {e}", self.store.dir().display()),
        })
    }
}

#[async_trait::async_trait]
impl CacheBackend for FsBackend {
    fn name(&self) -> &'static str {
        "fs"
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError> {
        let key = key.to_string();
        self.blocking("get", move |s| Ok(s.get(&key))).await
    }

    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError> {
        let key = key.to_string();
        self.blocking("put", move |s| s.put(&key, &bytes)).await
    }

    async fn put_versioned(
        &self,
        key: &str,
        bytes: Bytes,
        version: &str,
    ) -> Result<(), BackendError> {
        let (key, version) = (key.to_string(), version.to_string());
        self.blocking("put", move |s| s.put_versioned(&key, &bytes, &version))
            .await
    }

    async fn get_versioned(
        &self,
        key: &str,
    ) -> Result<Option<(Bytes, Option<String>)>, BackendError> {
        let key = key.to_string();
        self.blocking("get", move |s| {
            Ok(s.get_versioned(&key).map(|(b, v)| (b, Some(v))))
        })
        .await
    }

    async fn delete(&self, key: &str) -> Result<(), BackendError> {
        let key = key.to_string();
        self.blocking("delete", move |s| {
            s.remove(&key);
            Ok(())
        })
        .await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        let prefix = prefix.to_string();
        self.blocking("list", move |s| {
            Ok(s.list(&prefix)?.into_iter().map(|(_, e)| e).collect())
        })
        .await
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<u64, BackendError> {
        let prefix = prefix.to_string();
        self.blocking("delete_prefix", move |s| s.remove_prefix(&prefix))
            .await
    }

    fn usage(&self) -> Usage {
        let (entries, bytes, evictions) = self.store.usage();
        Usage {
            entries,
            bytes,
            evictions,
        }
    }
}

/// The namespace directories of a DISK cache directory, as
/// [`crate::cache::CacheCoordinator::disk`] makes them: compressed payload, discovery records,
/// complete copies of small sources.
pub const NAMESPACES: [&str; 3] = ["payload", "discovery", "sources"];

/// One entry of a namespace directory as [`list_namespace`] reads it from its marker.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listed {
    /// The key (a public URL, a salted fingerprint and a scope; never a query or user info).
    pub key: String,
    /// The blob's size in bytes, as the marker records it.
    pub bytes: u64,
    /// Last use (the later of publication and the last recorded access), milliseconds since
    /// the Unix epoch ([`RECORD_USE_MS`]).
    pub used: u64,
    /// The version token ([`DiskStore::put_versioned`]; empty for most entries).
    pub version: String,
}

/// The entries of the namespace directory `dir` whose markers are well formed (this schema,
/// within [`MAX_MARKER_BYTES`], named by their key's digest), least recently used first.
/// Read-only: no blob is read and nothing is removed ([`verify_namespace`] checks blobs).
///
/// # Errors
/// `dir` cannot be listed.
pub fn list_namespace(dir: &Path) -> std::io::Result<Vec<Listed>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(hash) = name.strip_suffix(".json") else {
            continue;
        };
        if let Some(m) = read_marker(&entry.path()).filter(|m| sha256_hex(m.key.as_bytes()) == hash)
        {
            out.push(Listed {
                used: m.last_use(),
                key: m.key,
                bytes: m.bytes,
                version: m.version,
            });
        }
    }
    crate::sort::sort_by(&mut out, |a, b| (a.used, &a.key).cmp(&(b.used, &b.key)));
    Ok(out)
}

/// What [`verify_namespace`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// Entries checked: markers, and blobs without a marker older than 10 minutes.
    pub checked: u64,
    /// Of those, the bad ones, now removed.
    pub bad: u64,
}

/// Checks every entry of the namespace directory `dir` as a lookup would, blob digests
/// included (streamed, not held in memory): a marker that is malformed, of another schema,
/// above [`MAX_MARKER_BYTES`] or not named by its key's digest, or whose blob is missing,
/// of another size or of another SHA-256, is bad, and both files are removed. A blob without
/// a marker is bad once it is 10 minutes old (a younger one may be another process's
/// publication, whose marker comes next). Other files are left alone. Entries being
/// published meanwhile by another process may be counted either way, never corrupted.
///
/// # Errors
/// `dir` cannot be listed.
pub fn verify_namespace(dir: &Path) -> std::io::Result<Verified> {
    let mut v = Verified::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if let Some(hash) = name.strip_suffix(".json") {
            v.checked += 1;
            let blob = dir.join(format!("{hash}.blob"));
            let good = read_marker(&entry.path())
                .filter(|m| sha256_hex(m.key.as_bytes()) == hash)
                .is_some_and(|m| digest_file(&blob).ok() == Some((m.bytes, m.sha256)));
            if !good {
                v.bad += 1;
                let _ = std::fs::remove_file(entry.path());
                let _ = std::fs::remove_file(blob);
            }
        } else if let Some(hash) = name.strip_suffix(".blob") {
            if !dir.join(format!("{hash}.json")).exists() && is_stale(&entry) {
                v.checked += 1;
                v.bad += 1;
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(v)
}

/// Removes every entry of the namespace directory `dir` (blobs, markers, temporary files);
/// other files and the directory itself stay. Returns how many markers were removed.
///
/// # Errors
/// `dir` cannot be listed, or a file of an entry cannot be removed.
pub fn clear_namespace(dir: &Path) -> std::io::Result<u64> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let ours = name.ends_with(".json") || name.ends_with(".blob") || name.starts_with(".tmp-");
        if ours && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed += u64::from(name.ends_with(".json"));
        }
    }
    Ok(removed)
}

/// The size and SHA-256 (hexadecimal) of the file at `path`, read in 64 KiB pieces.
fn digest_file(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, crate::cache::identity::hex(&h.finalize())))
}

/// How old a temporary file, or a blob without its marker, must be before it is removed as
/// left behind by a process that died (10 minutes: a publication takes far less).
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

/// Whether the directory entry was last modified at least [`STALE_TEMP`] ago (not when its
/// time cannot be read: it may be gone already, or dated in the future).
fn is_stale(entry: &std::fs::DirEntry) -> bool {
    entry.metadata().is_ok_and(|m| is_stale_file(&m))
}

/// Whether a file of metadata `m` was last modified at least [`STALE_TEMP`] ago.
fn is_stale_file(m: &std::fs::Metadata) -> bool {
    m.modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= STALE_TEMP)
}

/// The blob at `blob` if it is what `m` describes: its size, within `max_bytes` (a bounded
/// store never holds a larger entry: such a marker is damage, and reading it would allocate
/// without bound), and its SHA-256.
fn read_checked(blob: &Path, m: &Marker, max_bytes: Option<u64>) -> Option<Bytes> {
    let len = std::fs::metadata(blob).ok()?.len();
    if len != m.bytes || max_bytes.is_some_and(|max| len > max) {
        return None;
    }
    let mut data = Vec::new();
    data.try_reserve_exact(usize::try_from(len).ok()?).ok()?;
    std::fs::File::open(blob)
        .ok()?
        .take(len)
        .read_to_end(&mut data)
        .ok()?;
    m.describes(&data).then(|| Bytes::from(data))
}

fn read_marker(path: &Path) -> Option<Marker> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut text = Vec::new();
    // One byte past the bound tells a marker above it (damage: no marker chunkwise writes is
    // that large) from one that fills it, whatever follows its JSON.
    (&mut f)
        .take(MAX_MARKER_BYTES + 1)
        .read_to_end(&mut text)
        .ok()?;
    let mut m = Marker::parse(&text)?;
    m.touched = f
        .metadata()
        .and_then(|md| md.modified())
        .map_or(0, ms_since_epoch);
    Some(m)
}

/// A short exclusive lock between processes (and between threads and coordinators of one
/// process) sharing a cache directory: `flock(LOCK_EX)` through std's `File::lock` on
/// `<dir>/locks/<sha256 of name>.lock` (directory mode 0700, file mode 0600), released when
/// the value is dropped, so every error path releases it. It serialises the version check and
/// publication of one source's entries, never a download (spec: remote cache design, "A short
/// source-level file lock serializes version checks and publication, not downloads"). Lock
/// files are never removed: removing one that another process holds or waits on would let a
/// third process lock a new file of the same name at the same time.
#[derive(Debug)]
pub struct FileLock {
    file: std::fs::File,
}

impl FileLock {
    /// Takes the lock `name` under the cache directory `dir`, waiting as long as another
    /// holder keeps it.
    ///
    /// # Errors
    /// `dir/locks` cannot be created or is not private ([`private_dir`]), the lock file
    /// cannot be opened, or the lock call fails.
    pub fn acquire(dir: &Path, name: &str) -> std::io::Result<FileLock> {
        let file = Self::open(dir, name)?;
        file.lock()?;
        Ok(FileLock { file })
    }

    /// Takes the lock `name` under `dir`, waiting at most `wait` (polling every few
    /// milliseconds, backing off to 50 ms).
    ///
    /// # Errors
    /// As [`FileLock::acquire`]; [`std::io::ErrorKind::TimedOut`] when another holder keeps
    /// it beyond `wait`.
    pub fn acquire_within(
        dir: &Path,
        name: &str,
        wait: std::time::Duration,
    ) -> std::io::Result<FileLock> {
        let file = Self::open(dir, name)?;
        let start = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(FileLock { file }),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(50));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("cache lock held by another process for over {wait:?}"),
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    fn open(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
        let locks = dir.join("locks");
        private_dir(&locks)?;
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        o.open(locks.join(format!("{}.lock", sha256_hex(name.as_bytes()))))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the file releases the lock as well; unlocking first says so.
        let _ = self.file.unlock();
    }
}

fn write_atomic(dir: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut f = create_private(&tmp)?;
        f.write_all(bytes)?;
        // No fsync: after a crash a renamed file may hold stale or partial bytes, which the
        // marker's size and SHA-256 turn into a miss. A sync per entry cost 13 s for 1,600
        // small chunks here, most of a cold read.
        std::fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new file that only its owner can read or write (mode 0600 on Unix).
fn create_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Creates `dir` (and missing parents) mode 0700, or checks that an existing `dir` is a
/// directory owned by this process's effective user (`geteuid`; root is not exempt) that
/// other users cannot write to (no group or world write bit).
///
/// # Errors
/// Creation fails, `dir` is not a directory, it is owned by another user
/// ([`std::io::ErrorKind::PermissionDenied`], naming both uids), or it is writable by
/// others ([`std::io::ErrorKind::PermissionDenied`], naming the mode).
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not a directory", dir.display()),
        )),
        Ok(m) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::{MetadataExt, PermissionsExt};
                // SAFETY: geteuid has no preconditions and cannot fail.
                let ours = unsafe { libc::geteuid() };
                if m.uid() != ours {
                    // Root is not exempt: a directory another user owns is theirs to fill.
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        format!(
                            "{} is owned by uid {}, not by this process (uid {ours}): its \
                             owner could make it serve entries of their choosing; use a \
                             directory you own",
                            dir.display(),
                            m.uid()
                        ),
                    ));
                }
                let mode = m.permissions().mode() & 0o7777;
                if mode & 0o022 != 0 {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        format!(
                            "{} has mode {mode:04o}: other users can write to it; use a \
                             directory only you can write to (chmod 700)",
                            dir.display()
                        ),
                    ));
                }
            }
            #[cfg(not(unix))]
            let _ = m;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            b.create(dir)
        }
        Err(e) => Err(e),
    }
}

/// The fingerprint salt kept at `path` (64 hexadecimal characters, mode 0600), created at
/// random when missing or unreadable. A new salt makes existing entries unreachable (they
/// are misses, later evicted), never wrong. A missing salt is published without replacing
/// one that another process wrote meanwhile (a complete temporary file hard-linked into
/// place, which fails when `path` exists), so processes starting together on a new cache
/// directory agree on one salt; where hard links are not supported it is renamed into place.
///
/// # Errors
/// A new salt cannot be written.
pub fn salt(path: &Path) -> std::io::Result<crate::cache::identity::Salt> {
    use crate::cache::identity::Salt;
    let read = || {
        let mut text = String::new();
        let f = std::fs::File::open(path).ok()?;
        f.take(256).read_to_string(&mut text).ok()?;
        Salt::from_hex(&text)
    };
    if let Some(s) = read() {
        return Ok(s);
    }
    use std::io::Write;
    let s = Salt::random();
    let dir = path.parent().unwrap_or(Path::new("."));
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    let linked = create_private(&tmp)
        .and_then(|mut f| f.write_all(s.to_hex().as_bytes()))
        .and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => return Ok(s),
        // Another opener's salt, published since the first look: use it. Only a salt that
        // cannot be read is replaced.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if let Some(theirs) = read() {
                return Ok(theirs);
            }
        }
        Err(_) => {}
    }
    write_atomic(dir, path, s.to_hex().as_bytes())?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::backend::marker::now_ms;
    use std::time::Duration;

    fn files(dir: &Path, key: &str) -> (PathBuf, PathBuf) {
        let h = sha256_hex(key.as_bytes());
        (dir.join(format!("{h}.blob")), dir.join(format!("{h}.json")))
    }

    #[test]
    fn round_trip_and_each_damage_is_a_miss() {
        let tmp = tempfile::tempdir().unwrap();
        let s = DiskStore::open(tmp.path().to_path_buf(), None).unwrap();
        let (blob, marker) = files(tmp.path(), "k");
        let fresh = |s: &DiskStore| s.put("k", b"hello world").unwrap();

        fresh(&s);
        assert_eq!(&s.get("k").unwrap()[..], b"hello world");
        assert!(s.get("other").is_none());

        // corrupted blob (same size)
        std::fs::write(&blob, b"hello WORLD").unwrap();
        assert!(s.get("k").is_none());
        assert!(!blob.exists() && !marker.exists(), "a bad entry is dropped");

        // truncated blob
        fresh(&s);
        std::fs::write(&blob, b"hello").unwrap();
        assert!(s.get("k").is_none());

        // missing marker (the blob is fresh: it may be a publication in progress, and stays)
        fresh(&s);
        std::fs::remove_file(&marker).unwrap();
        assert!(s.get("k").is_none());
        assert!(blob.exists());

        // corrupted marker
        fresh(&s);
        std::fs::write(&marker, b"{not json").unwrap();
        assert!(s.get("k").is_none());

        // marker of another schema version
        fresh(&s);
        let text = std::fs::read_to_string(&marker).unwrap();
        std::fs::write(
            &marker,
            text.replace(&format!("\"schema\":{SCHEMA_VERSION}"), "\"schema\":1"),
        )
        .unwrap();
        assert!(s.get("k").is_none());

        fresh(&s);
        assert_eq!(&s.get("k").unwrap()[..], b"hello world");
        s.remove("k");
        assert!(s.get("k").is_none());
    }

    #[test]
    fn bounded_store_evicts_least_recently_used_and_survives_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let s = DiskStore::open(tmp.path().to_path_buf(), Some(100)).unwrap();
        s.put("a", &[1; 40]).unwrap();
        s.put("b", &[2; 40]).unwrap();
        assert!(s.get("a").is_some()); // a most recent
        s.put("c", &[3; 40]).unwrap(); // 120 > 100: b goes
        assert!(s.get("b").is_none());
        assert!(s.get("a").is_some() && s.get("c").is_some());
        assert_eq!(s.usage(), (2, 80, 1));
        s.put("big", &[0; 101]).unwrap();
        assert!(s.get("big").is_none());
        drop(s);
        let s = DiskStore::open(tmp.path().to_path_buf(), Some(100)).unwrap();
        assert_eq!(s.usage().1, 80);
        assert_eq!(&s.get("c").unwrap()[..], &[3; 40]);
    }

    /// Every kind of damage to an entry of the filesystem backend is a miss, the pair is
    /// removed from disk, and the wrong bytes never come back; a new put is then trusted.
    #[tokio::test(flavor = "current_thread")]
    async fn marker_and_blob_damage_matrix() {
        type Damage = fn(&Path, &Path);
        let cases: [(&str, Damage); 9] = [
            ("truncated blob", |blob, _| {
                std::fs::write(blob, b"hello wo").unwrap()
            }),
            ("blob of the same size, other bytes", |blob, _| {
                std::fs::write(blob, b"hello WORLD").unwrap()
            }),
            ("digest in the marker wrong", |_, marker| {
                let text = std::fs::read_to_string(marker).unwrap();
                let d = sha256_hex(b"hello world");
                std::fs::write(marker, text.replace(&d, &sha256_hex(b"hello WORLD"))).unwrap()
            }),
            (
                "missing marker (a blob left behind an hour ago)",
                |blob, marker| {
                    std::fs::remove_file(marker).unwrap();
                    std::fs::File::options()
                        .write(true)
                        .open(blob)
                        .unwrap()
                        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
                        .unwrap();
                },
            ),
            ("marker without blob", |blob, _| {
                std::fs::remove_file(blob).unwrap()
            }),
            ("marker of another schema", |_, marker| {
                let text = std::fs::read_to_string(marker).unwrap();
                let old = format!("\"schema\":{SCHEMA_VERSION}");
                assert!(text.contains(&old));
                std::fs::write(marker, text.replace(&old, "\"schema\":2")).unwrap()
            }),
            ("marker larger than MAX_MARKER_BYTES", |_, marker| {
                // A valid marker followed by whitespace: still JSON, but no marker chunkwise
                // writes is that large.
                let mut text = std::fs::read(marker).unwrap();
                text.resize(MAX_MARKER_BYTES as usize + 1, b' ');
                std::fs::write(marker, text).unwrap()
            }),
            ("marker naming another key", |_, marker| {
                let text = std::fs::read_to_string(marker).unwrap();
                assert!(text.contains("\"key\":\"k\""));
                std::fs::write(marker, text.replace("\"key\":\"k\"", "\"key\":\"j\"")).unwrap()
            }),
            ("unparsable marker", |_, marker| {
                std::fs::write(marker, b"{\"schema\":3,").unwrap()
            }),
        ];
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ns");
        let b = FsBackend::open(dir.clone(), Budget::bytes(1 << 20)).unwrap();
        let (blob, marker) = files(&dir, "k");
        for (name, damage) in cases {
            b.put("k", Bytes::from_static(b"hello world"))
                .await
                .unwrap();
            assert_eq!(
                b.get("k").await.unwrap().as_deref(),
                Some(&b"hello world"[..]),
                "{name}: the fresh entry"
            );
            damage(&blob, &marker);
            assert_eq!(b.get("k").await.unwrap(), None, "{name}: a miss");
            assert!(
                !blob.exists() && !marker.exists(),
                "{name}: the pair is removed"
            );
            assert_eq!(b.get("k").await.unwrap(), None, "{name}: still a miss");
            assert_eq!(b.usage().entries, 0, "{name}: not counted");
        }
        // A fresh blob without its marker is another process's publication in progress
        // (its marker is renamed into place next): a miss, and the blob is left to it.
        b.put("k", Bytes::from_static(b"hello world"))
            .await
            .unwrap();
        let published = std::fs::read(&marker).unwrap();
        std::fs::remove_file(&marker).unwrap();
        assert_eq!(b.get("k").await.unwrap(), None, "no marker yet: a miss");
        assert!(blob.exists(), "the blob being published is kept");
        std::fs::write(&marker, published).unwrap();
        assert_eq!(
            b.get("k").await.unwrap().as_deref(),
            Some(&b"hello world"[..]),
            "published"
        );
        b.put("k", Bytes::from_static(b"hello world"))
            .await
            .unwrap();
        assert_eq!(
            b.get("k").await.unwrap().as_deref(),
            Some(&b"hello world"[..])
        );
    }

    /// The lock excludes a second holder (another open file, as another process has) until
    /// the first is dropped, a bounded wait gives up with `TimedOut`, and the lock file is
    /// private and named by the name's digest.
    #[test]
    fn file_lock_excludes_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let held = FileLock::acquire(dir, "http://h/a.h5\nfp").unwrap();
        let e = FileLock::acquire_within(dir, "http://h/a.h5\nfp", Duration::from_millis(30))
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        let other = FileLock::acquire_within(dir, "other", Duration::ZERO).unwrap();
        drop(other);
        let (tx, rx) = std::sync::mpsc::channel();
        let d = dir.to_path_buf();
        let waiter = std::thread::spawn(move || {
            let l = FileLock::acquire(&d, "http://h/a.h5\nfp").unwrap();
            tx.send(()).unwrap();
            drop(l);
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "the waiter waits while the lock is held"
        );
        drop(held);
        rx.recv_timeout(Duration::from_secs(10))
            .expect("the waiter gets the lock once it is dropped");
        waiter.join().unwrap();
        let lock = dir
            .join("locks")
            .join(format!("{}.lock", sha256_hex(b"http://h/a.h5\nfp")));
        assert!(lock.exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!((mode(&dir.join("locks")), mode(&lock)), (0o700, 0o600));
        }
    }

    /// Opening a directory that another process is writing to leaves that process's
    /// temporary files alone (its rename would fail); one left behind long ago is removed.
    #[test]
    fn open_removes_only_stale_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        drop(DiskStore::open(dir.clone(), None).unwrap());
        let fresh = dir.join(".tmp-4242-0");
        let stale = dir.join(".tmp-4242-1");
        std::fs::write(&fresh, b"being written").unwrap();
        std::fs::write(&stale, b"left behind").unwrap();
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&stale)
            .unwrap()
            .set_modified(old)
            .unwrap();
        drop(DiskStore::open(dir.clone(), None).unwrap());
        assert!(fresh.exists(), "another writer's temporary file is kept");
        assert!(!stale.exists(), "a temporary file an hour old is removed");
    }

    /// Listing reads markers only and changes nothing; verifying finds each damaged entry
    /// (here a flipped blob byte and a marker under another entry's name) and removes it;
    /// clearing removes entries only.
    #[test]
    fn list_verify_and_clear_a_namespace() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let s = DiskStore::open(dir.clone(), None).unwrap();
        for k in ["a", "b", "c"] {
            s.put_versioned(k, k.repeat(100).as_bytes(), "v1").unwrap();
        }
        let listed = list_namespace(&dir).unwrap();
        let keys: Vec<&str> = listed.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(listed.len(), 3, "{keys:?}");
        assert!(listed.iter().all(|l| l.bytes == 100 && l.version == "v1"));
        assert_eq!(
            verify_namespace(&dir).unwrap(),
            Verified { checked: 3, bad: 0 }
        );
        let (blob_a, marker_a) = files(&dir, "a");
        let mut data = std::fs::read(&blob_a).unwrap();
        data[50] ^= 1;
        std::fs::write(&blob_a, data).unwrap();
        let (_, marker_b) = files(&dir, "b");
        let (_, marker_c) = files(&dir, "c");
        std::fs::copy(&marker_c, &marker_b).unwrap(); // b's marker names key c
        assert_eq!(
            list_namespace(&dir).unwrap().len(),
            2,
            "b's marker is not b's"
        );
        assert!(blob_a.exists(), "listing removes nothing");
        std::fs::write(dir.join("notes.txt"), b"not ours").unwrap();
        // Blobs without markers: one being published (its marker comes next), one left
        // behind an hour ago.
        let (fresh, _) = files(&dir, "fresh");
        let (old, _) = files(&dir, "old");
        std::fs::write(&fresh, b"f").unwrap();
        std::fs::write(&old, b"o").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        assert_eq!(
            verify_namespace(&dir).unwrap(),
            Verified { checked: 4, bad: 3 }
        );
        assert!(!blob_a.exists() && !marker_a.exists() && !marker_b.exists());
        assert!(fresh.exists() && !old.exists());
        std::fs::remove_file(&fresh).unwrap();
        assert_eq!(&s.get("c").unwrap()[..], "c".repeat(100).as_bytes());
        assert_eq!(clear_namespace(&dir).unwrap(), 1);
        assert!(s.get("c").is_none());
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
    }

    /// Two openers creating a directory's salt at the same moment (two processes starting on
    /// a new cache directory) end up with one salt: a salt already written is never replaced
    /// by another, which would make the first opener's entries unreachable.
    #[test]
    fn concurrent_openers_agree_on_one_salt() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..50 {
            let path = tmp.path().join(format!("salt{i}"));
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
            let takers: Vec<_> = (0..2)
                .map(|_| {
                    let (path, barrier) = (path.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        salt(&path).unwrap()
                    })
                })
                .collect();
            let got: Vec<_> = takers.into_iter().map(|t| t.join().unwrap()).collect();
            assert_eq!(got[0], got[1], "attempt {i}: two salts");
            assert_eq!(salt(&path).unwrap(), got[0], "attempt {i}: the salt kept");
        }
    }

    /// Makes `key`'s entry look published and last used at `ms` (ms since the Unix epoch):
    /// its marker's `used` and modification time.
    fn set_last_use(dir: &Path, key: &str, ms: u64) {
        let (_, marker) = files(dir, key);
        let mut m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&marker).unwrap()).unwrap();
        m["used"] = ms.into();
        std::fs::write(&marker, serde_json::to_vec(&m).unwrap()).unwrap();
        set_mtime(&marker, ms);
    }

    fn set_mtime(path: &Path, ms: u64) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + Duration::from_millis(ms))
            .unwrap();
    }

    fn mtime_ms(path: &Path) -> u64 {
        ms_since_epoch(std::fs::metadata(path).unwrap().modified().unwrap())
    }

    /// The least recently used order survives a reopen: it comes from the recorded access
    /// times, so an entry read after the others were written is not the first to go.
    #[test]
    fn lru_order_survives_a_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let s = DiskStore::open_bounded(dir.clone(), None, 3).unwrap();
        for k in ["A", "B", "C"] {
            s.put(k, k.as_bytes()).unwrap();
        }
        // Written ten, nine and eight minutes ago; A is then read now.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        for (i, k) in ["A", "B", "C"].iter().enumerate() {
            set_last_use(&dir, k, now - (10 - i as u64) * 60_000);
        }
        assert_eq!(&s.get("A").unwrap()[..], b"A");
        drop(s);
        let s = DiskStore::open_bounded(dir.clone(), None, 3).unwrap();
        s.put("D", b"D").unwrap();
        assert!(
            s.get("B").is_none(),
            "B, the least recently used, is evicted"
        );
        assert_eq!(&s.get("A").unwrap()[..], b"A", "A was read after B and C");
        assert_eq!(&s.get("C").unwrap()[..], b"C");
        assert_eq!(&s.get("D").unwrap()[..], b"D");
    }

    /// A hit records its time (the marker's modification time; its content never changes)
    /// only when the recorded last use is a minute or more away, and the version token given
    /// at publication comes back.
    #[test]
    fn hits_record_their_time_at_most_once_a_minute() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let s = DiskStore::open(dir.clone(), None).unwrap();
        s.put_versioned("k", b"bytes", "\"etag-1\"").unwrap();
        let (_, marker) = files(&dir, "k");
        let before = std::fs::read(&marker).unwrap();
        let m: serde_json::Value = serde_json::from_slice(&before).unwrap();
        assert_eq!(m["schema"], SCHEMA_VERSION);
        assert_eq!(m["version"], "\"etag-1\"");
        let put_at = m["used"].as_u64().unwrap();
        assert!(put_at.abs_diff(now_ms()) < 10_000, "{put_at}");
        // Published 30 s ago, by both records: a hit records nothing.
        set_mtime(&marker, put_at - 30_000);
        let (b, v) = s.get_versioned("k").unwrap();
        assert_eq!((&b[..], v.as_str()), (&b"bytes"[..], "\"etag-1\""));
        assert_eq!(
            mtime_ms(&marker),
            put_at - 30_000,
            "used 30 s ago: no record"
        );
        // Last used two minutes ago: the hit records now.
        set_last_use(&dir, "k", put_at - 2 * RECORD_USE_MS);
        let text = std::fs::read(&marker).unwrap();
        assert_eq!(&s.get("k").unwrap()[..], b"bytes");
        assert!(mtime_ms(&marker).abs_diff(now_ms()) < 10_000, "recorded");
        assert_eq!(
            std::fs::read(&marker).unwrap(),
            text,
            "the marker is not rewritten"
        );
        assert_eq!(
            list_namespace(&dir).unwrap()[0].used,
            mtime_ms(&marker),
            "the last use is listed"
        );
        // A time far in the future (a clock set back since) is corrected.
        set_mtime(&marker, now_ms() + 3_600_000);
        assert!(s.get("k").is_some());
        assert!(mtime_ms(&marker) <= now_ms());
        s.put("plain", b"p").unwrap();
        assert_eq!(s.get_versioned("plain").unwrap().1, "");
    }

    #[cfg(unix)]
    #[test]
    fn files_are_private_and_shared_directories_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("new/payload");
        let s = DiskStore::open(dir.clone(), None).unwrap();
        s.put("k", b"bytes").unwrap();
        let (blob, marker) = files(&dir, "k");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&tmp.path().join("new")), 0o700);
        assert_eq!((mode(&blob), mode(&marker)), (0o600, 0o600));
        let salt_path = tmp.path().join("new/salt");
        let a = salt(&salt_path).unwrap();
        assert_eq!(mode(&salt_path), 0o600);
        assert_eq!(salt(&salt_path).unwrap(), a, "the salt is kept");

        for m in [0o777, 0o770, 0o722] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(m)).unwrap();
            let e = DiskStore::open(dir.clone(), None).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
            assert!(e.to_string().contains(&format!("{m:04o}")), "{e}");
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            DiskStore::open(dir.clone(), None).is_ok(),
            "readable by others is allowed"
        );
    }

    /// A directory owned by another user is refused, even for root, both as the cache
    /// directory and as a namespace directory (mode 0700 does not help: its owner can
    /// write to it). Making one needs `chown`, which only root may do; elsewhere the test
    /// says so and checks nothing more.
    #[cfg(unix)]
    #[test]
    fn directories_owned_by_another_user_are_refused() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let ours = std::fs::metadata(tmp.path()).unwrap().uid();
        let other = if ours == 65534 { 65533 } else { 65534 };
        let top = tmp.path().join("cache");
        crate::cache::CacheCoordinator::disk(&top, None).unwrap();
        let ns = top.join("payload");
        match std::os::unix::fs::chown(&ns, Some(other), None) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                eprintln!("SKIPPED: chown needs root ({e}); ownership refusal not exercised");
                return;
            }
            r => r.unwrap(),
        }
        let e = DiskStore::open(ns.clone(), None).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        let msg = e.to_string();
        assert!(msg.contains(&ns.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("uid {other}")), "{msg}");
        assert!(msg.contains(&format!("uid {ours}")), "{msg}");
        let e = crate::cache::CacheCoordinator::disk(&top, None).unwrap_err();
        assert!(matches!(e, crate::Error::InvalidArgument(_)), "{e:?}");
        assert!(e.to_string().contains(&format!("uid {other}")), "{e}");

        std::os::unix::fs::chown(&ns, Some(ours), None).unwrap();
        crate::cache::CacheCoordinator::disk(&top, None).unwrap();
        std::os::unix::fs::chown(&top, Some(other), None).unwrap();
        let e = crate::cache::CacheCoordinator::disk(&top, None).unwrap_err();
        assert!(matches!(e, crate::Error::InvalidArgument(_)), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&top.display().to_string()), "{msg}");
        assert!(msg.contains(&format!("uid {other}")), "{msg}");
        std::os::unix::fs::chown(&top, Some(ours), None).unwrap();
    }

    #[test]
    fn old_schema_entries_are_dropped_at_open_and_prefixes_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let s = DiskStore::open(dir.clone(), None).unwrap();
        s.put("https://h/a?token=x\n1", b"old").unwrap();
        s.put("src\nA\n1", b"a1").unwrap();
        s.put("src\nA\n2", b"a2").unwrap();
        s.put("src\nB\n1", b"b1").unwrap();
        let (blob, marker) = files(&dir, "https://h/a?token=x\n1");
        let text = std::fs::read_to_string(&marker).unwrap();
        std::fs::write(
            &marker,
            text.replace(&format!("\"schema\":{SCHEMA_VERSION}"), "\"schema\":1"),
        )
        .unwrap();
        // A schema-2 marker, as chunkwise wrote them before `version` and `used`.
        s.put("v2", b"two").unwrap();
        let (blob2, marker2) = files(&dir, "v2");
        std::fs::write(
            &marker2,
            format!(
                "{{\"schema\":2,\"key\":\"v2\",\"bytes\":3,\"sha256\":\"{}\"}}",
                sha256_hex(b"two")
            ),
        )
        .unwrap();
        drop(s);
        let s = DiskStore::open(dir.clone(), None).unwrap();
        assert!(
            !marker.exists() && !blob.exists(),
            "a schema-1 marker is removed at open"
        );
        assert!(
            !marker2.exists() && !blob2.exists(),
            "a schema-2 marker is removed at open"
        );
        assert_eq!(s.remove_prefix("src\nA\n").unwrap(), 2);
        assert!(s.get("src\nA\n1").is_none() && s.get("src\nA\n2").is_none());
        assert_eq!(&s.get("src\nB\n1").unwrap()[..], b"b1");
    }

    /// Every file under `root`, recursively.
    fn all_files(root: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(root).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(all_files(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    #[tokio::test(flavor = "current_thread")]
    async fn passes_the_conformance_suite() {
        use crate::cache::backend::conformance::{check_backend, BUDGET};
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ns");
        let b = FsBackend::open(dir.clone(), BUDGET).unwrap();
        let flip = |key: &str| {
            let (blob, _) = files(&dir, key);
            let mut data = std::fs::read(&blob).unwrap();
            let mid = data.len() / 2;
            data[mid] ^= 0x01;
            std::fs::write(&blob, data).unwrap();
        };
        check_backend(&b, BUDGET, Some(&flip)).await;
        // Odd keys (parent-directory names, slashes, 2 KiB) never named a file outside the
        // namespace directory, and nothing is left behind.
        assert!(
            all_files(tmp.path()).is_empty(),
            "{:?}",
            all_files(tmp.path())
        );
        b.put("../../x/y", Bytes::from_static(b"z")).await.unwrap();
        let files = all_files(tmp.path());
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files.iter().all(|f| f.parent() == Some(dir.as_path())));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn passes_the_conformance_suite_on_a_multi_thread_runtime() {
        use crate::cache::backend::conformance::{check_backend, BUDGET};
        let tmp = tempfile::tempdir().unwrap();
        let b = FsBackend::open(tmp.path().join("ns"), BUDGET).unwrap();
        check_backend(&b, BUDGET, None).await;
    }

    /// The file work of a put (hashing and writing 32 MiB) does not run on the executor's
    /// thread: on a current-thread runtime another task runs while the put is under way.
    #[tokio::test(flavor = "current_thread")]
    async fn file_work_runs_off_the_executor() {
        let tmp = tempfile::tempdir().unwrap();
        let b = FsBackend::open(tmp.path().join("ns"), Budget::bytes(u64::MAX)).unwrap();
        let big = crate::cache::backend::conformance::blob(9, 32 << 20);
        let put_done = std::sync::Mutex::new(None);
        let other_ran = std::sync::Mutex::new(None);
        let put = async {
            b.put("big", big.clone()).await.unwrap();
            *put_done.lock().unwrap() = Some(std::time::Instant::now());
        };
        let other = async {
            *other_ran.lock().unwrap() = Some(std::time::Instant::now());
        };
        // `join!` polls `put` first: work done inside that poll would finish before `other`.
        tokio::join!(put, other);
        let (p, o) = (
            put_done.into_inner().unwrap(),
            other_ran.into_inner().unwrap(),
        );
        assert!(
            o.unwrap() < p.unwrap(),
            "the other task waited for the put's file work"
        );
        assert_eq!(b.get("big").await.unwrap(), Some(big));
    }

    /// Outside any tokio runtime the work runs inline rather than panicking.
    #[test]
    fn works_without_a_tokio_runtime() {
        let tmp = tempfile::tempdir().unwrap();
        let b = FsBackend::open(tmp.path().join("ns"), Budget::bytes(1 << 20)).unwrap();
        futures::executor::block_on(async {
            b.put("k", Bytes::from_static(b"v")).await.unwrap();
            assert_eq!(b.get("k").await.unwrap().as_deref(), Some(&b"v"[..]));
        });
    }
}
