//! The store side of a Zarr reader: one [`RangeSource`] per object key (plain HTTP cannot
//! list, so every key is addressed directly), and a metadata layer that remembers every
//! metadata object it read (`zarr.json`, `.zarray`, `.zgroup`, `.zattrs`, `.zmetadata`),
//! including keys known to be missing, so a reopen from remembered [`ZarrDiscovery`] makes
//! no metadata request (spec: remote cache design, "Zarr stores").

use super::ZarrError;
use crate::io::{ByteRange, Fetched, IoError, MaybeSend, MaybeSync, RangeSource};
use bytes::Bytes;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Largest metadata object accepted (bytes); consolidated metadata of a large store can be
/// tens of MB, beyond this it is more likely not metadata.
pub const MAX_METADATA_BYTES: u64 = 64 * 1024 * 1024;

/// Makes the [`RangeSource`] of one object from its URL or path (an `HttpSource` natively, a
/// `FetchSource` in wasm, a `FileSource` for a local directory store), counting its traffic
/// as the caller wishes. A missing local file may be reported here as
/// [`IoError::NotFound`] or by the first read.
pub trait KeyOpener: MaybeSend + MaybeSync {
    /// The source of the object at `location`.
    ///
    /// # Errors
    /// [`IoError`] when the source cannot be made (a missing file: [`IoError::NotFound`]).
    fn open(&self, location: &str) -> Result<Arc<dyn RangeSource>, IoError>;
}

impl<F> KeyOpener for F
where
    F: Fn(&str) -> Result<Arc<dyn RangeSource>, IoError> + MaybeSend + MaybeSync,
{
    fn open(&self, location: &str) -> Result<Arc<dyn RangeSource>, IoError> {
        self(location)
    }
}

/// The metadata a [`ZarrStore`] remembered, serialisable so a cache can restore it.
///
/// JSON form (version 1): `{"version": 1, "base": "<store URL>", "objects": {"<key>":
/// "<metadata JSON text>" | null}, "versions": {"<key>": {"len", "etag", "last_modified"}}}`,
/// where `null` records a key known to be missing, and `versions` (absent when empty) the
/// size and validators of each chunk or shard object read so far. Keys are relative to `base`
/// without a leading `/` (`zarr.json`, `temperature/.zarray`, `temperature/c/0/0`).
/// `listings` (absent when empty) holds what directory listings said when a store without
/// consolidated metadata was walked ([`super::walk`]): `{"<dir>": ["<child>", ...] | null}`,
/// `""` for the root, `null` for a directory the server offers no listing of.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct ZarrDiscovery {
    /// Layout version of this record ([`ZarrDiscovery::VERSION`]).
    pub version: u32,
    /// The store root it describes.
    pub base: String,
    /// Metadata objects by key; `None` for keys known to be missing.
    pub objects: BTreeMap<String, Option<String>>,
    /// Child directory names by directory (see above); `None` where no listing was offered.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub listings: BTreeMap<String, Option<Vec<String>>>,
    /// The version (size and validators) of each chunk or shard object read so far, at most
    /// [`MAX_OBJECT_VERSIONS`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub versions: BTreeMap<String, ObjectVersion>,
}

/// The Zarr store's discovery seed is its remembered metadata (tag `zarr`, the version of
/// this record's layout).
impl crate::formats::FormatSeed for ZarrDiscovery {
    const FORMAT: &'static str = "zarr";
    const VERSION: u32 = ZarrDiscovery::VERSION;
}

/// The version of one stored object as its answers described it: a later answer for the
/// same key with another size, or another `ETag` or `Last-Modified` (when both carry one),
/// is another version ([`IoError::SourceChanged`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ObjectVersion {
    /// Size in bytes.
    pub len: u64,
    /// HTTP `ETag`.
    pub etag: Option<String>,
    /// HTTP `Last-Modified`.
    pub last_modified: Option<String>,
}

/// Most chunk or shard object versions a [`ZarrStore`] remembers (about 100 bytes each);
/// objects read beyond that are not checked against an earlier version.
pub const MAX_OBJECT_VERSIONS: usize = 16_384;

/// Most metadata objects plus listed directories a merged record takes from the record it
/// merges over ([`ZarrDiscovery::merged_over`]); the writer's own entries are always kept.
/// Four metadata keys (`zarr.json`, `.zarray`, `.zattrs`, `.zgroup`) for each of
/// [`super::walk::MAX_WALK_NODES`] nodes, with room for the walk's listings: a store's
/// record holds what its arrays and walks learnt, never more than this from others.
pub const MAX_MERGED_ENTRIES: usize =
    4 * super::walk::MAX_WALK_NODES + super::walk::MAX_WALK_REQUESTS;

/// Most bytes of metadata text and listed names a merged record takes from the record it
/// merges over (16 MiB; the writer's own entries are always kept), so records written by
/// many arrays of one store stay bounded (discovery records on disk are at most
/// [`crate::cache::MAX_DISK_RECORD_BYTES`] in all).
pub const MAX_MERGED_BYTES: usize = 16 << 20;

impl ZarrDiscovery {
    /// The current layout version.
    pub const VERSION: u32 = 1;

    /// This record with what `held` knows and this one does not added: the union of their
    /// metadata objects (keys known to be missing included), listings and object versions,
    /// this record's entry winning where both have one (a store is assumed immutable, so
    /// they agree; this one was seen last). `held` is what a cache stores under the same
    /// key, written by another array of the store or another process; a `held` of another
    /// layout version or another base is not merged (this record replaces it). From `held`
    /// at most [`MAX_MERGED_ENTRIES`] objects and listings of at most [`MAX_MERGED_BYTES`]
    /// in all are taken (in key order), and versions up to [`MAX_OBJECT_VERSIONS`].
    pub fn merged_over(mut self, held: ZarrDiscovery) -> ZarrDiscovery {
        if held.version != self.version || held.base != self.base {
            return self;
        }
        let mut entries = self.objects.len() + self.listings.len();
        let mut bytes = 0usize;
        for (k, v) in held.objects {
            if self.objects.contains_key(&k) {
                continue;
            }
            let size = k.len() + v.as_ref().map_or(0, String::len);
            if entries >= MAX_MERGED_ENTRIES || bytes + size > MAX_MERGED_BYTES {
                continue;
            }
            entries += 1;
            bytes += size;
            self.objects.insert(k, v);
        }
        for (k, v) in held.listings {
            if self.listings.contains_key(&k) {
                continue;
            }
            let size = k.len() + v.iter().flatten().map(String::len).sum::<usize>();
            if entries >= MAX_MERGED_ENTRIES || bytes + size > MAX_MERGED_BYTES {
                continue;
            }
            entries += 1;
            bytes += size;
            self.listings.insert(k, v);
        }
        for (k, v) in held.versions {
            if self.versions.len() >= MAX_OBJECT_VERSIONS {
                break;
            }
            self.versions.entry(k).or_insert(v);
        }
        self
    }
}

#[cfg(not(target_arch = "wasm32"))]
type Boxed<T> = futures::future::BoxFuture<'static, T>;
#[cfg(target_arch = "wasm32")]
type Boxed<T> = futures::future::LocalBoxFuture<'static, T>;
type SharedRead<T> = futures::future::Shared<Boxed<Result<T, ZarrError>>>;

/// Reads in flight, by request identity: a second identical request awaits the first one's
/// result instead of going to the network.
struct InFlight<T: Clone> {
    map: Mutex<std::collections::HashMap<String, SharedRead<T>>>,
}

impl<T: Clone + 'static> InFlight<T> {
    fn new() -> Self {
        InFlight {
            map: Mutex::new(Default::default()),
        }
    }

    async fn run(
        &self,
        id: String,
        make: impl FnOnce() -> Boxed<Result<T, ZarrError>>,
    ) -> Result<T, ZarrError> {
        use futures::FutureExt;
        let fut = {
            let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
            match g.get(&id) {
                Some(f) => f.clone(),
                None => {
                    let f = make().shared();
                    g.insert(id.clone(), f.clone());
                    f
                }
            }
        };
        let out = fut.clone().await;
        let mut g = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if g.get(&id).is_some_and(|f| f.ptr_eq(&fut)) {
            g.remove(&id);
        }
        out
    }
}

/// A Zarr store reached through a [`KeyOpener`], with its remembered metadata.
pub struct ZarrStore {
    base: String,
    /// `base` up to its query: keys are joined to this (no trailing `/`).
    root: String,
    /// The query (`?...`, fragment included) of a URL base, sent with every key's request;
    /// empty for a directory path or a URL without one.
    query: String,
    opener: Arc<dyn KeyOpener>,
    remembered: Mutex<BTreeMap<String, Option<String>>>,
    /// Directory listings read (or restored), by directory key ([`ZarrDiscovery::listings`]).
    listings: Mutex<BTreeMap<String, Option<Vec<String>>>>,
    /// The version of each chunk or shard object seen (this session's answers, and those
    /// restored from a record): every answer for the object must match it, so a shard's
    /// index and its inner chunks, or a cached inner chunk and a fresh index, come from one
    /// version of the shard ([`ObjectVersions`]).
    versions: Arc<ObjectVersions>,
    reads: InFlight<Option<Fetched>>,
    range_reads: InFlight<Option<Vec<Bytes>>>,
}

impl std::fmt::Debug for ZarrStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrStore")
            .field("base", &self.base)
            .finish()
    }
}

/// The versions of the chunk and shard objects a store has seen, checked on every answer.
#[derive(Debug, Default)]
struct ObjectVersions {
    by_key: Mutex<BTreeMap<String, ObjectVersion>>,
    /// Set when a version was added since the last [`ZarrStore::take_new_versions`].
    added: std::sync::atomic::AtomicBool,
}

impl ObjectVersions {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ObjectVersion>> {
        // Whole entries only: a poisoned lock still holds consistent data.
        self.by_key.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the version `info` describes for `key`, or checks it against the one
    /// recorded.
    ///
    /// # Errors
    /// [`IoError::SourceChanged`] naming the object and what differs.
    fn check(&self, key: &str, info: &crate::io::SourceInfo) -> Result<(), IoError> {
        let mut g = self.lock();
        let Some(seen) = g.get(key) else {
            if g.len() < MAX_OBJECT_VERSIONS {
                let now = ObjectVersion {
                    len: info.len,
                    etag: info.etag.clone(),
                    last_modified: info.last_modified.clone(),
                };
                g.insert(key.to_string(), now);
                self.added.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return Ok(());
        };
        // The transport's own rule between two answers of one object.
        let seen = crate::io::SourceInfo {
            location: info.location.clone(),
            len: seen.len,
            etag: seen.etag.clone(),
            last_modified: seen.last_modified.clone(),
        };
        crate::io::Validators::expecting(seen).check(info)
    }
}

/// The source of one chunk or shard object whose every answer is checked against the
/// object's recorded version.
struct VersionChecked {
    inner: Arc<dyn RangeSource>,
    key: String,
    versions: Arc<ObjectVersions>,
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl RangeSource for VersionChecked {
    fn location(&self) -> &str {
        self.inner.location()
    }

    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        match self.inner.read(range).await {
            Ok(f) => {
                self.versions.check(&self.key, &f.info)?;
                Ok(f)
            }
            // An object seen before that is now absent changed too: reading it as missing
            // (fill values) would set fill beside chunks of the version seen.
            Err(IoError::NotFound { location }) if self.versions.lock().contains_key(&self.key) => {
                Err(IoError::SourceChanged {
                    location,
                    detail: "was present, now absent (404)".into(),
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// `key` with every byte other than RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// and the `/` between names percent-encoded (RFC 3986 §2.1).
fn percent_encode_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `base` split before its query: `("https://h/a.zarr", "?token=abc")`. Only URLs
/// (`scheme://`) have a query; a `#` fragment, never sent, stays with it.
fn split_query(base: &str) -> (&str, &str) {
    if !base.contains("://") {
        return (base, "");
    }
    match base.find(['?', '#']) {
        Some(i) => base.split_at(i),
        None => (base, ""),
    }
}

/// Whether `key` names a metadata object (remembered) rather than chunk data (not).
pub fn is_metadata_key(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    matches!(
        name,
        "zarr.json" | ".zarray" | ".zgroup" | ".zattrs" | ".zmetadata"
    )
}

impl ZarrStore {
    /// A store rooted at `base` (URL or directory path; a trailing `/` is ignored) with
    /// nothing remembered.
    ///
    /// A URL base with a query (`https://h/v3.zarr?token=abc`) keeps its query on every key's
    /// request, after the key's path (`https://h/v3.zarr/temperature/zarr.json?token=abc`),
    /// as zarr-python's fsspec store and zarrita do; a directory path is taken as it is.
    pub fn new(base: &str, opener: Arc<dyn KeyOpener>) -> ZarrStore {
        let (root, query) = split_query(base);
        let root = root.trim_end_matches('/').to_string();
        ZarrStore {
            base: format!("{root}{query}"),
            root,
            query: query.to_string(),
            opener,
            remembered: Mutex::new(BTreeMap::new()),
            listings: Mutex::new(BTreeMap::new()),
            versions: Arc::default(),
            reads: InFlight::new(),
            range_reads: InFlight::new(),
        }
    }

    /// A store that starts from remembered metadata.
    ///
    /// # Errors
    /// [`ZarrError::Invalid`] when `discovery` has another version or another base.
    pub fn with_discovery(
        base: &str,
        opener: Arc<dyn KeyOpener>,
        discovery: ZarrDiscovery,
    ) -> Result<ZarrStore, ZarrError> {
        let store = ZarrStore::new(base, opener);
        if discovery.version != ZarrDiscovery::VERSION || !store.same_base(&discovery.base) {
            return Err(ZarrError::Invalid {
                key: store.base.clone(),
                detail: format!(
                    "remembered metadata is version {} of {:?}; expected version {} of {:?}",
                    discovery.version,
                    discovery.base,
                    ZarrDiscovery::VERSION,
                    store.base
                ),
            });
        }
        *store.lock() = discovery.objects;
        *lock(&store.listings) = discovery.listings;
        *store.versions.lock() = discovery.versions;
        Ok(store)
    }

    /// Adds remembered metadata (from a cache) to what this store knows; a record of another
    /// version or another store base is ignored (a miss, never wrong metadata). Returns
    /// whether it was taken.
    pub fn remember(&self, discovery: ZarrDiscovery) -> bool {
        if discovery.version != ZarrDiscovery::VERSION || !self.same_base(&discovery.base) {
            return false;
        }
        self.lock().extend(discovery.objects);
        lock(&self.listings).extend(discovery.listings);
        let mut v = self.versions.lock();
        for (k, ver) in discovery.versions {
            if v.len() >= MAX_OBJECT_VERSIONS {
                break;
            }
            v.entry(k).or_insert(ver);
        }
        true
    }

    /// Forgets the object versions seen (after a source changed: the next reads start
    /// afresh).
    pub fn forget_objects(&self) {
        self.versions.lock().clear();
    }

    /// Whether object versions were added since the last call (then the caller saves
    /// [`ZarrStore::discovery`] again, so a later session checks against them).
    pub fn take_new_versions(&self) -> bool {
        self.versions
            .added
            .swap(false, std::sync::atomic::Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<String>>> {
        // Entries are whole strings: a poisoned lock still holds consistent data.
        self.remembered.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The store root as given (no `/` before its query or at its end), query included: the
    /// store's identity in remembered metadata and cache stamps.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The URL or path of `key` as errors name it: the query of the base is left out (it may
    /// hold a credential).
    pub fn url(&self, key: &str) -> String {
        format!("{}/{}", self.root, key.trim_start_matches('/'))
    }

    /// The URL or path `key` is requested at: the key joined to the root's path, then the
    /// base's query.
    pub fn request_url(&self, key: &str) -> String {
        let key = key.trim_start_matches('/');
        if self.root.contains("://") {
            // A key is node and chunk names as Zarr writes them to storage, any characters
            // (`t%41`, `s p`, `h#sh`): in a URL each byte outside RFC 3986's unreserved set
            // is percent-encoded, or a server decoding `%41` would serve the node `tA`.
            format!("{}/{}{}", self.root, percent_encode_key(key), self.query)
        } else {
            format!("{}/{}{}", self.root, key, self.query)
        }
    }

    /// Whether a record's `base` names this store (records keep the public URL only).
    fn same_base(&self, base: &str) -> bool {
        use crate::io::url::public_url;
        public_url(base.trim_end_matches('/')) == public_url(&self.base)
    }

    /// What has been remembered so far; `base` is the store's public URL (no query, no
    /// user info: the record may be persisted).
    pub fn discovery(&self) -> ZarrDiscovery {
        ZarrDiscovery {
            version: ZarrDiscovery::VERSION,
            base: crate::io::url::public_url(&self.base)
                .trim_end_matches('/')
                .to_string(),
            objects: self.lock().clone(),
            listings: lock(&self.listings).clone(),
            versions: self.versions.lock().clone(),
        }
    }

    fn source(&self, key: &str) -> Result<Option<Arc<dyn RangeSource>>, ZarrError> {
        match self.opener.open(&self.request_url(key)) {
            Ok(s) if is_metadata_key(key) => Ok(Some(s)),
            Ok(s) => Ok(Some(Arc::new(VersionChecked {
                inner: s,
                key: key.to_string(),
                versions: self.versions.clone(),
            }))),
            Err(IoError::NotFound { .. }) => Ok(None),
            Err(e) => Err(ZarrError::Io(e)),
        }
    }

    /// Reads `range` of object `key`; `None` when the object does not exist. An empty
    /// object gives an empty read. Identical reads in flight are made once.
    pub async fn read(&self, key: &str, range: ByteRange) -> Result<Option<Fetched>, ZarrError> {
        let Some(src) = self.source(key)? else {
            return Ok(None);
        };
        let location = self.url(key);
        let id = format!("{key}#{}", range.to_header());
        self.reads
            .run(id, move || {
                Box::pin(async move {
                    match src.read(range).await {
                        Ok(f) => Ok(Some(f)),
                        Err(IoError::NotFound { .. }) => Ok(None),
                        Err(IoError::RangeNotSatisfiable { len: 0, .. }) => Ok(Some(Fetched {
                            range: 0..0,
                            bytes: Bytes::new(),
                            info: crate::io::SourceInfo {
                                location,
                                ..Default::default()
                            },
                            whole: None,
                        })),
                        Err(e) => Err(ZarrError::Io(e)),
                    }
                })
            })
            .await
    }

    /// Reads the bounded `ranges` of object `key` with the one coalescer
    /// ([`crate::io::read_coalesced`]); `None` when the object does not exist. Identical
    /// batches in flight are read once.
    pub async fn read_ranges(
        &self,
        key: &str,
        ranges: &[std::ops::Range<u64>],
        options: &crate::io::CoalesceOptions,
    ) -> Result<Option<Vec<Bytes>>, ZarrError> {
        let Some(src) = self.source(key)? else {
            return Ok(None);
        };
        let id = format!("{key}#{ranges:?}");
        let ranges = ranges.to_vec();
        let options = options.clone();
        self.range_reads
            .run(id, move || {
                Box::pin(async move {
                    match crate::io::read_coalesced(&*src, &ranges, &options).await {
                        Ok(v) => Ok(Some(v)),
                        Err(IoError::NotFound { .. }) => Ok(None),
                        Err(e) => Err(ZarrError::Io(e)),
                    }
                })
            })
            .await
    }

    /// The document of metadata `key` as far as the store knows it without a request
    /// (remembered, or from remembered consolidated metadata): `None` when only a request
    /// can tell; `Some(None)` when it is known to be absent.
    pub fn remembered(&self, key: &str) -> Option<Option<String>> {
        if let Some(v) = self.lock().get(key) {
            return Some(v.clone());
        }
        self.consolidated_entry(key)
    }

    /// A metadata object: remembered, else found in remembered consolidated metadata, else
    /// read (whole) and remembered, a missing key included.
    ///
    /// # Errors
    /// I/O errors other than not-found; [`ZarrError::Invalid`] for an object over
    /// [`MAX_METADATA_BYTES`] or not UTF-8.
    pub async fn metadata(&self, key: &str) -> Result<Option<String>, ZarrError> {
        if let Some(v) = self.remembered(key) {
            return Ok(v);
        }
        let got = self
            .read(key, ByteRange::bounded(0..MAX_METADATA_BYTES + 1))
            .await?;
        let text = match got {
            None => None,
            Some(f) => {
                if f.bytes.len() as u64 > MAX_METADATA_BYTES {
                    return Err(ZarrError::Invalid {
                        key: self.url(key),
                        detail: format!("more than {MAX_METADATA_BYTES} bytes of metadata"),
                    });
                }
                Some(
                    String::from_utf8(f.bytes.to_vec()).map_err(|_| ZarrError::Invalid {
                        key: self.url(key),
                        detail: "metadata is not UTF-8 text".into(),
                    })?,
                )
            }
        };
        self.lock().insert(key.to_string(), text.clone());
        Ok(text)
    }

    /// The names of the child directories of directory `dir` (a node path without leading or
    /// trailing `/`, `""` for the root): remembered, else from the directory's listing, read
    /// once and remembered (a URL: the index page a server answers for `<dir>/`, as
    /// [`super::walk::parse_listing`] reads it; natively, a local directory's entries).
    /// `None` when no listing is offered: the server answers 404 or another error, a page
    /// over [`super::walk::MAX_LISTING_BYTES`], or something that is not a listing.
    ///
    /// # Errors
    /// [`ZarrError::Io`] for a failure a retry may mend ([`IoError::is_transient`]: network
    /// errors, 5xx, 429, timeouts) or a cancel; nothing is remembered then.
    pub async fn children(&self, dir: &str) -> Result<Option<Vec<String>>, ZarrError> {
        if let Some(v) = lock(&self.listings).get(dir) {
            return Ok(v.clone());
        }
        let key = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let names = if self.root.contains("://") {
            let got = match self.opener.open(&self.request_url(&key)) {
                Ok(src) => {
                    src.read(ByteRange::bounded(0..super::walk::MAX_LISTING_BYTES + 1))
                        .await
                }
                Err(e) => Err(e),
            };
            match got {
                Ok(f) => {
                    let body = f.whole.unwrap_or(f.bytes);
                    if body.len() as u64 > super::walk::MAX_LISTING_BYTES {
                        None
                    } else {
                        super::walk::parse_listing(&body, &self.dir_path(&key))
                    }
                }
                // A failure a retry may mend (or the caller's own cancel or deadline) is
                // not remembered as "no listing": the walk fails with it.
                Err(e)
                    if e.is_transient()
                        || matches!(e, IoError::Cancelled | IoError::Timeout { .. }) =>
                {
                    return Err(ZarrError::Io(e))
                }
                // 404, 401, 403, 405, a page too large to read whole...: no listing.
                Err(_) => None,
            }
        } else {
            local_children(&self.request_url(&key))
        };
        lock(&self.listings).insert(dir.to_string(), names.clone());
        Ok(names)
    }

    /// The URL path (percent-encoded, no query) of directory key `key` (`""` or `dir/`), as
    /// an absolute link in its listing would give it.
    fn dir_path(&self, key: &str) -> String {
        let url = self.request_url(key);
        let url = url.split(['?', '#']).next().unwrap_or_default();
        match url.find("://") {
            Some(i) => match url[i + 3..].find('/') {
                Some(j) => url[i + 3 + j..].to_string(),
                None => "/".into(),
            },
            None => url.to_string(),
        }
    }

    /// The document of `key` held by remembered consolidated metadata (a v3 root
    /// `zarr.json` with `consolidated_metadata`, or a v2 `.zmetadata`), if that covers it.
    /// `Some(None)`: the consolidated metadata covers the hierarchy and has no such key.
    fn consolidated_entry(&self, key: &str) -> Option<Option<String>> {
        let (root_v3, zmeta) = {
            let g = self.lock();
            let root_v3 = g.get("zarr.json").cloned().flatten();
            // A `.zmetadata` speaks for the hierarchy only where the root has no v3
            // document (one may be left over beside a v3 root, and is asked with it).
            let zmeta = match root_v3 {
                Some(_) => None,
                None => g.get(".zmetadata").cloned().flatten(),
            };
            (root_v3, zmeta)
        };
        if let Some(doc) = root_v3.and_then(|r| super::attrs::parse_json(&r).ok()) {
            if let Some(nodes) = doc
                .pointer("/consolidated_metadata/metadata")
                .and_then(Value::as_object)
            {
                if let Some(node) = key.strip_suffix("/zarr.json") {
                    return Some(nodes.get(node).map(|d| d.to_string()));
                }
            }
        }
        if let Some(doc) = zmeta.and_then(|r| super::attrs::parse_json(&r).ok()) {
            if let Some(m) = doc.get("metadata").and_then(Value::as_object) {
                if key.ends_with(".zarray") || key.ends_with(".zgroup") || key.ends_with(".zattrs")
                {
                    return Some(m.get(key).map(|d| d.to_string()));
                }
                // A v2 hierarchy has no v3 nodes: an array below it opens without probing
                // for its `zarr.json`.
                if key.ends_with("/zarr.json") {
                    return Some(None);
                }
            }
        }
        None
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Whole entries only: a poisoned lock still holds consistent data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The child directories of a local directory (sorted, at most
/// [`super::walk::MAX_LISTED_CHILDREN`]); `None` when it cannot be read.
#[cfg(not(target_arch = "wasm32"))]
fn local_children(path: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(path).ok()?.flatten() {
        if names.len() >= super::walk::MAX_LISTED_CHILDREN {
            break;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            if let Some(n) = e.file_name().to_str() {
                names.push(n.to_string());
            }
        }
    }
    names.sort();
    Some(names)
}

/// No local directories in wasm.
#[cfg(target_arch = "wasm32")]
fn local_children(_path: &str) -> Option<Vec<String>> {
    None
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn discovery(base: &str, objects: &[(&str, Option<&str>)]) -> ZarrDiscovery {
        ZarrDiscovery {
            version: ZarrDiscovery::VERSION,
            base: base.into(),
            objects: objects
                .iter()
                .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
                .collect(),
            ..Default::default()
        }
    }

    fn version(len: u64) -> ObjectVersion {
        ObjectVersion {
            len,
            etag: None,
            last_modified: None,
        }
    }

    /// Two arrays' records of one store merge into their union (missing keys, listings and
    /// versions included), the writer's entry winning; a record of another base or layout
    /// version is replaced, not merged.
    #[test]
    fn records_of_one_store_merge_and_others_are_replaced() {
        let base = "http://h/s.zarr";
        let mut mine = discovery(
            base,
            &[("a/.zarray", Some("{\"a\":2}")), ("zarr.json", None)],
        );
        mine.versions.insert("a/0.0".into(), version(5));
        let mut held = discovery(
            base,
            &[
                ("a/.zarray", Some("{\"a\":1}")),
                ("b/.zarray", Some("{\"b\":1}")),
                ("b/.zattrs", None),
            ],
        );
        held.listings
            .insert("".into(), Some(vec!["a".into(), "b".into()]));
        held.versions.insert("a/0.0".into(), version(6));
        held.versions.insert("b/0.0".into(), version(7));
        let merged = mine.clone().merged_over(held.clone());
        let want = discovery(
            base,
            &[
                ("a/.zarray", Some("{\"a\":2}")),
                ("b/.zarray", Some("{\"b\":1}")),
                ("b/.zattrs", None),
                ("zarr.json", None),
            ],
        );
        assert_eq!(merged.objects, want.objects);
        assert_eq!(merged.listings, held.listings);
        assert_eq!(merged.versions["a/0.0"], version(5));
        assert_eq!(merged.versions["b/0.0"], version(7));
        for other in [
            ZarrDiscovery {
                base: "http://h/other.zarr".into(),
                ..held.clone()
            },
            ZarrDiscovery {
                version: ZarrDiscovery::VERSION + 1,
                ..held.clone()
            },
        ] {
            assert_eq!(mine.clone().merged_over(other), mine);
        }
    }

    /// What a merge takes from the stored record is bounded in entries and in bytes; the
    /// writer's own entries are all kept.
    #[test]
    fn a_merged_record_is_bounded() {
        let base = "http://h/s.zarr";
        let mine = discovery(base, &[("mine/.zarray", Some("{}"))]);
        let mut held = discovery(base, &[]);
        for i in 0..MAX_MERGED_ENTRIES + 10 {
            held.objects.insert(format!("n{i}/.zattrs"), None);
        }
        let merged = mine.clone().merged_over(held);
        assert_eq!(merged.objects.len(), MAX_MERGED_ENTRIES);
        assert!(merged.objects.contains_key("mine/.zarray"));
        let big = "x".repeat(MAX_MERGED_BYTES / 3);
        let mut held = discovery(base, &[]);
        for i in 0..4 {
            held.objects
                .insert(format!("n{i}/.zattrs"), Some(big.clone()));
        }
        let merged = mine.merged_over(held);
        assert_eq!(
            merged.objects.len(),
            1 + 2,
            "two of the four fit the byte bound"
        );
        let text: usize = merged.objects.values().flatten().map(String::len).sum();
        assert!(text <= MAX_MERGED_BYTES + 2);
    }

    fn store(calls: Arc<AtomicUsize>) -> ZarrStore {
        let opener = move |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
            calls.fetch_add(1, Ordering::SeqCst);
            match url {
                "mem://s/a/zarr.json" => Ok(Arc::new(MemorySource::new(url, &b"{}"[..]))),
                _ => Err(IoError::NotFound {
                    location: url.into(),
                }),
            }
        };
        ZarrStore::new("mem://s/", Arc::new(opener))
    }

    #[test]
    fn metadata_and_missing_keys_are_remembered_and_restored() {
        let calls = Arc::new(AtomicUsize::new(0));
        let s = store(calls.clone());
        futures::executor::block_on(async {
            assert_eq!(
                s.metadata("a/zarr.json").await.unwrap().as_deref(),
                Some("{}")
            );
            assert_eq!(s.metadata("b/.zarray").await.unwrap(), None);
            assert_eq!(
                s.metadata("a/zarr.json").await.unwrap().as_deref(),
                Some("{}")
            );
            assert_eq!(s.metadata("b/.zarray").await.unwrap(), None);
        });
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let saved = serde_json::to_string(&s.discovery()).unwrap();
        assert_eq!(
            saved,
            r#"{"version":1,"base":"mem://s","objects":{"a/zarr.json":"{}","b/.zarray":null}}"#
        );
        let calls2 = Arc::new(AtomicUsize::new(0));
        let c2 = calls2.clone();
        let opener = move |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
            c2.fetch_add(1, Ordering::SeqCst);
            Err(IoError::NotFound {
                location: url.into(),
            })
        };
        let restored = ZarrStore::with_discovery(
            "mem://s",
            Arc::new(opener),
            serde_json::from_str(&saved).unwrap(),
        )
        .unwrap();
        futures::executor::block_on(async {
            assert_eq!(
                restored.metadata("a/zarr.json").await.unwrap().as_deref(),
                Some("{}")
            );
            assert_eq!(restored.metadata("b/.zarray").await.unwrap(), None);
        });
        assert_eq!(calls2.load(Ordering::SeqCst), 0);
        // Another version or another store is refused.
        let mut other: ZarrDiscovery = serde_json::from_str(&saved).unwrap();
        other.version = 2;
        assert!(
            ZarrStore::with_discovery("mem://s", store(calls.clone()).opener.clone(), other)
                .is_err()
        );
        let same: ZarrDiscovery = serde_json::from_str(&saved).unwrap();
        assert!(ZarrStore::with_discovery("mem://t", s.opener.clone(), same).is_err());
    }

    #[test]
    fn url_keys_are_percent_encoded() {
        let s = ZarrStore::new(
            "https://h/a%20b.zarr?t=1",
            store(Arc::default()).opener.clone(),
        );
        assert_eq!(
            s.request_url("t%41/s p/h#sh/c/0.1/zarr.json"),
            "https://h/a%20b.zarr/t%2541/s%20p/h%23sh/c/0.1/zarr.json?t=1"
        );
        assert_eq!(
            s.request_url("caf\u{e9}/x"),
            "https://h/a%20b.zarr/caf%C3%A9/x?t=1"
        );
        let local = ZarrStore::new("/tmp/s p.zarr", store(Arc::default()).opener.clone());
        assert_eq!(local.request_url("t%41/x"), "/tmp/s p.zarr/t%41/x");
    }

    #[test]
    fn keys_go_before_the_query() {
        let never = |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
            Err(IoError::NotFound {
                location: url.into(),
            })
        };
        let s = ZarrStore::new("https://h/a.zarr/?token=abc&x=1", Arc::new(never));
        assert_eq!(
            s.request_url("t/zarr.json"),
            "https://h/a.zarr/t/zarr.json?token=abc&x=1"
        );
        assert_eq!(s.url("t/zarr.json"), "https://h/a.zarr/t/zarr.json");
        assert_eq!(s.base(), "https://h/a.zarr?token=abc&x=1");
        let s = ZarrStore::new("https://h/a.zarr", Arc::new(never));
        assert_eq!(s.request_url("/c/0"), "https://h/a.zarr/c/0");
        // A directory path is taken as it is.
        let s = ZarrStore::new("/data/odd?name.zarr", Arc::new(never));
        assert_eq!(s.request_url("zarr.json"), "/data/odd?name.zarr/zarr.json");
    }

    #[test]
    fn metadata_keys() {
        assert!(is_metadata_key("a/b/.zarray"));
        assert!(is_metadata_key("zarr.json"));
        assert!(!is_metadata_key("a/c/0/0"));
    }
}
