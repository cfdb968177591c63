//! Cache backends: where cached blobs live, behind one async trait, [`CacheBackend`] (modelled
//! on `object_store`'s `ObjectStore`: a few required primitives, the rest provided).
//!
//! - [`memory`]: a byte-bounded LRU in memory ([`super::ByteLru`]), every host.
//! - [`fs`] (native only): a directory of blobs with SHA-256 markers; its file work runs on
//!   tokio's blocking pool, off the async executor.
//! - [`marked`]: blobs with the same markers over any key-value store
//!   ([`marked::KeyValueStore`]): IndexedDB, OPFS or a JS-supplied store in JS hosts
//!   (`src/wasm/stores/`), a map in tests.
//! - [`marker`]: the marker both persistent backends publish with each blob.
//! - `conformance` (tests, or the `conformance` feature): the checks every backend must pass,
//!   natively and, for the JS stores, from wasm tests in Chromium and Node.
//!
//! A key is any string (slashes, newlines, unicode, kilobytes long): a backend must store it
//! without interpreting it (the filesystem backend names files by the key's SHA-256). A
//! backend owns exactly the bytes it is given (it copies them, or writes them out), and keeps
//! within its [`Budget`]: bytes and entries, least recently used (by `put` and `get`) first
//! out.
//!
//! A backend reports failures as [`BackendError`]; the coordinator turns a failed `get` into a
//! miss and a failed `put` into a count in its stats, never into a failed read (the cache is
//! an optimisation; spec: remote cache design, "Missing, corrupt, or interrupted file/marker
//! pairs are cache misses").

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
#[cfg(not(target_arch = "wasm32"))]
pub mod fs;
pub mod marked;
pub mod marker;
pub mod memory;

use crate::io::{MaybeSend, MaybeSync};
use bytes::Bytes;

pub use marked::{KeyValueStore, MarkedBackend};
pub use memory::MemoryBackend;

/// The most a backend retains: blob bytes (keys and bookkeeping not counted, as the spec's
/// `max_cache_bytes` bounds "retained compressed payload") and entries (which bounds the
/// bookkeeping, the keys included, when many entries are small or empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Most blob bytes retained (`u64::MAX`: no byte bound). A blob larger than this is not
    /// stored.
    pub bytes: u64,
    /// Most entries retained.
    pub entries: u64,
}

/// Default entry bound of every backend: 262,144 entries. A payload entry is a chunk or a
/// block (typically 64 KiB to a few MiB), so the byte bound is reached first; the entry
/// bound holds the bookkeeping (about 200 bytes plus the key per entry) when entries are
/// tiny.
pub const DEFAULT_MAX_ENTRIES: u64 = 1 << 18;

impl Budget {
    /// `bytes` of blobs and at most [`DEFAULT_MAX_ENTRIES`] entries.
    pub fn bytes(bytes: u64) -> Budget {
        Budget {
            bytes,
            entries: DEFAULT_MAX_ENTRIES,
        }
    }
}

/// One entry as listed: its key and its blob's size in bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// The key, as given to [`CacheBackend::put`].
    pub key: String,
    /// The blob's size in bytes.
    pub bytes: u64,
}

/// What a backend holds now, from its own bookkeeping (no storage is read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Entries held.
    pub entries: u64,
    /// Blob bytes held.
    pub bytes: u64,
    /// Entries removed to stay within the [`Budget`] since the backend was made.
    pub evictions: u64,
}

/// A backend's failure. Never fatal to a read: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The storage failed (a file could not be written, a quota was exceeded, a blocking task
    /// was cancelled). `detail` names the operation and the cause, never a key (keys may
    /// hold a public URL, which is not secret, but are long).
    #[error("cache backend {backend}: {detail}")]
    Storage {
        /// The backend's name ([`CacheBackend::name`]).
        backend: &'static str,
        /// What failed.
        detail: String,
    },
}

/// Where cached blobs live. Required: [`get`](CacheBackend::get),
/// [`put`](CacheBackend::put), [`delete`](CacheBackend::delete),
/// [`list`](CacheBackend::list), [`usage`](CacheBackend::usage) and
/// [`name`](CacheBackend::name); [`delete_prefix`](CacheBackend::delete_prefix) is provided.
///
/// A blob that fails the backend's own checks (a marker that does not match, a digest that
/// differs) is a miss, and the entry is removed.
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
pub trait CacheBackend: MaybeSend + MaybeSync {
    /// A short name for messages (`memory`, `fs`).
    fn name(&self) -> &'static str;

    /// The blob under `key`, marking it most recently used; `None` when absent or damaged.
    ///
    /// # Errors
    /// [`BackendError::Storage`] when the storage cannot be asked at all.
    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError>;

    /// Stores `bytes` under `key` (replacing an entry already there) as most recently used,
    /// then removes least recently used entries beyond the [`Budget`]. A blob larger than
    /// the byte budget is not stored (and an older entry under `key` is removed), which is
    /// not an error.
    ///
    /// # Errors
    /// [`BackendError::Storage`]: a later `get` of `key` returns the bytes of a complete
    /// earlier `put`, or nothing; never a mix, never a part.
    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError>;

    /// Stores `bytes` under `key` as [`CacheBackend::put`] does, with `version`, an opaque
    /// token naming the version of what the bytes hold (a source copy: its ETag, else its
    /// Last-Modified and size; [`crate::cache::discovery::SourceIdentity::version_token`]).
    /// Provided: a backend without version tokens stores the bytes alone.
    ///
    /// # Errors
    /// As [`CacheBackend::put`].
    async fn put_versioned(
        &self,
        key: &str,
        bytes: Bytes,
        version: &str,
    ) -> Result<(), BackendError> {
        let _ = version;
        self.put(key, bytes).await
    }

    /// The blob under `key` as [`CacheBackend::get`] gives it, with the version token it was
    /// stored with ([`CacheBackend::put_versioned`]); `None` as the token when the backend
    /// keeps none (provided: such a backend).
    ///
    /// # Errors
    /// As [`CacheBackend::get`].
    async fn get_versioned(
        &self,
        key: &str,
    ) -> Result<Option<(Bytes, Option<String>)>, BackendError> {
        Ok(self.get(key).await?.map(|b| (b, None)))
    }

    /// Removes the entry under `key` (absent is not an error).
    ///
    /// # Errors
    /// [`BackendError::Storage`].
    async fn delete(&self, key: &str) -> Result<(), BackendError>;

    /// The entries whose key starts with `prefix` (`""`: all), with their sizes, in no
    /// particular order.
    ///
    /// # Errors
    /// [`BackendError::Storage`].
    async fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError>;

    /// Removes every entry whose key starts with `prefix`; returns how many were removed.
    ///
    /// # Errors
    /// The first [`BackendError`] of [`CacheBackend::list`] or [`CacheBackend::delete`].
    async fn delete_prefix(&self, prefix: &str) -> Result<u64, BackendError> {
        let entries = self.list(prefix).await?;
        for e in &entries {
            self.delete(&e.key).await?;
        }
        Ok(entries.len() as u64)
    }

    /// Entries, bytes and evictions now, from the backend's bookkeeping.
    fn usage(&self) -> Usage;
}
