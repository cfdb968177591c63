//! Zarr v2 and v3 arrays over range reads: metadata ([`meta`]), the codec chain
//! ([`codecs`]) and the store with its remembered metadata ([`store`]).
//!
//! A [`ZarrArray`] reads stored chunks itself (a chunk is an object, or an inner chunk of a
//! shard located through the shard index), because its chunks are not byte ranges of one
//! source. [`crate::array::RemoteArray::open_zarr`] wraps it so planning, the payload cache
//! (which keeps decoded chunks re-encoded as Blosc2, see [`crate::cache::convert`]) and
//! result assembly stay the shared ones.
//!
//! Requests: opening an array at a path reads `<path>/zarr.json` (and `<path>/.zarray` only
//! when that is missing), never its parent's listing. A read issues one request per touched
//! chunk object, or per touched shard one index read (a suffix read when the index ends the
//! shard) and then the touched inner chunks coalesced, at most
//! [`crate::array::OpenOptions::concurrency`] objects at a time.

pub mod codecs;
pub mod meta;
pub mod store;

use crate::formats::{ArrayFormat, ArrayInfo, ChunkPlace, FormatError, Node, NodeKind};
use crate::io::{ByteRange, CoalesceOptions, IoError};
use crate::selection::Grid;
use futures::stream::{self, StreamExt};
use meta::{ArrayBytes, KeyEncoding, Sharding, ZarrMeta};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
pub use store::{KeyOpener, ZarrDiscovery, ZarrStore};

/// An error reading a Zarr store; every variant names the object (URL or path) at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ZarrError {
    /// A metadata document or shard index violates the Zarr specification.
    #[error("{key}: invalid Zarr data: {detail}")]
    Invalid { key: String, detail: String },
    /// A valid Zarr feature chunkwise does not read.
    #[error("{key}: unsupported Zarr feature: {detail}")]
    Unsupported { key: String, detail: String },
    /// A stored chunk failed to decode (corrupt, or shorter than its codecs say).
    #[error("{key}: chunk {chunk}: {detail}")]
    Chunk {
        key: String,
        chunk: u64,
        detail: String,
    },
    /// No array metadata at the path.
    #[error("{location}: no Zarr array here ({detail})")]
    NotFound { location: String, detail: String },
    /// The path names a group, not an array.
    #[error("{location}: a Zarr group, not an array: pick one of its arrays with a path")]
    NotAnArray { location: String },
    /// Transport failure.
    #[error(transparent)]
    Io(IoError),
}

impl From<ZarrError> for FormatError {
    fn from(e: ZarrError) -> FormatError {
        match e {
            ZarrError::Invalid { key, detail } => FormatError::Invalid {
                location: key,
                format: "zarr",
                detail,
            },
            ZarrError::Unsupported { key, detail } => FormatError::Unsupported {
                location: key,
                format: "zarr",
                detail,
            },
            ZarrError::Chunk { key, chunk, detail } => FormatError::Chunk {
                location: key,
                chunk,
                detail,
            },
            ZarrError::NotFound { location, .. } => FormatError::Io(IoError::NotFound { location }),
            e @ ZarrError::NotAnArray { .. } => FormatError::Invalid {
                location: String::new(),
                format: "zarr",
                detail: e.to_string(),
            },
            ZarrError::Io(e) => FormatError::Io(e),
        }
    }
}

impl From<ZarrError> for crate::Error {
    fn from(e: ZarrError) -> crate::Error {
        match e {
            e @ ZarrError::NotAnArray { .. } => crate::Error::InvalidArgument(e.to_string()),
            e => FormatError::from(e).into(),
        }
    }
}

/// `path` without leading or trailing `/` (`""` for the root).
pub fn normalise_path(path: &str) -> String {
    path.trim_matches('/').to_string()
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}/{name}")
    }
}

/// Whether a URL or path names a Zarr store by its conventional suffix (`.zarr`, `.zarr/`).
pub fn looks_like_store(location: &str) -> bool {
    location.trim_end_matches('/').ends_with(".zarr")
}

/// Largest decoded chunk (or inner chunk) read, in bytes: each chunk is decoded whole in
/// memory, so larger ones are refused rather than allocated.
pub const MAX_CHUNK_BYTES: u64 = 1 << 30;

/// Largest shard index read, in bytes (16 bytes per inner chunk).
pub const MAX_SHARD_INDEX_BYTES: u64 = 64 << 20;

/// The index of one shard: `(offset, nbytes)` of each inner chunk in C order, `None` for an
/// inner chunk not stored.
type ShardIndex = Arc<Vec<Option<(u64, u64)>>>;

/// One Zarr array: its metadata and how to read and decode its chunks.
pub struct ZarrArray {
    store: Arc<ZarrStore>,
    path: String,
    meta: ZarrMeta,
    grid: Grid,
    /// Remembered shard indexes by shard linear index (`None`: the shard does not exist).
    shard_indexes: Mutex<HashMap<u64, Option<ShardIndex>>>,
}

impl std::fmt::Debug for ZarrArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrArray")
            .field("store", &self.store.base())
            .field("path", &self.path)
            .finish()
    }
}

impl ZarrArray {
    /// Opens the array at `path` (`""` or `/` for a store whose root is the array): reads
    /// `<path>/zarr.json`, and `<path>/.zarray` only when that is missing (both through the
    /// store's remembered metadata, so a warm reopen makes no request).
    ///
    /// # Errors
    /// [`ZarrError::NotFound`] when neither exists (or the path is a group);
    /// [`ZarrError::Invalid`] / [`ZarrError::Unsupported`] from the metadata; I/O errors.
    pub async fn open(store: Arc<ZarrStore>, path: &str) -> Result<ZarrArray, ZarrError> {
        let path = normalise_path(path);
        let v3 = join(&path, "zarr.json");
        let meta = if let Some(raw) = store.metadata(&v3).await? {
            let doc: Value = serde_json::from_str(&raw).map_err(|e| ZarrError::Invalid {
                key: store.url(&v3),
                detail: format!("not JSON: {e}"),
            })?;
            if doc.get("node_type").and_then(Value::as_str) == Some("group") {
                return Err(ZarrError::NotAnArray {
                    location: store.url(&path),
                });
            }
            meta::parse_v3_value(&store.url(&v3), &doc)?
        } else {
            let v2 = join(&path, ".zarray");
            match store.metadata(&v2).await? {
                Some(raw) => meta::parse_v2(&store.url(&v2), raw.as_bytes())?,
                None => {
                    return Err(ZarrError::NotFound {
                        location: store.url(&path),
                        detail: "neither zarr.json nor .zarray found".into(),
                    })
                }
            }
        };
        let read_chunks = match &meta.chain.to_bytes {
            ArrayBytes::Sharding(s) => s.chunk_shape.clone(),
            ArrayBytes::Bytes => meta.chunk_shape.clone(),
        };
        let chunk_bytes = read_chunks
            .iter()
            .try_fold(meta.dtype.itemsize as u64, |a, &n| a.checked_mul(n));
        if chunk_bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
            return Err(ZarrError::Unsupported {
                key: store.url(&path),
                detail: format!(
                    "chunks of {read_chunks:?} elements exceed {MAX_CHUNK_BYTES} bytes"
                ),
            });
        }
        if let ArrayBytes::Sharding(s) = &meta.chain.to_bytes {
            let n = meta
                .chunk_shape
                .iter()
                .zip(&s.chunk_shape)
                .try_fold(16u64, |a, (o, i)| a.checked_mul(o / i));
            if n.is_none_or(|n| n > MAX_SHARD_INDEX_BYTES) {
                return Err(ZarrError::Unsupported {
                    key: store.url(&path),
                    detail: format!("shard index over {MAX_SHARD_INDEX_BYTES} bytes"),
                });
            }
        }
        let grid =
            Grid::new(meta.shape.clone(), read_chunks.clone(), read_chunks).map_err(|e| {
                ZarrError::Invalid {
                    key: store.url(&path),
                    detail: e.to_string(),
                }
            })?;
        Ok(ZarrArray {
            store,
            path,
            meta,
            grid,
            shard_indexes: Mutex::new(HashMap::new()),
        })
    }

    /// The parsed metadata.
    pub fn meta(&self) -> &ZarrMeta {
        &self.meta
    }

    /// The store it reads from.
    pub fn store(&self) -> &Arc<ZarrStore> {
        &self.store
    }

    /// The array's path in the store (no leading `/`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The grid the planner reads by: inner chunks for sharded arrays, chunks otherwise.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The part of the payload-cache stamp this array contributes: location, geometry,
    /// dtype, fill value and codecs (spec: "The source stamp includes location, geometry,
    /// dtype, conversion layout, and the storage-options fingerprint"; the caller adds the
    /// last two).
    pub fn stamp(&self) -> String {
        format!(
            "zarr:{}#path={};v={};shape={:?};chunks={:?};read={:?};dtype={};fill={:?};codecs={}",
            self.store.base(),
            self.path,
            self.meta.zarr_format,
            self.meta.shape,
            self.meta.chunk_shape,
            self.grid.chunks,
            self.meta.dtype,
            self.meta.fill,
            self.meta.codecs
        )
    }

    /// The key of the stored chunk at grid coordinates `coords` (Zarr v3 "Chunk key
    /// encoding"; Zarr v2 "Chunks").
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        let key = match self.meta.key_encoding {
            KeyEncoding::Default(sep) => {
                let mut k = String::from("c");
                for c in coords {
                    k.push(sep);
                    k.push_str(&c.to_string());
                }
                k
            }
            KeyEncoding::V2(sep) => {
                if coords.is_empty() {
                    "0".into()
                } else {
                    coords
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(&sep.to_string())
                }
            }
        };
        join(&self.path, &key)
    }

    fn coords_of(&self, lin: u64, counts: &[u64]) -> Vec<u64> {
        let mut c = vec![0u64; counts.len()];
        let mut l = lin;
        for d in (0..counts.len()).rev() {
            c[d] = l % counts[d];
            l /= counts[d];
        }
        c
    }

    fn chunk_bytes(&self) -> usize {
        self.grid.chunks.iter().product::<u64>() as usize * self.meta.dtype.itemsize
    }

    /// Reads and decodes the read-grid chunks `lins` (linear C-order indexes of
    /// [`ZarrArray::grid`]), calling `on_chunk(lin, decoded)` as each completes, with
    /// `None` for a chunk that is not stored (its elements are the fill value). Chunk objects
    /// (or shards) are read at most `options.concurrency` at a time; the touched inner chunks
    /// of one shard are read through the coalescer.
    ///
    /// Peak memory besides the caller's: per object in flight its stored bytes plus two
    /// decoded-chunk buffers (for a shard: its touched inner chunks, stored and decoded).
    ///
    /// # Errors
    /// I/O errors; [`ZarrError::Chunk`] for a chunk that does not decode;
    /// [`ZarrError::Invalid`] for a shard index that is cut short, fails its CRC or points
    /// outside the shard.
    pub async fn load_chunks(
        &self,
        lins: &[u64],
        options: &CoalesceOptions,
        on_chunk: &mut dyn FnMut(u64, Option<Vec<u8>>) -> Result<(), crate::Error>,
    ) -> Result<(), crate::Error> {
        let concurrency = options.concurrency.max(1);
        match &self.meta.chain.to_bytes {
            ArrayBytes::Bytes => {
                let counts = self.grid.chunk_counts();
                let jobs = lins.iter().map(|&lin| {
                    let key = self.chunk_key(&self.coords_of(lin, &counts));
                    async move {
                        let d = self.load_whole(lin, &key).await?;
                        Ok::<_, ZarrError>(vec![(lin, d)])
                    }
                });
                let mut s = stream::iter(jobs).buffer_unordered(concurrency);
                while let Some(r) = s.next().await {
                    for (lin, d) in r? {
                        on_chunk(lin, d)?;
                    }
                }
            }
            ArrayBytes::Sharding(sh) => {
                // Group the inner chunks by shard, in a stable order.
                let counts = self.grid.chunk_counts();
                let per: Vec<u64> = self
                    .meta
                    .chunk_shape
                    .iter()
                    .zip(&sh.chunk_shape)
                    .map(|(o, i)| o / i)
                    .collect();
                let mut shards: BTreeMap<Vec<u64>, Vec<(u64, u64)>> = BTreeMap::new();
                for &lin in lins {
                    let c = self.coords_of(lin, &counts);
                    let shard: Vec<u64> = c.iter().zip(&per).map(|(c, p)| c / p).collect();
                    let inner = c.iter().zip(&per).fold(0u64, |a, (c, p)| a * p + c % p);
                    shards.entry(shard).or_default().push((lin, inner));
                }
                let shard_counts: Vec<u64> = self
                    .meta
                    .shape
                    .iter()
                    .zip(&self.meta.chunk_shape)
                    .map(|(s, c)| s.div_ceil(*c))
                    .collect();
                let n_inner: u64 = per.iter().product();
                let jobs = shards.into_iter().map(|(shard, members)| {
                    let shard_lin = shard
                        .iter()
                        .zip(&shard_counts)
                        .fold(0u64, |a, (c, n)| a * n + c);
                    let key = self.chunk_key(&shard);
                    async move {
                        self.load_from_shard(sh, shard_lin, &key, n_inner, &members, options)
                            .await
                    }
                });
                let mut s = stream::iter(jobs).buffer_unordered(concurrency);
                while let Some(r) = s.next().await {
                    for (lin, d) in r? {
                        on_chunk(lin, d)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn chunk_error(&self, key: &str, lin: u64, detail: String) -> ZarrError {
        ZarrError::Chunk {
            key: self.store.url(key),
            chunk: lin,
            detail,
        }
    }

    async fn load_whole(&self, lin: u64, key: &str) -> Result<Option<Vec<u8>>, ZarrError> {
        let want = self.chunk_bytes() as u64;
        // A stored chunk is never much larger than its decoded size (compressors' worst-case
        // expansion is well under 1/16 plus a header): refuse to read more than that.
        let cap = want + want / 8 + 4096;
        let Some(f) = self.store.read(key, ByteRange::bounded(0..cap + 1)).await? else {
            return Ok(None);
        };
        if f.bytes.len() as u64 > cap {
            return Err(self.chunk_error(
                key,
                lin,
                format!("stored chunk is over {cap} bytes, larger than its codecs allow"),
            ));
        }
        codecs::decode_chunk(
            &self.meta.chain,
            &f.bytes,
            &self.grid.chunks,
            &self.meta.dtype,
        )
        .map(Some)
        .map_err(|d| self.chunk_error(key, lin, d))
    }

    async fn shard_index(
        &self,
        sh: &Sharding,
        shard_lin: u64,
        key: &str,
        n_inner: u64,
    ) -> Result<Option<ShardIndex>, ZarrError> {
        if let Some(i) = self
            .shard_indexes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&shard_lin)
        {
            return Ok(i.clone());
        }
        let invalid = |detail: String| ZarrError::Invalid {
            key: self.store.url(key),
            detail,
        };
        let len = 16 * n_inner + if sh.index_crc32c { 4 } else { 0 };
        let range = if sh.index_at_end {
            ByteRange::Suffix(len)
        } else {
            ByteRange::bounded(0..len)
        };
        let index = match self.store.read(key, range).await? {
            None => None,
            Some(f) => {
                if f.bytes.len() as u64 != len {
                    return Err(invalid(format!(
                        "shard of {} bytes cannot hold its {len}-byte index",
                        f.info.len
                    )));
                }
                let body = if sh.index_crc32c {
                    codecs::strip_crc32c(&f.bytes)
                        .map_err(|d| invalid(format!("shard index: {d}")))?
                } else {
                    &f.bytes[..]
                };
                let shard_len = f.info.len;
                let data_start = if sh.index_at_end { 0 } else { len };
                let data_end = if sh.index_at_end {
                    shard_len - len
                } else {
                    shard_len
                };
                let mut entries = Vec::with_capacity(n_inner as usize);
                for (i, e) in body.chunks_exact(16).enumerate() {
                    let off = u64::from_le_bytes(e[..8].try_into().expect("8 bytes"));
                    let n = u64::from_le_bytes(e[8..].try_into().expect("8 bytes"));
                    if off == u64::MAX && n == u64::MAX {
                        entries.push(None);
                        continue;
                    }
                    match off.checked_add(n) {
                        Some(end) if off >= data_start && end <= data_end => {
                            entries.push(Some((off, n)))
                        }
                        _ => {
                            return Err(invalid(format!(
                                "shard index entry {i} points at bytes {off}..+{n}, outside the \
                                 shard's {data_start}..{data_end}"
                            )))
                        }
                    }
                }
                Some(Arc::new(entries))
            }
        };
        self.shard_indexes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(shard_lin, index.clone());
        Ok(index)
    }

    async fn load_from_shard(
        &self,
        sh: &Sharding,
        shard_lin: u64,
        key: &str,
        n_inner: u64,
        members: &[(u64, u64)],
        options: &CoalesceOptions,
    ) -> Result<Vec<(u64, Option<Vec<u8>>)>, ZarrError> {
        let Some(index) = self.shard_index(sh, shard_lin, key, n_inner).await? else {
            return Ok(members.iter().map(|(lin, _)| (*lin, None)).collect());
        };
        let mut out = Vec::with_capacity(members.len());
        let mut wanted = Vec::new();
        for &(lin, inner) in members {
            match index[inner as usize] {
                None => out.push((lin, None)),
                Some((off, n)) => wanted.push((lin, off..off + n)),
            }
        }
        if wanted.is_empty() {
            return Ok(out);
        }
        let want_bytes = self.chunk_bytes() as u64;
        let cap = want_bytes + want_bytes / 8 + 4096;
        if let Some((lin, r)) = wanted.iter().find(|(_, r)| r.end - r.start > cap) {
            return Err(self.chunk_error(
                key,
                *lin,
                format!(
                    "inner chunk of {} bytes is larger than its codecs allow",
                    r.end - r.start
                ),
            ));
        }
        let ranges: Vec<_> = wanted.iter().map(|(_, r)| r.clone()).collect();
        let got = self
            .store
            .read_ranges(key, &ranges, options)
            .await?
            .ok_or_else(|| {
                ZarrError::Io(IoError::NotFound {
                    location: self.store.url(key),
                })
            })?;
        for ((lin, _), bytes) in wanted.iter().zip(got) {
            let d = codecs::decode_chunk(&sh.inner, &bytes, &self.grid.chunks, &self.meta.dtype)
                .map_err(|d| self.chunk_error(key, *lin, d))?;
            out.push((*lin, Some(d)));
        }
        Ok(out)
    }

    fn describe(&self) -> ArrayInfo {
        let nbytes = self.meta.shape.iter().product::<u64>() * self.meta.dtype.itemsize as u64;
        ArrayInfo {
            format: if self.meta.zarr_format == 3 {
                "zarr3"
            } else {
                "zarr2"
            },
            shape: self.meta.shape.clone(),
            dtype: self.meta.dtype.to_string(),
            chunks: self.grid.chunks.clone(),
            blocks: self.grid.blocks.clone(),
            codecs: self.meta.codecs.clone(),
            nchunks: self.grid.nchunks().unwrap_or(u64::MAX),
            nbytes,
            // Stored sizes are unknown without reading every chunk object's size.
            cbytes: 0,
            source_bytes: 0,
        }
    }
}

/// The [`ArrayFormat`] face of a Zarr array: geometry and dtype for the shared planner. Its
/// chunks are not byte ranges of one source, so [`crate::array::RemoteArray`] loads them
/// through [`ZarrArray::load_chunks`] instead of `locate`/`decode`.
impl ArrayFormat for Arc<ZarrArray> {
    fn grid(&self) -> &Grid {
        &self.grid
    }
    fn dtype(&self) -> crate::dtype::DType {
        self.meta.dtype
    }
    fn info(&self) -> ArrayInfo {
        self.describe()
    }
    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError> {
        Err(FormatError::Unsupported {
            location: self.store.url(&self.path),
            format: "zarr",
            detail: format!("chunk {chunk} is an object of its own, read by the Zarr reader"),
        })
    }
    fn decode(&self, chunk: u64, _stored: &[u8]) -> Result<Vec<u8>, FormatError> {
        self.locate(chunk).map(|_| Vec::new())
    }
}

fn array_node(path: &str, parsed: Result<ZarrMeta, ZarrError>) -> Node {
    match parsed {
        Ok(m) => Node {
            path: path.into(),
            kind: NodeKind::Array,
            shape: Some(m.shape),
            dtype: Some(m.dtype.to_string()),
            error: None,
        },
        Err(e) => Node {
            path: path.into(),
            kind: NodeKind::Array,
            shape: None,
            dtype: None,
            error: Some(e.to_string()),
        },
    }
}

fn group_node(path: &str) -> Node {
    Node {
        path: path.into(),
        kind: NodeKind::Group,
        shape: None,
        dtype: None,
        error: None,
    }
}

fn abs(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

/// Lists the groups and arrays of the store: from its consolidated metadata (a v3 root
/// `zarr.json` with `consolidated_metadata`, else a v2 `.zmetadata`), else just the root node
/// (plain HTTP cannot list a directory). Paths are absolute (`/`, `/group/array`), sorted.
/// An array whose metadata chunkwise cannot read is listed with its `error`.
///
/// Requests: one for a v3 store (`zarr.json`), up to three for v2 (`zarr.json` missing,
/// `.zmetadata`, then `.zgroup`/`.zarray` without consolidated metadata); none for what the
/// store already remembers.
///
/// # Errors
/// [`ZarrError::NotFound`] when the root holds no Zarr metadata; I/O errors; malformed
/// root documents.
pub async fn list_nodes(store: &ZarrStore) -> Result<Vec<Node>, ZarrError> {
    let mut nodes = Vec::new();
    if let Some(raw) = store.metadata("zarr.json").await? {
        let key = store.url("zarr.json");
        let doc: Value = serde_json::from_str(&raw).map_err(|e| ZarrError::Invalid {
            key: key.clone(),
            detail: format!("not JSON: {e}"),
        })?;
        if doc.get("node_type").and_then(Value::as_str) == Some("array") {
            return Ok(vec![array_node("/", meta::parse_v3_value(&key, &doc))]);
        }
        nodes.push(group_node("/"));
        if let Some(m) = doc
            .pointer("/consolidated_metadata/metadata")
            .and_then(Value::as_object)
        {
            for (path, d) in m {
                let k = store.url(&join(path.trim_matches('/'), "zarr.json"));
                if d.get("node_type").and_then(Value::as_str) == Some("array") {
                    nodes.push(array_node(&abs(path), meta::parse_v3_value(&k, d)));
                } else {
                    nodes.push(group_node(&abs(path)));
                }
            }
        }
    } else if let Some(raw) = store.metadata(".zmetadata").await? {
        let key = store.url(".zmetadata");
        let doc: Value = serde_json::from_str(&raw).map_err(|e| ZarrError::Invalid {
            key: key.clone(),
            detail: format!("not JSON: {e}"),
        })?;
        let m = doc
            .get("metadata")
            .and_then(Value::as_object)
            .ok_or_else(|| ZarrError::Invalid {
                key,
                detail: "no \"metadata\" object".into(),
            })?;
        for (k, d) in m {
            if let Some(p) = k.strip_suffix(".zarray") {
                let text = d.to_string();
                nodes.push(array_node(
                    &abs(p),
                    meta::parse_v2(&store.url(k), text.as_bytes()),
                ));
            } else if let Some(p) = k.strip_suffix(".zgroup") {
                nodes.push(group_node(&abs(p)));
            }
        }
    } else if let Some(raw) = store.metadata(".zarray").await? {
        nodes.push(array_node(
            "/",
            meta::parse_v2(&store.url(".zarray"), raw.as_bytes()),
        ));
    } else if store.metadata(".zgroup").await?.is_some() {
        nodes.push(group_node("/"));
    } else {
        return Err(ZarrError::NotFound {
            location: store.base().to_string(),
            detail: "no zarr.json, .zmetadata, .zarray or .zgroup at the root".into(),
        });
    }
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(nodes)
}
