//! The compressed-payload cache: one byte-bounded LRU shared by every format.

use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// What is cached for one source.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Item {
    /// A whole chunk, by its linear (C-order) index in the chunk grid.
    Chunk(u64),
    /// One block of a chunk: (chunk linear index, block linear index in the chunk).
    Block(u64, u64),
    /// An HDF5 global heap collection (variable-length data), by its absolute address.
    HeapCollection(u64),
}

/// Key of one cached payload: the source's identity (location plus validators or geometry
/// stamp, so a changed source never hits) and the item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey {
    /// Source identity string, e.g. `https://host/a.b2nd#etag="abc"`.
    pub source: Arc<str>,
    /// The chunk or block.
    pub item: Item,
}

/// Counters of a [`PayloadCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    /// Entries held.
    pub entries: u64,
    /// Payload bytes held.
    pub bytes: u64,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Entries evicted to stay under the bound.
    pub evictions: u64,
}

/// A least-recently-used cache of compressed payload bounded by `max_bytes` (payload bytes
/// only: keys and bookkeeping are not counted, as the spec's `max_cache_bytes` bounds
/// "retained compressed payload"). An entry larger than the bound is not retained.
/// Cloning shares the cache.
#[derive(Debug, Clone)]
pub struct PayloadCache {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug)]
struct Inner {
    max_bytes: u64,
    tick: u64,
    map: HashMap<CacheKey, (Bytes, u64)>,
    order: BTreeMap<u64, CacheKey>,
    stats: CacheStats,
}

impl PayloadCache {
    /// An empty cache holding at most `max_bytes` of payload (0 retains nothing).
    pub fn new(max_bytes: u64) -> Self {
        PayloadCache {
            inner: Arc::new(Mutex::new(Inner {
                max_bytes,
                tick: 0,
                map: HashMap::new(),
                order: BTreeMap::new(),
                stats: CacheStats::default(),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps inconsistent in a way that
        // returns wrong data (entries are whole), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The payload for `key`, marking it most recently used.
    pub fn get(&self, key: &CacheKey) -> Option<Bytes> {
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
                g.order.remove(&old);
                g.order.insert(tick, key.clone());
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
    pub fn contains(&self, key: &CacheKey) -> bool {
        self.lock().map.contains_key(key)
    }

    /// Stores `payload` under `key` as most recently used, then evicts least recently used
    /// entries until the total is within the bound.
    pub fn insert(&self, key: CacheKey, payload: Bytes) {
        let mut g = self.lock();
        let len = payload.len() as u64;
        if len > g.max_bytes {
            return;
        }
        g.tick += 1;
        let tick = g.tick;
        if let Some((old, t)) = g.map.insert(key.clone(), (payload, tick)) {
            g.stats.bytes -= old.len() as u64;
            g.stats.entries -= 1;
            g.order.remove(&t);
        }
        g.order.insert(tick, key);
        g.stats.bytes += len;
        g.stats.entries += 1;
        while g.stats.bytes > g.max_bytes {
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

    /// Drops every entry of one source.
    pub fn remove_source(&self, source: &str) {
        self.retain(|k| &*k.source != source);
    }

    /// Keeps only the entries whose key `keep` accepts.
    pub fn retain(&self, keep: impl Fn(&CacheKey) -> bool) {
        let mut g = self.lock();
        let keys: Vec<CacheKey> = g.map.keys().filter(|k| !keep(k)).cloned().collect();
        for k in keys {
            if let Some((b, t)) = g.map.remove(&k) {
                g.order.remove(&t);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> CacheKey {
        CacheKey {
            source: Arc::from("s"),
            item: Item::Chunk(i),
        }
    }

    #[test]
    fn evicts_least_recently_used_by_bytes() {
        let c = PayloadCache::new(100);
        c.insert(key(1), Bytes::from(vec![1u8; 40]));
        c.insert(key(2), Bytes::from(vec![2u8; 40]));
        assert_eq!(c.get(&key(1)).unwrap()[0], 1); // 1 is now most recent
        c.insert(key(3), Bytes::from(vec![3u8; 40])); // 120 > 100: evict 2
        assert!(c.contains(&key(1)));
        assert!(!c.contains(&key(2)));
        assert!(c.contains(&key(3)));
        let s = c.stats();
        assert_eq!((s.entries, s.bytes, s.evictions, s.hits), (2, 80, 1, 1));
        c.insert(key(4), Bytes::from(vec![4u8; 101])); // larger than the bound: not kept
        assert!(!c.contains(&key(4)));
        assert_eq!(c.stats().bytes, 80);
        c.insert(key(1), Bytes::from(vec![9u8; 10])); // replace updates the byte count
        assert_eq!(c.stats().bytes, 50);
        assert_eq!(c.get(&key(1)).unwrap()[0], 9);
        c.remove_source("s");
        assert_eq!(c.stats().entries, 0);
        assert!(c.get(&key(3)).is_none());
    }

    #[test]
    fn zero_bound_keeps_nothing() {
        let c = PayloadCache::new(0);
        c.insert(key(1), Bytes::from_static(b"x"));
        assert!(!c.contains(&key(1)));
    }
}
