//! [`MemoryBackend`]: cached blobs in memory (wasm linear memory in JS hosts), in the one
//! byte-bounded LRU ([`ByteLru`]).

use super::{BackendError, Budget, CacheBackend, Entry, Usage};
use crate::cache::{ByteLru, CacheStats};
use bytes::Bytes;

/// Blobs in memory within a [`Budget`], least recently used first out. Every blob is copied
/// on `put`, so an entry owns exactly its bytes ([`ByteLru::new`]). Its operations never wait
/// and never fail. Cloning shares the entries.
#[derive(Debug, Clone)]
pub struct MemoryBackend {
    lru: ByteLru<String>,
}

impl MemoryBackend {
    /// An empty backend within `budget`.
    pub fn new(budget: Budget) -> MemoryBackend {
        MemoryBackend {
            lru: ByteLru::with_max_entries(budget.bytes, budget.entries),
        }
    }

    /// The blob under `key` (as [`CacheBackend::get`], without awaiting).
    pub fn get_now(&self, key: &str) -> Option<Bytes> {
        self.lru.get(&key.to_string())
    }

    /// Stores a copy of `bytes` under `key` (as [`CacheBackend::put`], without awaiting).
    pub fn put_now(&self, key: &str, bytes: Bytes) {
        self.lru.insert(key.to_string(), bytes);
    }

    /// Counters: entries, bytes, hits, misses and evictions.
    pub fn stats(&self) -> CacheStats {
        self.lru.stats()
    }

    /// Drops every entry.
    pub fn clear(&self) {
        self.lru.clear();
    }

    /// The byte bound.
    pub fn max_bytes(&self) -> u64 {
        self.lru.max_bytes()
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl CacheBackend for MemoryBackend {
    fn name(&self) -> &'static str {
        "memory"
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError> {
        Ok(self.get_now(key))
    }

    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError> {
        self.put_now(key, bytes);
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<(), BackendError> {
        self.lru.remove(&key.to_string());
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        Ok(self
            .lru
            .keys_where(|k| k.starts_with(prefix))
            .into_iter()
            .map(|(key, bytes)| Entry { key, bytes })
            .collect())
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<u64, BackendError> {
        let before = self.lru.stats().entries;
        self.lru.retain(|k| !k.starts_with(prefix));
        Ok(before - self.lru.stats().entries)
    }

    fn usage(&self) -> Usage {
        let s = self.lru.stats();
        Usage {
            entries: s.entries,
            bytes: s.bytes,
            evictions: s.evictions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn passes_the_conformance_suite() {
        let budget = super::super::conformance::BUDGET;
        let b = MemoryBackend::new(budget);
        super::super::conformance::check_backend(&b, budget, None).await;
    }
}
