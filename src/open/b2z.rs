//! Opening `.b2z` containers: the store (listed once, its manifest kept by the discovery
//! cache, a small archive's bytes kept as the small-source copy) and its leaves as arrays
//! sharing the store's transport, traffic and coordinator (spec: remote cache design, ".b2z
//! archives", "Identity and ownership").

use super::{assemble, record, refuse_mutable, seed_of, source_key, transport};
use crate::array::{OpenOptions, RemoteArray};
use crate::cache::{CacheCoordinator, CacheKey, CacheStatus, Item, SourceKey};
use crate::error::Result;
use crate::formats::b2nd::B2ndSeed;
use crate::formats::b2z::{B2zListingSeed, B2zStore};
use crate::formats::{ArrayFormat, ChunkPlace, FormatError, FormatSeed, NodeKind};
use crate::io::{RangeSource, SourceInfo, Traffic};
use crate::store::{Container, RemoteStore};
use std::sync::Arc;

/// Scope under which a `.b2z` store's manifest is recorded.
pub(crate) const B2Z_SCOPE: &str = "#b2z";

/// Whether `location` names a `.b2z` archive by its suffix (ignoring a URL's query and
/// fragment, RFC 3986 section 3.4).
pub fn looks_like_b2z(location: &str) -> bool {
    super::name_ends_with(location, ".b2z")
}

/// Opens the `.b2z` at `location` as a store whose caches `coordinator` owns.
///
/// # Errors
/// As [`RemoteStore::open_b2z`]; the transport's errors.
pub async fn open_b2z_store(
    location: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteStore> {
    let traffic = Traffic::new();
    let key = source_key(
        location,
        &headers,
        &coordinator,
        options.cache_key.as_deref(),
    );
    let t = transport(location, headers.clone(), &traffic)?;
    let store = RemoteStore::open_b2z(t, traffic, options, coordinator, key).await?;
    let (at, sent) = (location.to_string(), headers);
    Ok(store.with_reopen(Box::new(move |traffic: &Traffic| {
        Ok(Container::File(transport(&at, sent.clone(), traffic)?))
    })))
}

/// Opens the array at `options.path` of the `.b2z` at `location` (the only array when no
/// path is given).
///
/// # Errors
/// As [`open_b2z_store`] and [`RemoteStore::get`]; `INVALID_ARGUMENT` when no path is given
/// and the archive holds several arrays (naming them).
pub async fn open_b2z_array(
    location: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let path = options
        .path
        .clone()
        .filter(|p| !p.trim_matches('/').is_empty());
    let store = open_b2z_store(location, headers, options, coordinator).await?;
    let path = match path {
        Some(p) => p,
        None => {
            let arrays: Vec<String> = store
                .nodes()
                .iter()
                .filter(|n| n.kind == NodeKind::Array && n.error.is_none())
                .map(|n| n.path.clone())
                .collect();
            match arrays.as_slice() {
                [one] => one.clone(),
                _ => {
                    return Err(FormatError::PathNeeded {
                        location: store.source_info().location.clone(),
                        detail: format!(
                            "a .b2z store: give the path of an array (CLI --path, JS path); {}",
                            crate::formats::its_arrays(&arrays)
                        ),
                    }
                    .into())
                }
            }
        }
    };
    store.get(&path).await
}

impl RemoteStore {
    /// Opens the `.b2z` archive at `transport` (counting into `traffic`) and lists it. Warm
    /// (the coordinator holds the manifest): no request; the small-source copy, when held
    /// and of the recorded identity, then serves every member. Cold: one suffix request (and
    /// for an archive up to [`OpenOptions::small_source_bytes`], one more for the rest, the
    /// copy), then the listing's reads ([`crate::formats::b2z::list`]).
    ///
    /// # Errors
    /// I/O errors; [`FormatError`] for a malformed archive;
    /// [`crate::Error::InvalidArgument`] for [`OpenOptions::assume_immutable`] false.
    pub async fn open_b2z(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteStore> {
        if !options.assume_immutable {
            refuse_mutable(transport.location(), "b2z")?;
        }
        let coordinator = coordinator.for_source(&key);
        let options = OpenOptions {
            path: None,
            ..options
        };
        let source_id = key.source_id();
        let mut status = CacheStatus::Created;
        match coordinator.discovery_lookup(&key.scoped(B2Z_SCOPE)).await {
            Ok(rec) => {
                if let Some(seed) = B2zListingSeed::from_seed(&seed_of(&rec)) {
                    let info = SourceInfo {
                        location: transport.location().to_string(),
                        ..SourceInfo::from(&rec.source)
                    };
                    let whole = match coordinator.source_copy(&source_id).await {
                        Some((ident, bytes)) if ident == rec.source => Some(bytes),
                        _ => None,
                    };
                    if let Ok(store) =
                        B2zStore::from_seed(transport.clone(), info.clone(), seed, whole)
                    {
                        let nodes = store.nodes().to_vec();
                        return Ok(RemoteStore::from_parts(
                            Container::B2z(Arc::new(store)),
                            traffic,
                            coordinator,
                            key,
                            options,
                            info,
                            nodes,
                            CacheStatus::Reused,
                        ));
                    }
                }
                status = CacheStatus::Invalidated;
            }
            Err(true) => status = CacheStatus::Invalidated,
            Err(false) => {}
        }
        let (store, whole) =
            B2zStore::discover(transport, options.small_source_bytes, options.concurrency).await?;
        let info = store.info().clone();
        publish(&store, whole, &coordinator, &key).await;
        let nodes = store.nodes().to_vec();
        Ok(RemoteStore::from_parts(
            Container::B2z(Arc::new(store)),
            traffic,
            coordinator,
            key,
            options,
            info,
            nodes,
            status,
        ))
    }
}

/// Records `store`'s manifest under `key` and a small archive's bytes `whole` as the
/// small-source copy.
pub(crate) async fn publish(
    store: &B2zStore,
    whole: Option<bytes::Bytes>,
    coordinator: &CacheCoordinator,
    key: &SourceKey,
) {
    let info = store.info();
    if let Some(bytes) = whole {
        coordinator
            .put_source_copy(&key.source_id(), &info.into(), bytes)
            .await;
    }
    coordinator
        .put_discovery(
            &key.scoped(B2Z_SCOPE),
            &record(info, store.seed().to_seed()),
        )
        .await;
}

/// Opens the leaf at `path` (normalised) of `store` as an array sharing the store's
/// traffic, coordinator and cache identity `key`. A leaf whose frame the listing holds
/// opens without a request; one whose offsets were too large to list is read once and its
/// frame recorded under the leaf's scope. Chunks of a member read whole at discovery are
/// put into the payload cache.
///
/// # Errors
/// As [`B2zStore::open_leaf`].
pub(crate) async fn open_leaf(
    store: &Arc<B2zStore>,
    path: &str,
    traffic: Traffic,
    key: &SourceKey,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let coordinator = coordinator.for_source(key);
    let recorded = match coordinator.discovery(&key.scoped(path)).await {
        Some(rec) => B2ndSeed::from_seed(&seed_of(&rec)),
        None => None,
    };
    let opened = store.open_leaf(path, recorded).await?;
    let info = store.info().clone();
    if !opened.from_seed {
        if let Some(seed) = opened.array.seed() {
            coordinator
                .put_discovery(&key.scoped(path), &record(&info, seed))
                .await;
        }
    }
    let whole = opened.prefetched.clone();
    let array: Box<dyn ArrayFormat> = Box::new(opened.array.in_b2z());
    // Chunks of a member read whole: into the payload cache, as any fetched chunk.
    let mut primed = Vec::new();
    if let (Some(bytes), true) = (whole, coordinator.retains_payload()) {
        let n = array.grid().nchunks().unwrap_or(0);
        for c in 0..n {
            if let Ok(ChunkPlace::Stored(r)) = array.locate(c) {
                if r.end as usize <= bytes.len() && r.start < r.end {
                    primed.push((c, bytes.slice(r.start as usize..r.end as usize)));
                }
            }
        }
    }
    let arr = assemble(
        opened.source,
        array,
        coordinator.clone(),
        key,
        path,
        options,
        traffic,
        info,
    );
    for (c, b) in primed {
        coordinator
            .put_payload(
                CacheKey {
                    source: arr.payload_identity(),
                    item: Item::Chunk(c),
                },
                b,
            )
            .await;
    }
    Ok(arr)
}
