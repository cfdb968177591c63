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
//!
//! [`RemoteStore::refresh`] discovers the container afresh and, only once that succeeded,
//! makes it the store's current generation (spec: "Explicit table/store refresh prepares
//! new discovery before replacing the active generation"); arrays handed out before fail
//! their reads with `STALE` ([`crate::Error::Stale`]) and must be got again.

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::{CacheCoordinator, CacheStatus, SourceKey};
use crate::error::Result;
#[cfg(feature = "zarr")]
use crate::formats::zarr::ZarrStore;
use crate::formats::Node;
use crate::io::{RangeSource, SourceInfo, Traffic, TrafficSnapshot};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most nodes a listing holds; a larger hierarchy (or a cycle of hard links) is cut there
/// and the last node says so in its `error`.
pub const MAX_NODES: usize = 100_000;

/// Deepest group nesting followed (a hard link to an ancestor would otherwise recurse
/// forever).
pub const MAX_DEPTH: usize = 64;

/// A container opened once; its arrays share its caches and traffic.
pub struct RemoteStore {
    traffic: Traffic,
    coordinator: CacheCoordinator,
    key: SourceKey,
    options: OpenOptions,
    /// The generation made at open; each refresh appends one after the last.
    first: Generation,
    /// Number of the current generation, shared with the arrays [`RemoteStore::get`] hands
    /// out (their reads compare it with their own).
    counter: Arc<AtomicU64>,
    /// How a refresh gets a new container (a transport or Zarr store with fresh state,
    /// counting into the store's traffic); `None`: refreshes read through the current one.
    reopen: Option<Reopen>,
    /// Held while a refresh appends its generation.
    appending: Mutex<()>,
}

/// What a refresh calls for a new container counting into the given traffic.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Reopen = Box<dyn Fn(&Traffic) -> Result<Container> + Send + Sync>;
/// What a refresh calls for a new container counting into the given traffic.
#[cfg(target_arch = "wasm32")]
pub(crate) type Reopen = Box<dyn Fn(&Traffic) -> Result<Container>>;

/// One generation of a store: a container read at one version and its listing. A refresh
/// appends a new one and never changes an old one, so [`RemoteStore::nodes`] can hand out
/// a reference; the store keeps every generation's listing until it is dropped.
pub(crate) struct Generation {
    number: u64,
    container: Container,
    info: SourceInfo,
    nodes: Vec<Node>,
    status: CacheStatus,
    next: OnceLock<Box<Generation>>,
}

impl Generation {
    /// Generation `number` reading `container`, whose identity is `info` and listing `nodes`,
    /// found in the caches as `status`.
    pub(crate) fn new(
        number: u64,
        container: Container,
        info: SourceInfo,
        nodes: Vec<Node>,
        status: CacheStatus,
    ) -> Generation {
        Generation {
            number,
            container,
            info,
            nodes,
            status,
            next: OnceLock::new(),
        }
    }
}

impl Drop for RemoteStore {
    fn drop(&mut self) {
        // Unlink the chain one generation at a time (no recursion as deep as the refreshes).
        let mut next = self.first.next.take();
        while let Some(mut g) = next {
            next = g.next.take();
        }
    }
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
        let g = self.current();
        f.debug_struct("RemoteStore")
            .field("location", &g.info.location)
            .field("generation", &g.number)
            .field("nodes", &g.nodes.len())
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
            traffic,
            coordinator,
            key,
            options,
            first: Generation::new(0, container, info, nodes, status),
            counter: Arc::new(AtomicU64::new(0)),
            reopen: None,
            appending: Mutex::new(()),
        }
    }

    /// This store with the way its refreshes get a new container.
    pub(crate) fn with_reopen(mut self, reopen: Reopen) -> RemoteStore {
        self.reopen = Some(reopen);
        self
    }

    /// The current generation.
    fn current(&self) -> &Generation {
        let mut g = &self.first;
        while let Some(n) = g.next.get() {
            g = n;
        }
        g
    }

    /// Groups and arrays of the container, sorted by path (the root group `/` first), as
    /// the current generation listed them.
    pub fn nodes(&self) -> &[Node] {
        &self.current().nodes
    }

    /// What the open found in the caches: `Created` (no listing record held), `Reused` (the
    /// held listing, or for Zarr the remembered metadata, was used) or `Invalidated` (a
    /// record of another version was dropped); after a successful
    /// [`RemoteStore::refresh`], `Invalidated` (the held records were replaced).
    pub fn cache_status(&self) -> CacheStatus {
        self.current().status
    }

    /// Bytes of compressed payload held by the store's cache coordinator (every source it
    /// caches): `coordinator().stats().payload.bytes`.
    pub fn cache_bytes(&self) -> u64 {
        self.coordinator.stats().payload.bytes
    }

    /// Opens the array at `path` (`/group/data`; a missing leading `/` is added), sharing
    /// this store's transport, traffic and caches, from the current generation. A dataset
    /// the listing discovered opens without a request. The array's reads fail with `STALE`
    /// once the store is refreshed.
    ///
    /// # Errors
    /// As [`RemoteArray::open_with_cache`] (a missing path is [`crate::formats::FormatError::Invalid`]).
    pub async fn get(&self, path: &str) -> Result<RemoteArray> {
        let options = OpenOptions {
            path: Some(normalise_path(path)),
            ..self.options.clone()
        };
        let g = self.current();
        let arr = match &g.container {
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
        }?;
        Ok(arr.with_generation(self.counter.clone(), g.number))
    }

    /// Discovers the container afresh and makes the result the current generation (spec:
    /// remote cache design, "Freshness and refresh"). The new discovery is prepared first,
    /// through a new transport (or Zarr store) that bypasses the held listing and the
    /// small-source copy ([`crate::open`]'s `fresh_generation`); only when it succeeded are
    /// the caches of the source dropped ([`CacheCoordinator::forget_source`]), the new
    /// listing (and copy) recorded, and the generation replaced: [`RemoteStore::nodes`],
    /// [`RemoteStore::source_info`] and later [`RemoteStore::get`] use the new one, and
    /// arrays got before fail their reads with `STALE` ([`crate::Error::Stale`]). Other
    /// arrays opened independently of this store under the same cache find their records
    /// gone and discover again on their next open.
    ///
    /// The store keeps every generation's listing and container until it is dropped (so
    /// that [`RemoteStore::nodes`] returns a reference): each refresh adds one listing's
    /// memory.
    ///
    /// # Errors
    /// Those of discovery (as [`RemoteStore::open`] and [`RemoteStore::open_zarr`]); the
    /// store, its caches and its arrays are then left as they were.
    pub async fn refresh(&self) -> Result<()> {
        let container = match &self.reopen {
            Some(reopen) => reopen(&self.traffic)?,
            None => self.current().container.clone(),
        };
        let fresh = crate::open::fresh_generation(container, &self.options).await?;
        crate::open::publish_generation(&fresh, &self.coordinator, &self.key).await;
        let _guard = self.appending.lock().unwrap_or_else(|p| p.into_inner());
        let last = self.current();
        let number = last.number + 1;
        let fresh = Generation::new(
            number,
            fresh.container,
            fresh.info,
            fresh.nodes,
            CacheStatus::Invalidated,
        );
        // Only appends happen, under `appending`: the tail has no successor yet.
        let _ = last.next.set(Box::new(fresh));
        self.counter.store(number, Ordering::Release);
        Ok(())
    }

    /// Requests and bytes that reached the transport for this store and its arrays.
    pub fn traffic(&self) -> TrafficSnapshot {
        self.traffic.snapshot()
    }

    /// The cache coordinator.
    pub fn coordinator(&self) -> &CacheCoordinator {
        &self.coordinator
    }

    /// Size and validators of the container, as the current generation saw them.
    pub fn source_info(&self) -> &SourceInfo {
        &self.current().info
    }

    /// The cache identity the store's records and payload are kept under.
    pub fn source_key(&self) -> &SourceKey {
        &self.key
    }

    /// What the current generation reads: `"hdf5"` (one object read by ranges) or
    /// `"zarr"` (a Zarr store), the `kind` of a portable reference
    /// ([`crate::reference::Reference`]).
    pub fn kind(&self) -> &'static str {
        match &self.current().container {
            Container::File(_) => "hdf5",
            #[cfg(feature = "zarr")]
            Container::Zarr(_) => "zarr",
        }
    }

    /// The scopes ([`SourceKey::scoped`]) under which this store's discovery records are
    /// kept by its coordinator: for an HDF5 file the listing (`#nodes`) and the path of
    /// every array of the listing (each array's record exists once it was opened with
    /// [`RemoteStore::get`]); for a Zarr store its remembered metadata (`#zarr-metadata`,
    /// which grows with each array opened). A portable reference exports the records of
    /// these scopes ([`crate::reference::Reference::export`]).
    pub fn record_scopes(&self) -> Vec<String> {
        match &self.current().container {
            Container::File(_) => std::iter::once(crate::open::NODES_SCOPE.to_string())
                .chain(
                    self.nodes()
                        .iter()
                        .filter(|n| n.kind == crate::formats::NodeKind::Array)
                        .map(|n| n.path.clone()),
                )
                .collect(),
            #[cfg(feature = "zarr")]
            Container::Zarr(_) => vec![crate::open::ZARR_SCOPE.to_string()],
        }
    }
}
