//! The compressed-payload cache's keys and counters; its entries live in a
//! [`super::backend::CacheBackend`].

pub use super::lru::ByteLru;
use std::sync::Arc;

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

impl CacheKey {
    /// The key of the entry in a [`super::backend::CacheBackend`]: the source identity, a
    /// newline, then the item (`chunk C`, `block C B`, `heap A`), so every entry of a source
    /// shares the prefix `source + "\n"`.
    pub fn storage_key(&self) -> String {
        match self.item {
            Item::Chunk(c) => format!("{}\nchunk {c}", self.source),
            Item::Block(c, b) => format!("{}\nblock {c} {b}", self.source),
            Item::HeapCollection(a) => format!("{}\nheap {a}", self.source),
        }
    }
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

/// The in-memory compressed-payload cache: the memory backend, by
/// [`CacheKey::storage_key`].
pub type PayloadCache = super::backend::MemoryBackend;

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn key(i: u64) -> CacheKey {
        CacheKey {
            source: Arc::from("s"),
            item: Item::Chunk(i),
        }
    }

    #[test]
    fn evicts_least_recently_used_by_bytes() {
        let c = ByteLru::new(100);
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
        c.retain(|k: &CacheKey| &*k.source != "s");
        assert_eq!(c.stats().entries, 0);
        assert!(c.get(&key(3)).is_none());
    }

    #[test]
    fn zero_bound_keeps_nothing() {
        let c = ByteLru::new(0);
        c.insert(key(1), Bytes::from_static(b"x"));
        assert!(!c.contains(&key(1)));
    }
}
