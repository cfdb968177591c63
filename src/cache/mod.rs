//! Caches kept apart by lifetime (spec: remote cache design, "Shared model"):
//! - discovery metadata: versioned records ([`discovery`]) that rebuild a reader without a
//!   request;
//! - compressed payload: native Blosc2 chunks and blocks, or chunks of other formats
//!   converted to Blosc2 ([`convert`]), in an LRU bounded by `max_cache_bytes` (256 MiB by
//!   default);
//! - complete copies of small sources (up to 8 MiB), shared by every scope of one file.
//!
//! Each layer keeps its blobs in a [`backend::CacheBackend`]: memory ([`backend::memory`])
//! or, natively under DISK, a directory ([`backend::fs`]).
//!
//! A [`CacheCoordinator`] owns all three for the arrays and stores opened with it, under a
//! [`CachePolicy`]; [`SourceKey`] names a source (normalised URL plus credential
//! fingerprint).

pub mod backend;
pub mod convert;
mod coordinator;
pub mod discovery;
pub mod identity;
mod lru;
mod payload;
mod policy;
mod status;

/// The DISK store's former path: the filesystem backend ([`backend::fs`]).
#[cfg(not(target_arch = "wasm32"))]
pub use backend::fs as disk;
pub use coordinator::{
    CacheCoordinator, CoordinatorStats, LayerUsage, LockGuard, PublicationGuard, PublicationLocks,
    SourceUsage, UsageReport, MAX_DISK_RECORD_BYTES, MAX_DISK_SOURCE_BYTES,
    MAX_MEMORY_RECORD_BYTES, MAX_MEMORY_SOURCE_BYTES, PUBLICATION_LOCK_WAIT,
};
pub use discovery::DiscoveryRecord;
pub use identity::SourceKey;
pub use payload::{ByteLru, CacheKey, CacheStats, Item, PayloadCache};
pub use policy::{CachePolicy, DEFAULT_MAX_CACHE_BYTES};
pub use status::CacheStatus;
