//! Zarr v2 and v3 arrays over range reads. The `zarrs` crate reads the metadata and runs
//! the codec chain (sharding included); chunkwise keeps the transport and what is
//! remembered: the store with its remembered metadata ([`store`]), the `zarrs` storage over
//! it ([`storage`]: batched, coalesced range reads, typed errors), the codecs `zarrs`' pure
//! Rust build lacks ([`codecs`]: blosc, zstd, numcodecs lz4 and delta), the facts the
//! planner reads by ([`meta`]), attributes and dimension names ([`attrs`]) and the walk that
//! lists a store without consolidated metadata ([`walk`]).
//!
//! A [`ZarrArray`] reads stored chunks itself (a chunk is an object, or an inner chunk of a
//! shard located through the shard index), because its chunks are not byte ranges of one
//! source. [`crate::array::RemoteArray::open_zarr`] wraps it so planning, the payload cache
//! (which keeps decoded chunks re-encoded as Blosc2, see [`crate::cache::convert`]) and
//! result assembly stay the shared ones.
//!
//! Requests: opening an array at a path reads `<path>/zarr.json` (attributes included) and,
//! at the same time, `<path>/.zarray` and `<path>/.zattrs` (used only when `zarr.json` is
//! missing; a missing `.zattrs` is no attributes), one round trip for either version, none
//! for what the store remembers or its consolidated metadata covers; never its parent's
//! listing; a path holding
//! no array costs one more for `<path>/.zgroup`, and a group path the root's listing, so
//! the error names the group and its arrays. A read issues one request
//! per touched chunk object, or per touched shard one index read (a suffix read when the
//! index ends the shard; remembered) and then the touched inner chunks coalesced, at most
//! [`crate::array::OpenOptions::concurrency`] objects at a time.

pub mod attrs;
pub mod codecs;
pub mod meta;
pub mod storage;
pub mod store;
pub mod walk;

use crate::dtype::DType;
use crate::formats::{
    ArrayFormat, ArrayInfo, ChunkDecodeError, ChunkPlace, FormatError, Node, NodeKind,
};
use crate::io::{ByteRange, CoalesceOptions, IoError};
use crate::selection::Grid;
use futures::stream::{self, StreamExt};
use meta::ZarrMeta;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
pub use storage::ZarrStorage;
pub use store::{KeyOpener, ZarrDiscovery, ZarrStore};
use zarrs::array::{
    Array, ArrayBytes, ArrayCreateError, ArrayError, ArrayMetadata, ArrayShardedExt, ArraySubset,
    AsyncArrayShardedReadableExt, AsyncArrayShardedReadableExtCache, CodecError, CodecOptions,
};

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
    /// A stored chunk failed to decode (corrupt, or shorter than its codecs say); `source`
    /// is the failing codec's error.
    #[error("{key}: chunk {chunk}: {source}")]
    Chunk {
        key: String,
        /// Linear C-order index in the read grid (the first touched inner chunk of a shard).
        chunk: u64,
        #[source]
        source: ChunkDecodeError,
    },
    /// No array metadata at the path.
    #[error("{location}: no Zarr array here ({detail})")]
    NotFound { location: String, detail: String },
    /// The path names a group, not an array; `arrays` says which arrays it holds (from
    /// the consolidated metadata) or that they are not listed.
    #[error("{location} is a group, not an array; {arrays}")]
    NotAnArray { location: String, arrays: String },
    /// Transport failure: a wrapper that `From<ZarrError> for crate::Error` flattens into
    /// [`crate::Error::Io`].
    #[error(transparent)]
    Io(IoError),
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

/// The Zarr fallback of opening a URL or path as a single object: a Zarr store (or array)
/// root has no object of its own, so when `first` failed because the object is missing
/// (`NOT_FOUND`) or holds bytes of no known format (`UNRECOGNISED_FORMAT`, such as a
/// directory listing), or, with `container_refused`, was refused as no container
/// (`UNSUPPORTED` from a store open), `zarr` is tried. If Zarr finds nothing there either
/// (an I/O error), the first error is kept: it says what the source is.
///
/// # Errors
/// `first`'s error, or the Zarr open's non-I/O error (malformed metadata, a group path...).
pub async fn or_zarr<T, F, Fut>(
    first: crate::Result<T>,
    container_refused: bool,
    zarr: F,
) -> crate::Result<T>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = crate::Result<T>>,
{
    use crate::Error;
    match first {
        Err(e) => {
            let probe = matches!(
                &e,
                Error::Io(IoError::NotFound { .. })
                    | Error::Format(FormatError::Unrecognised { .. })
            ) || (container_refused
                && matches!(&e, Error::Format(FormatError::Unsupported { .. })));
            if !probe {
                return Err(e);
            }
            match zarr().await {
                Err(Error::Io(_)) => Err(e),
                other => other,
            }
        }
        ok => ok,
    }
}

pub use super::signature::looks_like_zarr_store as looks_like_store;

/// Largest decoded chunk (or inner chunk) read, in bytes: each chunk is decoded whole in
/// memory, so larger ones are refused rather than allocated.
pub const MAX_CHUNK_BYTES: u64 = 1 << 30;

/// Largest shard index read, in bytes (16 bytes per inner chunk).
pub const MAX_SHARD_INDEX_BYTES: u64 = 64 << 20;

/// One Zarr array: its metadata and how to read and decode its chunks (through `zarrs`,
/// over [`ZarrStorage`]).
pub struct ZarrArray {
    store: Arc<ZarrStore>,
    storage: Arc<ZarrStorage>,
    array: Array<ZarrStorage>,
    /// Remembered shard indexes, for arrays whose chunks are shards read inner chunk by
    /// inner chunk: one `zarrs` cache per shard (a cache reads one index at a time, so
    /// one per shard lets indexes of different shards be read concurrently).
    shards: Option<Mutex<HashMap<Vec<u64>, Arc<AsyncArrayShardedReadableExtCache>>>>,
    path: String,
    meta: ZarrMeta,
    grid: Grid,
    /// `.zattrs` (v2) or `attributes` (v3).
    attrs: crate::attrs::Attrs,
    /// Dimension names ([`attrs::dims`]).
    dims: Option<Vec<Option<String>>>,
}

impl std::fmt::Debug for ZarrArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrArray")
            .field("store", &self.store.base())
            .field("path", &self.path)
            .finish()
    }
}

/// A `zarrs` error creating an array from valid JSON, as a [`ZarrError`] naming `key`: an
/// unknown codec, data type, chunk grid or key encoding is unsupported, the rest invalid.
///
/// `zarrs` reports any failure to build a v2 array's filters and compressor as text
/// ("unsupported Zarr V2 array"), so `v2_codecs` (the v2 document's filters, then its
/// compressor) are built again one by one to tell a filter or compressor chunkwise does
/// not read (unsupported, named by its numcodecs `id`) from a malformed configuration of
/// one it does (invalid).
fn create_error(
    key: &str,
    e: ArrayCreateError,
    v2_codecs: &[zarrs::metadata::v2::MetadataV2],
) -> ZarrError {
    use zarrs::plugin::PluginCreateError;
    let detail = e.to_string();
    if let ArrayCreateError::UnsupportedZarrV2Array(_) = e {
        for m in v2_codecs {
            match zarrs::array::Codec::from_metadata(m) {
                Ok(_) => {}
                Err(PluginCreateError::Unsupported(_)) => {
                    return ZarrError::Unsupported {
                        key: key.to_string(),
                        detail: format!("filter or compressor {:?}: {detail}", m.id()),
                    }
                }
                Err(_) => {
                    return ZarrError::Invalid {
                        key: key.to_string(),
                        detail: format!("filter or compressor {:?}: {detail}", m.id()),
                    }
                }
            }
        }
        return ZarrError::Unsupported {
            key: key.to_string(),
            detail,
        };
    }
    match e {
        ArrayCreateError::DataTypeCreateError(PluginCreateError::Unsupported(_))
        | ArrayCreateError::CodecsCreateError(PluginCreateError::Unsupported(_))
        | ArrayCreateError::ChunkGridCreateError(PluginCreateError::Unsupported(_))
        | ArrayCreateError::ChunkKeyEncodingCreateError(PluginCreateError::Unsupported(_))
        | ArrayCreateError::StorageTransformersCreateError(PluginCreateError::Unsupported(_))
        | ArrayCreateError::AdditionalFieldUnsupportedError(_) => ZarrError::Unsupported {
            key: key.to_string(),
            detail,
        },
        _ => ZarrError::Invalid {
            key: key.to_string(),
            detail,
        },
    }
}

/// A `zarrs` codec error as a [`ChunkDecodeError`], by its variant: the error of one of our
/// codecs ([`codecs`], carried in `CodecError::IOError`) comes back as itself; a checksum
/// mismatch is [`ChunkDecodeError::Checksum`] of `crc32c` (the only checksum codec); the
/// rest keep `zarrs`' text (a wrong decoded size has no public fields to map).
pub fn zarr_codec_error(e: CodecError) -> ChunkDecodeError {
    match e {
        CodecError::IOError(io) => {
            match io
                .get_ref()
                .and_then(|i| i.downcast_ref::<ChunkDecodeError>())
            {
                Some(ours) => ours.clone(),
                None => ChunkDecodeError::Zarrs(io.to_string()),
            }
        }
        e @ CodecError::InvalidChecksum => ChunkDecodeError::Checksum {
            codec: "crc32c",
            detail: e.to_string(),
        },
        e => ChunkDecodeError::Zarrs(e.to_string()),
    }
}

/// The error for the group at `path` opened as an array: its arrays (paths relative to it)
/// from the store's consolidated metadata ([`list_nodes`]), or, without consolidated
/// metadata, that they are not listed. An I/O error of the listing is returned as it is.
async fn not_an_array(store: &ZarrStore, path: &str) -> ZarrError {
    let location = store.url(path);
    let location = location.trim_end_matches('/').to_string();
    let prefix = if path.is_empty() {
        "/".to_string()
    } else {
        format!("/{path}/")
    };
    let arrays = match list_nodes(store).await {
        Err(e @ ZarrError::Io(_)) => return e,
        Ok(nodes) if !nodes.iter().any(|n| n.path == "/" && n.error.is_some()) => {
            let arrays: Vec<String> = nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Array)
                .filter_map(|n| n.path.strip_prefix(&prefix).map(str::to_string))
                .collect();
            crate::formats::its_arrays(&arrays)
        }
        _ => "its arrays are not listed (no consolidated metadata): give the path of one".into(),
    };
    ZarrError::NotAnArray { location, arrays }
}

fn nonzero(shape: &[std::num::NonZeroU64]) -> Vec<u64> {
    shape.iter().map(|n| n.get()).collect()
}

impl ZarrArray {
    /// Opens the array at `path` (`""` or `/` for a store whose root is the array): reads
    /// `<path>/zarr.json`, and only when that is missing `<path>/.zarray` and
    /// `<path>/.zattrs` at once (all through the store's remembered metadata, so a warm
    /// reopen makes no request, and from consolidated metadata when it is remembered);
    /// `zarrs` reads the document and builds the codec chain. Attributes and dimension names
    /// come from the documents ([`attrs`]).
    ///
    /// # Errors
    /// [`ZarrError::NotFound`] when neither exists; [`ZarrError::NotAnArray`] for a group
    /// (a v3 `zarr.json` of `node_type` group, or a v2 `.zgroup` without `.zarray`);
    /// [`ZarrError::Invalid`] / [`ZarrError::Unsupported`] naming the metadata key (malformed
    /// JSON or metadata, a `.zattrs` that is not JSON, unknown codecs or data types, chunks
    /// over [`MAX_CHUNK_BYTES`] or a shard index over [`MAX_SHARD_INDEX_BYTES`]); I/O errors.
    pub async fn open(store: Arc<ZarrStore>, path: &str) -> Result<ZarrArray, ZarrError> {
        let path = normalise_path(path);
        // A node path stays inside its store: `..` and `.` segments would name other objects
        // of the server (Zarr v3 spec, "Node names": neither is a valid name).
        if path
            .split('/')
            .any(|p| p == ".." || p == "." || p.is_empty())
            && !path.is_empty()
        {
            return Err(ZarrError::NotFound {
                location: store.url(&path),
                detail: "a node path has no empty, `.` or `..` segment".into(),
            });
        }
        let v3 = join(&path, "zarr.json");
        let v2 = join(&path, ".zarray");
        let za = join(&path, ".zattrs");
        // Whichever version the node is: unless the store already knows (remembered, or
        // consolidated metadata that covers the node), its v3 and v2 documents are asked at
        // once, so a v2 node costs no round trip more than a v3 one (a v3 node pays two
        // concurrent 404s). The v2 answers are then used only without a `zarr.json`.
        let v2_asked = if store.remembered(&v3).is_none() {
            let (v3_doc, array, attributes, ()) = futures::join!(
                store.metadata(&v3),
                store.metadata(&v2),
                store.metadata(&za),
                // Runs while the requests are in flight.
                meta::warm_up_in_flight()
            );
            // A v3 node's answer decides; the v2 answers matter only without one.
            v3_doc?;
            Some((array, attributes))
        } else {
            None
        };
        let (key, doc, typed, attrs) = if let Some(raw) = store.metadata(&v3).await? {
            let key = store.url(&v3);
            let doc: Value = attrs::parse_json(&raw).map_err(|e| ZarrError::Invalid {
                key: key.clone(),
                detail: format!("not JSON: {e}"),
            })?;
            if doc.get("node_type").and_then(Value::as_str) == Some("group") {
                return Err(not_an_array(&store, &path).await);
            }
            let typed = meta::typed(&key, true, &doc)?;
            let attrs = attrs::attrs(doc.get("attributes"));
            (key, doc, typed, attrs)
        } else {
            // Both at once: the attributes cost no round trip of their own.
            let (array, attributes) = match v2_asked {
                Some(answers) => answers,
                None => futures::join!(store.metadata(&v2), store.metadata(&za)),
            };
            match array? {
                Some(raw) => {
                    let key = store.url(&v2);
                    let (doc, typed) = meta::parse(&key, false, &raw)?;
                    let attrs = v2_attrs(&store.url(&za), attributes?.as_deref())?;
                    (key, doc, typed, attrs)
                }
                // A v2 group (`.zgroup`) is named as one, not as a missing array.
                None if store.metadata(&join(&path, ".zgroup")).await?.is_some() => {
                    return Err(not_an_array(&store, &path).await)
                }
                None => {
                    return Err(ZarrError::NotFound {
                        location: store.url(&path),
                        detail: "neither zarr.json nor .zarray found".into(),
                    })
                }
            }
        };
        let dtype = meta::dtype(&key, &doc)?;
        let v3_doc = doc.get("zarr_format").and_then(Value::as_u64) == Some(3);
        if v3_doc {
            let grid = doc.pointer("/chunk_grid/name").and_then(Value::as_str);
            if grid != Some("regular") {
                return Err(ZarrError::Unsupported {
                    key,
                    detail: format!("chunk grid {grid:?} (chunkwise reads regular grids)"),
                });
            }
        }
        let v2_codecs: Vec<_> = match &typed {
            ArrayMetadata::V2(m) => (m.filters.iter().flatten())
                .chain(&m.compressor)
                .cloned()
                .collect(),
            ArrayMetadata::V3(_) => Vec::new(),
        };
        let storage = Arc::new(ZarrStorage::new(store.clone()));
        let array = Array::new_with_metadata(storage.clone(), &format!("/{path}"), typed)
            .map_err(|e| create_error(&key, e, &v2_codecs))?;
        let shape = array.shape().to_vec();
        let chunk_shape = array
            .chunk_shape(&vec![0; shape.len()])
            .map(|c| nonzero(&c))
            .map_err(|e| ZarrError::Invalid {
                key: key.clone(),
                detail: e.to_string(),
            })?;
        let sharded = array.is_exclusively_sharded();
        if sharded {
            storage.track_absent();
        }
        let read_chunks = match array.subchunk_shape().filter(|_| sharded) {
            Some(inner) => nonzero(&inner),
            None => chunk_shape.clone(),
        };
        let chunk_bytes = read_chunks
            .iter()
            .try_fold(dtype.itemsize as u64, |a, &n| a.checked_mul(n));
        if chunk_bytes.is_none_or(|b| b > MAX_CHUNK_BYTES) {
            return Err(ZarrError::Unsupported {
                key,
                detail: format!(
                    "chunks of {read_chunks:?} elements exceed {MAX_CHUNK_BYTES} bytes"
                ),
            });
        }
        if sharded {
            // The sharding codec spec: a shard's shape is a whole multiple of its inner
            // chunks' (so the shard grid below never divides by zero or cuts a chunk).
            let whole = chunk_shape.len() == read_chunks.len()
                && chunk_shape
                    .iter()
                    .zip(&read_chunks)
                    .all(|(&o, &i)| i > 0 && o % i == 0);
            if !whole {
                return Err(ZarrError::Invalid {
                    key,
                    detail: format!(
                        "shard shape {chunk_shape:?} is not a multiple of the inner chunk \
                         shape {read_chunks:?}"
                    ),
                });
            }
            let n = chunk_shape
                .iter()
                .zip(&read_chunks)
                .try_fold(16u64, |a, (o, i)| a.checked_mul(o / i));
            if n.is_none_or(|n| n > MAX_SHARD_INDEX_BYTES) {
                return Err(ZarrError::Unsupported {
                    key,
                    detail: format!("shard index over {MAX_SHARD_INDEX_BYTES} bytes"),
                });
            }
        }
        let mut fill = array.fill_value().as_ne_bytes().to_vec();
        if fill.len() != dtype.itemsize {
            return Err(ZarrError::Unsupported {
                key,
                detail: format!("fill value of {} bytes for {dtype}", fill.len()),
            });
        }
        meta::to_stored_order(&dtype, &mut fill);
        let (codecs, codec_config) = meta::codecs(&doc);
        let meta = ZarrMeta {
            zarr_format: if v3_doc { 3 } else { 2 },
            shape: shape.clone(),
            chunk_shape,
            dtype,
            fill,
            codecs,
            codec_config,
        };
        let grid =
            Grid::new(shape, read_chunks.clone(), read_chunks).map_err(|e| ZarrError::Invalid {
                key: key.clone(),
                detail: e.to_string(),
            })?;
        let shards = sharded.then(|| Mutex::new(HashMap::new()));
        let dims = attrs::dims(&doc, &attrs, grid.shape.len());
        Ok(ZarrArray {
            store,
            storage,
            array,
            shards,
            path,
            meta,
            grid,
            attrs,
            dims,
        })
    }

    /// The array's attributes: v2 `.zattrs`, v3 `attributes` ([`attrs::attrs`]).
    pub fn attributes(&self) -> &crate::attrs::Attrs {
        &self.attrs
    }

    /// Dimension names ([`attrs::dims`]).
    pub fn dimension_names(&self) -> Option<&[Option<String>]> {
        self.dims.as_deref()
    }

    /// The metadata facts chunkwise reads by.
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

    /// The part of the payload-cache stamp this array contributes: path, geometry, dtype,
    /// fill value and codecs (spec: "The source stamp includes location, geometry, dtype,
    /// conversion layout, and the storage-options fingerprint"; the caller adds the location
    /// and fingerprint as its cache key, and the conversion layout). The store's URL is not
    /// in it: the caller's key names the store without the URL's query or user info, or by
    /// a cache key.
    pub fn stamp(&self) -> String {
        format!(
            "zarr#path={};v={};shape={:?};chunks={:?};read={:?};dtype={};fill={:?};codecs={}",
            self.path,
            self.meta.zarr_format,
            self.meta.shape,
            self.meta.chunk_shape,
            self.grid.chunks,
            self.meta.dtype,
            self.meta.fill,
            self.meta.codec_config
        )
    }

    /// The key of the stored chunk (or shard) at grid coordinates `coords` of the chunk
    /// grid ([`ZarrMeta::chunk_shape`]), by the array's chunk key encoding (`zarrs`).
    pub fn chunk_key(&self, coords: &[u64]) -> String {
        self.array.chunk_key(coords).as_str().to_string()
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

    /// A `zarrs` error reading a chunk, mapped by its variant: a storage error (direct, or
    /// inside a codec error) is the typed error this array's storage raised for it
    /// ([`ZarrStorage::typed_error`]); otherwise `make` gets the [`ChunkDecodeError`] of
    /// [`zarr_codec_error`], or `zarrs`' text for the other variants.
    fn array_error(
        &self,
        e: ArrayError,
        make: impl FnOnce(ChunkDecodeError) -> ZarrError,
    ) -> ZarrError {
        let storage = match &e {
            ArrayError::StorageError(s) | ArrayError::CodecError(CodecError::StorageError(s)) => {
                Some(s)
            }
            _ => None,
        };
        if let Some(typed) = storage.and_then(|s| self.storage.typed_error(s)) {
            return typed;
        }
        make(match e {
            ArrayError::CodecError(c) => zarr_codec_error(c),
            ArrayError::UnexpectedChunkDecodedSize(actual, expected) => ChunkDecodeError::Size {
                actual: actual as u64,
                expected: expected as u64,
            },
            e => ChunkDecodeError::Zarrs(e.to_string()),
        })
    }

    fn decoded(&self, bytes: ArrayBytes<'static>) -> Result<Vec<u8>, ChunkDecodeError> {
        let mut v = bytes
            .into_fixed()
            .map_err(|e| ChunkDecodeError::Zarrs(e.to_string()))?
            .into_owned();
        meta::to_stored_order(&self.meta.dtype, &mut v);
        Ok(v)
    }

    /// Reads and decodes the read-grid chunks `lins` (linear C-order indexes of
    /// [`ZarrArray::grid`]), handing each to `sink` as it completes, with
    /// `None` for a chunk that is absent from the store (its elements are the fill value; for
    /// a sharded array: an inner chunk of an absent shard, while an inner chunk its stored
    /// shard's index marks empty comes decoded as fill values). Chunk objects
    /// (or shards) are read at most `options.concurrency` at a time. For a shard: one index
    /// read (remembered), then its touched inner chunks in one coalesced batch, decoded by
    /// `zarrs`.
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
        sink: &mut dyn crate::formats::ChunkSink,
    ) -> Result<(), crate::Error> {
        let concurrency = options.concurrency.max(1);
        let counts = self.grid.chunk_counts();
        match &self.shards {
            None => {
                let jobs = lins.iter().map(|&lin| {
                    let coords = self.coords_of(lin, &counts);
                    async move {
                        let d = self.load_whole(lin, &coords).await?;
                        Ok::<_, ZarrError>(vec![(lin, d)])
                    }
                });
                let mut s = stream::iter(jobs).buffer_unordered(concurrency);
                while let Some(r) = s.next().await {
                    for (lin, d) in r? {
                        sink.chunk(lin, d).await?;
                    }
                }
            }
            Some(caches) => {
                // Group the inner chunks by shard, in a stable order.
                let per: Vec<u64> = self
                    .meta
                    .chunk_shape
                    .iter()
                    .zip(&self.grid.chunks)
                    .map(|(o, i)| o / i)
                    .collect();
                let mut shards: BTreeMap<Vec<u64>, Vec<(u64, Vec<u64>)>> = BTreeMap::new();
                for &lin in lins {
                    let c = self.coords_of(lin, &counts);
                    let shard: Vec<u64> = c.iter().zip(&per).map(|(c, p)| c / p).collect();
                    shards.entry(shard).or_default().push((lin, c));
                }
                self.storage.set_options(options);
                let jobs = shards.into_iter().map(|(shard, members)| {
                    let cache = caches
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .entry(shard.clone())
                        .or_insert_with(|| {
                            Arc::new(AsyncArrayShardedReadableExtCache::new(&self.array))
                        })
                        .clone();
                    async move { self.load_from_shard(&cache, &shard, &members).await }
                });
                let mut s = stream::iter(jobs).buffer_unordered(concurrency);
                while let Some(r) = s.next().await {
                    for (lin, d) in r? {
                        sink.chunk(lin, d).await?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The stored (encoded) bytes of read-grid chunk `lin` ([`ZarrArray::grid`]) as the store
    /// holds them: the whole chunk object, or for a sharded array the inner chunk's bytes
    /// inside its shard (the shard index read first and remembered, as by a read). `None`
    /// when the chunk is absent: no object, an absent shard, or an inner chunk its shard's
    /// index marks empty.
    ///
    /// # Errors
    /// I/O errors; [`ZarrError::Chunk`] for a shard index that does not decode.
    pub async fn encoded_chunk(&self, lin: u64) -> Result<Option<Vec<u8>>, ZarrError> {
        let coords = self.coords_of(lin, &self.grid.chunk_counts());
        let chunk_error = |key: String| {
            move |source| ZarrError::Chunk {
                key,
                chunk: lin,
                source,
            }
        };
        match &self.shards {
            None => {
                let key = self.store.url(&self.chunk_key(&coords));
                let got = self
                    .array
                    .async_retrieve_encoded_chunk(&coords)
                    .await
                    .map_err(|e| self.array_error(ArrayError::StorageError(e), chunk_error(key)))?;
                Ok(got.map(|b| b.to_vec()))
            }
            Some(_) => self.encoded_inner_chunk(&coords).await,
        }
    }

    /// The stored bytes of the inner chunk at read-grid coordinates `coords`, found through
    /// its shard's index (sharding codec spec, "Binary shard format": per inner chunk a
    /// little-endian `u64` offset and length, both `2^64 - 1` for an empty one; at the end of
    /// the shard unless `index_location` is `start`), read here rather than by `zarrs`, whose
    /// byte-range lookup overflows on an empty entry. Index codecs read: `bytes` (little
    /// endian), optionally followed by `crc32c` (checked) - the spec's and zarr-python's
    /// default; others give [`ZarrError::Unsupported`].
    async fn encoded_inner_chunk(&self, coords: &[u64]) -> Result<Option<Vec<u8>>, ZarrError> {
        let per: Vec<u64> = self
            .meta
            .chunk_shape
            .iter()
            .zip(&self.grid.chunks)
            .map(|(o, i)| o / i)
            .collect();
        let shard: Vec<u64> = coords.iter().zip(&per).map(|(c, p)| c / p).collect();
        let key = self.chunk_key(&shard);
        let url = self.store.url(&key);
        let invalid = |detail: String| ZarrError::Invalid {
            key: url.clone(),
            detail,
        };
        let (at_start, crc) = self
            .shard_index_layout()
            .ok_or_else(|| ZarrError::Unsupported {
                key: url.clone(),
                detail: "shard index codecs other than bytes (little endian) and crc32c".into(),
            })?;
        let n: u64 = per.iter().product();
        let size = 16 * n + if crc { 4 } else { 0 };
        let range = if at_start {
            ByteRange::bounded(0..size)
        } else {
            ByteRange::Suffix(size)
        };
        let Some(index) = self.store.read(&key, range).await? else {
            return Ok(None);
        };
        if index.bytes.len() as u64 != size {
            return Err(invalid(format!(
                "shard index of {} bytes, {size} expected",
                index.bytes.len()
            )));
        }
        let shard_len = index.info.len.max(index.range.end);
        let body = &index.bytes[..16 * n as usize];
        if crc {
            let want =
                u32::from_le_bytes(index.bytes[16 * n as usize..].try_into().unwrap_or([0; 4]));
            if codecs::crc32c(body) != want {
                return Err(invalid("shard index fails its crc32c".into()));
            }
        }
        let at = coords
            .iter()
            .zip(&per)
            .fold(0u64, |a, (c, p)| a * p + c % p) as usize;
        let word =
            |i: usize| u64::from_le_bytes(body[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
        let (offset, nbytes) = (word(2 * at), word(2 * at + 1));
        if offset == u64::MAX && nbytes == u64::MAX {
            return Ok(None);
        }
        let end = offset
            .checked_add(nbytes)
            .filter(|&e| e <= shard_len)
            .ok_or_else(|| {
                invalid(format!(
                    "inner chunk at {offset} of {nbytes} bytes outside the shard of {shard_len}"
                ))
            })?;
        let got = self
            .store
            .read(&key, ByteRange::bounded(offset..end))
            .await?
            .ok_or_else(|| invalid("the shard vanished after its index was read".into()))?;
        Ok(Some(got.bytes.to_vec()))
    }

    /// Where the shard index is (`true`: at the start) and whether `crc32c` follows its
    /// `bytes` codec, from the `sharding_indexed` codec's configuration; `None` for index
    /// codecs other than those.
    fn shard_index_layout(&self) -> Option<(bool, bool)> {
        let codecs: Value = serde_json::from_slice(self.meta.codec_config.as_bytes()).ok()?;
        let conf = codecs
            .as_array()?
            .iter()
            .find(|c| c.get("name").and_then(Value::as_str) == Some("sharding_indexed"))?
            .get("configuration")?;
        let at_start = conf.get("index_location").and_then(Value::as_str) == Some("start");
        let names: Vec<(&str, Option<&str>)> = conf
            .get("index_codecs")?
            .as_array()?
            .iter()
            .map(|c| {
                (
                    c.get("name").and_then(Value::as_str).unwrap_or(""),
                    c.pointer("/configuration/endian").and_then(Value::as_str),
                )
            })
            .collect();
        let little = |e: Option<&str>| e.is_none_or(|e| e == "little");
        match names.as_slice() {
            [("bytes", e)] if little(*e) => Some((at_start, false)),
            [("bytes", e), ("crc32c", _)] if little(*e) => Some((at_start, true)),
            _ => None,
        }
    }

    async fn load_whole(&self, lin: u64, coords: &[u64]) -> Result<Option<Vec<u8>>, ZarrError> {
        let key = self.chunk_key(coords);
        let chunk_error = |source| ZarrError::Chunk {
            key: self.store.url(&key),
            chunk: lin,
            source,
        };
        let got = self
            .array
            .async_retrieve_chunk_if_exists::<ArrayBytes<'static>>(coords)
            .await
            .map_err(|e| self.array_error(e, chunk_error))?;
        got.map(|b| self.decoded(b).map_err(chunk_error))
            .transpose()
    }

    async fn load_from_shard(
        &self,
        cache: &AsyncArrayShardedReadableExtCache,
        shard: &[u64],
        members: &[(u64, Vec<u64>)],
    ) -> Result<Vec<(u64, Option<Vec<u8>>)>, ZarrError> {
        let key = self.chunk_key(shard);
        // The touched inner chunks of this shard as boxes (`shard_boxes`): the box around
        // them all when it holds at most twice as many inner chunks, else boxes that hold no
        // other inner chunk (a stepped selection touches every k-th inner chunk, and the box
        // around them would read and decode them all: 57 times the bytes for `::100, ::170`
        // of 10x17 inner chunks). For each box `zarrs` reads the shard index (remembered in
        // `cache`) and the box's stored inner chunks, and decodes them. The boxes' inner
        // chunks are gathered by the storage into one batch (one coalesced request as the gap
        // allows; `ZarrStorage::hold`); the box around them all, while it costs at most 2x,
        // spares the `zarrs` calls of many small boxes.
        let nd = self.grid.chunks.len();
        let (boxes, box_of) = shard_boxes(members, nd);
        let first = members.first().map_or(0, |m| m.0);
        let chunk_error = |source| ZarrError::Chunk {
            key: self.store.url(&key),
            chunk: first,
            source,
        };
        let reads = boxes.iter().map(|(lo, hi)| {
            let subset = ArraySubset::new_with_ranges(
                &lo.iter().zip(hi).map(|(a, b)| *a..*b).collect::<Vec<_>>(),
            );
            async move {
                self.array
                    .async_retrieve_subchunks_opt::<ArrayBytes<'static>>(
                        cache,
                        &subset,
                        &CodecOptions::default(),
                    )
                    .await
            }
        });
        if boxes.len() > 1 {
            // The shard index first (read once, remembered in `cache`), so that the boxes do
            // not wait for it one after the other behind the cache's lock. An error here
            // recurs below, where it is reported.
            let _ = self
                .array
                .async_subchunk_byte_range(cache, &members[0].1)
                .await;
        }
        // The boxes' reads of inner chunks wait until every box has been polled once, so
        // that they join one batch (one coalesced request; see `ZarrStorage::hold`).
        let hold = (boxes.len() > 1).then(|| self.storage.hold(&key));
        let joined = ReleaseAfterFirstPoll {
            inner: futures::future::join_all(reads),
            hold,
        };
        let mut got = Vec::with_capacity(boxes.len());
        for r in joined.await {
            got.push(r.map_err(|e| self.array_error(e, chunk_error))?);
        }
        if self.storage.was_absent(&key) {
            // The whole shard is absent: every touched inner chunk is missing (fill value).
            return Ok(members.iter().map(|(lin, _)| (*lin, None)).collect());
        }
        let mut decoded = Vec::with_capacity(got.len());
        for bytes in got {
            decoded.push(self.decoded(bytes).map_err(chunk_error)?);
        }
        let item = self.meta.dtype.itemsize;
        Ok(members
            .iter()
            .zip(&box_of)
            .map(|((lin, c), &b)| {
                let (lo, hi) = &boxes[b];
                (
                    *lin,
                    Some(cut_inner(&decoded[b], lo, hi, &self.grid.chunks, c, item)),
                )
            })
            .collect())
    }

    fn describe(&self) -> ArrayInfo {
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
            nchunks: self.grid.nchunks(),
            nbytes: ArrayInfo::nbytes_of(&self.meta.shape, self.meta.dtype.itemsize),
            // Stored sizes are unknown without reading every chunk object's size.
            cbytes: 0,
            source_bytes: 0,
        }
    }
}

/// Polls `inner` and drops `hold` after the first poll: the futures `inner` joins have then
/// all run to their first wait (a read waiting for the hold), and dropping the hold wakes them.
struct ReleaseAfterFirstPoll<'a, F> {
    inner: F,
    hold: Option<storage::BatchHold<'a>>,
}

impl<F: std::future::Future + Unpin> std::future::Future for ReleaseAfterFirstPoll<'_, F> {
    type Output = F::Output;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let r = std::pin::Pin::new(&mut self.inner).poll(cx);
        self.hold = None;
        r
    }
}

/// Boxes `lo..hi` of inner chunks (read-grid coordinates), and for each member the index of
/// the box that holds it.
type Boxes = (Vec<(Vec<u64>, Vec<u64>)>, Vec<usize>);

/// The boxes `lo..hi` a shard's touched inner chunks `members` (read-grid coordinates, `nd`
/// dimensions, no two alike) are read as: the box around them all when it holds at most
/// twice as many inner chunks as `members` (one coalesced request, at most 2x the bytes),
/// else [`touched_boxes`].
fn shard_boxes(members: &[(u64, Vec<u64>)], nd: usize) -> Boxes {
    let lo: Vec<u64> = (0..nd)
        .map(|d| members.iter().map(|(_, c)| c[d]).min().unwrap_or(0))
        .collect();
    let hi: Vec<u64> = (0..nd)
        .map(|d| members.iter().map(|(_, c)| c[d] + 1).max().unwrap_or(0))
        .collect();
    let volume = (0..nd).fold(1u128, |v, d| v.saturating_mul((hi[d] - lo[d]) as u128));
    if volume <= 2 * members.len() as u128 {
        return (vec![(lo, hi)], vec![0; members.len()]);
    }
    touched_boxes(members, nd)
}

/// The inner chunks `members` (read-grid coordinates, `nd` dimensions, no two alike) as
/// boxes `lo..hi` that together hold exactly them: when they are the product of one set of
/// coordinates per dimension (what a box selection, stepped or not, touches), the products of
/// those sets' runs of consecutive coordinates (one box for a dense selection; one per inner
/// chunk for `::k` past the inner chunk size); otherwise one box per inner chunk. Each
/// member's box is found by a binary search per dimension, not by a scan of the boxes.
fn touched_boxes(members: &[(u64, Vec<u64>)], nd: usize) -> Boxes {
    let single = || {
        (
            members
                .iter()
                .map(|(_, c)| (c.clone(), c.iter().map(|x| x + 1).collect()))
                .collect(),
            (0..members.len()).collect(),
        )
    };
    // The coordinates each dimension takes, as runs of consecutive ones.
    let mut runs: Vec<Vec<(u64, u64)>> = Vec::with_capacity(nd);
    let mut product: u128 = 1;
    for d in 0..nd {
        let mut xs: Vec<u64> = members.iter().map(|(_, c)| c[d]).collect();
        xs.sort_unstable();
        xs.dedup();
        product = product.saturating_mul(xs.len() as u128);
        let mut r: Vec<(u64, u64)> = Vec::new();
        for x in xs {
            match r.last_mut() {
                Some(last) if last.1 == x => last.1 = x + 1,
                _ => r.push((x, x + 1)),
            }
        }
        runs.push(r);
    }
    if product != members.len() as u128 {
        return single();
    }
    // A member's box: its run along each dimension, raveled in C order as the boxes are.
    let box_of = members
        .iter()
        .map(|(_, c)| {
            (0..nd).fold(0usize, |i, d| {
                i * runs[d].len() + runs[d].partition_point(|r| r.1 <= c[d])
            })
        })
        .collect();
    // Every combination of runs, in C order.
    let mut boxes = Vec::new();
    let mut at = vec![0usize; nd];
    loop {
        boxes.push((
            (0..nd).map(|d| runs[d][at[d]].0).collect(),
            (0..nd).map(|d| runs[d][at[d]].1).collect(),
        ));
        let mut d = nd;
        loop {
            if d == 0 {
                return (boxes, box_of);
            }
            d -= 1;
            at[d] += 1;
            if at[d] < runs[d].len() {
                break;
            }
            at[d] = 0;
        }
    }
}

/// The inner chunk at read-grid coordinates `c` cut out of `all`: the C-ordered elements
/// (`item` bytes each) of the box of inner chunks `lo..hi` (read-grid coordinates), whose
/// inner chunks have shape `inner`.
fn cut_inner(all: &[u8], lo: &[u64], hi: &[u64], inner: &[u64], c: &[u64], item: usize) -> Vec<u8> {
    let nd = inner.len();
    let box_shape: Vec<u64> = (0..nd).map(|d| (hi[d] - lo[d]) * inner[d]).collect();
    let n: u64 = inner.iter().product();
    let row_elems = inner.last().copied().unwrap_or(1);
    let mut out = Vec::with_capacity(n as usize * item);
    let mut idx = vec![0u64; nd];
    for _ in 0..n / row_elems.max(1) {
        let off = (0..nd).fold(0u64, |a, d| {
            a * box_shape[d] + (c[d] - lo[d]) * inner[d] + idx[d]
        });
        let start = off as usize * item;
        out.extend_from_slice(&all[start..start + row_elems as usize * item]);
        // Next row: advance the index over every axis but the last, in C order.
        for d in (0..nd.saturating_sub(1)).rev() {
            idx[d] += 1;
            if idx[d] < inner[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
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
    /// Every chunk is an object of its own (or an inner chunk of a shard), loaded through
    /// `zarrs` ([`ZarrArray::load_chunks`]).
    fn locate(&self, chunk: u64) -> Result<ChunkPlace, FormatError> {
        match self.grid.nchunks() {
            Some(n) if chunk < n => Ok(ChunkPlace::Loaded),
            None => Err(FormatError::uncountable_grid(
                &self.store.url(&self.path),
                "zarr",
                &self.grid,
            )),
            _ => Err(FormatError::Invalid {
                location: self.store.url(&self.path),
                format: "zarr",
                detail: format!("chunk {chunk} is outside the chunk grid"),
            }),
        }
    }
    /// Never called: chunks are decoded by their loader.
    fn decode(&self, chunk: u64, _stored: &[u8]) -> Result<Vec<u8>, FormatError> {
        Err(FormatError::Unsupported {
            location: self.store.url(&self.path),
            format: "zarr",
            detail: format!("chunk {chunk} is an object of its own, decoded by its loader"),
        })
    }
    fn loader(&self) -> Option<&dyn crate::formats::ChunkLoader> {
        Some(&**self)
    }
    fn attrs(&self) -> crate::attrs::Attrs {
        self.attrs.clone()
    }
    fn dims(&self) -> Option<Vec<Option<String>>> {
        self.dims.clone()
    }
}

#[async_trait::async_trait(?Send)]
impl crate::formats::ChunkLoader for ZarrArray {
    async fn load_chunks(
        &self,
        chunks: &[u64],
        options: &CoalesceOptions,
        sink: &mut dyn crate::formats::ChunkSink,
    ) -> Result<(), crate::Error> {
        ZarrArray::load_chunks(self, chunks, options, sink).await
    }
    fn fill_value(&self) -> &[u8] {
        &self.meta.fill
    }
}

/// The shape and dtype of an array document (validated by `zarrs`), for listings.
fn node_facts(key: &str, v3: bool, doc: &Value) -> Result<(Vec<u64>, DType), ZarrError> {
    let shape = match meta::typed(key, v3, doc)? {
        ArrayMetadata::V3(m) => m.shape,
        ArrayMetadata::V2(m) => m.shape,
    };
    Ok((shape, meta::dtype(key, doc)?))
}

fn array_node(path: &str, parsed: Result<(Vec<u64>, DType), ZarrError>) -> Node {
    match parsed {
        Ok((shape, dtype)) => Node {
            path: path.into(),
            kind: NodeKind::Array,
            shape: Some(shape),
            dtype: Some(dtype.to_string()),
            error: None,
            attrs: Default::default(),
            dims: None,
        },
        Err(e) => Node {
            path: path.into(),
            kind: NodeKind::Array,
            shape: None,
            dtype: None,
            // Shown to users: no URL query or user info (as every message, `Error::message`).
            error: Some(crate::io::url::redact_text(&e.to_string())),
            attrs: Default::default(),
            dims: None,
        },
    }
}

/// The attributes of the v2 `.zattrs` text at `key` (`None`: no `.zattrs`, no attributes).
///
/// # Errors
/// [`ZarrError::Invalid`] naming `key` for text that is not a JSON object.
fn v2_attrs(key: &str, raw: Option<&str>) -> Result<crate::attrs::Attrs, ZarrError> {
    let invalid = |detail: String| ZarrError::Invalid {
        key: key.to_string(),
        detail,
    };
    match raw {
        None => Ok(crate::attrs::Attrs::new()),
        Some(raw) => match attrs::parse_json(raw) {
            Ok(v) if v.is_object() => Ok(attrs::attrs(Some(&v))),
            Ok(_) => Err(invalid("attributes are not a JSON object".into())),
            Err(e) => Err(invalid(format!("not JSON: {e}"))),
        },
    }
}

/// The listing node of the array at `path` whose metadata document (key `key`) is `doc`,
/// with its attributes (or why they cannot be read, as the node's error) and dimension
/// names.
fn array_listed(
    path: &str,
    key: &str,
    v3: bool,
    doc: &Value,
    attrs: Result<crate::attrs::Attrs, ZarrError>,
) -> Node {
    let mut node = array_node(path, node_facts(key, v3, doc));
    match attrs {
        Ok(a) => {
            if let Some(shape) = &node.shape {
                node.dims = attrs::dims(doc, &a, shape.len());
            }
            node.attrs = a;
        }
        Err(e) => {
            node.error.get_or_insert(e.to_string());
        }
    }
    node
}

/// The listing node of the group at `path` with its attributes (or why they cannot be
/// read, as its error).
fn group_listed(path: &str, attrs: Result<crate::attrs::Attrs, ZarrError>) -> Node {
    let mut node = group_node(path);
    match attrs {
        Ok(a) => node.attrs = a,
        Err(e) => node.error = Some(e.to_string()),
    }
    node
}

fn group_node(path: &str) -> Node {
    Node {
        path: path.into(),
        kind: NodeKind::Group,
        shape: None,
        dtype: None,
        error: None,
        attrs: Default::default(),
        dims: None,
    }
}

fn abs(path: &str) -> String {
    format!("/{}", path.trim_matches('/'))
}

/// Lists the groups and arrays of the store with their attributes and dimension names:
/// from its consolidated metadata (a v3 root `zarr.json` with `consolidated_metadata`, else
/// a v2 `.zmetadata`, which holds the `.zattrs` too), else by walking the directory listings
/// the server offers ([`walk`]), else just the root node, whose `error` says why its
/// children are not listed. Paths are absolute (`/`, `/group/array`), sorted. A node whose
/// metadata or attributes chunkwise cannot read is listed with its `error`.
///
/// Requests: `zarr.json` and `.zmetadata` at once (one round trip: a v3 store with
/// consolidated metadata needs no more; a `.zmetadata` answered for it is unused), then
/// without either `.zarray`, `.zgroup` and `.zattrs` at once; then, without consolidated metadata, the walk's listings and metadata reads
/// (bounded, see [`walk`]). None for what the store already remembers.
///
/// # Errors
/// [`ZarrError::NotFound`] when the root holds no Zarr metadata; I/O errors; malformed
/// root documents.
pub async fn list_nodes(store: &ZarrStore) -> Result<Vec<Node>, ZarrError> {
    let mut nodes = Vec::new();
    let not_json = |key: &str, e: serde_json::Error| ZarrError::Invalid {
        key: key.to_string(),
        detail: format!("not JSON: {e}"),
    };
    // The root's v3 document and v2 consolidated metadata at once, unless the store knows
    // the former (one round trip for a v2 store too; a v3 store pays a concurrent 404).
    let zmetadata = if store.remembered("zarr.json").is_none() {
        let (root, zmetadata, ()) = futures::join!(
            store.metadata("zarr.json"),
            store.metadata(".zmetadata"),
            // Runs while the requests are in flight (see `ZarrArray::open`).
            meta::warm_up_in_flight()
        );
        root?;
        Some(zmetadata)
    } else {
        None
    };
    if let Some(raw) = store.metadata("zarr.json").await? {
        let key = store.url("zarr.json");
        let doc: Value = attrs::parse_json(&raw).map_err(|e| not_json(&key, e))?;
        let root_attrs = attrs::attrs(doc.get("attributes"));
        if doc.get("node_type").and_then(Value::as_str) == Some("array") {
            return Ok(vec![array_listed("/", &key, true, &doc, Ok(root_attrs))]);
        }
        nodes.push(group_listed("/", Ok(root_attrs)));
        match doc
            .pointer("/consolidated_metadata/metadata")
            .and_then(Value::as_object)
        {
            Some(m) => {
                for (path, d) in m {
                    let k = store.url(&join(path.trim_matches('/'), "zarr.json"));
                    let a = Ok(attrs::attrs(d.get("attributes")));
                    if d.get("node_type").and_then(Value::as_str) == Some("array") {
                        nodes.push(array_listed(&abs(path), &k, true, d, a));
                    } else {
                        nodes.push(group_listed(&abs(path), a));
                    }
                }
            }
            None => walk::walk(store, true, &mut nodes).await?,
        }
    } else if let Some(raw) = match zmetadata {
        Some(z) => z?,
        None => store.metadata(".zmetadata").await?,
    } {
        let key = store.url(".zmetadata");
        let doc: Value = attrs::parse_json(&raw).map_err(|e| not_json(&key, e))?;
        let m = doc
            .get("metadata")
            .and_then(Value::as_object)
            .ok_or_else(|| ZarrError::Invalid {
                key,
                detail: "no \"metadata\" object".into(),
            })?;
        for (k, d) in m {
            if let Some(p) = k.strip_suffix(".zarray") {
                let a = Ok(attrs::attrs(m.get(&format!("{p}.zattrs"))));
                nodes.push(array_listed(&abs(p), &store.url(k), false, d, a));
            } else if let Some(p) = k.strip_suffix(".zgroup") {
                let a = Ok(attrs::attrs(m.get(&format!("{p}.zattrs"))));
                nodes.push(group_listed(&abs(p), a));
            }
        }
    } else {
        // The root's own metadata, whichever it is, and its attributes: one round trip.
        let (array, group, attributes) = futures::join!(
            store.metadata(".zarray"),
            store.metadata(".zgroup"),
            store.metadata(".zattrs"),
        );
        let a = v2_attrs(&store.url(".zattrs"), attributes?.as_deref());
        if let Some(raw) = array? {
            let key = store.url(".zarray");
            nodes.push(match attrs::parse_json(&raw) {
                Ok(doc) => array_listed("/", &key, false, &doc, a),
                Err(e) => array_node("/", Err(not_json(&key, e))),
            });
        } else if group?.is_some() {
            nodes.push(group_listed("/", a));
            walk::walk(store, false, &mut nodes).await?;
        } else {
            return Err(ZarrError::NotFound {
                location: store.base().to_string(),
                detail: "no zarr.json, .zmetadata, .zarray or .zgroup at the root".into(),
            });
        }
    }
    crate::sort::sort_by(&mut nodes, |a, b| a.path.cmp(&b.path));
    Ok(nodes)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;
    use crate::io::RangeSource;

    /// A store of in-memory objects under `mem://s`.
    fn store_of(files: &[(&str, &str)]) -> Arc<ZarrStore> {
        let files: HashMap<String, String> = files
            .iter()
            .map(|(k, v)| (format!("mem://s/{k}"), v.to_string()))
            .collect();
        let opener = move |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
            match files.get(url) {
                Some(t) => Ok(Arc::new(MemorySource::new(url, t.clone().into_bytes()))),
                None => Err(IoError::NotFound {
                    location: url.into(),
                }),
            }
        };
        Arc::new(ZarrStore::new("mem://s", Arc::new(opener)))
    }

    fn open(files: &[(&str, &str)], path: &str) -> Result<ZarrArray, ZarrError> {
        futures::executor::block_on(ZarrArray::open(store_of(files), path))
    }

    #[test]
    fn v2_metadata_with_filters_and_f_order() {
        let doc = r#"{"zarr_format":2,"shape":[10,7],"chunks":[4,3],"dtype":">i4",
            "order":"F","compressor":{"id":"zlib","level":3},"fill_value":-1,
            "filters":[{"id":"delta","dtype":">i4"}],"dimension_separator":"/"}"#;
        let a = open(&[("a/.zarray", doc)], "a").unwrap();
        assert_eq!(a.meta().shape, vec![10, 7]);
        assert_eq!(a.meta().chunk_shape, vec![4, 3]);
        assert_eq!(a.meta().dtype.to_string(), ">i4");
        assert_eq!(a.meta().fill, (-1i32).to_be_bytes().to_vec());
        assert_eq!(a.meta().codecs, "order F + delta + zlib");
        assert_eq!(a.chunk_key(&[1, 2]), "a/1/2");
    }

    #[test]
    fn bad_metadata_is_typed() {
        let e = open(&[("a/.zarray", "{not json")], "a").unwrap_err();
        assert!(
            matches!(&e, ZarrError::Invalid { key, .. } if key == "mem://s/a/.zarray"),
            "{e}"
        );
        let doc = r#"{"zarr_format":2,"shape":[3],"chunks":[2],"dtype":"<U4",
            "order":"C","filters":null,"compressor":null,"fill_value":""}"#;
        let e = open(&[("s/.zarray", doc)], "s").unwrap_err();
        assert!(matches!(e, ZarrError::Unsupported { .. }), "{e}");
        let doc = r#"{"zarr_format":3,"node_type":"array","shape":[3],"data_type":"float32",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
            "chunk_key_encoding":{"name":"default"},
            "codecs":[{"name":"bytes"},{"name":"snappy"}],"fill_value":0}"#;
        let e = open(&[("x/zarr.json", doc)], "x").unwrap_err();
        assert!(
            matches!(&e, ZarrError::Unsupported { key, detail }
                if key.ends_with("x/zarr.json") && detail.contains("snappy")),
            "{e}"
        );
        // v2: a filter chunkwise does not read is unsupported, a broken configuration of one
        // it reads is invalid.
        let v2 = |filters: &str| {
            format!(
                r#"{{"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"<f8","order":"C",
                "compressor":null,"fill_value":0,"filters":{filters}}}"#
            )
        };
        let doc = v2(r#"[{"id":"quantize","digits":1,"dtype":"<f8"}]"#);
        let e = open(&[("q/.zarray", &doc)], "q").unwrap_err();
        assert!(
            matches!(&e, ZarrError::Unsupported { detail, .. } if detail.contains("quantize")),
            "{e}"
        );
        let doc = v2(r#"[{"id":"delta","dtype":7}]"#);
        let e = open(&[("d/.zarray", &doc)], "d").unwrap_err();
        assert!(
            matches!(&e, ZarrError::Invalid { detail, .. } if detail.contains("delta")),
            "{e}"
        );
    }

    #[test]
    fn a_shard_smaller_than_its_inner_chunks_is_invalid() {
        // Found by the zarr_meta fuzz target (fuzz/crashes/zarr_meta): it divided by zero.
        for (shard, inner) in [("[4,6]", "[5,3]"), ("[4,6]", "[3,3]")] {
            let doc = format!(
                r#"{{"zarr_format":3,"node_type":"array","shape":[19,13],"data_type":"float64",
                "chunk_grid":{{"name":"regular","configuration":{{"chunk_shape":{shard}}}}},
                "chunk_key_encoding":{{"name":"default"}},"fill_value":0.0,
                "codecs":[{{"name":"sharding_indexed","configuration":{{"chunk_shape":{inner},
                  "codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}],
                  "index_codecs":[{{"name":"bytes","configuration":{{"endian":"little"}}}}]}}}}]}}"#
            );
            match open(&[("zarr.json", &doc)], "") {
                Err(ZarrError::Invalid { detail, .. }) => {
                    assert!(detail.contains("not a multiple"), "{detail}")
                }
                Err(e) => panic!("{shard} / {inner}: {e}"),
                Ok(_) => panic!("{shard} / {inner}: opened"),
            }
        }
    }

    #[test]
    fn v3_sharding_and_fill_values() {
        let doc = r#"{"zarr_format":3,"node_type":"array","shape":[8,8],"data_type":"float32",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4,8]}},
            "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
            "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,4],
              "codecs":[{"name":"bytes","configuration":{"endian":"big"}},
                        {"name":"gzip","configuration":{"level":1}}],
              "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},
                              {"name":"crc32c"}],
              "index_location":"start"}}],"fill_value":"NaN"}"#;
        let a = open(&[("zarr.json", doc)], "").unwrap();
        assert_eq!(a.meta().dtype.to_string(), ">f4");
        assert_eq!(a.meta().fill, f32::NAN.to_be_bytes().to_vec());
        assert_eq!(a.grid().chunks, vec![2, 4]);
        assert_eq!(a.meta().codecs, "sharding_indexed[bytes + gzip]");
        assert_eq!(a.chunk_key(&[1, 0]), "c/1/0");
        // No shard stored: every inner chunk is the fill value.
        struct Collect(Vec<(u64, Option<Vec<u8>>)>);
        #[async_trait::async_trait(?Send)]
        impl crate::formats::ChunkSink for Collect {
            async fn chunk(&mut self, lin: u64, d: Option<Vec<u8>>) -> Result<(), crate::Error> {
                self.0.push((lin, d));
                Ok(())
            }
        }
        let mut sink = Collect(Vec::new());
        futures::executor::block_on(a.load_chunks(&[0, 3], &CoalesceOptions::default(), &mut sink))
            .unwrap();
        let mut got = sink.0;
        got.sort_by_key(|g| g.0);
        assert_eq!(got.len(), 2);
        for (_, d) in got {
            let fill = f32::NAN.to_be_bytes().repeat(8);
            assert!(d.is_none_or(|d| d == fill));
        }
    }

    /// 2-D inner-chunk coordinates as the members of a shard.
    fn members(cs: &[[u64; 2]]) -> Vec<(u64, Vec<u64>)> {
        cs.iter()
            .enumerate()
            .map(|(i, c)| (i as u64, c.to_vec()))
            .collect()
    }

    /// The boxes of `touched_boxes` alone, after checking that each member's box holds it.
    fn boxes_holding(m: &[(u64, Vec<u64>)], (boxes, box_of): Boxes) -> Vec<(Vec<u64>, Vec<u64>)> {
        assert_eq!(box_of.len(), m.len());
        for ((_, c), &b) in m.iter().zip(&box_of) {
            let (lo, hi) = &boxes[b];
            assert!(
                (0..c.len()).all(|d| lo[d] <= c[d] && c[d] < hi[d]),
                "{c:?} in {:?}",
                boxes[b]
            );
        }
        boxes
    }

    #[test]
    fn shard_boxes_read_the_box_around_up_to_twice_the_touched() {
        let m = members;
        // 4 of the 6 inner chunks of the box around them: that box.
        let near = m(&[[0, 0], [0, 2], [1, 0], [1, 2]]);
        assert_eq!(
            boxes_holding(&near, shard_boxes(&near, 2)),
            vec![(vec![0, 0], vec![2, 3])]
        );
        // 4 of 16: the touched ones alone.
        let far = m(&[[0, 0], [0, 3], [3, 0], [3, 3]]);
        assert_eq!(shard_boxes(&far, 2), touched_boxes(&far, 2));
        assert_eq!(boxes_holding(&far, shard_boxes(&far, 2)).len(), 4);
    }

    #[test]
    fn touched_boxes_hold_only_touched_inner_chunks() {
        let m = members;
        let boxes = |m: &[(u64, Vec<u64>)]| boxes_holding(m, touched_boxes(m, 2));
        // A dense box: one box.
        let dense = m(&[[2, 3], [2, 4], [3, 3], [3, 4]]);
        assert_eq!(boxes(&dense), vec![(vec![2, 3], vec![4, 5])]);
        // Every third inner chunk along both axes: one box each, no untouched one read.
        let stepped = m(&[[0, 0], [0, 3], [3, 0], [3, 3]]);
        let b = boxes(&stepped);
        assert_eq!(b.len(), 4);
        assert!(b
            .iter()
            .all(|(lo, hi)| hi[0] - lo[0] == 1 && hi[1] - lo[1] == 1));
        // Runs along one axis, steps along the other: a box per run (members given out of
        // C order: each still finds its own box).
        let rows = m(&[[5, 2], [0, 1], [0, 2], [5, 1]]);
        assert_eq!(
            boxes(&rows),
            vec![(vec![0, 1], vec![1, 3]), (vec![5, 1], vec![6, 3])]
        );
        // Not a product (a diagonal): one box per inner chunk.
        let diagonal = m(&[[0, 0], [1, 1], [2, 2]]);
        assert_eq!(
            boxes(&diagonal),
            vec![
                (vec![0, 0], vec![1, 1]),
                (vec![1, 1], vec![2, 2]),
                (vec![2, 2], vec![3, 3])
            ]
        );
    }

    #[test]
    fn cut_inner_takes_rows_of_one_inner_chunk() {
        // A 4x4 box of 2x2 inner chunks (elements 0..16 in C order), inner chunk (1, 0).
        let all: Vec<u8> = (0..16).collect();
        let got = cut_inner(&all, &[0, 0], &[2, 2], &[2, 2], &[1, 0], 1);
        assert_eq!(got, vec![8, 9, 12, 13]);
    }
}
