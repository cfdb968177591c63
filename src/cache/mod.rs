//! Caches kept apart by lifetime (spec: remote cache design, "Shared model"):
//! - discovery metadata lives with each format's reader (serialisable, small);
//! - compressed payload lives in the [`PayloadCache`], an LRU bounded by `max_cache_bytes`
//!   (256 MiB by default) shared by every chunk of every format an owner reads;
//! - complete copies of small sources are held by the reader that fetched them.

pub mod convert;
mod payload;
mod policy;

pub use payload::{CacheKey, CacheStats, Item, PayloadCache};
pub use policy::{CachePolicy, DEFAULT_MAX_CACHE_BYTES};
