//! The cache coordinator: one owner of the three cache layers, shared by every array and
//! store opened with it (spec: remote cache design, "Identity and ownership", "Policies").
//!
//! | layer | MEMORY | DISK (native) | NONE |
//! |---|---|---|---|
//! | discovery records | memory | `discovery/` + memory | memory |
//! | compressed payload (LRU, `max_cache_bytes`) | memory | `payload/` | not retained |
//! | complete copies of small sources | memory | `sources/` + memory | memory |
//!
//! Every layer keeps its blobs in a [`CacheBackend`] ([`super::backend`]): the memory
//! backend, or under DISK the filesystem backend, whose file work runs off the async
//! executor. A backend's failure is never a failed read: on a lookup it is a miss, on a store
//! it is counted ([`CoordinatorStats::cache_errors`]).
//!
//! Discovery records and source copies do not count against `max_cache_bytes` (spec:
//! "Source copies do not count against max_cache_bytes") but have bounds of their own
//! ([`MAX_MEMORY_RECORD_BYTES`], [`MAX_MEMORY_SOURCE_BYTES`], [`MAX_DISK_RECORD_BYTES`],
//! [`MAX_DISK_SOURCE_BYTES`]; every map also at most
//! [`super::backend::DEFAULT_MAX_ENTRIES`] entries). Under NONE discovery state and
//! small-source copies are still kept for the coordinator's lifetime (spec: "NONE does not
//! mean that readers discard all discovery state"). On disk every blob has a SHA-256 marker
//! ([`super::backend::fs`]); a bad entry is a miss.

use super::backend::{Budget, CacheBackend, KeyValueStore, MarkedBackend, MemoryBackend};
use super::discovery::{self, DiscoveryRecord, NodesRecord, SourceIdentity, SourceRecord};
use super::identity::Salt;
use super::{
    ByteLru, CacheKey, CachePolicy, CacheStats, PayloadCache, SourceKey, DEFAULT_MAX_CACHE_BYTES,
};
use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Counters of a [`CacheCoordinator`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoordinatorStats {
    /// The payload layer (for DISK: entries and bytes on disk, hits and misses).
    pub payload: CacheStats,
    /// Discovery records found.
    pub discovery_hits: u64,
    /// Discovery records looked up and not found.
    pub discovery_misses: u64,
    /// Complete source copies found.
    pub source_hits: u64,
    /// Chunks decoded by their format's own pipeline (HDF5 filters and the like); a chunk
    /// served from a converted Blosc2 payload does not count.
    pub format_decodes: u64,
    /// Chunks served from a converted Blosc2 payload.
    pub converted_hits: u64,
    /// Backend failures ([`super::backend::BackendError`]): lookups answered as misses and
    /// entries not kept.
    pub cache_errors: u64,
}

#[derive(Default)]
struct Counters {
    discovery_hits: AtomicU64,
    discovery_misses: AtomicU64,
    source_hits: AtomicU64,
    format_decodes: AtomicU64,
    converted_hits: AtomicU64,
    payload_hits: AtomicU64,
    payload_misses: AtomicU64,
    cache_errors: AtomicU64,
}

/// The persistent backends of discovery records and source copies (DISK).
struct Persist {
    discovery: Arc<dyn CacheBackend>,
    sources: Arc<dyn CacheBackend>,
    /// Short per-source locks held while publishing (Web Locks in JS hosts), if the host
    /// has them.
    locks: Option<Arc<dyn PublicationLocks>>,
}

/// A held publication lock; dropping it releases the lock (on every path, errors included).
pub trait PublicationGuard: crate::io::MaybeSend {}

/// Short exclusive locks named per source, held by a writer for the version check and
/// publication of a source's discovery records and complete copy, never during a download
/// (spec: remote cache design, "A short source-level file lock serializes version checks
/// and publication, not downloads"). In browsers and workers: Web Locks
/// (`navigator.locks`), shared by every page and worker of the origin.
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
pub trait PublicationLocks: crate::io::MaybeSend + crate::io::MaybeSync {
    /// Waits (boundedly) for the lock `name`: `Ok(None)` when this host has no locks
    /// (publication then goes ahead unlocked: markers still keep every reader from a wrong
    /// byte), `Err` when the lock was not had in time (what would be published stays in
    /// memory only).
    async fn acquire(&self, name: &str) -> Result<Option<Box<dyn PublicationGuard>>, ()>;
}

struct Inner {
    policy: CachePolicy,
    salt: Salt,
    /// Under DISK, the MEMORY coordinator that sources which may not be persisted use
    /// ([`SourceKey::persist`]), made on first use.
    volatile: OnceLock<CacheCoordinator>,
    max_cache_bytes: Option<u64>,
    /// The in-memory payload (bound 0 under DISK and NONE).
    memory: PayloadCache,
    /// Where payload goes: `memory`, or under DISK the `payload/` directory.
    payload: Arc<dyn CacheBackend>,
    /// Under DISK, the `discovery/` and `sources/` directories.
    persist: Option<Persist>,
    /// Discovery records in memory (under DISK, a front of `discovery/`), bounded by
    /// [`MAX_MEMORY_RECORD_BYTES`].
    discovery: ByteLru<String>,
    /// Complete copies of small sources in memory, bounded by [`MAX_MEMORY_SOURCE_BYTES`].
    sources: ByteLru<String>,
    counters: Counters,
    /// Held by [`CacheCoordinator::update_record`] from its read to its write, so two updates
    /// through this coordinator (one process, one wasm instance) never interleave.
    updates: futures::lock::Mutex<()>,
    /// Under DISK natively, the cache directory, where publication locks live
    /// ([`CacheCoordinator::publication_lock`]).
    #[cfg(not(target_arch = "wasm32"))]
    lock_dir: OnceLock<std::path::PathBuf>,
}

/// Entries and blob bytes of one cache layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LayerUsage {
    /// Entries.
    pub entries: u64,
    /// Blob bytes.
    pub bytes: u64,
}

/// Payload held for one source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceUsage {
    /// The source's public URL (no query, no user info).
    pub source: String,
    /// Payload entries (chunks, blocks).
    pub entries: u64,
    /// Payload bytes.
    pub bytes: u64,
}

/// What a coordinator's layers hold ([`CacheCoordinator::usage_report`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UsageReport {
    /// Compressed payload (the layer `maxCacheBytes` bounds).
    pub payload: LayerUsage,
    /// Discovery records.
    pub discovery: LayerUsage,
    /// Complete copies of small sources.
    pub sources: LayerUsage,
    /// Payload per source, by URL.
    pub per_source: Vec<SourceUsage>,
}

/// The salt kept in `store` under `salt` (64 hexadecimal characters), created at random
/// under the lock `salt` when missing or malformed. The flag says the store failed (the salt
/// returned is then this coordinator's own, and its entries are not found again).
async fn store_salt(
    store: &dyn KeyValueStore,
    locks: Option<&dyn PublicationLocks>,
) -> (Salt, bool) {
    let read = |b: Option<Bytes>| b.and_then(|b| Salt::from_hex(std::str::from_utf8(&b).ok()?));
    match store.get("salt").await {
        Ok(found) => {
            if let Some(s) = read(found) {
                return (s, false);
            }
        }
        Err(_) => return (Salt::random(), true),
    }
    // Two pages creating the salt at once would each key entries the other cannot find:
    // the lock makes the second find the first one's.
    let _guard = match locks {
        Some(l) => l.acquire("salt").await.ok().flatten(),
        None => None,
    };
    if let Ok(Some(s)) = store.get("salt").await.map(read) {
        return (s, false);
    }
    let s = Salt::random();
    if store
        .put("salt", Bytes::from(s.to_hex().into_bytes()))
        .await
        .is_err()
    {
        return (s, true);
    }
    // Without locks (Node, workerd), processes starting at once each write a salt and the
    // last write wins: read back what won, so that they agree on it.
    match store.get("salt").await.map(read) {
        Ok(Some(stored)) => (stored, false),
        _ => (s, false),
    }
}

/// Most bytes of discovery records kept in memory (least recently used go first; under DISK
/// they stay on disk). A record is a few KiB (an HDF5 chunk map of 10,000 chunks about
/// 1 MiB), so this holds hundreds of datasets.
pub const MAX_MEMORY_RECORD_BYTES: u64 = 64 << 20;

/// Most bytes of complete small-source copies kept in memory (least recently used go first;
/// an array already open keeps its own copy). Not counted against `max_cache_bytes` (spec:
/// "Source copies do not count against max_cache_bytes"), but bounded, so a long session
/// opening many small files does not grow without end: sixteen 8 MiB files.
pub const MAX_MEMORY_SOURCE_BYTES: u64 = 128 << 20;

/// Most bytes of discovery records kept under DISK in `discovery/` (least recently used go
/// first; a record dropped is rediscovered, never wrong).
pub const MAX_DISK_RECORD_BYTES: u64 = 256 << 20;

/// Most bytes of small-source copies kept under DISK in `sources/`: 128 copies of 8 MiB
/// (least recently used go first). The spec leaves the aggregate unbounded; a bound keeps a
/// long-lived cache directory from growing without end, and a copy dropped is fetched again.
pub const MAX_DISK_SOURCE_BYTES: u64 = 1 << 30;

/// Longest wait for a source's publication lock ([`CacheCoordinator::publication_lock`]):
/// 10 s. A publication holds it for the writes of one small source (up to 8 MiB) or one
/// record; a holder that long is stuck, and the cache is an optimisation.
pub const PUBLICATION_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A held publication lock of one source ([`CacheCoordinator::publication_lock`]), released
/// when dropped.
pub struct LockGuard {
    #[cfg(not(target_arch = "wasm32"))]
    _lock: Option<super::backend::fs::FileLock>,
    /// A lock of the coordinator's [`PublicationLocks`] (Web Locks in JS hosts).
    _held: Option<Box<dyn PublicationGuard>>,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockGuard")
    }
}

/// The source part of a record key (`url\nfingerprint`, [`SourceKey::source_id`]) of keys
/// made by [`SourceKey::scoped`] and `{source_id}\n#source`; a key of another shape is its own
/// source.
fn source_of(key: &str) -> &str {
    match key.match_indices('\n').nth(1) {
        Some((i, _)) => &key[..i],
        None => key,
    }
}

/// Owner of discovery records, compressed payload and small-source copies, shared by the
/// arrays and stores opened with it. Cloning shares it.
#[derive(Clone)]
pub struct CacheCoordinator {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for CacheCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheCoordinator")
            .field("policy", &self.inner.policy)
            .field("max_cache_bytes", &self.inner.max_cache_bytes)
            .finish()
    }
}

impl CacheCoordinator {
    fn build(
        policy: CachePolicy,
        max_cache_bytes: Option<u64>,
        salt: Salt,
        disk: Option<(Arc<dyn CacheBackend>, Persist)>,
    ) -> CacheCoordinator {
        let bound = match policy {
            CachePolicy::Memory => max_cache_bytes.unwrap_or(u64::MAX),
            CachePolicy::Disk | CachePolicy::None => 0,
        };
        let memory = MemoryBackend::new(Budget::bytes(bound));
        let (payload, persist) = match disk {
            Some((p, d)) => (p, Some(d)),
            None => (Arc::new(memory.clone()) as Arc<dyn CacheBackend>, None),
        };
        CacheCoordinator {
            inner: Arc::new(Inner {
                policy,
                salt,
                volatile: OnceLock::new(),
                max_cache_bytes,
                memory,
                payload,
                persist,
                discovery: ByteLru::whole_objects(MAX_MEMORY_RECORD_BYTES),
                sources: ByteLru::whole_objects(MAX_MEMORY_SOURCE_BYTES),
                counters: Counters::default(),
                updates: futures::lock::Mutex::new(()),
                #[cfg(not(target_arch = "wasm32"))]
                lock_dir: OnceLock::new(),
            }),
        }
    }

    /// A MEMORY coordinator retaining at most `max_cache_bytes` of compressed payload.
    pub fn memory(max_cache_bytes: u64) -> CacheCoordinator {
        Self::build(
            CachePolicy::Memory,
            Some(max_cache_bytes),
            Salt::random(),
            None,
        )
    }

    /// A NONE coordinator: no payload retained between operations.
    pub fn none() -> CacheCoordinator {
        Self::build(CachePolicy::None, Some(0), Salt::random(), None)
    }

    /// A coordinator of `policy` without a cache directory: MEMORY or NONE.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for DISK, which needs a directory
    /// ([`CacheCoordinator::disk`]; not available in wasm builds).
    pub fn new(policy: CachePolicy, max_cache_bytes: u64) -> crate::Result<CacheCoordinator> {
        match policy {
            CachePolicy::Memory => Ok(Self::memory(max_cache_bytes)),
            CachePolicy::None => Ok(Self::none()),
            CachePolicy::Disk => Err(crate::Error::InvalidArgument(
                if cfg!(target_arch = "wasm32") {
                    "cache \"disk\" is not available in this build (browsers and workers: use \"memory\")".into()
                } else {
                    "cache \"disk\" needs a cache directory".into()
                },
            )),
        }
    }

    /// A DISK coordinator on `dir` (created if needed, mode 0700): payload under
    /// `dir/payload/` (least recently used entries removed beyond `max_cache_bytes`; `None`
    /// has no byte bound), discovery records under `dir/discovery/` (at most
    /// [`MAX_DISK_RECORD_BYTES`]), small-source copies under `dir/sources/` (at most
    /// [`MAX_DISK_SOURCE_BYTES`]), each directory at most
    /// [`super::backend::DEFAULT_MAX_ENTRIES`] entries; the fingerprint salt in `dir/salt`.
    /// Files are created mode 0600. Processes may share a directory: every entry is checked
    /// when read, a source's copy and records are published under its file lock in
    /// `dir/locks/` ([`CacheCoordinator::publication_lock`]), and each process applies the
    /// bounds to the entries it knows of. The directories are scanned once here (blocking);
    /// later file work runs off the async executor ([`super::backend::fs::FsBackend`]).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] when the directories cannot be created or listed,
    /// or when `dir` or one of its namespace directories already exists and is owned by
    /// another user (root is not exempt) or other users can write to it (group or world
    /// write bit): such a directory could be made to serve another user's entries.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn disk(
        dir: impl AsRef<std::path::Path>,
        max_cache_bytes: Option<u64>,
    ) -> crate::Result<CacheCoordinator> {
        use super::backend::fs::{self as d, FsBackend};
        let dir = dir.as_ref();
        let bad = |e: std::io::Error| {
            crate::Error::InvalidArgument(format!("cache directory {}: {e}", dir.display()))
        };
        d::private_dir(dir).map_err(bad)?;
        let open = |name: &str, bytes: u64| -> crate::Result<Arc<dyn CacheBackend>> {
            Ok(Arc::new(
                FsBackend::open(dir.join(name), Budget::bytes(bytes)).map_err(bad)?,
            ))
        };
        let payload = open("payload", max_cache_bytes.unwrap_or(u64::MAX))?;
        let persist = Persist {
            discovery: open("discovery", MAX_DISK_RECORD_BYTES)?,
            sources: open("sources", MAX_DISK_SOURCE_BYTES)?,
            locks: None,
        };
        let salt = d::salt(&dir.join("salt")).map_err(bad)?;
        let c = Self::build(
            CachePolicy::Disk,
            max_cache_bytes,
            salt,
            Some((payload, persist)),
        );
        let _ = c.inner.lock_dir.set(dir.to_path_buf());
        Ok(c)
    }

    /// A DISK coordinator whose three layers live in one key-value store (IndexedDB, OPFS or
    /// a JS-supplied store in JS hosts): payload under the prefix `payload/` (least recently
    /// used entries removed beyond `max_cache_bytes`; `None` has no byte bound), discovery
    /// records under `discovery/` (at most [`MAX_DISK_RECORD_BYTES`]) and small-source
    /// copies under `sources/` (at most [`MAX_DISK_SOURCE_BYTES`]), each blob with a SHA-256
    /// marker ([`MarkedBackend`]); the fingerprint salt under `salt` (created at random
    /// when missing or malformed, under the lock `salt` of `locks`). Publications of one
    /// source take its lock of `locks`, if given.
    ///
    /// Never fails: a store that cannot be read or written gives misses and counted errors
    /// ([`CoordinatorStats::cache_errors`]), and a salt that cannot be kept is used for this
    /// coordinator only.
    pub async fn on_store(
        store: Arc<dyn KeyValueStore>,
        max_cache_bytes: Option<u64>,
        locks: Option<Arc<dyn PublicationLocks>>,
    ) -> CacheCoordinator {
        let marked = |prefix: &str, bytes: u64| -> Arc<dyn CacheBackend> {
            Arc::new(MarkedBackend::new(
                store.clone(),
                prefix,
                Budget::bytes(bytes),
            ))
        };
        let payload = marked("payload/", max_cache_bytes.unwrap_or(u64::MAX));
        let (salt, salt_failed) = store_salt(&*store, locks.as_deref()).await;
        let persist = Persist {
            discovery: marked("discovery/", MAX_DISK_RECORD_BYTES),
            sources: marked("sources/", MAX_DISK_SOURCE_BYTES),
            locks,
        };
        let c = Self::build(
            CachePolicy::Disk,
            max_cache_bytes,
            salt,
            Some((payload, persist)),
        );
        if salt_failed {
            c.count_error();
        }
        c
    }

    /// Removes every entry of every layer (held in memory and persisted), as
    /// `clearCache` does; returns how many persisted entries were removed.
    ///
    /// # Errors
    /// [`crate::Error::Cache`] naming the backend when the storage fails.
    pub async fn clear_all(&self) -> crate::Result<u64> {
        self.clear_memory();
        let Some(d) = &self.inner.persist else {
            return Ok(0);
        };
        let mut removed = 0;
        for b in [&self.inner.payload, &d.discovery, &d.sources] {
            removed += b.delete_prefix("").await.map_err(crate::Error::Cache)?;
        }
        Ok(removed)
    }

    /// What the persisted layers hold, from a fresh listing (JS `cacheUsage`): entries and
    /// bytes per layer and, for payload, per source (its public URL). MEMORY and NONE
    /// report their in-memory payload only.
    ///
    /// # Errors
    /// [`crate::Error::Cache`] naming the backend when the storage fails.
    pub async fn usage_report(&self) -> crate::Result<UsageReport> {
        let bad = crate::Error::Cache;
        let payload = self.inner.payload.list("").await.map_err(bad)?;
        // Per source, in the order of their URLs: the entries sorted by URL, then summed.
        let mut by_url: Vec<(&str, u64)> = payload
            .iter()
            .map(|e| (e.key.split('\n').next().unwrap_or(""), e.bytes))
            .collect();
        crate::sort::sort_by(&mut by_url, |a, b| a.0.cmp(b.0));
        let mut per_source: Vec<SourceUsage> = Vec::new();
        for (url, bytes) in by_url {
            match per_source.last_mut() {
                Some(s) if s.source == url => {
                    s.entries += 1;
                    s.bytes += bytes;
                }
                _ => per_source.push(SourceUsage {
                    source: url.to_string(),
                    entries: 1,
                    bytes,
                }),
            }
        }
        let layer = |v: &[super::backend::Entry]| LayerUsage {
            entries: v.len() as u64,
            bytes: v.iter().map(|e| e.bytes).sum(),
        };
        let (discovery, sources) = match &self.inner.persist {
            Some(d) => (
                layer(&d.discovery.list("").await.map_err(bad)?),
                layer(&d.sources.list("").await.map_err(bad)?),
            ),
            None => (LayerUsage::default(), LayerUsage::default()),
        };
        Ok(UsageReport {
            payload: layer(&payload),
            discovery,
            sources,
            per_source,
        })
    }

    /// The cache identity of `location` read with `headers`, fingerprinted under this
    /// coordinator's salt ([`SourceKey::new`]).
    pub fn source_key(&self, location: &str, headers: &[(String, String)]) -> SourceKey {
        SourceKey::new(location, headers, &self.inner.salt)
    }

    /// The cache identity of a source: named by the caller when `cache_key` is given
    /// ([`SourceKey::named`]), else from `location` and `headers` ([`Self::source_key`]).
    pub fn key_for(
        &self,
        location: &str,
        headers: &[(String, String)],
        cache_key: Option<&str>,
    ) -> SourceKey {
        match cache_key {
            Some(name) => self.named_key(name),
            None => self.source_key(location, headers),
        }
    }

    /// The cache identity named `name` by the caller ([`SourceKey::named`]).
    pub fn named_key(&self, name: &str) -> SourceKey {
        SourceKey::named(name, &self.inner.salt)
    }

    /// The coordinator that entries under `key` go to: this one, except under DISK for a key
    /// that may not be persisted (a signed URL no cache key names), which gets a MEMORY
    /// coordinator of the same bound, shared by every such source of this coordinator.
    pub fn for_source(&self, key: &SourceKey) -> CacheCoordinator {
        if key.persist || self.inner.policy != CachePolicy::Disk {
            return self.clone();
        }
        self.inner
            .volatile
            .get_or_init(|| {
                Self::memory(
                    self.inner
                        .max_cache_bytes
                        .unwrap_or(DEFAULT_MAX_CACHE_BYTES),
                )
            })
            .clone()
    }

    fn count_error(&self) {
        self.inner
            .counters
            .cache_errors
            .fetch_add(1, Ordering::Relaxed);
    }

    /// `backend.get(key)`, a failure read as a miss.
    async fn get_from(&self, backend: &dyn CacheBackend, key: &str) -> Option<Bytes> {
        backend.get(key).await.unwrap_or_else(|_| {
            self.count_error();
            None
        })
    }

    /// `backend.put(key, bytes)`, a failure counted.
    async fn put_to(&self, backend: &dyn CacheBackend, key: &str, bytes: Bytes) {
        if backend.put(key, bytes).await.is_err() {
            self.count_error();
        }
    }

    /// Forgets everything held for the source `key`: its discovery records and listings
    /// (every scope), its complete copy and the payload whose identity starts with its
    /// [`SourceKey::source_id`] (called when the source changed under a record, so nothing
    /// of the old version can mix with the new; spec: remote cache design, "Freshness").
    pub async fn forget_source(&self, key: &SourceKey) {
        let prefix = format!("{}\n", key.source_id());
        self.inner.discovery.retain(|k| !k.starts_with(&prefix));
        self.inner.sources.remove(&key.source_id());
        let mut failed = self.inner.payload.delete_prefix(&prefix).await.is_err();
        if let Some(d) = &self.inner.persist {
            failed |= d.discovery.delete_prefix(&prefix).await.is_err();
            failed |= d.sources.delete(&key.source_id()).await.is_err();
        }
        if failed {
            self.count_error();
        }
    }

    /// The process-wide (page-wide in wasm) MEMORY coordinator with the default bound
    /// (256 MiB), created on first use.
    pub fn shared() -> CacheCoordinator {
        #[cfg(not(target_arch = "wasm32"))]
        {
            static SHARED: OnceLock<CacheCoordinator> = OnceLock::new();
            SHARED
                .get_or_init(|| Self::memory(DEFAULT_MAX_CACHE_BYTES))
                .clone()
        }
        // wasm runs one thread per module instance, and backends there need not be `Send`
        // (JS storage), so the coordinator lives in a thread-local.
        #[cfg(target_arch = "wasm32")]
        {
            thread_local! {
                static SHARED: CacheCoordinator = CacheCoordinator::memory(DEFAULT_MAX_CACHE_BYTES);
            }
            SHARED.with(CacheCoordinator::clone)
        }
    }

    /// Whether `other` is this coordinator (a clone of it), not merely an equal one.
    pub fn same_as(&self, other: &CacheCoordinator) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The policy.
    pub fn policy(&self) -> CachePolicy {
        self.inner.policy
    }

    /// The payload bound in bytes (`None`: DISK without a byte bound).
    pub fn max_cache_bytes(&self) -> Option<u64> {
        self.inner.max_cache_bytes
    }

    /// Whether payload is retained at all (not NONE, not a zero bound).
    pub fn retains_payload(&self) -> bool {
        self.inner.policy != CachePolicy::None && self.inner.max_cache_bytes != Some(0)
    }

    /// The in-memory payload LRU (empty under DISK and NONE).
    pub fn memory_cache(&self) -> &PayloadCache {
        &self.inner.memory
    }

    /// The payload under `key`.
    pub async fn get_payload(&self, key: &CacheKey) -> Option<Bytes> {
        let found = self
            .get_from(&*self.inner.payload, &key.storage_key())
            .await;
        let c = &self.inner.counters;
        if found.is_some() {
            &c.payload_hits
        } else {
            &c.payload_misses
        }
        .fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Retains `payload` under `key` (nothing under NONE). The entry owns exactly its bytes
    /// (a slice of a larger fetch is copied or written out, never kept as a view).
    pub async fn put_payload(&self, key: CacheKey, payload: Bytes) {
        self.put_to(&*self.inner.payload, &key.storage_key(), payload)
            .await;
    }

    /// Every payload entry whose storage key ([`CacheKey::storage_key`]) starts with
    /// `prefix`, with its bytes (a portable reference's `--with-payload`: the entries of one
    /// source under `{source_id}\n`). Entries that vanish between the listing and the read
    /// are left out; hit and miss counters are not moved.
    ///
    /// # Errors
    /// [`crate::Error::Cache`] when the payload backend cannot be listed.
    pub async fn payload_with_prefix(&self, prefix: &str) -> crate::Result<Vec<(String, Bytes)>> {
        let listed = self
            .inner
            .payload
            .list(prefix)
            .await
            .map_err(crate::Error::Cache)?;
        let mut out = Vec::with_capacity(listed.len());
        for e in listed {
            if let Some(b) = self.get_from(&*self.inner.payload, &e.key).await {
                out.push((e.key, b));
            }
        }
        crate::sort::sort_by(&mut out, |a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Retains `payload` under the storage key `storage_key` ([`CacheKey::storage_key`]'s
    /// form), as [`CacheCoordinator::put_payload`] does (a portable reference's payload put
    /// back under the key of the source at reopen).
    pub async fn put_payload_at(&self, storage_key: &str, payload: Bytes) {
        self.put_to(&*self.inner.payload, storage_key, payload)
            .await;
    }

    /// A format's own discovery record under `key` (JSON bytes it wrote with
    /// [`CacheCoordinator::put_record`]; a Zarr store's remembered metadata), if held.
    /// The caller validates what it reads (a record it cannot parse is a miss).
    pub async fn record(&self, key: &str) -> Option<Bytes> {
        let found = self.get_record(key).await;
        self.count_discovery(key, found.is_some()).await;
        found
    }

    async fn get_record(&self, key: &str) -> Option<Bytes> {
        if let Some(b) = self.inner.discovery.get(&key.to_string()) {
            return Some(b);
        }
        let d = self.inner.persist.as_ref()?;
        let b = self.get_from(&*d.discovery, key).await?;
        self.inner.discovery.insert(key.to_string(), b.clone());
        Some(b)
    }

    /// Stores a format's own discovery record (JSON bytes) under `key`; on disk while holding
    /// the publication lock of the key's source ([`CacheCoordinator::publication_lock`]; a
    /// lock not had in time leaves the record in memory only).
    pub async fn put_record(&self, key: &str, json: Vec<u8>) {
        let lock = self.lock_for(source_of(key)).await;
        self.put_record_locked(key, json, lock.is_ok()).await;
        drop(lock);
    }

    /// Replaces the record under `key` by `merge(held)`, where `held` is the record stored
    /// there now (JSON bytes; `None` when there is none or it is damaged: a bad marker is a
    /// miss), so a writer adds to what other writers stored instead of dropping it (a Zarr
    /// store's record, written by each of its arrays). The read, `merge` and the write are
    /// one step: under this coordinator's update lock (no other update through it
    /// interleaves) and, on disk, the publication lock of the key's source
    /// ([`CacheCoordinator::publication_lock`]: a file lock natively, the coordinator's
    /// [`PublicationLocks`] — Web Locks in browsers — on a key-value store), under which
    /// `held` is read from the backend itself, not from the memory front, since another
    /// process may have written since. A host without locks (Node, workerd) serialises the
    /// updates of one coordinator only. A publication lock not had in time: `held` is the
    /// memory copy and the result stays in memory only, as for
    /// [`CacheCoordinator::put_record`].
    pub async fn update_record(&self, key: &str, merge: impl FnOnce(Option<&[u8]>) -> Vec<u8>) {
        let _one = self.inner.updates.lock().await;
        let lock = self.lock_for(source_of(key)).await;
        let persisted = self.inner.persist.as_ref().filter(|_| lock.is_ok());
        let held = match persisted {
            Some(d) => self.get_from(&*d.discovery, key).await,
            None => self.inner.discovery.get(&key.to_string()),
        };
        let json = merge(held.as_deref());
        self.put_record_locked(key, json, lock.is_ok()).await;
        drop(lock);
    }

    /// [`CacheCoordinator::put_record`] with the source's publication lock already held
    /// (or, `persist` false, not had: memory only).
    async fn put_record_locked(&self, key: &str, json: Vec<u8>, persist: bool) {
        let json = Bytes::from(json);
        if let Some(d) = self.inner.persist.as_ref().filter(|_| persist) {
            self.put_to(&*d.discovery, key, json.clone()).await;
        }
        self.inner.discovery.insert(key.to_string(), json);
    }

    async fn drop_record(&self, key: &str) {
        self.inner.discovery.remove(&key.to_string());
        if let Some(d) = &self.inner.persist {
            if d.discovery.delete(key).await.is_err() {
                self.count_error();
            }
        }
    }

    /// The discovery record under `key` ([`super::SourceKey::scoped`]); a malformed record or
    /// one of another version is dropped and reported as a miss.
    pub async fn discovery(&self, key: &str) -> Option<DiscoveryRecord> {
        self.discovery_lookup(key).await.ok()
    }

    /// As [`CacheCoordinator::discovery`], saying on a miss whether a record was held under
    /// `key` (`Err(true)`: held but malformed or of another version, and dropped;
    /// `Err(false)`: none), for [`super::CacheStatus`].
    pub async fn discovery_lookup(&self, key: &str) -> Result<DiscoveryRecord, bool> {
        let held = self.get_record(key).await;
        let was_held = held.is_some();
        let found = held.and_then(|b| discovery::from_json::<DiscoveryRecord>(&b));
        self.count_discovery(key, found.is_some()).await;
        found.ok_or(was_held)
    }

    async fn count_discovery(&self, key: &str, hit: bool) {
        let c = &self.inner.counters;
        if hit {
            c.discovery_hits.fetch_add(1, Ordering::Relaxed);
        } else {
            c.discovery_misses.fetch_add(1, Ordering::Relaxed);
            self.drop_record(key).await;
        }
    }

    /// Stores a discovery record.
    pub async fn put_discovery(&self, key: &str, record: &DiscoveryRecord) {
        self.put_record(key, discovery::to_json(record)).await;
    }

    /// The listing record under `key`.
    pub async fn nodes(&self, key: &str) -> Option<NodesRecord> {
        let found = self
            .get_record(key)
            .await
            .and_then(|b| discovery::from_json::<NodesRecord>(&b));
        self.count_discovery(key, found.is_some()).await;
        found
    }

    /// Stores a listing record.
    pub async fn put_nodes(&self, key: &str, record: &NodesRecord) {
        self.put_record(key, discovery::to_json(record)).await;
    }

    /// The complete copy of the source `source_id` ([`super::SourceKey::source_id`]) and its
    /// identity, if held and consistent: its length equals the recorded size and, on disk,
    /// its marker's version token is the recorded identity's
    /// ([`SourceIdentity::version_token`]).
    pub async fn source_copy(&self, source_id: &str) -> Option<(SourceIdentity, Bytes)> {
        let id_key = format!("{source_id}\n#source");
        let ident = self
            .get_record(&id_key)
            .await
            .and_then(|b| discovery::from_json::<SourceRecord>(&b))?
            .source;
        let mut found = self.inner.sources.get(&source_id.to_string());
        if found.is_none() {
            if let Some(d) = &self.inner.persist {
                found = match d.sources.get_versioned(source_id).await {
                    // A copy of another version than the record's: the two were published
                    // by different writers (another process). Not used; the next
                    // publication replaces both.
                    Ok(Some((_, Some(v)))) if v != ident.version_token() => None,
                    Ok(found) => found.map(|(b, _)| b),
                    Err(_) => {
                        self.count_error();
                        None
                    }
                };
                if let Some(b) = &found {
                    self.inner.sources.insert(source_id.to_string(), b.clone());
                }
            }
        }
        match found {
            Some(b) if b.len() as u64 == ident.len => {
                self.inner
                    .counters
                    .source_hits
                    .fetch_add(1, Ordering::Relaxed);
                Some((ident, b))
            }
            _ => None,
        }
    }

    /// Keeps a complete copy of a small source (not counted against `max_cache_bytes`). On
    /// disk the copy (with its version token) and then its identity record are published
    /// while holding the source's publication lock, so two processes publishing the same
    /// source leave one writer's pair, not one's copy under the other's record; a lock not
    /// had in time leaves both in memory only.
    pub async fn put_source_copy(&self, source_id: &str, ident: &SourceIdentity, bytes: Bytes) {
        let lock = self.lock_for(source_id).await;
        if let Some(d) = self.inner.persist.as_ref().filter(|_| lock.is_ok()) {
            let put = d
                .sources
                .put_versioned(source_id, bytes.clone(), &ident.version_token())
                .await;
            if put.is_err() {
                self.count_error();
            }
        }
        self.inner.sources.insert(source_id.to_string(), bytes);
        let rec = SourceRecord {
            version: discovery::DISCOVERY_VERSION,
            source: ident.clone(),
        };
        self.put_record_locked(
            &format!("{source_id}\n#source"),
            discovery::to_json(&rec),
            lock.is_ok(),
        )
        .await;
        drop(lock);
    }

    /// Takes the publication lock of the source `source_id` ([`SourceKey::source_id`]) in
    /// this coordinator's cache directory: a short exclusive lock between processes
    /// ([`super::backend::fs::FileLock`], `<cache dir>/locks/`), to hold around a version
    /// check and the publication of the source's entries, never around a download (spec:
    /// remote cache design, "Publication and reuse"). Waits at most
    /// [`PUBLICATION_LOCK_WAIT`]. `None` when there is no directory to lock in (MEMORY, NONE,
    /// wasm builds), or when the lock was not had in time or could not be taken (counted in
    /// [`CoordinatorStats::cache_errors`]): the caller then keeps what it publishes out of
    /// shared storage. Released when the guard is dropped. Not reentrant: holding it and
    /// asking again (in this or another coordinator) waits for the full bound.
    pub async fn publication_lock(&self, source_id: &str) -> Option<LockGuard> {
        self.lock_for(source_id).await.ok().flatten()
    }

    /// The publication lock of `source_id`: `Ok(None)` without a directory, `Err` when it
    /// was not had.
    async fn lock_for(&self, source_id: &str) -> Result<Option<LockGuard>, ()> {
        if let Some(locks) = self.inner.persist.as_ref().and_then(|p| p.locks.clone()) {
            let name = crate::cache::identity::sha256_hex(source_id.as_bytes());
            return match locks.acquire(&name).await {
                Ok(held) => Ok(held.map(|g| LockGuard {
                    #[cfg(not(target_arch = "wasm32"))]
                    _lock: None,
                    _held: Some(g),
                })),
                Err(()) => {
                    self.count_error();
                    Err(())
                }
            };
        }
        #[cfg(target_arch = "wasm32")]
        {
            Ok(None)
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            use super::backend::fs::FileLock;
            let Some(dir) = self.inner.lock_dir.get().cloned() else {
                return Ok(None);
            };
            let name = source_id.to_string();
            let take = move || FileLock::acquire_within(&dir, &name, PUBLICATION_LOCK_WAIT);
            let taken = match tokio::runtime::Handle::try_current() {
                Ok(h) => h.spawn_blocking(take).await.ok(),
                Err(_) => Some(take()),
            };
            match taken {
                Some(Ok(lock)) => Ok(Some(LockGuard {
                    _lock: Some(lock),
                    _held: None,
                })),
                _ => {
                    self.count_error();
                    Err(())
                }
            }
        }
    }

    /// Counts one chunk decoded by its format's own pipeline.
    pub fn count_format_decode(&self) {
        self.inner
            .counters
            .format_decodes
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one chunk served from a converted payload.
    pub fn count_converted_hit(&self) {
        self.inner
            .counters
            .converted_hits
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Current counters.
    pub fn stats(&self) -> CoordinatorStats {
        let c = &self.inner.counters;
        let payload = if self.inner.persist.is_some() {
            let u = self.inner.payload.usage();
            CacheStats {
                entries: u.entries,
                bytes: u.bytes,
                hits: c.payload_hits.load(Ordering::Relaxed),
                misses: c.payload_misses.load(Ordering::Relaxed),
                evictions: u.evictions,
            }
        } else {
            self.inner.memory.stats()
        };
        CoordinatorStats {
            payload,
            discovery_hits: c.discovery_hits.load(Ordering::Relaxed),
            discovery_misses: c.discovery_misses.load(Ordering::Relaxed),
            source_hits: c.source_hits.load(Ordering::Relaxed),
            format_decodes: c.format_decodes.load(Ordering::Relaxed),
            converted_hits: c.converted_hits.load(Ordering::Relaxed),
            cache_errors: c.cache_errors.load(Ordering::Relaxed),
        }
    }

    /// Drops what is held in memory (payload, records, source copies); disk entries stay.
    pub fn clear_memory(&self) {
        self.inner.memory.clear();
        self.inner.discovery.clear();
        self.inner.sources.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::discovery::DISCOVERY_VERSION;

    fn record() -> DiscoveryRecord {
        DiscoveryRecord {
            version: DISCOVERY_VERSION,
            source: SourceIdentity {
                location: "http://h/a.b2nd".into(),
                len: 10,
                etag: Some("\"e\"".into()),
                last_modified: None,
            },
            format: "b2nd".into(),
            seed_version: 1,
            seed: serde_json::json!({"header": "0102", "index": "ff"}),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn records_round_trip_and_other_versions_are_misses() {
        let c = CacheCoordinator::memory(1 << 20);
        c.put_discovery("k", &record()).await;
        assert_eq!(c.discovery("k").await, Some(record()));
        let text = String::from_utf8(discovery::to_json(&record())).unwrap();
        assert!(text.contains("\"format\":\"b2nd\"") && text.contains("\"header\":\"0102\""));
        c.put_record(
            "k",
            text.replace(
                &format!("\"version\":{DISCOVERY_VERSION}"),
                &format!("\"version\":{}", DISCOVERY_VERSION + 1),
            )
            .into_bytes(),
        )
        .await;
        assert_eq!(c.discovery("k").await, None);
        assert_eq!(c.discovery("k").await, None, "dropped");
        c.put_record("k", b"{\"version\":1,".to_vec()).await;
        assert_eq!(c.discovery("k").await, None);
        let s = c.stats();
        assert_eq!((s.discovery_hits, s.discovery_misses), (1, 3));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn none_retains_no_payload_but_keeps_discovery() {
        let c = CacheCoordinator::none();
        assert!(!c.retains_payload());
        let key = CacheKey {
            source: Arc::from("s"),
            item: crate::cache::Item::Chunk(0),
        };
        c.put_payload(key.clone(), Bytes::from_static(b"abc")).await;
        assert_eq!(c.get_payload(&key).await, None);
        c.put_discovery("k", &record()).await;
        assert!(c.discovery("k").await.is_some());
        assert!(CacheCoordinator::new(CachePolicy::Disk, 1).is_err());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn disk_records_survive_a_new_coordinator() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        c.put_discovery("k", &record()).await;
        let ident = record().source;
        c.put_source_copy("src", &ident, Bytes::from(vec![7u8; 10]))
            .await;
        let key = CacheKey {
            source: Arc::from("s"),
            item: crate::cache::Item::Block(3, 4),
        };
        c.put_payload(key.clone(), Bytes::from_static(b"payload"))
            .await;
        let d = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(d.discovery("k").await, Some(record()));
        assert_eq!(
            d.source_copy("src").await.unwrap().1,
            Bytes::from(vec![7u8; 10])
        );
        assert_eq!(&d.get_payload(&key).await.unwrap()[..], b"payload");
        assert_eq!(d.stats().payload.hits, 1);
        // A copy whose length differs from the recorded size is not used.
        d.put_source_copy("src", &ident, Bytes::from(vec![7u8; 9]))
            .await;
        assert!(d.source_copy("src").await.is_none());
    }

    /// Every file under `dir`, recursively.
    fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files(&p));
            } else {
                out.push(p);
            }
        }
        out
    }

    /// `update_record` hands the merge what is stored (on disk, read afresh: another
    /// coordinator's write is seen), stores what the merge returns, and serialises
    /// concurrent updates; a damaged stored record reaches the merge as `None`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn disk_record_updates_merge_with_what_is_stored() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let d = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let key = "http://h/s.zarr\nfp\n#zarr-metadata";
        let append = |held: Option<&[u8]>, add: &str| {
            let mut v = held.map(<[u8]>::to_vec).unwrap_or_default();
            v.extend_from_slice(add.as_bytes());
            v
        };
        c.update_record(key, |h| append(h, "a")).await;
        // `d` read the record into its memory front before `c` adds to it again.
        assert_eq!(d.record(key).await.as_deref(), Some(&b"a"[..]));
        c.update_record(key, |h| append(h, "b")).await;
        d.update_record(key, |h| append(h, "c")).await;
        let e = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(e.record(key).await.as_deref(), Some(&b"abc"[..]));
        // Concurrent updates through one coordinator and through two: none is lost.
        let mut tasks = Vec::new();
        for i in 0..8 {
            let x = if i % 2 == 0 { c.clone() } else { d.clone() };
            tasks.push(tokio::spawn(async move {
                x.update_record(key, |h| append(h, "x")).await;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let f = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(f.record(key).await.as_deref(), Some(&b"abcxxxxxxxx"[..]));
        // Damaged on disk: the merge is handed nothing.
        for p in files(&tmp.path().join("discovery")) {
            let mut b = std::fs::read(&p).unwrap();
            if let Some(last) = b.last_mut() {
                *last ^= 0xff;
            }
            std::fs::write(&p, b).unwrap();
        }
        let g = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let mut seen = None;
        g.update_record(key, |h| {
            seen = Some(h.map(<[u8]>::to_vec));
            b"fresh".to_vec()
        })
        .await;
        assert_eq!(seen, Some(None), "a damaged record reached the merge");
        let h = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(h.record(key).await.as_deref(), Some(&b"fresh"[..]));
    }

    /// Under a key-value store (as in JS hosts): every layer and the salt survive a new
    /// coordinator on the same store; each publication takes its source's lock, released
    /// after; `clear_all` empties the store's entries.
    #[tokio::test(flavor = "current_thread")]
    async fn store_layers_survive_a_new_coordinator_and_publish_under_locks() {
        use crate::cache::backend::marked::MapStore;
        #[derive(Default)]
        struct Counting {
            taken: std::sync::Mutex<Vec<String>>,
            held: Arc<AtomicU64>,
        }
        struct Guard(Arc<AtomicU64>);
        impl PublicationGuard for Guard {}
        impl Drop for Guard {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        #[async_trait::async_trait]
        impl PublicationLocks for Counting {
            async fn acquire(&self, name: &str) -> Result<Option<Box<dyn PublicationGuard>>, ()> {
                self.taken.lock().unwrap().push(name.to_string());
                assert_eq!(
                    self.held.fetch_add(1, Ordering::SeqCst),
                    0,
                    "one lock at a time"
                );
                Ok(Some(Box::new(Guard(self.held.clone()))))
            }
        }
        let store = MapStore::new();
        let locks = Arc::new(Counting::default());
        let c =
            CacheCoordinator::on_store(Arc::new(store.clone()), Some(1 << 20), Some(locks.clone()))
                .await;
        let key = c.source_key("http://h/a.b2nd", &[]);
        let scoped = key.scoped("");
        c.put_discovery(&scoped, &record()).await;
        c.put_source_copy(
            &key.source_id(),
            &record().source,
            Bytes::from(vec![7u8; 10]),
        )
        .await;
        let pkey = CacheKey {
            source: Arc::from(key.source_id().as_str()),
            item: crate::cache::Item::Chunk(2),
        };
        c.put_payload(pkey.clone(), Bytes::from_static(b"payload"))
            .await;
        assert_eq!(locks.held.load(Ordering::SeqCst), 0, "every lock released");
        let taken = locks.taken.lock().unwrap().clone();
        let want = crate::cache::identity::sha256_hex(key.source_id().as_bytes());
        assert_eq!(taken[0], "salt");
        assert!(
            taken.len() >= 3 && taken[1..].iter().all(|t| *t == want),
            "{taken:?}"
        );

        let d = CacheCoordinator::on_store(Arc::new(store.clone()), Some(1 << 20), None).await;
        assert_eq!(
            d.source_key("http://h/a.b2nd", &[]).scoped(""),
            scoped,
            "same salt"
        );
        assert_eq!(d.discovery(&scoped).await, Some(record()));
        assert_eq!(
            d.source_copy(&key.source_id()).await.unwrap().1,
            Bytes::from(vec![7u8; 10])
        );
        assert_eq!(&d.get_payload(&pkey).await.unwrap()[..], b"payload");
        let report = d.usage_report().await.unwrap();
        assert_eq!((report.payload.entries, report.payload.bytes), (1, 7));
        assert_eq!(report.per_source[0].source, "http://h/a.b2nd");
        assert_eq!(report.sources.bytes, 10);
        assert_eq!(
            d.clear_all().await.unwrap(),
            4,
            "payload, 2 records, 1 copy"
        );
        assert_eq!(store.all_keys(), vec!["salt".to_string()]);
        assert_eq!(c.get_payload(&pkey).await, None);
    }

    /// A source copy on disk is used only with the record of its own version: a record of
    /// another version of the same size (another process published the newer record; its
    /// copy is not there) makes the copy a miss, never bytes of one version read under the
    /// identity of another.
    #[tokio::test(flavor = "current_thread")]
    async fn disk_source_copy_of_another_version_is_a_miss() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let old = record().source;
        c.put_source_copy("src", &old, Bytes::from(vec![1u8; 10]))
            .await;
        let new = SourceIdentity {
            etag: Some("\"f\"".into()),
            ..old.clone()
        };
        let rec = SourceRecord {
            version: DISCOVERY_VERSION,
            source: new,
        };
        c.put_record("src\n#source", discovery::to_json(&rec)).await;
        let d = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert!(d.source_copy("src").await.is_none());
        c.put_source_copy("src", &old, Bytes::from(vec![1u8; 10]))
            .await;
        let d = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let (ident, bytes) = d.source_copy("src").await.unwrap();
        assert_eq!((ident, &bytes[..]), (old, &[1u8; 10][..]));
    }

    /// Publishing a record waits while another coordinator (as another process would) holds
    /// the source's publication lock, and goes on once it is released; MEMORY has no lock.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn publication_waits_for_the_source_lock() {
        assert!(CacheCoordinator::memory(1 << 20)
            .publication_lock("src")
            .await
            .is_none());
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let d = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(source_of("http://h/a\nfp\n/data"), "http://h/a\nfp");
        assert_eq!(source_of("http://h/a\nfp\n#source"), "http://h/a\nfp");
        let guard = c.publication_lock("http://h/a\nfp").await.unwrap();
        let writer = tokio::spawn(async move {
            d.put_discovery("http://h/a\nfp\n/data", &record()).await;
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!writer.is_finished(), "the publication waits for the lock");
        let other = c.publication_lock("http://h/b\nfp").await;
        assert!(other.is_some(), "another source's lock is free");
        drop(guard);
        tokio::time::timeout(std::time::Duration::from_secs(5), writer)
            .await
            .expect("published once the lock is released")
            .unwrap();
        let e = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        assert_eq!(e.discovery("http://h/a\nfp\n/data").await, Some(record()));
        assert_eq!(e.stats().cache_errors, 0);
    }

    /// A backend that cannot write is counted, never a failure of the caller: the entry is
    /// simply not kept, and a lookup is a miss.
    #[tokio::test(flavor = "current_thread")]
    async fn backend_failures_are_counted_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let c = CacheCoordinator::disk(tmp.path(), Some(1 << 20)).unwrap();
        let payload = tmp.path().join("payload");
        std::fs::remove_dir_all(&payload).unwrap();
        std::fs::write(&payload, b"not a directory").unwrap();
        let key = CacheKey {
            source: Arc::from("s"),
            item: crate::cache::Item::Chunk(1),
        };
        c.put_payload(key.clone(), Bytes::from_static(b"payload"))
            .await;
        assert_eq!(c.stats().cache_errors, 1);
        assert_eq!(c.get_payload(&key).await, None);
        let s = c.stats();
        assert_eq!((s.payload.entries, s.payload.misses), (0, 1));
        c.put_discovery("k", &record()).await;
        assert_eq!(
            c.discovery("k").await,
            Some(record()),
            "other layers still work"
        );
    }
}
