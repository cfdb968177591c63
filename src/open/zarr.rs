//! Opening Zarr stores and arrays (cargo feature `zarr`): the object opener per host, the
//! store, and the store's remembered metadata kept as a discovery record.

use super::{record, seed_of, source_key, Result};
use crate::array::{OpenOptions, RemoteArray};
use crate::cache::{convert, CacheCoordinator, CacheStatus, SourceKey};
use crate::formats::zarr::{KeyOpener, ZarrDiscovery, ZarrStore};
use crate::formats::FormatSeed;
use crate::io::memory::MemorySource;
use crate::io::{RangeSource, SourceInfo, Traffic};
use crate::store::{Container, RemoteStore};
use bytes::Bytes;
use std::sync::Arc;

pub use crate::formats::zarr::or_zarr;

/// The object opener of a Zarr store at `base`: natively an `HttpSource` per key (sharing
/// one client, counted into `traffic`, retried around the counter) for a URL, a counted
/// `FileSource` per key otherwise.
///
/// # Errors
/// [`crate::io::IoError::Network`] when the HTTP client cannot be built.
#[cfg(not(target_arch = "wasm32"))]
pub fn key_opener(
    base: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn KeyOpener>> {
    use crate::io::http::{HttpOptions, HttpSource};
    use crate::io::IoError;
    let traffic = traffic.clone();
    Ok(if super::is_url(base) {
        let options = HttpOptions {
            headers,
            ..Default::default()
        };
        let client = HttpSource::client_for(&options).map_err(|message| IoError::Network {
            location: base.to_string(),
            message,
        })?;
        Arc::new(
            move |url: &str| -> std::result::Result<Arc<dyn RangeSource>, IoError> {
                let http = HttpSource::with_client(url, client.clone(), options.clone())?;
                Ok(super::counted_and_retried(http, &traffic))
            },
        )
    } else {
        Arc::new(
            move |path: &str| -> std::result::Result<Arc<dyn RangeSource>, IoError> {
                super::counted_file(path, &traffic)
            },
        )
    })
}

/// The object opener of a Zarr store: a `FetchSource` per key with `headers`, counted into
/// `traffic`, retried around the counter (each attempt counts as a request).
///
/// # Errors
/// None in wasm; the `Result` matches native hosts.
#[cfg(target_arch = "wasm32")]
pub fn key_opener(
    _base: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn KeyOpener>> {
    let traffic = traffic.clone();
    Ok(Arc::new(
        move |url: &str| -> std::result::Result<Arc<dyn RangeSource>, crate::io::IoError> {
            let t = super::transport(url, headers.clone(), &traffic).map_err(|e| match e {
                crate::Error::Io(io) => io,
                other => crate::io::IoError::Network {
                    location: url.to_string(),
                    message: other.message(),
                },
            })?;
            Ok(t)
        },
    ))
}

/// A Zarr store at `base` (URL or local directory) whose objects are opened by
/// [`key_opener`], counting into `traffic`.
///
/// # Errors
/// As [`key_opener`].
// In wasm nothing is `Send`: the store lives on the one thread.
#[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
pub fn zarr_store(
    base: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<ZarrStore>> {
    Ok(Arc::new(ZarrStore::new(
        base,
        key_opener(base, headers, traffic)?,
    )))
}

/// Opens the Zarr array at `options.path` (the store root when `None`) of the store at
/// `base` (URL or local directory), with traffic of its own, whose caches (remembered
/// metadata, converted chunks) `coordinator` owns, under [`source_key`] of `base`.
///
/// # Errors
/// As [`RemoteArray::open_zarr_with_cache`]; [`key_opener`]'s errors.
pub async fn open_zarr(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let (store, traffic, key) = store_parts(base, headers, &options, &coordinator)?;
    let path = options.path.clone().unwrap_or_default();
    RemoteArray::open_zarr_with_cache(store, &path, traffic, key, options, coordinator).await
}

/// Scope ([`SourceKey::scoped`]) of a Zarr store's remembered metadata.
pub(crate) const ZARR_SCOPE: &str = "#zarr-metadata";

/// The coordinator's record key of a Zarr store's remembered metadata.
fn zarr_record_key(key: &SourceKey) -> String {
    key.scoped(ZARR_SCOPE)
}

/// The Zarr store's remembered metadata from `coordinator`'s discovery record under
/// `key` (tag `zarr`: [`ZarrDiscovery`]), if any; another tag or version is a miss. Returns
/// what was found: `Reused` (restored), `Created` (no record), `Invalidated` (a record that
/// was dropped or of another seed version).
async fn restore_zarr(
    store: &ZarrStore,
    coordinator: &CacheCoordinator,
    key: &SourceKey,
) -> CacheStatus {
    match coordinator.discovery_lookup(&zarr_record_key(key)).await {
        Ok(rec) => match ZarrDiscovery::from_seed(&seed_of(&rec)) {
            Some(d) => {
                store.remember(d);
                CacheStatus::Reused
            }
            None => CacheStatus::Invalidated,
        },
        Err(true) => CacheStatus::Invalidated,
        Err(false) => CacheStatus::Created,
    }
}

/// Keeps the Zarr store's remembered metadata (metadata objects, object versions) as
/// `coordinator`'s discovery record under `key`: tag `zarr`, the store's public base URL as
/// the source (a store has no size or validators of its own). Arrays of one store opened
/// separately share the record, so what is stored is merged into
/// ([`ZarrDiscovery::merged_over`], in one step with the write:
/// [`CacheCoordinator::update_record`]): a record of the same source, tag, seed version and
/// base keeps the metadata this store does not know; any other record (or a damaged one) is
/// replaced.
pub(crate) async fn keep_zarr(store: &ZarrStore, coordinator: &CacheCoordinator, key: &SourceKey) {
    let info = SourceInfo {
        location: store.base().to_string(),
        ..Default::default()
    };
    let mine = store.discovery();
    coordinator
        .update_record(&zarr_record_key(key), |held| {
            let rec = record(&info, mine.to_seed());
            let held = held
                .and_then(crate::cache::discovery::from_json::<crate::cache::DiscoveryRecord>)
                .filter(|h| h.source == rec.source)
                .and_then(|h| ZarrDiscovery::from_seed(&seed_of(&h)));
            let merged = match held {
                Some(h) => record(&info, mine.merged_over(h).to_seed()),
                None => rec,
            };
            crate::cache::discovery::to_json(&merged)
        })
        .await;
}

/// Opens the Zarr store at `location` (URL or local directory) as a container, with traffic of
/// its own, under [`source_key`] of `location`.
///
/// # Errors
/// As [`RemoteStore::open_zarr`]; [`key_opener`]'s errors.
pub async fn open_zarr_store(
    location: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteStore> {
    let (store, traffic, key) = store_parts(location, headers.clone(), &options, &coordinator)?;
    let opened = RemoteStore::open_zarr(store, traffic, options, coordinator, key).await?;
    // A refresh lists a new store, which remembers nothing yet.
    let base = location.to_string();
    Ok(opened.with_reopen(Box::new(move |traffic: &Traffic| {
        Ok(Container::Zarr(zarr_store(
            &base,
            headers.clone(),
            traffic,
        )?))
    })))
}

/// What opening the Zarr store at `base` starts from: the store, the traffic its objects
/// count into (its own), and its cache identity ([`source_key`], with `options.cache_key`).
///
/// # Errors
/// As [`key_opener`].
fn store_parts(
    base: &str,
    headers: Vec<(String, String)>,
    options: &OpenOptions,
    coordinator: &CacheCoordinator,
) -> Result<(Arc<ZarrStore>, Traffic, SourceKey)> {
    let traffic = Traffic::new();
    let key = source_key(base, &headers, coordinator, options.cache_key.as_deref());
    let store = zarr_store(base, headers, &traffic)?;
    Ok((store, traffic, key))
}

/// Opening a Zarr array from a store.
impl RemoteArray {
    /// Opens the Zarr array at `path` of `store` (`""` when the store root is the array)
    /// with a cache coordinator of its own made from `options.cache` and
    /// `options.max_cache_bytes`. `traffic` must be what the store's
    /// [`crate::formats::zarr::KeyOpener`] counts into; `key` names the store (normalised
    /// URL and credential fingerprint of the request headers).
    ///
    /// Peak memory of a read, besides the result: for each of the at most
    /// [`OpenOptions::concurrency`] objects in flight, its stored bytes and two decoded-chunk
    /// buffers (for a shard, those of its touched inner chunks), plus one Blosc2-encoded copy
    /// of the chunk being converted into the cache. Chunks over
    /// [`crate::formats::zarr::MAX_CHUNK_BYTES`] are refused at open.
    ///
    /// # Errors
    /// As [`crate::formats::zarr::ZarrArray::open`].
    pub async fn open_zarr(
        store: Arc<crate::formats::zarr::ZarrStore>,
        path: &str,
        traffic: Traffic,
        key: SourceKey,
        options: OpenOptions,
    ) -> Result<RemoteArray> {
        let coordinator = CacheCoordinator::new(options.cache, options.max_cache_bytes)?;
        Self::open_zarr_with_cache(store, path, traffic, key, options, coordinator).await
    }

    /// Opens the Zarr array at `path` of `store` with caches owned by `coordinator`. The
    /// store's remembered metadata ([`crate::formats::zarr::ZarrDiscovery`]) is kept as the
    /// coordinator's discovery record of the store, so a reopen in the same coordinator
    /// (or, under DISK, in the same cache directory) makes no metadata request. Converted
    /// chunks are stamped with the store key, the array path, its metadata
    /// ([`crate::formats::zarr::ZarrArray::stamp`]: geometry, dtype, codecs), and the
    /// conversion layout ([`convert::stamp`]).
    ///
    /// # Errors
    /// As [`crate::formats::zarr::ZarrArray::open`]; [`crate::Error::InvalidArgument`] when
    /// `options.assume_immutable` is false (Zarr assumes an immutable store).
    pub async fn open_zarr_with_cache(
        store: Arc<crate::formats::zarr::ZarrStore>,
        path: &str,
        traffic: Traffic,
        key: SourceKey,
        options: OpenOptions,
        coordinator: CacheCoordinator,
    ) -> Result<RemoteArray> {
        let coordinator = coordinator.for_source(&key);
        let status = restore_zarr(&store, &coordinator, &key).await;
        let z = Arc::new(crate::formats::zarr::ZarrArray::open(store, path).await?);
        if !options.assume_immutable {
            super::refuse_mutable(&z.store().url(z.path()), "zarr")?;
        }
        keep_zarr(z.store(), &coordinator, &key).await;
        let scope = crate::formats::zarr::normalise_path(path);
        let identity: Arc<str> = Arc::from(format!("{}\n{}", key.scoped(&scope), z.stamp()));
        let converted = coordinator
            .retains_payload()
            .then(|| convert::stamp(&identity, z.grid(), z.meta().dtype));
        let location = z.store().url(z.path());
        let info = SourceInfo {
            location: location.clone(),
            ..Default::default()
        };
        Ok(RemoteArray::from_parts(
            // Never read: a Zarr array's chunks are objects reached through its store.
            Arc::new(MemorySource::new(location, Bytes::new())),
            Box::new(z.clone()),
            coordinator,
            options,
            traffic,
            key,
            identity,
            converted,
            info,
            Some(z),
        )
        .with_cache_status(status))
    }
}

/// Opening a Zarr store as a container.
impl RemoteStore {
    /// Opens the Zarr store `store` (whose [`crate::formats::zarr::KeyOpener`] counts into
    /// `traffic`) and lists its groups and arrays ([`crate::formats::zarr::list_nodes`]:
    /// consolidated metadata when the store has it, else a walk of the group metadata). The
    /// store's remembered metadata is kept by `coordinator` as for
    /// [`RemoteArray::open_zarr_with_cache`], so a reopen makes no metadata request.
    ///
    /// # Errors
    /// [`FormatError`] when the root is not a Zarr group or array or its metadata is
    /// malformed; I/O errors.
    pub async fn open_zarr(
        store: Arc<ZarrStore>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteStore> {
        if !options.assume_immutable {
            super::refuse_mutable(store.base(), "a store (Zarr)")?;
        }
        let coordinator = coordinator.for_source(&key);
        let status = restore_zarr(&store, &coordinator, &key).await;
        let nodes = crate::formats::zarr::list_nodes(&store).await?;
        keep_zarr(&store, &coordinator, &key).await;
        let info = SourceInfo {
            location: store.base().to_string(),
            ..Default::default()
        };
        Ok(RemoteStore::from_parts(
            Container::Zarr(store),
            traffic,
            coordinator,
            key,
            OpenOptions {
                path: None,
                ..options
            },
            info,
            nodes,
            status,
        ))
    }
}
