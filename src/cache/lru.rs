//! [`ByteLru`]: the one byte-bounded least-recently-used map of the caches (compressed
//! payload, and the in-memory discovery records and small-source copies).

use super::backend::DEFAULT_MAX_ENTRIES;
use super::CacheStats;
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// A least-recently-used map of byte blobs bounded by `max_bytes` (the blobs' bytes only:
/// keys and bookkeeping are not counted, as the spec's `max_cache_bytes` bounds "retained
/// compressed payload"). An entry larger than the bound is not retained. Every blob is copied
/// on insert, so an entry owns exactly its bytes: a slice of a larger buffer (a chunk cut out
/// of a coalesced fetch) would otherwise keep the whole buffer, gaps included, alive, and
/// the bound would not bound memory. A blob that is the only handle on an allocation of
/// exactly its length already owns exactly its bytes and is kept as given. Cloning shares
/// the map.
#[derive(Debug, Clone)]
pub struct ByteLru<K> {
    inner: Arc<Mutex<Inner<K>>>,
}

/// Keys in least-recently-used order: `((last use, tie-break), key)`, oldest first. The
/// order of this map (last use: its tick, unique; tie-break 0) and of the marked backend
/// (last use in ms, then a sequence number: `super::backend::marked`): one type for both, so
/// the wasm module holds one instance of the ordered set's code (a B-tree instance is about
/// 7 KB of wasm code; two made the Blosc2-only module 2 KB larger, gzip -9).
pub(crate) type RecencyOrder<K> = BTreeSet<((u64, u64), K)>;

#[derive(Debug)]
struct Inner<K> {
    max_bytes: u64,
    /// Most entries held (bounds the keys and bookkeeping when blobs are small or empty).
    max_entries: u64,
    /// Whether inserts copy (see [`ByteLru::new`] and [`ByteLru::whole_objects`]).
    copy: bool,
    tick: u64,
    map: HashMap<K, (Bytes, u64)>,
    /// `((tick, 0), key)` of every entry.
    order: RecencyOrder<K>,
    stats: CacheStats,
}

impl<K: Clone + Ord + Hash> ByteLru<K> {
    /// An empty cache holding at most `max_bytes` of payload (0 retains nothing) in at most
    /// [`DEFAULT_MAX_ENTRIES`] entries.
    pub fn new(max_bytes: u64) -> Self {
        Self::with_max_entries(max_bytes, DEFAULT_MAX_ENTRIES)
    }

    /// An empty cache holding at most `max_bytes` of payload in at most `max_entries`
    /// entries (least recently used go first when either is exceeded).
    pub fn with_max_entries(max_bytes: u64, max_entries: u64) -> Self {
        ByteLru {
            inner: Arc::new(Mutex::new(Inner {
                max_bytes,
                max_entries,
                copy: true,
                tick: 0,
                map: HashMap::new(),
                order: RecencyOrder::new(),
                stats: CacheStats::default(),
            })),
        }
    }

    /// A map for blobs that are whole objects already (complete source bodies, records
    /// serialised on their own): inserts keep them as given, without a copy.
    pub fn whole_objects(max_bytes: u64) -> Self {
        let m = Self::new(max_bytes);
        m.lock().copy = false;
        m
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K>> {
        // A panic while holding the lock cannot leave the maps inconsistent in a way that
        // returns wrong data (entries are whole), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The payload for `key`, marking it most recently used.
    pub fn get(&self, key: &K) -> Option<Bytes> {
        let mut g = self.lock();
        g.tick += 1;
        let tick = g.tick;
        let found = match g.map.get_mut(key) {
            Some((bytes, t)) => {
                let old = *t;
                *t = tick;
                Some((bytes.clone(), old))
            }
            None => None,
        };
        match found {
            Some((bytes, old)) => {
                if let Some((_, key)) = g.order.take(&((old, 0), key.clone())) {
                    g.order.insert(((tick, 0), key));
                }
                g.stats.hits += 1;
                Some(bytes)
            }
            None => {
                g.stats.misses += 1;
                None
            }
        }
    }

    /// Whether `key` is present (does not change recency or counters).
    pub fn contains(&self, key: &K) -> bool {
        self.lock().map.contains_key(key)
    }

    /// Stores a copy of `payload` under `key` as most recently used, then evicts least
    /// recently used entries until the total is within the bound.
    pub fn insert(&self, key: K, payload: Bytes) {
        let len = payload.len() as u64;
        let (max, copy) = {
            let g = self.lock();
            (g.max_bytes, g.copy)
        };
        if len > max {
            // Not retained; an older entry under the key would now be stale.
            self.remove(&key);
            return;
        }
        // Copied outside the lock: the entry owns exactly its bytes (see the type's docs).
        let payload = if copy {
            owned_exactly(payload)
        } else {
            payload
        };
        let mut g = self.lock();
        g.tick += 1;
        let tick = g.tick;
        if let Some((old, t)) = g.map.insert(key.clone(), (payload, tick)) {
            g.stats.bytes -= old.len() as u64;
            g.stats.entries -= 1;
            g.order.remove(&((t, 0), key.clone()));
        }
        g.order.insert(((tick, 0), key));
        g.stats.bytes += len;
        g.stats.entries += 1;
        while g.stats.bytes > g.max_bytes || g.stats.entries > g.max_entries {
            let Some((_, k)) = g.order.pop_first() else {
                break;
            };
            if let Some((b, _)) = g.map.remove(&k) {
                g.stats.bytes -= b.len() as u64;
                g.stats.entries -= 1;
                g.stats.evictions += 1;
            }
        }
    }

    /// Drops the entry under `key`.
    pub fn remove(&self, key: &K) {
        let mut g = self.lock();
        if let Some((b, t)) = g.map.remove(key) {
            g.order.remove(&((t, 0), key.clone()));
            g.stats.bytes -= b.len() as u64;
            g.stats.entries -= 1;
        }
    }

    /// The keys accepted by `pick` with their blobs' sizes in bytes (recency and counters
    /// unchanged).
    pub fn keys_where(&self, pick: impl Fn(&K) -> bool) -> Vec<(K, u64)> {
        let g = self.lock();
        g.map
            .iter()
            .filter(|(k, _)| pick(k))
            .map(|(k, (b, _))| (k.clone(), b.len() as u64))
            .collect()
    }

    /// Keeps only the entries whose key `keep` accepts.
    pub fn retain(&self, keep: impl Fn(&K) -> bool) {
        let mut g = self.lock();
        let keys: Vec<K> = g.map.keys().filter(|k| !keep(k)).cloned().collect();
        for k in keys {
            if let Some((b, t)) = g.map.remove(&k) {
                g.order.remove(&((t, 0), k));
                g.stats.bytes -= b.len() as u64;
                g.stats.entries -= 1;
            }
        }
    }

    /// Drops everything.
    pub fn clear(&self) {
        let mut g = self.lock();
        g.map.clear();
        g.order.clear();
        g.stats.bytes = 0;
        g.stats.entries = 0;
    }

    /// The bound in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.lock().max_bytes
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        self.lock().stats
    }
}

/// `b` itself when it is the only handle on an allocation of exactly its length (a buffer
/// made for the entry, such as a converted chunk), else a copy of its bytes.
fn owned_exactly(b: Bytes) -> Bytes {
    match b.try_into_mut() {
        Ok(m) if m.capacity() == m.len() => m.freeze(),
        Ok(m) => Bytes::copy_from_slice(&m),
        Err(b) => Bytes::copy_from_slice(&b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_owns_exactly_its_bytes() {
        let fetched = Bytes::from(vec![7u8; 1 << 20]);
        let c = ByteLru::new(1 << 30);
        c.insert("chunk", fetched.slice(1000..2000));
        let kept = c.get(&"chunk").unwrap();
        assert_eq!(kept.len(), 1000);
        let (start, end) = (
            fetched.as_ptr() as usize,
            fetched.as_ptr() as usize + fetched.len(),
        );
        let p = kept.as_ptr() as usize;
        assert!(
            p < start || p >= end,
            "the entry does not point into the fetched buffer"
        );
        c.remove(&"chunk");
        assert!(!c.contains(&"chunk"));
    }

    /// A blob that is the only handle on an allocation of exactly its bytes (a converted
    /// chunk encoded for the cache) is kept as given: a copy would only cost time.
    #[test]
    fn a_buffer_made_for_the_entry_is_kept_without_a_copy() {
        let made = Bytes::from(vec![7u8; 4096]);
        let p = made.as_ptr();
        let c = ByteLru::new(1 << 30);
        c.insert("chunk", made);
        assert_eq!(c.get(&"chunk").unwrap().as_ptr(), p, "copied");
        // The only handle on a slice of a larger buffer is still copied.
        let part = Bytes::from(vec![1u8; 1 << 20]).slice(10..20);
        let q = part.as_ptr();
        c.insert("part", part);
        let kept = c.get(&"part").unwrap();
        assert_ne!(kept.as_ptr(), q);
        assert_eq!(&kept[..], &[1u8; 10]);
    }

    /// Empty blobs add no bytes, so only the entry bound holds their keys.
    #[test]
    fn empty_entries_are_bounded_in_number() {
        let c: ByteLru<u64> = ByteLru::new(1 << 20);
        for i in 0..DEFAULT_MAX_ENTRIES + 1000 {
            c.insert(i, Bytes::new());
        }
        let s = c.stats();
        assert_eq!((s.entries, s.evictions), (DEFAULT_MAX_ENTRIES, 1000));
        assert!(!c.contains(&0) && c.contains(&(DEFAULT_MAX_ENTRIES + 999)));
    }
}
