//! [`RemoteStore`]: a container (an HDF5 file or a Zarr store) opened once, whose arrays share its transport,
//! traffic counter, discovery metadata and cache coordinator (spec: remote cache design,
//! "Identity and ownership": "A RemoteStore discovery owner shares transport, metadata,
//! traffic, and a cache coordinator across its leaves").
//!
//! Opening lists the hierarchy ([`RemoteStore::nodes`]): every group and array, with each
//! array's shape and dtype, read from object headers (HDF5, [`crate::formats::hdf5::list`])
//! or from (consolidated) metadata (Zarr, [`crate::formats::zarr::list_nodes`]); no chunk
//! index is read until an array is opened. The listing is kept by the coordinator (for Zarr,
//! the remembered metadata objects), and so is each opened array's discovery record, so a
//! reopen of the store and [`RemoteStore::get`] of an array opened before make no request.
//! A small file (up to [`OpenOptions::small_source_bytes`]) is fetched whole once and its
//! copy serves every dataset.

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::discovery::{NodesRecord, DISCOVERY_VERSION};
use crate::cache::{CacheCoordinator, SourceKey};
use crate::error::Result;
use crate::formats::zarr::ZarrStore;
use crate::formats::{FormatError, Node};
use crate::io::{RangeSource, SourceInfo, Traffic, TrafficSnapshot};
use std::sync::Arc;

/// Most nodes a listing holds; a larger hierarchy (or a cycle of hard links) is cut there
/// and the last node says so in its `error`.
pub const MAX_NODES: usize = 100_000;

/// Deepest group nesting followed (a hard link to an ancestor would otherwise recurse
/// forever).
pub const MAX_DEPTH: usize = 64;

/// Scope under which a container's listing is recorded.
const NODES_SCOPE: &str = "#nodes";

/// A container opened once; its arrays share its caches and traffic.
pub struct RemoteStore {
    container: Container,
    traffic: Traffic,
    coordinator: CacheCoordinator,
    key: SourceKey,
    options: OpenOptions,
    info: SourceInfo,
    nodes: Vec<Node>,
}

/// What a store reads its leaves from.
#[derive(Clone)]
enum Container {
    /// One object (an HDF5 file) read by ranges.
    File(Arc<dyn RangeSource>),
    /// A Zarr store: one object per key, metadata remembered.
    Zarr(Arc<ZarrStore>),
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("location", &self.info.location)
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

/// `/a/b` from a path given as `a/b`, `/a/b/` or `/a/b`.
pub fn normalise_path(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

impl RemoteStore {
    /// Opens the container at `transport` (counting into `traffic`) and lists it. `key` is
    /// the cache identity (URL and fingerprint of the headers `transport` sends).
    /// `options.path` is ignored; the other options apply to every [`RemoteStore::get`].
    ///
    /// Warm (the coordinator holds the listing): no request.
    ///
    /// # Errors
    /// I/O errors; [`FormatError::Unsupported`] when the source is not a container read
    /// here (HDF5 only for now; a `.b2nd` is a single array: open it with
    /// [`RemoteArray::open_with_cache`]); [`FormatError::Invalid`] when the root group
    /// cannot be read.
    pub async fn open(
        transport: Arc<dyn RangeSource>,
        traffic: Traffic,
        options: OpenOptions,
        coordinator: CacheCoordinator,
        key: SourceKey,
    ) -> Result<RemoteStore> {
        let coordinator = coordinator.for_source(&key);
        let options = OpenOptions {
            path: None,
            ..options
        };
        let store = |info: SourceInfo, nodes: Vec<Node>| RemoteStore {
            container: Container::File(transport.clone()),
            traffic: traffic.clone(),
            coordinator: coordinator.clone(),
            key: key.clone(),
            options: options.clone(),
            info,
            nodes,
        };
        if let Some(rec) = coordinator.nodes(&key.scoped(NODES_SCOPE)).await {
            let info = SourceInfo {
                location: transport.location().to_string(),
                ..SourceInfo::from(&rec.source)
            };
            return Ok(store(info, rec.nodes));
        }
        let source_id = key.source_id();
        let copy = coordinator.source_copy(&source_id).await;
        let (source, head, info) =
            RemoteArray::open_bytes(transport.clone(), &options, &coordinator, &source_id, copy)
                .await?;
        if !crate::formats::hdf5::is_hdf5(&head) {
            let what = if crate::formats::b2nd::is_frame(&head) {
                "a Blosc2 frame (a single array: open it as an array)".to_string()
            } else {
                format!(
                    "first bytes {}",
                    head.iter()
                        .take(8)
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>()
                )
            };
            return Err(FormatError::Unsupported {
                location: info.location.clone(),
                format: "store",
                detail: format!("stores list HDF5 files and Zarr stores; this source is {what}"),
            }
            .into());
        }
        // The batched listing: shapes and dtypes from object headers, no chunk index read
        // (chunk maps wait until a dataset is opened).
        let nodes = crate::formats::hdf5::list(&*source, head, info.len).await?;
        coordinator
            .put_nodes(
                &key.scoped(NODES_SCOPE),
                &NodesRecord {
                    version: DISCOVERY_VERSION,
                    source: (&info).into(),
                    nodes: nodes.clone(),
                },
            )
            .await;
        Ok(store(info, nodes))
    }

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
        let coordinator = coordinator.for_source(&key);
        let record_key = crate::array::zarr_record_key(&key);
        if let Some(d) = coordinator
            .record(&record_key)
            .await
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            store.remember(d);
        }
        let nodes = crate::formats::zarr::list_nodes(&store).await?;
        if let Ok(json) = serde_json::to_vec(&store.discovery()) {
            coordinator.put_record(&record_key, json).await;
        }
        let info = SourceInfo {
            location: store.base().to_string(),
            ..Default::default()
        };
        Ok(RemoteStore {
            container: Container::Zarr(store),
            traffic,
            coordinator,
            key,
            options: OpenOptions {
                path: None,
                ..options
            },
            info,
            nodes,
        })
    }

    /// Groups and arrays of the container, sorted by path (the root group `/` first).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Opens the array at `path` (`/group/data`; a missing leading `/` is added), sharing
    /// this store's transport, traffic and caches. A dataset the listing discovered opens
    /// without a request.
    ///
    /// # Errors
    /// As [`RemoteArray::open_with_cache`] (a missing path is [`FormatError::Invalid`]).
    pub async fn get(&self, path: &str) -> Result<RemoteArray> {
        let options = OpenOptions {
            path: Some(normalise_path(path)),
            ..self.options.clone()
        };
        match &self.container {
            Container::File(transport) => {
                RemoteArray::open_with_cache(
                    transport.clone(),
                    self.traffic.clone(),
                    options,
                    self.coordinator.clone(),
                    self.key.clone(),
                )
                .await
            }
            Container::Zarr(store) => {
                RemoteArray::open_zarr_with_cache(
                    store.clone(),
                    &normalise_path(path),
                    self.traffic.clone(),
                    self.key.clone(),
                    options,
                    self.coordinator.clone(),
                )
                .await
            }
        }
    }

    /// Requests and bytes that reached the transport for this store and its arrays.
    pub fn traffic(&self) -> TrafficSnapshot {
        self.traffic.snapshot()
    }

    /// The cache coordinator.
    pub fn coordinator(&self) -> &CacheCoordinator {
        &self.coordinator
    }

    /// Size and validators of the container.
    pub fn source_info(&self) -> &SourceInfo {
        &self.info
    }
}
