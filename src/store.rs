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
use crate::cache::{CacheCoordinator, CacheStatus, SourceKey};
use crate::error::Result;
#[cfg(feature = "zarr")]
use crate::formats::zarr::ZarrStore;
use crate::formats::Node;
use crate::io::{RangeSource, SourceInfo, Traffic, TrafficSnapshot};
use std::sync::Arc;

/// Most nodes a listing holds; a larger hierarchy (or a cycle of hard links) is cut there
/// and the last node says so in its `error`.
pub const MAX_NODES: usize = 100_000;

/// Deepest group nesting followed (a hard link to an ancestor would otherwise recurse
/// forever).
pub const MAX_DEPTH: usize = 64;

/// A container opened once; its arrays share its caches and traffic.
pub struct RemoteStore {
    container: Container,
    traffic: Traffic,
    coordinator: CacheCoordinator,
    key: SourceKey,
    options: OpenOptions,
    info: SourceInfo,
    nodes: Vec<Node>,
    /// What the open found in the caches ([`RemoteStore::cache_status`]).
    status: CacheStatus,
}

/// What a store reads its leaves from.
#[derive(Clone)]
pub(crate) enum Container {
    /// One object (an HDF5 file) read by ranges.
    File(Arc<dyn RangeSource>),
    /// A Zarr store: one object per key, metadata remembered.
    #[cfg(feature = "zarr")]
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
    /// A store from its parts, built by the opener ([`crate::open`]): what its leaves are
    /// read from, its traffic, caches and cache identity, the options every
    /// [`RemoteStore::get`] takes, the container's identity, its listing and what the open
    /// found in the caches.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        container: Container,
        traffic: Traffic,
        coordinator: CacheCoordinator,
        key: SourceKey,
        options: OpenOptions,
        info: SourceInfo,
        nodes: Vec<Node>,
        status: CacheStatus,
    ) -> RemoteStore {
        RemoteStore {
            container,
            traffic,
            coordinator,
            key,
            options,
            info,
            nodes,
            status,
        }
    }

    /// Groups and arrays of the container, sorted by path (the root group `/` first).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// What the open found in the caches: `Created` (no listing record held), `Reused` (the
    /// held listing, or for Zarr the remembered metadata, was used) or `Invalidated` (a
    /// record of another version was dropped).
    pub fn cache_status(&self) -> CacheStatus {
        self.status
    }

    /// Bytes of compressed payload held by the store's cache coordinator (every source it
    /// caches): `coordinator().stats().payload.bytes`.
    pub fn cache_bytes(&self) -> u64 {
        self.coordinator.stats().payload.bytes
    }

    /// Opens the array at `path` (`/group/data`; a missing leading `/` is added), sharing
    /// this store's transport, traffic and caches. A dataset the listing discovered opens
    /// without a request.
    ///
    /// # Errors
    /// As [`RemoteArray::open_with_cache`] (a missing path is [`crate::formats::FormatError::Invalid`]).
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
            #[cfg(feature = "zarr")]
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
