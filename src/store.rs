//! [`RemoteStore`]: a container (an HDF5 file) opened once, whose arrays share its transport,
//! traffic counter, discovery metadata and cache coordinator (spec: remote cache design,
//! "Identity and ownership": "A RemoteStore discovery owner shares transport, metadata,
//! traffic, and a cache coordinator across its leaves").
//!
//! Opening lists the hierarchy ([`RemoteStore::nodes`]): every group and dataset, with each
//! dataset's shape and dtype. The listing and each dataset's discovery record are kept by the
//! coordinator, so a reopen of the store and [`RemoteStore::get`] of a listed dataset make no
//! request. A small file (up to [`OpenOptions::small_source_bytes`]) is fetched whole once
//! and its copy serves every dataset.

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::discovery::{DiscoveryRecord, NodesRecord, DISCOVERY_VERSION};
use crate::cache::{CacheCoordinator, Seed, SourceKey};
use crate::error::Result;
use crate::formats::hdf5::discover::MemberKind;
use crate::formats::hdf5::{Hdf5Array, Hdf5Source};
use crate::formats::{FormatError, Node, NodeKind};
use crate::io::memory::MemorySource;
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
    transport: Arc<dyn RangeSource>,
    traffic: Traffic,
    coordinator: CacheCoordinator,
    key: SourceKey,
    options: OpenOptions,
    info: SourceInfo,
    nodes: Vec<Node>,
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
        let options = OpenOptions {
            path: None,
            ..options
        };
        let store = |info: SourceInfo, nodes: Vec<Node>| RemoteStore {
            transport: transport.clone(),
            traffic: traffic.clone(),
            coordinator: coordinator.clone(),
            key: key.clone(),
            options: options.clone(),
            info,
            nodes,
        };
        if let Some(rec) = coordinator.nodes(&key.scoped(NODES_SCOPE)) {
            return Ok(store(SourceInfo::from(&rec.source), rec.nodes));
        }
        let source_id = key.source_id();
        let (source, head, info): (Arc<dyn RangeSource>, bytes::Bytes, SourceInfo) =
            match coordinator.source_copy(&source_id) {
                Some((ident, bytes)) => {
                    let info = SourceInfo::from(&ident);
                    (
                        Arc::new(MemorySource::with_info(info.clone(), bytes.clone())),
                        bytes,
                        info,
                    )
                }
                None => {
                    let (source, head, info) =
                        RemoteArray::fetch_head(transport.clone(), &options).await?;
                    if info.len <= options.small_source_bytes {
                        coordinator.put_source_copy(&source_id, &(&info).into(), head.clone());
                    }
                    (source, head, info)
                }
            };
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
                detail: format!("stores list HDF5 files; this source is {what}"),
            }
            .into());
        }
        let nodes = list_hdf5(&*source, head, &info, &coordinator, &key).await?;
        coordinator.put_nodes(
            &key.scoped(NODES_SCOPE),
            &NodesRecord {
                version: DISCOVERY_VERSION,
                source: (&info).into(),
                nodes: nodes.clone(),
            },
        );
        Ok(store(info, nodes))
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
        RemoteArray::open_with_cache(
            self.transport.clone(),
            self.traffic.clone(),
            options,
            self.coordinator.clone(),
            self.key.clone(),
        )
        .await
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

/// Lists an HDF5 file depth first with `Hdf5Source::members`, discovering each dataset
/// (shape, dtype; its record is stored so a later open is warm). A dataset that cannot be
/// read (unsupported type, filter or layout) is listed with its `error`.
async fn list_hdf5(
    source: &dyn RangeSource,
    head: bytes::Bytes,
    info: &SourceInfo,
    coordinator: &CacheCoordinator,
    key: &SourceKey,
) -> Result<Vec<Node>> {
    let location = info.location.clone();
    let mut h = Hdf5Source::new(source, head, info.len);
    let mut nodes = vec![Node {
        path: "/".into(),
        kind: NodeKind::Group,
        shape: None,
        dtype: None,
        error: None,
    }];
    // (group path, depth) of groups still to list.
    let mut stack: Vec<(String, usize)> = vec![("/".into(), 0)];
    while let Some((group, depth)) = stack.pop() {
        let members = match h.members(&group).await {
            Ok(m) => m,
            Err(e) if group == "/" => return Err(e.into_format(&location).into()),
            Err(e) => {
                if let Some(n) = nodes.iter_mut().find(|n| n.path == group) {
                    n.error = Some(e.to_string());
                }
                continue;
            }
        };
        let mut groups = Vec::new();
        for m in members {
            if nodes.len() >= MAX_NODES {
                if let Some(last) = nodes.last_mut() {
                    last.error = Some(format!("listing cut at {MAX_NODES} nodes"));
                }
                nodes.sort_by(|a, b| a.path.cmp(&b.path));
                return Ok(nodes);
            }
            let path = if group == "/" {
                format!("/{}", m.name)
            } else {
                format!("{group}/{}", m.name)
            };
            match m.kind {
                MemberKind::Group => {
                    nodes.push(Node {
                        path: path.clone(),
                        kind: NodeKind::Group,
                        shape: None,
                        dtype: None,
                        error: (depth + 1 >= MAX_DEPTH)
                            .then(|| format!("deeper than {MAX_DEPTH} groups: not listed")),
                    });
                    if depth + 1 < MAX_DEPTH {
                        groups.push((path, depth + 1));
                    }
                }
                MemberKind::Dataset => {
                    let mut node = Node {
                        path: path.clone(),
                        kind: NodeKind::Array,
                        shape: None,
                        dtype: None,
                        error: None,
                    };
                    match h.dataset(&path).await {
                        Ok(meta) => {
                            node.shape = Some(meta.shape.clone());
                            node.dtype = Some(meta.dtype.to_string());
                            match Hdf5Array::from_meta(location.clone(), meta.clone(), info.len) {
                                Ok(_) => coordinator.put_discovery(
                                    &key.scoped(&path),
                                    &DiscoveryRecord {
                                        version: DISCOVERY_VERSION,
                                        source: info.into(),
                                        seed: Seed::Hdf5 { dataset: meta },
                                    },
                                ),
                                Err(e) => node.error = Some(e.to_string()),
                            }
                        }
                        Err(crate::formats::hdf5::Hdf5Error::Io(e)) => return Err(e.into()),
                        Err(e) => node.error = Some(e.to_string()),
                    }
                    nodes.push(node);
                }
            }
        }
        stack.extend(groups.into_iter().rev());
    }
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(nodes)
}
