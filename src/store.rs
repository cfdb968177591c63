//! [`RemoteStore`]: a container (an HDF5 file, a Zarr store or a `.b2z` archive) opened once, whose arrays share its transport,
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
    /// The first bytes of a large file (not held whole) as the open read them, for
    /// [`RemoteStore::get`] to discover from without reading them again.
    head: Option<bytes::Bytes>,
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
            // Shown to callers: no URL query or user info in a reason.
            nodes: crate::formats::redact_node_errors(nodes),
            status,
            head: None,
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
    /// A `.b2z` archive with its listing: members read in place.
    #[cfg(feature = "b2nd")]
    B2z(Arc<crate::formats::b2z::B2zStore>),
    /// A Caterva2 server: its roots and datasets, each dataset opened through the client.
    #[cfg(feature = "caterva2")]
    Caterva2(Arc<crate::formats::caterva2::client::Client>),
}

impl Container {
    /// Whether this is a `.b2z` archive (whose refresh lists an archive, not an HDF5 file).
    pub(crate) fn is_b2z(&self) -> bool {
        #[cfg(feature = "b2nd")]
        if matches!(self, Container::B2z(_)) {
            return true;
        }
        false
    }
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

    /// This store with the first bytes of its file (of the first generation) as its open
    /// read them: [`RemoteStore::get`] discovers from them rather than asking again.
    pub(crate) fn with_head(mut self, head: bytes::Bytes) -> RemoteStore {
        self.first.head = Some(head);
        self
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
                let head = g.head.clone().map(|h| (h, g.info.clone()));
                RemoteArray::open_with_cache_and_head(
                    transport.clone(),
                    self.traffic.clone(),
                    options,
                    self.coordinator.clone(),
                    self.key.clone(),
                    head,
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
            #[cfg(feature = "caterva2")]
            Container::Caterva2(client) => {
                // After a refresh a dataset's record is checked (one api/info) before reuse:
                // datasets keep records of their own, which the refresh did not drop.
                let options = OpenOptions {
                    assume_immutable: g.number == 0,
                    ..options
                };
                crate::open::caterva2::open_dataset(
                    client.clone(),
                    self.traffic.clone(),
                    &normalise_path(path)[1..],
                    client.headers(),
                    options,
                    self.coordinator.clone(),
                )
                .await
            }
            #[cfg(feature = "b2nd")]
            Container::B2z(store) => {
                crate::open::b2z::open_leaf(
                    store,
                    &normalise_path(path),
                    self.traffic.clone(),
                    &self.key,
                    options,
                    self.coordinator.clone(),
                )
                .await
            }
        }?;
        Ok(arr.with_generation(self.counter.clone(), g.number))
    }

    /// The table at `path` (`/group/table`; `/` the root group), as
    /// [`crate::table::RemoteTable`]: a 1-D dataset of a record dtype (an HDF5 compound, as
    /// PyTables and h5py write tables) is one record per row
    /// ([`crate::table::RemoteTable::from_records`]); a group whose child arrays are 1-D and
    /// of one length is one column per array, in the listing's order
    /// ([`crate::table::RemoteTable::from_columns`]; child groups are not columns, children
    /// the listing could not read are listed as unreadable columns with their reason).
    /// Arrays are opened as [`RemoteStore::get`] opens them (no request for a dataset the
    /// listing discovered).
    ///
    /// # Errors
    /// `NOT_FOUND` for a path the listing does not hold; `INVALID_ARGUMENT` saying what the
    /// node is when it is no table (a numeric array, a group without arrays, a link);
    /// INVALID (`INVALID_DATA`) for a group of arrays that are not 1-D or of different
    /// lengths; those of [`RemoteStore::get`].
    pub async fn table(&self, path: &str) -> Result<crate::table::RemoteTable> {
        use crate::table::{Column, RemoteTable};
        match self.table_layout(path)? {
            TableLayout::Records(path) => RemoteTable::from_records(self.get(&path).await?),
            TableLayout::Columns {
                arrays,
                unreadable,
                mask,
            } => {
                let opened = futures::future::try_join_all(arrays.iter().map(|(name, p)| {
                    let name = name.clone();
                    async move { Ok::<_, crate::Error>((name, self.get(p).await?)) }
                }))
                .await?;
                let mask = match mask {
                    Some(p) => Some(self.get(&p).await?),
                    None => None,
                };
                let unreadable = unreadable
                    .into_iter()
                    .map(|(name, dtype, error)| Column {
                        name,
                        dtype,
                        error: Some(error),
                    })
                    .collect();
                RemoteTable::from_columns(opened, unreadable, mask)
            }
        }
    }

    /// Which nodes make up the table at `path`, from the current listing. Each container
    /// kind decides its layouts here: HDF5 and Zarr from their listing; a `.b2z` CTable
    /// (`_cols/<name>.b2nd` and `_valid_rows.b2nd`) is one more arm.
    fn table_layout(&self, path: &str) -> Result<TableLayout> {
        let g = self.current();
        match &g.container {
            Container::File(_) => listed_table_layout(&g.nodes, path),
            #[cfg(feature = "zarr")]
            Container::Zarr(_) => listed_table_layout(&g.nodes, path),
            #[cfg(feature = "b2nd")]
            Container::B2z(_) => b2z_table_layout(&g.info.location, &g.nodes, path),
            #[cfg(feature = "caterva2")]
            Container::Caterva2(_) => listed_table_layout(&g.nodes, path),
        }
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
        let b2z = self.current().container.is_b2z();
        let fresh = crate::open::fresh_generation(container, &self.options, b2z).await?;
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

    /// What the current generation reads: `"hdf5"` (one object read by ranges), `"zarr"`
    /// (a Zarr store) or `"b2z"` (a ZIP archive of Blosc2 frames), the `kind` of a portable
    /// reference ([`crate::reference::Reference`]).
    pub fn kind(&self) -> &'static str {
        match &self.current().container {
            Container::File(_) => "hdf5",
            #[cfg(feature = "zarr")]
            Container::Zarr(_) => "zarr",
            #[cfg(feature = "b2nd")]
            Container::B2z(_) => "b2z",
            #[cfg(feature = "caterva2")]
            Container::Caterva2(_) => "caterva2",
        }
    }

    /// The scopes ([`SourceKey::scoped`]) under which this store's discovery records are
    /// kept by its coordinator: for an HDF5 file the listing (`#nodes`) and the path of
    /// every array of the listing (each array's record exists once it was opened with
    /// [`RemoteStore::get`]); for a Zarr store its remembered metadata (`#zarr-metadata`,
    /// which grows with each array opened); for a `.b2z` its manifest (`#b2z`) and the
    /// arrays' paths. A portable reference exports the records of
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
            // The manifest holds every leaf's frame; a leaf whose offsets were too large to
            // list has a record of its own once opened.
            #[cfg(feature = "b2nd")]
            Container::B2z(_) => std::iter::once(crate::open::b2z::B2Z_SCOPE.to_string())
                .chain(
                    self.nodes()
                        .iter()
                        .filter(|n| n.kind == crate::formats::NodeKind::Array)
                        .map(|n| n.path.clone()),
                )
                .collect(),
            // Each dataset's record is under a key of its own (its api/info URL).
            #[cfg(feature = "caterva2")]
            Container::Caterva2(_) => Vec::new(),
        }
    }
}

/// The nodes of a table, as [`RemoteStore::table`] opens them.
enum TableLayout {
    /// One 1-D record array at this path.
    Records(String),
    /// Column arrays `(name, path)`, unreadable columns `(name, dtype, reason)` and the
    /// path of a valid-rows mask.
    Columns {
        arrays: Vec<(String, String)>,
        unreadable: Vec<(String, String, String)>,
        mask: Option<String>,
    },
}

/// The table layout of `path` in a `.b2z` listing: a CTable's columns (`_cols/<name>`, in
/// schema order; those that are no readable array with their reasons) and its valid-rows
/// mask (`_valid_rows`); a group that is no CTable as for HDF5 (a group of 1-D arrays).
#[cfg(feature = "b2nd")]
fn b2z_table_layout(location: &str, nodes: &[Node], path: &str) -> Result<TableLayout> {
    let path = normalise_path(path);
    let is_table = nodes
        .iter()
        .any(|n| n.path == path && n.kind == crate::formats::NodeKind::Table);
    if !is_table {
        return listed_table_layout(nodes, &path);
    }
    let layout = crate::formats::b2z::table::layout(location, nodes, &path)?;
    let mut arrays = Vec::new();
    let mut unreadable = Vec::new();
    for c in layout.columns {
        match c.error {
            None => arrays.push((c.name, c.path)),
            Some(e) => {
                let dtype = nodes
                    .iter()
                    .find(|n| n.path == c.path)
                    .and_then(|n| n.dtype.clone())
                    .unwrap_or_default();
                unreadable.push((c.name, dtype, e));
            }
        }
    }
    Ok(TableLayout::Columns {
        arrays,
        unreadable,
        mask: Some(layout.mask),
    })
}

/// The table layout of `path` in an HDF5 or Zarr listing: a 1-D record dataset, or a group
/// of arrays (each child array a column, in listing order).
fn listed_table_layout(nodes: &[Node], path: &str) -> Result<TableLayout> {
    use crate::formats::NodeKind;
    let path = normalise_path(path);
    let Some(node) = nodes.iter().find(|n| n.path == path) else {
        return Err(crate::formats::FormatError::NoSuchNode {
            location: path.clone(),
            detail: format!("no node {path} in the container"),
        }
        .into());
    };
    let not_table = |what: String| {
        crate::Error::InvalidArgument(format!(
            "{path} is {what}, not a table (a 1-D record dataset or a group of equal-length 1-D arrays)"
        ))
    };
    match node.kind {
        NodeKind::Table => Err(not_table("a CTable of another container".into())),
        NodeKind::Link => Err(not_table(format!(
            "a link ({})",
            node.error.as_deref().unwrap_or("outside the container")
        ))),
        NodeKind::Array => {
            let dtype = node.dtype.as_deref().unwrap_or("?");
            match node.shape.as_deref() {
                _ if node.error.is_some() => Err(not_table(format!(
                    "an array that cannot be read ({})",
                    node.error.as_deref().unwrap_or_default()
                ))),
                Some([_]) if dtype.starts_with('[') => Ok(TableLayout::Records(path.clone())),
                Some(shape) => Err(not_table(format!(
                    "an array of shape {shape:?} and dtype {dtype}"
                ))),
                None => Err(not_table(format!("an array without elements ({dtype})"))),
            }
        }
        NodeKind::Group => {
            let prefix = if path == "/" {
                "/".to_string()
            } else {
                format!("{path}/")
            };
            let mut arrays = Vec::new();
            let mut unreadable = Vec::new();
            for n in nodes {
                let Some(name) = n.path.strip_prefix(&prefix) else {
                    continue;
                };
                if name.is_empty() || name.contains('/') || n.kind == NodeKind::Group {
                    continue;
                }
                match (&n.kind, &n.error) {
                    (NodeKind::Array, None) => arrays.push((name.to_string(), n.path.clone())),
                    (_, error) => unreadable.push((
                        name.to_string(),
                        n.dtype.clone().unwrap_or_default(),
                        error.clone().unwrap_or_else(|| "a link".to_string()),
                    )),
                }
            }
            if arrays.is_empty() {
                return Err(not_table(format!(
                    "a group without readable arrays{}",
                    if unreadable.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({})",
                            unreadable
                                .iter()
                                .map(|(n, _, e)| format!("{n}: {e}"))
                                .collect::<Vec<_>>()
                                .join("; ")
                        )
                    }
                )));
            }
            Ok(TableLayout::Columns {
                arrays,
                unreadable,
                mask: None,
            })
        }
    }
}
