//! Caches: the compressed-payload LRU bounded by `max_cache_bytes`, and cache policies.
