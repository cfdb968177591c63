//! Listing an HDF5 file's hierarchy: every group and dataset, with each dataset's shape and
//! dtype, without reading any chunk index.
//!
//! The walk goes breadth first, one depth of the hierarchy at a time, and each depth costs
//! two discovery steps whatever the number of nodes: one reads the links of every group of
//! that depth, one reads the object headers of every child. Inside a step each group (or
//! child) is processed on its own and its failure caught, so one attempt records the misses
//! of all of them and [`Discovery::run`] fetches them as one batch; a restart per child
//! would cost a round trip per scattered header instead (`docs/facts.md`, "HDF5 discovery
//! over async range reads").
//!
//! Links are read here rather than through `hdf5-reader`'s group API, which leaves out soft
//! links whose target is missing and external links, and fails a whole group over one
//! virtual dataset. Link storage follows the File Format Specification version 3: compact
//! Link messages (IV.A.2.g), dense storage in a fractal heap indexed by a version 2 B-tree
//! (Link Info message, IV.A.2.c), and the symbol table of old-style groups (IV.A.2.r, a
//! version 1 B-tree of symbol table nodes with names in a local heap).
//!
//! Nodes that exist but cannot be read carry a reason in [`Node::error`] instead of failing
//! the listing: virtual datasets (layout class 3), datasets in external files (External
//! Data Files message), external links, soft links whose target does not exist, and datasets
//! of datatypes not read here.

use super::attrs;
use super::discover::element_of;
use super::store::Discovery;
use super::Hdf5Error;
use crate::formats::{Node, NodeKind};
use hdf5_reader::btree_v2::{self, BTreeV2Record};
use hdf5_reader::fractal_heap::{FractalHeap, FractalHeapDirectBlockCache};
use hdf5_reader::io::Cursor;
use hdf5_reader::local_heap::LocalHeap;
use hdf5_reader::messages::link::LinkTarget;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::symbol_table::SymbolTableNode;
use hdf5_reader::Hdf5File;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Most nodes one listing returns; a larger hierarchy is refused as malformed rather than
/// listed without bound.
pub const MAX_NODES: usize = 1_000_000;

/// Deepest hierarchy listed (group nesting).
pub const MAX_DEPTH: usize = 256;

/// The listing's reason for a dataset with a null dataspace (h5py's `Empty`).
pub const NULL_DATASPACE: &str = "a null dataspace (no elements, h5py Empty)";

/// What a link points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// An object header at this address (relative to the base address, as stored).
    Hard(u64),
    /// A path in this file.
    Soft(String),
    /// A path in another file.
    External { file: String, path: String },
}

/// What a child's object header says it is.
#[derive(Debug, Clone)]
enum Object {
    Group,
    Dataset {
        shape: Option<Vec<u64>>,
        dtype: Option<String>,
        error: Option<String>,
    },
    /// A committed datatype or another object that is neither group nor dataset.
    Other,
}

/// The links of the group whose object header is at `address`, in storage order.
pub(super) fn group_links(
    file: &Hdf5File,
    address: u64,
) -> hdf5_reader::error::Result<Vec<(String, Target)>> {
    let header = file.get_or_parse_header(address)?;
    let storage = file.storage();
    let sb = file.superblock();
    let (os, ls) = (sb.offset_size, sb.length_size);
    let target = |t: &LinkTarget| match t {
        LinkTarget::Hard { address } => Target::Hard(*address),
        LinkTarget::Soft { path } => Target::Soft(path.clone()),
        LinkTarget::External { filename, path } => Target::External {
            file: filename.clone(),
            path: path.clone(),
        },
    };
    let mut out = Vec::new();
    for m in &header.messages {
        match m {
            HdfMessage::Link(l) => out.push((l.name.clone(), target(&l.target))),
            HdfMessage::LinkInfo(li)
                if !Cursor::is_undefined_offset(li.fractal_heap_address, os) =>
            {
                let heap = FractalHeap::parse_at_storage(storage, li.fractal_heap_address, os, ls)?;
                let bt = btree_v2::BTreeV2Header::parse_at_storage(
                    storage,
                    li.btree_name_index_address,
                    os,
                    ls,
                )?;
                let records = btree_v2::collect_btree_v2_records_storage(
                    storage,
                    &bt,
                    os,
                    ls,
                    None,
                    &[],
                    None,
                )?;
                let mut cache = FractalHeapDirectBlockCache::default();
                for r in &records {
                    let BTreeV2Record::LinkNameHash { heap_id, .. } = r else {
                        continue;
                    };
                    let bytes = heap.get_object_storage_cached_with_registry(
                        heap_id, storage, os, ls, &mut cache, None,
                    )?;
                    let mut c = Cursor::new(&bytes);
                    let l = hdf5_reader::messages::link::parse(&mut c, os, ls, bytes.len())?;
                    out.push((l.name.clone(), target(&l.target)));
                }
            }
            HdfMessage::SymbolTable(st) => {
                let heap = LocalHeap::parse_at_storage(storage, st.heap_address, os, ls)?;
                let leaves = hdf5_reader::btree_v1::collect_btree_v1_leaves_storage(
                    storage,
                    st.btree_address,
                    os,
                    ls,
                    None,
                    &[],
                    None,
                )?;
                for (_, node) in leaves {
                    // Signature, version, reserved, entry count: then the count's entries of
                    // two addresses, cache type, reserved and a 16-byte scratch pad each.
                    let prefix = storage.read_range(node, 8)?;
                    let n = u16::from_le_bytes([prefix[6], prefix[7]]) as usize;
                    let bytes = storage.read_range(node, 8 + n * (2 * os as usize + 24))?;
                    let snod = SymbolTableNode::parse(&mut Cursor::new(&bytes), os, ls)?;
                    for e in &snod.entries {
                        let name = heap.get_string_storage(e.link_name_offset, storage)?;
                        let t = if e.cache_type == 2 {
                            let at = u32::from_le_bytes([
                                e.scratch[0],
                                e.scratch[1],
                                e.scratch[2],
                                e.scratch[3],
                            ]);
                            Target::Soft(heap.get_string_storage(at as u64, storage)?)
                        } else {
                            Target::Hard(e.object_header_address)
                        };
                        out.push((name, t));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// What the object header at `address` (for the node at `path`) describes.
fn object(file: &Hdf5File, address: u64, path: &str) -> hdf5_reader::error::Result<Object> {
    let header = match file.get_or_parse_header(address) {
        Ok(h) => h,
        // Layout class 3 (File Format Specification IV.A.2.i) does not parse in the crate.
        Err(hdf5_reader::error::Error::UnsupportedLayoutClass(3)) => {
            return Ok(Object::Dataset {
                shape: None,
                dtype: None,
                error: Some("virtual dataset (layout class 3) is not read".into()),
            })
        }
        Err(e) => return Err(e),
    };
    let mut is_dataset = false;
    let mut is_group = false;
    let mut external = false;
    for m in &header.messages {
        match m {
            HdfMessage::DataLayout(_) => is_dataset = true,
            HdfMessage::ExternalFiles(_) => external = true,
            HdfMessage::SymbolTable(_) | HdfMessage::LinkInfo(_) | HdfMessage::Link(_) => {
                is_group = true
            }
            _ => {}
        }
    }
    if !is_dataset {
        return Ok(if is_group {
            Object::Group
        } else {
            Object::Other
        });
    }
    let null = header.messages.iter().any(|m| {
        matches!(m, HdfMessage::Dataspace(d)
            if d.dataspace_type == hdf5_reader::messages::dataspace::DataspaceType::Null)
    });
    let ds = file.dataset(path)?;
    let shape = Some(ds.shape().to_vec());
    let sb = file.superblock();
    let (dtype, mut error) =
        match element_of(ds.dtype(), sb.offset_size, sb.length_size, sb.base_address) {
            Ok(e) => (Some(e.descr()), None),
            Err(e) => (None, Some(e.to_string())),
        };
    if let Some(super::header::Bits::Unsupported(what)) = super::header::datatype(file, address)
        .as_deref()
        .map(super::header::bits)
    {
        error = Some(what);
    }
    if external {
        error = Some("external storage (External Data Files message) is not read".into());
    }
    if null {
        // Not a scalar: no element at all, and the read refuses it (discover.rs).
        return Ok(Object::Dataset {
            shape: None,
            dtype,
            error: Some(NULL_DATASPACE.into()),
        });
    }
    Ok(Object::Dataset {
        shape,
        dtype,
        error,
    })
}

/// A node's attributes, or one `Omitted` entry saying why its object header's attributes
/// could not be read (the node itself is still listed).
fn node_attrs(r: hdf5_reader::error::Result<attrs::NodeAttrs>) -> attrs::NodeAttrs {
    r.unwrap_or_else(|e| attrs::NodeAttrs {
        attrs: crate::attrs::Attrs(vec![(
            "(attributes)".into(),
            crate::attrs::AttrValue::Omitted(format!("object header: {e}")),
        )]),
        ..Default::default()
    })
}

pub(super) fn join(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// `target` of a soft link in group `group` as an absolute, normalised path.
pub(super) fn absolute(group: &str, target: &str) -> String {
    let full = if target.starts_with('/') {
        target.to_string()
    } else {
        join(group, target)
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in full.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The target of a soft link whose value is `target`, in group `group`, as an absolute path.
/// Unlike [`absolute`], `..` stays a name: libhdf5 resolves a soft link's value component by
/// component from the link's group (`H5G__traverse_real`), where only `.` is special, so a
/// value `../x` names a link called `..` (h5py: a dangling link).
pub(super) fn soft_target(group: &str, target: &str) -> String {
    let full = if target.starts_with('/') {
        target.to_string()
    } else {
        join(group, target)
    };
    let parts: Vec<&str> = full
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    format!("/{}", parts.join("/"))
}

/// `to` with a leading part that is itself a soft link (a key of `links`, link path ->
/// target) replaced by that link's target, repeatedly (at most 16 times, libhdf5's default
/// bound): a link to `/alias/data` where `/alias` links to `/real` is `/real/data`.
fn through_links(to: &str, links: &HashMap<String, String>) -> String {
    let mut to = to.to_string();
    for _ in 0..16 {
        let Some((prefix, target)) = links
            .iter()
            .filter(|(p, _)| to.starts_with(&format!("{p}/")))
            .max_by_key(|(p, _)| p.len())
        else {
            break;
        };
        to = format!("{target}{}", &to[prefix.len()..]);
    }
    to
}

fn node(path: String, kind: NodeKind, error: Option<String>) -> Node {
    Node {
        path,
        kind,
        shape: None,
        dtype: None,
        error,
        attrs: Default::default(),
        dims: None,
    }
}

/// Lists the whole hierarchy of the file `d` discovers: the root group (`/`) first, then
/// every node sorted by path. A soft link is listed at its own path with what its target
/// is; a node that cannot be read carries the reason in [`Node::error`]: an external or
/// dangling link is of kind [`NodeKind::Link`], a dataset with a null dataspace has no shape
/// ([`NULL_DATASPACE`]).
/// A group reached twice (hard links, cycles) is listed at each path but walked once.
///
/// # Errors
/// [`Hdf5Error`] when the root group or the link storage of a group is malformed, when the
/// hierarchy exceeds [`MAX_NODES`] or [`MAX_DEPTH`], and I/O errors.
pub async fn list(d: &mut Discovery<'_>) -> Result<Vec<Node>, Hdf5Error> {
    let root = d.run(|f| Ok(f.root_group()?.address())).await?;
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    let mut root_node = node("/".into(), NodeKind::Group, None);
    // Attribute bytes kept by the whole listing (attrs::MAX_LISTING_ATTR_BYTES).
    let mut kept = 0usize;
    root_node.attrs = node_attrs(d.run_raw(move |f| Ok(attrs::read(f, root))).await?)
        .within(&mut kept)
        .attrs;
    nodes.insert("/".into(), root_node);
    // Dimension scales: each array's path, object header address and scale attributes.
    let mut scales: Vec<(String, u64, attrs::ScaleInfo)> = Vec::new();
    let mut walked: HashSet<u64> = HashSet::from([root]);
    let mut soft: Vec<(String, String)> = Vec::new();
    let mut level: Vec<(String, u64)> = vec![("/".into(), root)];
    for _ in 0..MAX_DEPTH {
        if level.is_empty() {
            break;
        }
        // One step for the links of every group at this depth.
        let groups = level.clone();
        let links = d
            .run(move |f| {
                Ok(groups
                    .iter()
                    .map(|(_, a)| group_links(f, *a).map_err(Hdf5Error::from))
                    .collect::<Vec<_>>())
            })
            .await?;
        let mut children: Vec<(String, u64)> = Vec::new();
        for ((gpath, _), l) in level.iter().zip(links) {
            for (name, t) in l? {
                let path = join(gpath, &name);
                match t {
                    Target::Hard(a) => children.push((path, a)),
                    Target::Soft(to) => soft.push((path, soft_target(gpath, &to))),
                    Target::External { file, path: to } => {
                        let e = format!("external link to {file}:{to} is not followed");
                        nodes.insert(path.clone(), node(path, NodeKind::Link, Some(e)));
                    }
                }
            }
        }
        if nodes.len() + children.len() + soft.len() > MAX_NODES {
            return Err(Hdf5Error::Invalid(format!(
                "the hierarchy holds more than {MAX_NODES} nodes"
            )));
        }
        // One step for the object headers of every child at this depth.
        let asked = children.clone();
        let step = move |f: &Hdf5File| {
            Ok(asked
                .iter()
                .map(|(p, a)| object(f, *a, p).map_err(Hdf5Error::from))
                .collect::<Vec<_>>())
        };
        let mut objects = d.run(step.clone()).await?;
        // A node whose attributes are broken (a version 1 header's Attribute message, a dense
        // storage the crate loads at a dataset's open) fails the crate: hide them from the
        // crate (attrs::attribute_masks) and look at those children again.
        let failed: Vec<u64> = children
            .iter()
            .zip(&objects)
            .filter(|(_, o)| o.is_err())
            .map(|((_, a), _)| *a)
            .collect();
        if !failed.is_empty() {
            let masks = d
                .run_raw(move |f| {
                    Ok(failed
                        .iter()
                        .flat_map(|a| attrs::attribute_masks(f, *a).unwrap_or_default())
                        .collect::<Vec<_>>())
                })
                .await?;
            if !masks.is_empty() {
                for (at, bytes) in masks {
                    d.store().patch(at, bytes.into());
                }
                objects = d.run(step).await?;
            }
        }
        // Attributes as stored (the unpatched bytes), one step for the whole depth.
        let addresses: Vec<u64> = children.iter().map(|(_, a)| *a).collect();
        let node_attrs_all = d
            .run_raw(move |f| {
                Ok(addresses
                    .iter()
                    .map(|a| attrs::read(f, *a))
                    .collect::<Vec<_>>())
            })
            .await?;
        let objects: Vec<
            Result<(Object, hdf5_reader::error::Result<attrs::NodeAttrs>), Hdf5Error>,
        > = objects
            .into_iter()
            .zip(node_attrs_all)
            .map(|(o, na)| o.map(|o| (o, na)))
            .collect();
        let mut next = Vec::new();
        for ((path, a), o) in children.into_iter().zip(objects) {
            let n = match o {
                Ok((Object::Group, na)) => {
                    if walked.insert(a) {
                        next.push((path.clone(), a));
                    }
                    let mut n = node(path.clone(), NodeKind::Group, None);
                    n.attrs = node_attrs(na).within(&mut kept).attrs;
                    n
                }
                Ok((
                    Object::Dataset {
                        shape,
                        dtype,
                        error,
                    },
                    na,
                )) => {
                    let na = node_attrs(na).within(&mut kept);
                    scales.push((path.clone(), a, na.scale));
                    Node {
                        path: path.clone(),
                        kind: NodeKind::Array,
                        shape,
                        dtype,
                        error,
                        attrs: na.attrs,
                        dims: None,
                    }
                }
                Ok((Object::Other, _)) => continue,
                Err(e) => node(
                    path.clone(),
                    NodeKind::Array,
                    Some(format!("object header: {e}")),
                ),
            };
            nodes.insert(path, n);
        }
        level = next;
    }
    if !level.is_empty() {
        return Err(Hdf5Error::Invalid(format!(
            "groups nested deeper than {MAX_DEPTH}"
        )));
    }
    // Dimension names from the scales found (attrs.rs): no further read.
    let by_address: HashMap<u64, (String, attrs::ScaleInfo)> = scales
        .iter()
        .map(|(p, a, s)| (*a, (p.clone(), s.clone())))
        .collect();
    for (path, _, own) in &scales {
        if let Some(n) = nodes.get_mut(path) {
            let rank = n.shape.as_ref().map_or(0, Vec::len);
            n.dims = attrs::dims(rank, path, own, |a| by_address.get(&a).cloned());
        }
    }
    // A soft link whose target is another soft link resolves once that one has: passes
    // until none resolves (at most one per link of the chain), then the rest dangle.
    let links: HashMap<String, String> = soft.iter().cloned().collect();
    loop {
        let before = soft.len();
        soft.retain(|(path, to)| {
            match nodes
                .get(to)
                .or_else(|| nodes.get(&through_links(to, &links)))
            {
                Some(t) => {
                    let n = Node {
                        path: path.clone(),
                        ..t.clone()
                    };
                    nodes.insert(path.clone(), n);
                    false
                }
                None => true,
            }
        });
        if soft.len() == before {
            break;
        }
    }
    for (path, to) in soft {
        let e = format!("dangling soft link: {to} does not exist");
        nodes.insert(path.clone(), node(path, NodeKind::Link, Some(e)));
    }
    Ok(nodes.into_values().collect())
}

/// The children of the group at `path` (`/` for the root) that are groups or datasets:
/// hard links, and soft links whose target exists; groups first, then datasets, each in
/// storage order. The group's links are read in one step and the object headers of all
/// children in one more, so their misses are fetched as one batch per round.
///
/// # Errors
/// [`Hdf5Error`]: a missing group or malformed link storage, I/O.
pub async fn members(
    d: &mut Discovery<'_>,
    path: &str,
) -> Result<Vec<super::discover::Member>, Hdf5Error> {
    use super::discover::{Member, MemberKind};
    let p = absolute("/", path);
    let q = p.clone();
    let at = d
        .run(move |f| {
            Ok(if q == "/" {
                f.root_group()?.address()
            } else {
                f.group(&q)?.address()
            })
        })
        .await?;
    let links = d.run(move |f| group_links(f, at)).await?;
    let base = p.clone();
    let kinds = d
        .run(move |f| {
            Ok(links
                .iter()
                .map(|(name, t)| {
                    let kind = match t {
                        Target::Hard(a) => match object(f, *a, &join(&base, name)) {
                            Ok(Object::Group) => Some(MemberKind::Group),
                            Ok(Object::Dataset { .. }) => Some(MemberKind::Dataset),
                            _ => None,
                        },
                        Target::Soft(to) => {
                            let to = soft_target(&base, to);
                            if f.group(&to).is_ok() {
                                Some(MemberKind::Group)
                            } else if f.dataset(&to).is_ok() {
                                Some(MemberKind::Dataset)
                            } else {
                                None
                            }
                        }
                        Target::External { .. } => None,
                    };
                    kind.map(|kind| Member {
                        name: name.clone(),
                        kind,
                    })
                })
                .collect::<Vec<_>>())
        })
        .await?;
    let (mut groups, datasets): (Vec<Member>, Vec<Member>) = kinds
        .into_iter()
        .flatten()
        .partition(|m| m.kind == MemberKind::Group);
    groups.extend(datasets);
    Ok(groups)
}

/// The object header address (as stored) of the node at `path`, following hard links from
/// the root group; `None` when a component is missing or not a hard link.
///
/// # Errors
/// The crate's errors for malformed link storage on the path.
pub fn address_of(file: &Hdf5File, path: &str) -> hdf5_reader::error::Result<Option<u64>> {
    let mut at = file.root_group()?.address();
    for name in absolute("/", path).split('/').filter(|s| !s.is_empty()) {
        match group_links(file, at)?.into_iter().find(|(n, _)| n == name) {
            Some((_, Target::Hard(a))) => at = a,
            _ => return Ok(None),
        }
    }
    Ok(Some(at))
}

/// Discovery step: why the node at `path` cannot be opened as a dataset, if a reason is
/// known (a virtual dataset, external storage, an external link, a dangling soft link).
/// Only the link storage of the groups on the path and the node's own object header are
/// read: never a sibling's header. `Ok(None)` also when the path does not resolve here
/// (the dataset step then reports it).
///
/// # Errors
/// The crate's errors for malformed link storage on the path.
pub fn unsupported_step(file: &Hdf5File, path: &str) -> hdf5_reader::error::Result<Option<String>> {
    let mut at = file.root_group()?.address();
    let mut here = "/".to_string();
    let mut todo: Vec<String> = absolute("/", path)
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .rev()
        .collect();
    // Soft links followed: a bound against cycles (libhdf5 allows 16 by default).
    let mut hops = 0;
    while let Some(name) = todo.pop() {
        let links = group_links(file, at)?;
        let Some((_, t)) = links.into_iter().find(|(n, _)| *n == name) else {
            return Ok(None);
        };
        match t {
            Target::Hard(a) => {
                at = a;
                here = join(&here, &name);
            }
            Target::External { file, path: to } => {
                return Ok(Some(format!(
                    "external link to {file}:{to} is not followed"
                )))
            }
            Target::Soft(to) => {
                hops += 1;
                if hops > 16 {
                    return Ok(Some("more than 16 soft links in a row".into()));
                }
                let target = soft_target(&here, &to);
                // Resolve the target from the root, then the rest of the path.
                if !soft_target_exists(file, &target, hops)? {
                    return Ok(Some(format!("dangling soft link: {target} does not exist")));
                }
                todo.extend(
                    target
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .rev(),
                );
                at = file.root_group()?.address();
                here = "/".into();
            }
        }
    }
    match object(file, at, &here)? {
        Object::Dataset { error, .. } => Ok(error.filter(|e| {
            // Datatypes are reported by the dataset step with their own wording.
            e.contains("virtual") || e.contains("external")
        })),
        _ => Ok(None),
    }
}

/// Whether every component of absolute `path` resolves to a link (soft links followed up to
/// 16 in total, counting the `hops` already taken).
fn soft_target_exists(
    file: &Hdf5File,
    path: &str,
    hops: usize,
) -> hdf5_reader::error::Result<bool> {
    let mut at = file.root_group()?.address();
    let mut here = "/".to_string();
    let mut todo: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .rev()
        .collect();
    let mut hops = hops;
    while let Some(name) = todo.pop() {
        let links = group_links(file, at)?;
        let Some((_, t)) = links.into_iter().find(|(n, _)| *n == name) else {
            return Ok(false);
        };
        match t {
            Target::Hard(a) => {
                at = a;
                here = join(&here, &name);
            }
            Target::External { .. } => return Ok(true),
            Target::Soft(to) => {
                hops += 1;
                if hops > 16 {
                    return Ok(false);
                }
                let target = soft_target(&here, &to);
                todo.extend(
                    target
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .rev(),
                );
                at = file.root_group()?.address();
                here = "/".into();
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_link_targets_are_normalised() {
        assert_eq!(absolute("/", "/a/b"), "/a/b");
        assert_eq!(absolute("/g", "x"), "/g/x");
        assert_eq!(absolute("/g/h", "../x/./y"), "/g/x/y");
        assert_eq!(absolute("/", "../../x"), "/x");
        // a soft link's value: `..` is a name
        assert_eq!(soft_target("/g", "../x/./y"), "/g/../x/y");
        assert_eq!(soft_target("/g", "/a//b"), "/a/b");
        let links = HashMap::from([("/alias".to_string(), "/real".to_string())]);
        assert_eq!(through_links("/alias/data", &links), "/real/data");
        assert_eq!(through_links("/aliased/data", &links), "/aliased/data");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }
}
