//! Zarr stores over `fetch`: one [`FetchSource`] per object key, counted and retried.

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::CacheCoordinator;
use crate::formats::zarr::{KeyOpener, ZarrStore};
use crate::io::fetch::{FetchOptions, FetchSource};
use crate::io::{Counted, IoError, RangeSource, RetryConfig, Retrying, Traffic};
use std::sync::Arc;

/// The object opener of a Zarr store: a [`FetchSource`] per key with `headers`, counted into
/// `traffic`, retried (each attempt counts as a request).
pub fn fetch_opener(headers: Vec<(String, String)>, traffic: &Traffic) -> Arc<dyn KeyOpener> {
    let traffic = traffic.clone();
    Arc::new(move |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
        let fetch = FetchSource::with_options(
            url,
            FetchOptions {
                headers: headers.clone(),
                ..Default::default()
            },
        );
        Ok(Arc::new(Retrying::new(
            Counted::new(fetch, traffic.clone()),
            RetryConfig::default(),
        )))
    })
}

/// Opens the Zarr array at `options.path` (the store root when `None`) of the store at
/// `base` over `fetch`, whose caches `coordinator` owns (the cache identity is
/// `options.cache_key` when given, else the base URL and `headers`).
///
/// # Errors
/// As [`RemoteArray::open_zarr`].
pub async fn open_zarr(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> crate::Result<RemoteArray> {
    let traffic = Traffic::new();
    let key = coordinator.key_for(base, &headers, options.cache_key.as_deref());
    let store = Arc::new(ZarrStore::new(base, fetch_opener(headers, &traffic)));
    let path = options.path.clone().unwrap_or_default();
    RemoteArray::open_zarr_with_cache(store, &path, traffic, key, options, coordinator).await
}
