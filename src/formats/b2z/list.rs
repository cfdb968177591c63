//! The listing of a `.b2z`: which members and embedded keys are arrays, groups and group
//! attributes, from the ZIP directory and the embedded store.
//!
//! Names (python-blosc2 `dict_store.py`, `tree_store.py`):
//! - an external leaf is a member `<key>.b2nd` (an NDim array) whose key is the path
//!   (`g/h/data.b2nd` is `/g/h/data`); `<key>.b2f` is a super-chunk and `<key>.b2b` a batch
//!   array, which are listed with the reason they are not read;
//! - `__vlmeta__.b2f` (or the embedded key `/…/__vlmeta__`) holds the attributes of its group
//!   as the vlmeta of a super-chunk; `_meta.b2f` holds a CTable's metadata as vlmeta, shown
//!   as attributes of the table's group;
//! - `embed.b2e` is the embedded store ([`super::embed`]); every other key of its map is a
//!   leaf whose frame lies in the store's decoded byte stream;
//! - groups are every ancestor of a leaf, the root `/` included.
//!
//! Discovery reads each array's frame header and offsets chunk here, so that the listing
//! carries every leaf's bootstrap seed and opening a leaf makes no request: members up to
//! 64 KiB arrive whole with their prefix, larger ones need one more read for their offsets
//! (all of them concurrently).

use super::archive::{invalid, Archive, MemberPrefix};
use super::embed::{EmbedEntry, EmbedStore, EmbedStream};
use super::{Leaf, LeafPlace};
use crate::attrs::Attrs;
use crate::codec::blosc2::frame::{FrameError, FrameHeader};
use crate::formats::b2nd::{B2ndArray, B2ndSeed};
use crate::formats::{ArrayFormat, Node, NodeKind};
use crate::io::{ByteRange, RangeSource};
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

/// The embedded store's member name.
pub const EMBED_MEMBER: &str = "embed.b2e";
/// The key (basename) of a group's attributes.
pub const VLMETA_KEY: &str = "__vlmeta__";
/// The basename of a CTable's metadata.
pub const TABLE_META_KEY: &str = "_meta";

/// Largest offsets chunk plus trailer read for one leaf at listing time (1 MiB); a larger
/// one is read when the leaf is opened.
pub const MAX_LISTED_INDEX_BYTES: u64 = 1 << 20;

/// Largest embedded frame read (64 MiB): python-blosc2 embeds small values only.
pub const MAX_EMBEDDED_FRAME_BYTES: u64 = 64 << 20;

/// Largest embedded store (`embed.b2e`) read whole at listing (8 MiB).
pub const MAX_EMBED_READ_WHOLE: u64 = 8 << 20;

/// Most members read at listing (each costs a prefix read of up to 16 KiB + 8 KiB): an
/// archive of more is refused rather than listed with an unbounded amount of reads.
pub const MAX_LISTED_MEMBERS: usize = 20_000;

/// What listing found.
pub(crate) struct Listed {
    pub embed: Arc<EmbedStore>,
    pub embed_data: Range<u64>,
    pub leaves: Vec<Leaf>,
    pub nodes: Vec<Node>,
    /// Members read whole at discovery (path → member bytes), whose chunks go to the payload
    /// cache when the leaf is opened.
    pub prefetched: Vec<(String, Bytes)>,
}

/// The frame header and index bytes of the frame `source` serves (`len` bytes), starting
/// from `prefix` (its first bytes); `max_index` bounds the offsets-plus-trailer read.
/// Returns `None` for the index when it is larger than `max_index` (read later).
pub(crate) async fn frame_parts(
    source: &dyn RangeSource,
    prefix: Bytes,
    len: u64,
    max_index: u64,
) -> crate::Result<(Bytes, Option<Bytes>)> {
    frame_parts_held(source, prefix, Bytes::new(), len, max_index).await
}

/// [`frame_parts`] with `suffix`, the last bytes of the frame when read already (the
/// offsets chunk and trailer are taken from it when it covers them).
pub(crate) async fn frame_parts_held(
    source: &dyn RangeSource,
    prefix: Bytes,
    suffix: Bytes,
    len: u64,
    max_index: u64,
) -> crate::Result<(Bytes, Option<Bytes>)> {
    let location = source.location().to_string();
    let mut head = prefix;
    let header = loop {
        match FrameHeader::parse(&head) {
            Ok(h) => break h,
            Err(FrameError::NeedMore { needed, .. }) if (needed as u64) > head.len() as u64 => {
                let needed = (needed as u64).min(len);
                if needed <= head.len() as u64 {
                    return Err(invalid(&location, "frame header longer than the member").into());
                }
                head = source.read(ByteRange::bounded(0..needed)).await?.bytes;
            }
            Err(e) => return Err(invalid(&location, e).into()),
        }
    };
    if header.frame_len != len {
        return Err(invalid(
            &location,
            format!(
                "frame length {} but the member has {len} bytes",
                header.frame_len
            ),
        )
        .into());
    }
    let ir = header.index_range();
    if ir.start > ir.end || ir.end > len {
        return Err(invalid(&location, "offsets chunk outside the frame").into());
    }
    let header_bytes = head.slice(..header.header_len.min(head.len()));
    let from_suffix = len - (suffix.len() as u64).min(len);
    let index = if ir.end <= head.len() as u64 {
        Some(head.slice(ir.start as usize..ir.end as usize))
    } else if ir.start >= from_suffix && ir.end == len {
        Some(suffix.slice((ir.start - from_suffix) as usize..))
    } else if ir.end - ir.start <= max_index {
        Some(source.read(ByteRange::bounded(ir.clone())).await?.bytes)
    } else {
        None
    };
    Ok((header_bytes, index))
}

/// Node path of a key (`g/b` or `/g/b`): `/g/b`.
fn node_path(key: &str) -> String {
    crate::store::normalise_path(key)
}

/// The parent group of `/a/b` (`/a`), of `/a` (`/`).
fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of a path.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// An array node from its frame, or a node saying why the leaf cannot be read.
fn array_node(path: &str, frame: Result<&B2ndArray, String>) -> Node {
    match frame {
        Ok(a) => Node {
            path: path.to_string(),
            kind: NodeKind::Array,
            shape: Some(a.grid().shape.clone()),
            dtype: Some(a.dtype().to_string()),
            error: None,
            attrs: a.attrs(),
            dims: None,
        },
        Err(why) => Node {
            path: path.to_string(),
            kind: NodeKind::Array,
            shape: None,
            dtype: None,
            error: Some(why),
            attrs: Attrs::new(),
            dims: None,
        },
    }
}

/// The attributes a super-chunk frame's vlmeta holds (a `__vlmeta__` or `_meta` frame),
/// from its header and index bytes.
fn frame_vlmeta(location: &str, header: &Bytes, index: &Bytes) -> Result<Attrs, String> {
    let h = FrameHeader::parse(header).map_err(|e| format!("{location}: {e}"))?;
    let idx = crate::codec::blosc2::frame::parse_index(&h, index)
        .map_err(|e| format!("{location}: {e}"))?;
    Ok(crate::codec::blosc2::vlmeta::attrs(&idx.vlmetalayers))
}

/// What one name of the store is.
enum Item {
    Array,
    GroupAttrs,
    TableMeta,
    Unread(&'static str),
}

fn classify(key_base: &str, ext: Option<&str>) -> Item {
    match (key_base, ext) {
        // An NDim array (`.b2nd`) of that name is a user's array, as python-blosc2 reads it.
        (VLMETA_KEY, Some("b2f") | None) => Item::GroupAttrs,
        (TABLE_META_KEY, Some("b2f") | None) => Item::TableMeta,
        (_, Some("b2nd") | None) => Item::Array,
        (_, Some("b2f")) => Item::Unread(
            "a Blosc2 super-chunk (.b2f), not an NDim array: unsupported",
        ),
        (_, Some("b2b")) => Item::Unread(
            "a Blosc2 batch array (.b2b: variable-length items, such as a vlstring column): unsupported",
        ),
        _ => Item::Unread("unsupported member"),
    }
}

/// Lists the archive: reads the embedded store and every array's frame header and index.
///
/// # Errors
/// [`crate::formats::FormatError::Invalid`] when `embed.b2e` is missing or malformed, or a
/// member's frame is; `Unsupported` when `embed.b2e` itself is compressed; I/O errors.
pub(crate) async fn list(archive: &Archive, concurrency: usize) -> crate::Result<Listed> {
    let location = archive.info().location.clone();
    let dir = archive.directory();
    let embed_entry = archive.entry(EMBED_MEMBER).ok_or_else(|| {
        invalid(
            &location,
            "no embed.b2e member: not a python-blosc2 TreeStore, DictStore or CTable archive",
        )
    })?;
    // The members read: embed.b2e, then every member with a name we know.
    let mut wanted = vec![embed_entry];
    let mut kinds = Vec::new();
    for e in &dir.entries {
        if e.name == EMBED_MEMBER {
            continue;
        }
        let (stem, ext) = match e.name.rsplit_once('.') {
            Some((s, x)) if !s.is_empty() => (s, Some(x)),
            _ => (e.name.as_str(), None),
        };
        let path = node_path(stem);
        let item = classify(basename(&path), ext);
        kinds.push((e, path, item));
    }
    // Compressed members are listed with the refusal, not read.
    let mut refused: BTreeMap<String, String> = BTreeMap::new();
    for (e, path, item) in &kinds {
        if matches!(item, Item::Unread(_)) {
            continue;
        }
        match e.check_stored() {
            Ok(()) => wanted.push(e),
            Err(z) => {
                refused.insert(path.clone(), z.to_string());
            }
        }
    }
    if wanted.len() > MAX_LISTED_MEMBERS {
        return Err(invalid(
            &location,
            format!(
                "{} members to list, more than the {MAX_LISTED_MEMBERS} read at listing",
                wanted.len()
            ),
        )
        .into());
    }
    let prefixes = archive.member_prefixes(&wanted, concurrency).await?;
    let embed_prefix = &prefixes[0];
    // The embedded store's frame.
    let embed_source = archive.member_source(embed_prefix.data.clone(), EMBED_MEMBER);
    let embed_len = embed_prefix.data.end - embed_prefix.data.start;
    // The stream reads the member from memory: its prefix when that holds it whole, else
    // the member read whole once (up to 8 MiB), so the embedded frames listed below cost no
    // request each; a larger embedded store is read chunk by chunk.
    let embed_bytes = if embed_prefix.is_whole() {
        Some(embed_prefix.prefix.clone())
    } else if embed_len <= MAX_EMBED_READ_WHOLE {
        Some(
            embed_source
                .read(ByteRange::bounded(0..embed_len))
                .await?
                .bytes,
        )
    } else {
        None
    };
    let (eh, ei) = frame_parts(
        &*embed_source,
        embed_bytes
            .clone()
            .unwrap_or_else(|| embed_prefix.prefix.clone()),
        embed_len,
        u64::MAX,
    )
    .await?;
    let ei = ei.unwrap_or_default();
    let embed = Arc::new(EmbedStore::from_parts(
        embed_source.location(),
        eh,
        ei,
        embed_len,
    )?);
    let stream_member: Arc<dyn RangeSource> = match embed_bytes {
        Some(b) => Arc::new(crate::io::memory::MemorySource::new(
            embed_source.location().to_string(),
            b,
        )),
        None => embed_source.clone(),
    };
    let stream: Arc<dyn RangeSource> = Arc::new(EmbedStream::new(
        embed.clone(),
        stream_member,
        format!("{location} member {EMBED_MEMBER}"),
    ));

    // External members: frame parts, concurrently.
    let members: Vec<(&(&super::zip::Entry, String, Item), &MemberPrefix)> = kinds
        .iter()
        .filter(|(_, p, item)| !matches!(item, Item::Unread(_)) && !refused.contains_key(p))
        .zip(&prefixes[1..])
        .collect();
    let parts: Vec<Result<(Bytes, Option<Bytes>), String>> =
        stream::iter(members.iter().map(|((e, _, _), pre)| {
            let src = archive.member_source(pre.data.clone(), &e.name);
            let len = pre.data.end - pre.data.start;
            let (prefix, suffix) = (pre.prefix.clone(), pre.suffix.clone());
            async move {
                match frame_parts_held(&*src, prefix, suffix, len, MAX_LISTED_INDEX_BYTES).await {
                    Ok(p) => Ok(Ok(p)),
                    // An I/O error stops the listing; a malformed member is listed with it.
                    Err(crate::Error::Io(io)) => Err(crate::Error::Io(io)),
                    Err(other) => Ok(Err(other.to_string())),
                }
            }
        }))
        .buffered(concurrency.max(1))
        .try_collect()
        .await?;

    let mut leaves = Vec::new();
    // By path, in a hash map (a B-tree of nodes was a map type of its own in the wasm
    // module); sorted by path once listed, the order the B-tree gave them.
    let mut nodes: HashMap<String, Node> = HashMap::new();
    let mut group_attrs: BTreeMap<String, Attrs> = BTreeMap::new();
    let mut prefetched = Vec::new();
    for (((e, path, item), pre), part) in members.iter().zip(parts) {
        let data = pre.data.clone();
        let len = data.end - data.start;
        let member_loc = format!("{location} member {}", e.name);
        match item {
            Item::Array => {
                // The node from the frame; a leaf whose offsets were too large to read now
                // is listed from its header alone.
                let (node, seed) = match &part {
                    Ok((h, Some(i))) => {
                        match B2ndArray::from_parts(member_loc.clone(), h.clone(), i.clone(), len) {
                            Ok(a) => (
                                array_node(path, Ok(&a)),
                                Some(B2ndSeed {
                                    header: h.clone(),
                                    index: i.clone(),
                                }),
                            ),
                            Err(err) => (array_node(path, Err(err.to_string())), None),
                        }
                    }
                    Ok((h, None)) => (header_only_node(path, Some(h)), None),
                    Err(why) => (array_node(path, Err(why.clone())), None),
                };
                // A member whose frame is malformed is a leaf too: opening it reads it
                // again and fails with its typed error (INVALID_DATA, UNSUPPORTED).
                leaves.push(Leaf {
                    path: path.clone(),
                    place: LeafPlace::Member {
                        name: e.name.clone(),
                        data: data.clone(),
                    },
                    frame: seed,
                });
                if pre.is_whole() {
                    prefetched.push((path.clone(), pre.prefix.clone()));
                }
                nodes.insert(path.clone(), node);
            }
            Item::GroupAttrs | Item::TableMeta => {
                if let Ok((h, Some(i))) = &part {
                    if let Ok(a) = frame_vlmeta(&member_loc, h, i) {
                        group_attrs
                            .entry(parent(path).to_string())
                            .or_default()
                            .0
                            .extend(a.0);
                    }
                }
            }
            Item::Unread(_) => {}
        }
    }
    for (_, path, item) in &kinds {
        if let Item::Unread(why) = item {
            nodes.insert(path.clone(), array_node(path, Err((*why).to_string())));
        }
    }
    for (path, why) in refused {
        nodes.insert(path.clone(), array_node(&path, Err(why)));
    }

    // Embedded keys.
    for (key, entry) in embed.entries() {
        let path = node_path(key);
        match entry {
            EmbedEntry::Remote { path: p, .. } => {
                nodes.insert(
                    path.clone(),
                    Node {
                        path: path.clone(),
                        kind: NodeKind::Link,
                        shape: None,
                        dtype: None,
                        error: Some(format!(
                            "a reference to the Caterva2 dataset {p}, not data of this archive: unsupported"
                        )),
                        attrs: Attrs::new(),
                        dims: None,
                    },
                );
            }
            EmbedEntry::Frame(range) => {
                let len = range.end - range.start;
                let src = crate::io::Window::new(
                    stream.clone(),
                    range.clone(),
                    format!("{location} embedded {key}"),
                );
                if len > MAX_EMBEDDED_FRAME_BYTES {
                    nodes.insert(
                        path.clone(),
                        array_node(&path, Err(format!("an embedded frame of {len} bytes"))),
                    );
                    continue;
                }
                let bytes = src.read(ByteRange::bounded(0..len)).await?.bytes;
                let parts = frame_parts(&src, bytes, len, u64::MAX).await;
                let (h, i) = match parts {
                    // Unbounded: the index is always read.
                    Ok((h, i)) => (h, i.unwrap_or_default()),
                    Err(crate::Error::Io(io)) => return Err(io.into()),
                    Err(e) => {
                        nodes.insert(path.clone(), array_node(&path, Err(e.to_string())));
                        continue;
                    }
                };
                // A `__vlmeta__` or `_meta` key holds attributes as a super-chunk's vlmeta;
                // one holding an NDim array is a user's array of that name (python-blosc2
                // reads it back as one), so the frame decides.
                let is_array = FrameHeader::parse(&h).is_ok_and(|f| f.metalayer("b2nd").is_some());
                match classify(basename(&path), None) {
                    Item::GroupAttrs | Item::TableMeta if !is_array => {
                        if let Ok(a) = frame_vlmeta(src.location(), &h, &i) {
                            group_attrs
                                .entry(parent(&path).to_string())
                                .or_default()
                                .0
                                .extend(a.0);
                        }
                    }
                    _ => match B2ndArray::from_parts(
                        src.location().to_string(),
                        h.clone(),
                        i.clone(),
                        len,
                    ) {
                        Ok(a) => {
                            nodes.insert(path.clone(), array_node(&path, Ok(&a)));
                            leaves.push(Leaf {
                                path: path.clone(),
                                place: LeafPlace::Embedded {
                                    range: range.clone(),
                                },
                                frame: Some(B2ndSeed {
                                    header: h,
                                    index: i,
                                }),
                            });
                        }
                        Err(e) => {
                            nodes.insert(path.clone(), array_node(&path, Err(e.to_string())));
                        }
                    },
                }
            }
        }
    }

    // Groups: every ancestor of a node, and every group with attributes.
    let mut groups: Vec<String> = vec!["/".to_string()];
    for p in nodes.keys().chain(group_attrs.keys()) {
        let mut g = parent(p);
        loop {
            groups.push(g.to_string());
            if g == "/" {
                break;
            }
            g = parent(g);
        }
    }
    groups.extend(group_attrs.keys().cloned());
    for g in groups {
        if nodes
            .get(&g)
            .is_some_and(|n| !matches!(n.kind, NodeKind::Group | NodeKind::Table))
        {
            continue;
        }
        nodes.entry(g.clone()).or_insert_with(|| Node {
            path: g.clone(),
            kind: NodeKind::Group,
            shape: None,
            dtype: None,
            error: None,
            attrs: Attrs::new(),
            dims: None,
        });
    }
    for (g, attrs) in group_attrs {
        if let Some(n) = nodes.get_mut(&g) {
            if n.kind == NodeKind::Group {
                // A CTable's group is listed as a table of its live rows.
                if let Some(schema) = super::table::schema(&attrs) {
                    n.kind = NodeKind::Table;
                    n.shape = Some(vec![schema["n_rows"].as_u64().unwrap_or(0)]);
                }
                n.attrs = attrs;
            }
        }
    }
    // A CTable's summary indexes (`_indexes/`) are python-blosc2's query acceleration, not
    // data of the table: not listed.
    let tables: Vec<String> = nodes
        .values()
        .filter(|n| n.kind == NodeKind::Table)
        .map(|n| {
            if n.path == "/" {
                String::new()
            } else {
                n.path.clone()
            }
        })
        .collect();
    let internal = |p: &str| {
        tables.iter().any(|t| {
            let base = format!("{t}/_indexes");
            p == base || p.starts_with(&format!("{base}/"))
        })
    };
    nodes.retain(|p, _| !internal(p));
    leaves.retain(|l| !internal(&l.path));
    if nodes.len() > crate::store::MAX_NODES {
        return Err(invalid(
            &location,
            format!("{} nodes, more than are listed", nodes.len()),
        )
        .into());
    }
    crate::sort::sort_by(&mut leaves, |a, b| a.path.cmp(&b.path));
    // Nodes are shown and persisted (the manifest, a reference document): the reasons name
    // the archive by its URL, whose query and user info must not travel with them.
    let mut nodes: Vec<Node> = nodes.into_values().collect();
    crate::sort::sort_by(&mut nodes, |a, b| a.path.cmp(&b.path));
    let nodes = crate::formats::redact_node_errors(nodes);
    Ok(Listed {
        embed,
        embed_data: embed_prefix.data.clone(),
        leaves,
        nodes,
        prefetched,
    })
}

/// An array node from the frame header alone (shape and dtype from its `b2nd` metalayer).
fn header_only_node(path: &str, header: Option<&Bytes>) -> Node {
    let meta = header
        .and_then(|h| FrameHeader::parse(h).ok())
        .and_then(|h| {
            h.metalayer("b2nd")
                .and_then(|m| crate::codec::blosc2::b2nd::B2ndMeta::parse(m).ok())
        });
    match meta {
        Some(m) => Node {
            path: path.to_string(),
            kind: NodeKind::Array,
            shape: Some(m.shape.clone()),
            dtype: Some(m.dtype.clone()),
            error: None,
            attrs: Attrs::new(),
            dims: None,
        },
        None => array_node(path, Err("frame header without a b2nd metalayer".into())),
    }
}
