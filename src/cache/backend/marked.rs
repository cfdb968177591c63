//! [`MarkedBackend`]: cached blobs published with SHA-256 markers over any key-value store
//! ([`KeyValueStore`]): IndexedDB, OPFS or a JS-supplied store in JS hosts (DISK policy
//! there), a map in tests. The same rules as the filesystem backend ([`super::fs`]), for
//! stores that only get, put, delete and list keys.
//!
//! Layout under the backend's namespace prefix `P` (`payload/`, `discovery/`, `sources/`):
//! for an entry whose key is `K` and `H = sha256_hex(K)`, the blob under `P b/H` and its
//! marker ([`super::marker::Marker`], the filesystem backend's) under `P m/H` (no space).
//! The marker's `used` is rewritten with the last access (at most once a minute,
//! [`ACCESS_GRANULARITY_MS`]), so least-recently-used order survives a reload of the page. Publication writes the blob, then the marker. A reader trusts nothing
//! else (spec: remote cache design, "Publication and reuse"): a missing, oversized or
//! unparsable marker, another schema, another key, a blob of another size or another digest
//! is a miss, and both are removed. Two writers of one key at once cannot make a wrong
//! answer either: a marker over another writer's blob fails the digest check.
//!
//! The index of entries (sizes and last use, for the [`Budget`] and [`CacheBackend::usage`])
//! is learned from the markers once, at the first write or listing, not at open: a page that
//! only reads from a warm cache reads no marker but its entries'. Several pages (tabs,
//! workers) may share one store: each bounds the entries it knows of (its scan plus its own
//! writes), so the bound holds per page, and a page's eviction of an entry another page reads
//! is a miss there, never wrong bytes.

use super::{BackendError, Budget, CacheBackend, Entry, Usage};
use crate::cache::identity::sha256_hex;
use crate::io::{MaybeSend, MaybeSync};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::marker::{now_ms, Marker};
pub use super::marker::{MAX_MARKER_BYTES, SCHEMA_VERSION};

/// A recorded access is rewritten into the marker at most this often (milliseconds): warm
/// reads of one page then cost one marker write per entry per minute, and the order across
/// reloads is kept to the minute.
pub const ACCESS_GRANULARITY_MS: u64 = 60_000;

/// Markers read at once while learning the index.
const SCAN_BATCH: usize = 32;

/// A store of byte values under string keys, the primitive a [`MarkedBackend`] needs: the
/// shape of the JS `cacheStore` option (`get`, `put`, `delete`, `keys(prefix)`). It need not
/// check anything: the markers do.
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
pub trait KeyValueStore: MaybeSend + MaybeSync {
    /// A short name for messages (`indexeddb`, `opfs`, `js-store`).
    fn name(&self) -> &'static str;
    /// The value under `key`, `None` when absent.
    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError>;
    /// Stores `bytes` under `key`, replacing any value there.
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError>;
    /// Removes `key` (absent is not an error).
    async fn delete(&self, key: &str) -> Result<(), BackendError>;
    /// Every key starting with `prefix`, in no particular order.
    async fn keys(&self, prefix: &str) -> Result<Vec<String>, BackendError>;
}

#[derive(Debug, Default)]
struct Index {
    /// Whether the markers have been scanned.
    loaded: bool,
    /// hash -> (key, blob bytes, last use key in `order`)
    entries: HashMap<String, (String, u64, (u64, u64))>,
    /// ((last use in ms, tie-break), hash), least recently used first.
    order: crate::cache::lru::RecencyOrder<String>,
    seq: u64,
    total: u64,
    evictions: u64,
}

impl Index {
    fn touch(&mut self, hash: &str, key: &str, bytes: u64, used: u64) {
        self.seq += 1;
        let at = (used, self.seq);
        if let Some((_, b, t)) = self
            .entries
            .insert(hash.to_string(), (key.to_string(), bytes, at))
        {
            self.order.remove(&(t, hash.to_string()));
            self.total -= b;
        }
        self.order.insert((at, hash.to_string()));
        self.total += bytes;
    }

    fn forget(&mut self, hash: &str) {
        if let Some((_, b, t)) = self.entries.remove(hash) {
            self.order.remove(&(t, hash.to_string()));
            self.total -= b;
        }
    }
}

/// One namespace of blobs with markers in a [`KeyValueStore`], within a [`Budget`] (least
/// recently used first out, by recorded access time). Cloning shares it.
#[derive(Clone)]
pub struct MarkedBackend {
    store: Arc<dyn KeyValueStore>,
    prefix: String,
    budget: Budget,
    index: Arc<Mutex<Index>>,
}

impl std::fmt::Debug for MarkedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkedBackend")
            .field("store", &self.store.name())
            .field("prefix", &self.prefix)
            .field("budget", &self.budget)
            .finish()
    }
}

impl MarkedBackend {
    /// The namespace `prefix` (e.g. `"payload/"`) of `store`, within `budget`
    /// (`budget.bytes == u64::MAX`: no byte bound). Reads nothing yet.
    pub fn new(store: Arc<dyn KeyValueStore>, prefix: &str, budget: Budget) -> MarkedBackend {
        MarkedBackend {
            store,
            prefix: prefix.to_string(),
            budget,
            index: Arc::new(Mutex::new(Index::default())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn blob_key(&self, hash: &str) -> String {
        format!("{}b/{hash}", self.prefix)
    }

    fn marker_key(&self, hash: &str) -> String {
        format!("{}m/{hash}", self.prefix)
    }

    /// The marker under `hash`: `Ok(None)` when absent, `Err(())` when present but not to be
    /// trusted (over [`MAX_MARKER_BYTES`], unparsable, another schema, a blob over the budget).
    async fn marker(&self, hash: &str) -> Result<Result<Option<Marker>, ()>, BackendError> {
        let Some(raw) = self.store.get(&self.marker_key(hash)).await? else {
            return Ok(Ok(None));
        };
        Ok(Marker::parse(&raw)
            .filter(|m| m.bytes <= self.budget.bytes)
            .map(Some)
            .ok_or(()))
    }

    /// Removes the pair under `hash`: marker first, so the blob is never trusted alone.
    async fn drop_pair(&self, hash: &str) -> Result<(), BackendError> {
        self.lock().forget(hash);
        self.store.delete(&self.marker_key(hash)).await?;
        self.store.delete(&self.blob_key(hash)).await
    }

    /// Learns every entry from the markers (once; later calls return at once unless
    /// `again`). Damaged markers and markers of another schema are removed with their blobs;
    /// a blob whose marker is missing stays until its key is written again or the store is
    /// cleared (listing blobs to find orphans would double the scan).
    async fn scan(&self, again: bool) -> Result<Vec<Entry>, BackendError> {
        if !again && self.lock().loaded {
            return Ok(Vec::new());
        }
        let marker_prefix = format!("{}m/", self.prefix);
        let hashes: Vec<String> = self
            .store
            .keys(&marker_prefix)
            .await?
            .into_iter()
            .filter_map(|k| k.strip_prefix(&marker_prefix).map(str::to_string))
            .collect();
        let mut found = Vec::new();
        for batch in hashes.chunks(SCAN_BATCH) {
            let markers = futures::future::join_all(batch.iter().map(|h| self.marker(h))).await;
            for (hash, m) in batch.iter().zip(markers) {
                match m? {
                    Ok(Some(m)) if sha256_hex(m.key.as_bytes()) == *hash => found.push((hash, m)),
                    // Deleted since it was listed.
                    Ok(None) => {}
                    _ => self.drop_pair(hash).await?,
                }
            }
        }
        let mut out = Vec::with_capacity(found.len());
        {
            let mut g = self.lock();
            let seen: std::collections::HashSet<&str> =
                found.iter().map(|(h, _)| h.as_str()).collect();
            let gone: Vec<String> = g
                .entries
                .keys()
                .filter(|h| !seen.contains(h.as_str()))
                .cloned()
                .collect();
            for h in gone {
                g.forget(&h);
            }
            for (hash, m) in &found {
                // An entry this page used since keeps its own, later, time.
                let used = g
                    .entries
                    .get(hash.as_str())
                    .map_or(m.used, |e| e.2 .0.max(m.used));
                g.touch(hash, &m.key, m.bytes, used);
                out.push(Entry {
                    key: m.key.clone(),
                    bytes: m.bytes,
                });
            }
            g.loaded = true;
        }
        self.evict().await?;
        Ok(out)
    }

    /// Removes least recently used entries until the index is within the budget.
    async fn evict(&self) -> Result<(), BackendError> {
        loop {
            let victim = {
                let mut g = self.lock();
                if g.total <= self.budget.bytes && g.entries.len() as u64 <= self.budget.entries {
                    return Ok(());
                }
                let Some((_, hash)) = g.order.first().cloned() else {
                    return Ok(());
                };
                g.forget(&hash);
                g.evictions += 1;
                hash
            };
            self.drop_pair(&victim).await?;
        }
    }

    /// The blob under `key` with its version token, verified against its marker; `None`
    /// (and the pair removed) when anything does not match.
    ///
    /// # Errors
    /// [`BackendError::Storage`] when the store fails.
    pub async fn get_marked(&self, key: &str) -> Result<Option<(Bytes, String)>, BackendError> {
        let hash = sha256_hex(key.as_bytes());
        // Marker and blob asked for together: one storage round trip, not two, for a hit
        // (a miss asks for an absent blob too, which costs as little).
        let blob_key = self.blob_key(&hash);
        let (marker, blob) = futures::join!(self.marker(&hash), self.store.get(&blob_key));
        let m = match marker? {
            Ok(Some(m)) => m,
            Ok(None) => {
                // Absent. If this page knew the entry, its marker went missing: the blob
                // left behind is never trusted again.
                if self.lock().entries.contains_key(&hash) {
                    self.drop_pair(&hash).await?;
                }
                return Ok(None);
            }
            Err(()) => {
                self.drop_pair(&hash).await?;
                return Ok(None);
            }
        };
        let blob = blob?;
        let ok = m.key == key && blob.as_ref().is_some_and(|b| m.describes(b));
        if !ok {
            self.drop_pair(&hash).await?;
            return Ok(None);
        }
        let now = now_ms();
        let over = {
            let mut g = self.lock();
            g.touch(&hash, key, m.bytes, now);
            g.total > self.budget.bytes || g.entries.len() as u64 > self.budget.entries
        };
        // An entry another page or worker wrote, now known here, can take this page's view
        // past the budget: the least recently used go, as after a write.
        if over {
            self.evict().await?;
        }
        if now.saturating_sub(m.used) >= ACCESS_GRANULARITY_MS {
            let m = Marker {
                used: now,
                ..m.clone()
            };
            // A failed record of the access only loses LRU order, never data.
            let _ = self
                .store
                .put(&self.marker_key(&hash), Bytes::from(m.to_json()))
                .await;
        }
        Ok(blob.map(|b| (b, m.version)))
    }

    /// Publishes `bytes` under `key` with the version token `version` (blob, then marker),
    /// then removes least recently used entries beyond the budget. A blob larger than the
    /// byte budget is not stored (an older entry under `key` is removed).
    ///
    /// # Errors
    /// [`BackendError::Storage`]: nothing new is trusted under `key` (what the store holds
    /// there is still verified on every read).
    pub async fn put_marked(
        &self,
        key: &str,
        bytes: Bytes,
        version: &str,
    ) -> Result<(), BackendError> {
        self.scan(false).await?;
        let hash = sha256_hex(key.as_bytes());
        let len = bytes.len() as u64;
        if len > self.budget.bytes {
            return self.drop_pair(&hash).await;
        }
        let marker = Marker::new(key, &bytes, version);
        let now = marker.used;
        // `Bytes::copy_from_slice`: the store owns exactly these bytes, never a view into the
        // larger buffer a chunk was cut from.
        let written = match self
            .store
            .put(&self.blob_key(&hash), Bytes::copy_from_slice(&bytes))
            .await
        {
            Ok(()) => {
                self.store
                    .put(&self.marker_key(&hash), Bytes::from(marker.to_json()))
                    .await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            // Nothing is removed: what is left (a blob half written, another writer's pair)
            // is checked against its marker on every read. Removing it could delete the
            // complete entry another page or worker just published for the same key (an
            // OPFS write fails while another context holds the file).
            self.lock().forget(&hash);
            return Err(e);
        }
        self.lock().touch(&hash, key, len, now);
        self.evict().await
    }

    /// Removes every entry of this namespace this page knows of or finds (a fresh scan of
    /// the markers), and forgets the index; returns how many were removed.
    ///
    /// # Errors
    /// [`BackendError::Storage`].
    pub async fn clear(&self) -> Result<u64, BackendError> {
        let entries = self.scan(true).await?;
        for e in &entries {
            self.drop_pair(&sha256_hex(e.key.as_bytes())).await?;
        }
        Ok(entries.len() as u64)
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl CacheBackend for MarkedBackend {
    fn name(&self) -> &'static str {
        self.store.name()
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError> {
        Ok(self.get_marked(key).await?.map(|(b, _)| b))
    }

    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError> {
        self.put_marked(key, bytes, "").await
    }

    async fn put_versioned(
        &self,
        key: &str,
        bytes: Bytes,
        version: &str,
    ) -> Result<(), BackendError> {
        self.put_marked(key, bytes, version).await
    }

    async fn get_versioned(
        &self,
        key: &str,
    ) -> Result<Option<(Bytes, Option<String>)>, BackendError> {
        Ok(self.get_marked(key).await?.map(|(b, v)| (b, Some(v))))
    }

    async fn delete(&self, key: &str) -> Result<(), BackendError> {
        self.drop_pair(&sha256_hex(key.as_bytes())).await
    }

    /// A fresh scan of the markers (it also refreshes the index with other pages' entries).
    async fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        let mut all = self.scan(true).await?;
        all.retain(|e| e.key.starts_with(prefix));
        Ok(all)
    }

    fn usage(&self) -> Usage {
        let g = self.lock();
        Usage {
            entries: g.entries.len() as u64,
            bytes: g.total,
            evictions: g.evictions,
        }
    }
}

/// A [`KeyValueStore`] in memory (a map behind a mutex), for tests and as the model of what
/// a JS-supplied store does. Cloning shares the map.
#[derive(Debug, Clone, Default)]
pub struct MapStore {
    map: Arc<Mutex<std::collections::BTreeMap<String, Bytes>>>,
}

impl MapStore {
    /// An empty store.
    pub fn new() -> MapStore {
        MapStore::default()
    }

    /// Applies `f` to the value under `key` in place (tests damage stored bytes with it).
    pub fn edit(&self, key: &str, f: impl FnOnce(&mut Vec<u8>)) {
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = g.get_mut(key) {
            let mut b = v.to_vec();
            f(&mut b);
            *v = Bytes::from(b);
        }
    }

    /// Every key held (tests).
    pub fn all_keys(&self) -> Vec<String> {
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        g.keys().cloned().collect()
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl KeyValueStore for MapStore {
    fn name(&self) -> &'static str {
        "map"
    }
    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError> {
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        Ok(g.get(key).cloned())
    }
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError> {
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        g.insert(key.to_string(), bytes);
        Ok(())
    }
    async fn delete(&self, key: &str) -> Result<(), BackendError> {
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        g.remove(key);
        Ok(())
    }
    async fn keys(&self, prefix: &str) -> Result<Vec<String>, BackendError> {
        let g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        Ok(g.keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::backend::conformance::{self, blob, BUDGET};

    fn backend(store: &MapStore, budget: Budget) -> MarkedBackend {
        MarkedBackend::new(Arc::new(store.clone()), "payload/", budget)
    }

    fn blob_key(key: &str) -> String {
        format!("payload/b/{}", sha256_hex(key.as_bytes()))
    }

    fn marker_key(key: &str) -> String {
        format!("payload/m/{}", sha256_hex(key.as_bytes()))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn passes_the_conformance_suite() {
        let store = MapStore::new();
        let b = backend(&store, BUDGET);
        let damage = |key: &str| store.edit(&blob_key(key), |v| v[100] ^= 1);
        conformance::check_backend(&b, BUDGET, Some(&damage)).await;
    }

    /// Each kind of damage is a miss, the pair is removed, and the next put is trusted.
    #[tokio::test(flavor = "current_thread")]
    async fn every_damage_is_a_miss_and_the_pair_goes() {
        type Damage = fn(&MapStore, &str);
        let cases: Vec<(&str, Damage)> = vec![
            ("truncated blob", |s, k| {
                s.edit(&blob_key(k), |v| v.truncate(10))
            }),
            ("wrong digest", |s, k| {
                s.edit(&blob_key(k), |v| v[0] ^= 0x80)
            }),
            ("missing marker", |s, k| {
                s.map.lock().unwrap().remove(&marker_key(k));
            }),
            ("marker without blob", |s, k| {
                s.map.lock().unwrap().remove(&blob_key(k));
            }),
            ("schema mismatch", |s, k| {
                s.edit(&marker_key(k), |v| {
                    let t = String::from_utf8(v.clone()).unwrap();
                    *v = t.replace("\"schema\":3", "\"schema\":2").into_bytes();
                })
            }),
            ("oversize marker", |s, k| {
                s.edit(&marker_key(k), |v| {
                    v.pop();
                    v.extend(std::iter::repeat_n(b' ', MAX_MARKER_BYTES as usize));
                    v.push(b'}');
                })
            }),
            ("marker of another key", |s, k| {
                s.edit(&marker_key(k), |v| {
                    let t = String::from_utf8(v.clone()).unwrap();
                    *v = t.replace("\"key\":\"k\"", "\"key\":\"other\"").into_bytes();
                })
            }),
            ("unparsable marker", |s, k| {
                s.edit(&marker_key(k), |v| v.truncate(5))
            }),
        ];
        for (what, damage) in cases {
            let store = MapStore::new();
            let b = backend(&store, BUDGET);
            b.put("k", blob(1, 5000)).await.unwrap();
            damage(&store, "k");
            assert_eq!(b.get("k").await.unwrap(), None, "{what}: a miss");
            assert!(
                store.all_keys().is_empty(),
                "{what}: pair removed, left {:?}",
                store.all_keys()
            );
            assert_eq!(b.usage().entries, 0, "{what}: forgotten");
            b.put("k", blob(1, 5000)).await.unwrap();
            assert_eq!(b.get("k").await.unwrap(), Some(blob(1, 5000)), "{what}");
        }
    }

    /// Entries, their version tokens and their least-recently-used order survive a new
    /// backend on the same store (a reloaded page): the entry read before the reload is kept
    /// over one written earlier and never read.
    #[tokio::test(flavor = "current_thread")]
    async fn lru_order_and_versions_survive_a_reload() {
        let store = MapStore::new();
        let budget = Budget {
            bytes: 3000,
            entries: 100,
        };
        let b = backend(&store, budget);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            b.put_marked(k, blob(i as u64, 1000), &format!("v{i}"))
                .await
                .unwrap();
        }
        // Make the recorded times distinct and old, then read "a" (recorded as now).
        for (k, t) in [("a", 1_000), ("b", 2_000), ("c", 3_000)] {
            store.edit(&marker_key(k), |v| {
                let mut m: Marker = serde_json::from_slice(v).unwrap();
                m.used = t;
                *v = m.to_json();
            });
        }
        let reloaded = backend(&store, budget);
        assert_eq!(
            reloaded.get_marked("a").await.unwrap(),
            Some((blob(0, 1000), "v0".to_string()))
        );
        let again = backend(&store, budget);
        again.put("d", blob(9, 1000)).await.unwrap();
        assert_eq!(
            again.get("b").await.unwrap(),
            None,
            "b was least recently used"
        );
        assert_eq!(again.get("a").await.unwrap(), Some(blob(0, 1000)));
        assert_eq!(again.get("c").await.unwrap(), Some(blob(2, 1000)));
        assert_eq!(again.usage().bytes, 3000);
    }

    /// Entries another page wrote and this page then reads count in its view, and the view
    /// stays within the budget after every read, not only after its own writes.
    #[tokio::test(flavor = "current_thread")]
    async fn reads_of_other_pages_entries_keep_the_budget() {
        let store = MapStore::new();
        let budget = Budget {
            bytes: 3000,
            entries: 100,
        };
        let (one, two) = (backend(&store, budget), backend(&store, budget));
        two.put("d", blob(4, 1000)).await.unwrap();
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            one.put(k, blob(i as u64, 1000)).await.unwrap();
        }
        for k in ["a", "b", "c"] {
            assert!(two.get(k).await.unwrap().is_some(), "{k}");
            assert!(
                two.usage().bytes <= 3000,
                "after reading {k}: {:?}",
                two.usage()
            );
        }
        assert_eq!(two.usage().entries, 3);
    }

    /// A page knows the entries another page wrote once it scans, and `clear` removes all.
    #[tokio::test(flavor = "current_thread")]
    async fn two_pages_share_one_store() {
        let store = MapStore::new();
        let one = backend(&store, BUDGET);
        let two = backend(&store, BUDGET);
        one.put("x", blob(1, 10)).await.unwrap();
        two.put("y", blob(2, 20)).await.unwrap();
        assert_eq!(two.get("x").await.unwrap(), Some(blob(1, 10)));
        assert_eq!(one.list("").await.unwrap().len(), 2);
        assert_eq!(one.usage().bytes, 30);
        assert_eq!(two.clear().await.unwrap(), 2);
        assert!(store.all_keys().is_empty());
        assert_eq!(one.get("y").await.unwrap(), None);
    }
}
