//! Opening a SOURCE argument natively: the CLI's flags converted for the core's opener
//! ([`chunkwise::open`]), which builds the transports and decides the format.

use chunkwise::array::{OpenOptions, RemoteArray};
use chunkwise::cache::{CacheCoordinator, CachePolicy};
use chunkwise::io::Traffic;
use chunkwise::store::RemoteStore;

pub use chunkwise::open::{is_url, open_zarr, source_key, transport, zarr_store};

/// The object opener of a Zarr store at `base` ([`chunkwise::open::key_opener`]).
pub use chunkwise::open::key_opener as zarr_opener;

/// Opens an array at `source` (a file, an object URL, or a Zarr store or array root) with a
/// cache coordinator of its own made from `options.cache` and `options.max_cache_bytes`.
pub async fn open_array(
    source: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
) -> Result<RemoteArray, chunkwise::Error> {
    let coordinator = CacheCoordinator::new(options.cache, options.max_cache_bytes)?;
    open_array_cached(source, headers, options, coordinator).await
}

/// The cache coordinator of the CLI flags `--cache memory|disk|none` and `--cache-dir DIR`
/// (DISK needs a directory; payload bounded by the default 256 MiB).
///
/// # Errors
/// [`chunkwise::Error::InvalidArgument`] for an unknown policy, DISK without a directory, a
/// directory with another policy, or a directory that cannot be created.
pub fn coordinator(
    cache: &str,
    cache_dir: Option<&std::path::Path>,
) -> Result<CacheCoordinator, chunkwise::Error> {
    let policy = cache
        .parse::<CachePolicy>()
        .map_err(chunkwise::Error::InvalidArgument)?;
    match (policy, cache_dir) {
        (CachePolicy::Disk, Some(dir)) => {
            CacheCoordinator::disk(dir, Some(chunkwise::cache::DEFAULT_MAX_CACHE_BYTES))
        }
        (CachePolicy::Disk, None) => Err(chunkwise::Error::InvalidArgument(
            "--cache disk needs --cache-dir DIR".into(),
        )),
        (_, Some(_)) => Err(chunkwise::Error::InvalidArgument(
            "--cache-dir is used with --cache disk only".into(),
        )),
        (p, None) => CacheCoordinator::new(p, chunkwise::cache::DEFAULT_MAX_CACHE_BYTES),
    }
}

/// The portable reference at `source` ([`chunkwise::reference::Reference`]) when `source`
/// is a local file whose content is one (a JSON object with the key `chunkwise_reference`,
/// whatever the file's name); `None` for a URL, a directory, or a file of other content (only
/// its first bytes are read then). A payload sidecar the document names is read from the
/// same directory ([`chunkwise::reference::Reference::attach_sidecar`]).
///
/// # Errors
/// [`chunkwise::Error::InvalidArgument`] for a reference document that cannot be read or is
/// refused by [`chunkwise::reference::Reference::from_json`] (wrong version, edited, ...).
pub fn local_reference(
    source: &str,
) -> Result<Option<chunkwise::reference::Reference>, chunkwise::Error> {
    use chunkwise::reference::Reference;
    /// The last reference read, by path, size and modification time: a command asks twice
    /// (for its coordinator, then to open), and a document with big chunk maps takes a while
    /// to parse and digest.
    type Memo = Option<(String, u64, Option<std::time::SystemTime>, Reference)>;
    static LAST: std::sync::Mutex<Memo> = std::sync::Mutex::new(None);
    if is_url(source) {
        return Ok(None);
    }
    let Ok(meta) = std::fs::metadata(source) else {
        return Ok(None);
    };
    let stamp = (meta.len(), meta.modified().ok());
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((p, len, modified, r)) = last.as_ref() {
        if p == source && (*len, *modified) == stamp {
            return Ok(Some(r.clone()));
        }
    }
    let read = read_local_reference(source, &meta)?;
    if let Some(r) = &read {
        *last = Some((source.to_string(), stamp.0, stamp.1, r.clone()));
    }
    Ok(read)
}

/// [`local_reference`] without the memo.
fn read_local_reference(
    source: &str,
    meta: &std::fs::Metadata,
) -> Result<Option<chunkwise::reference::Reference>, chunkwise::Error> {
    use chunkwise::reference::{Reference, MAX_REFERENCE_BYTES};
    use std::io::Read;
    let path = std::path::Path::new(source);
    if !meta.is_file() || meta.len() > MAX_REFERENCE_BYTES as u64 {
        return Ok(None);
    }
    let bad = |e: std::io::Error| chunkwise::Error::InvalidArgument(format!("{source}: {e}"));
    // A JSON document starts with `{` after blanks; no array format does.
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(bad)?;
    if head[..n].iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(bad)?;
    // Parsed once: a document is taken as a reference by its key, not by its name.
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        // A damaged reference (its key leads the document as chunkwise writes it) says so.
        if String::from_utf8_lossy(&head[..n]).contains("\"chunkwise_reference\"") {
            return Reference::from_json(&bytes).map(Some);
        }
        return Ok(None);
    };
    if v.get("chunkwise_reference").is_none() {
        return Ok(None);
    }
    let mut r = Reference::from_value(v)?;
    if let Some(side) = &r.sidecar {
        // A plain file name (checked by from_json), next to the document.
        let blob_path = path.with_file_name(&side.sidecar);
        let too_big = std::fs::metadata(&blob_path)
            .map(|m| m.len() > chunkwise::reference::MAX_SIDECAR_BYTES)
            .unwrap_or(false);
        if too_big {
            return Err(chunkwise::Error::InvalidArgument(format!(
                "{}: larger than a payload sidecar may be",
                blob_path.display()
            )));
        }
        let blob = std::fs::read(&blob_path).map_err(|e| {
            chunkwise::Error::InvalidArgument(format!("{}: {e}", blob_path.display()))
        })?;
        r.attach_sidecar(&blob)?;
    }
    Ok(Some(r))
}

/// The cache coordinator of the CLI flags for `source`: as [`coordinator`], except for an
/// immutable portable reference ([`local_reference`]), which keeps nothing on disk: a MEMORY
/// coordinator (NONE with `--cache none`), and `--cache-dir` is not touched.
///
/// # Errors
/// As [`coordinator`] and [`local_reference`].
pub fn coordinator_for(
    source: &str,
    cache: &str,
    cache_dir: Option<&std::path::Path>,
) -> Result<CacheCoordinator, chunkwise::Error> {
    match local_reference(source)? {
        Some(r) if !r.mutable => {
            let policy = cache
                .parse::<CachePolicy>()
                .map_err(chunkwise::Error::InvalidArgument)?;
            let policy = match policy {
                CachePolicy::None => CachePolicy::None,
                _ => CachePolicy::Memory,
            };
            CacheCoordinator::new(policy, chunkwise::cache::DEFAULT_MAX_CACHE_BYTES)
        }
        _ => coordinator(cache, cache_dir),
    }
}

/// Opens an array at `source` whose caches `coordinator` owns ([`chunkwise::open::open_array`]:
/// a URL ending in `.zarr`, a local directory, or a URL with no object of its own (404) or
/// with bytes of no known format opens as a Zarr store (or array) root). A local portable
/// reference ([`local_reference`]) opens its store ([`chunkwise::reference::open_reference`])
/// and the array at `options.path`, or without a path the one array at its root.
///
/// # Errors
/// As [`chunkwise::open::open_array`]; for a reference without a path whose root does not
/// hold exactly one array, [`chunkwise::Error::InvalidArgument`] naming its arrays.
pub async fn open_array_cached(
    source: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray, chunkwise::Error> {
    if let Some(r) = local_reference(source)? {
        let path = options.path.clone();
        let store =
            chunkwise::reference::open_reference(&r, None, headers, options, coordinator).await?;
        let path = match path {
            Some(p) => p,
            None => {
                let arrays: Vec<&str> = store
                    .nodes()
                    .iter()
                    .filter(|n| n.kind == chunkwise::formats::NodeKind::Array)
                    .map(|n| n.path.as_str())
                    .collect();
                let root: Vec<&str> = arrays
                    .iter()
                    .copied()
                    .filter(|p| p.matches('/').count() == 1)
                    .collect();
                match root.as_slice() {
                    [one] => one.to_string(),
                    _ => {
                        return Err(chunkwise::Error::InvalidArgument(format!(
                            "{source}: the reference's store holds arrays {}; give --path",
                            arrays.join(", ")
                        )))
                    }
                }
            }
        };
        return store.get(&path).await;
    }
    chunkwise::open::open_array(source, headers, options, coordinator).await
}

/// Opens the container at `source` (an HDF5 file, or a Zarr store: a URL ending in `.zarr`,
/// a local directory, or a URL with no object of its own) as a store whose caches
/// `coordinator` owns, under the cache identity `cache_key` when given
/// ([`chunkwise::open::open_store`]); a local portable reference ([`local_reference`]) opens
/// through [`chunkwise::reference::open_reference`].
pub async fn open_store_cached(
    source: &str,
    headers: Vec<(String, String)>,
    coordinator: CacheCoordinator,
    cache_key: Option<&str>,
) -> Result<RemoteStore, chunkwise::Error> {
    let options = OpenOptions {
        cache_key: cache_key.map(str::to_string),
        ..Default::default()
    };
    if let Some(r) = local_reference(source)? {
        return chunkwise::reference::open_reference(&r, None, headers, options, coordinator).await;
    }
    chunkwise::open::open_store(source, headers, options, coordinator).await
}

/// The attributes `chunkwise attrs` prints: of the node at `path` of a container (a group's
/// from the listing, an array's from its discovery), of the root group `/` without a path,
/// or of a single-array source (Blosc2 `.b2nd`), which takes no path.
///
/// # Errors
/// `NOT_FOUND` for a path the container does not hold; the open's errors.
pub async fn attrs_command(
    source: &str,
    path: Option<&str>,
    headers: Vec<(String, String)>,
    coordinator: CacheCoordinator,
    cache_key: Option<&str>,
) -> Result<chunkwise::attrs::Attrs, chunkwise::Error> {
    use chunkwise::formats::NodeKind;
    match open_store_cached(source, headers.clone(), coordinator.clone(), cache_key).await {
        Ok(store) => {
            let want = chunkwise::store::normalise_path(path.unwrap_or("/"));
            let no_node = || {
                chunkwise::Error::Format(chunkwise::formats::FormatError::NoSuchNode {
                    location: chunkwise::cache::identity::redact_url(source),
                    detail: format!("no group or array at {want}"),
                })
            };
            let Some(node) = store.nodes().iter().find(|n| n.path == want) else {
                // A store with a group whose children are not all listed (a Zarr store
                // without consolidated metadata on a server with no listing) still opens an
                // array by its path.
                if store
                    .nodes()
                    .iter()
                    .any(|n| n.kind == NodeKind::Group && n.error.is_some())
                {
                    return match store.get(&want).await {
                        Ok(a) => Ok(a.attrs()),
                        Err(e) if e.code() == "NOT_FOUND" => Err(no_node()),
                        Err(e) => Err(e),
                    };
                }
                return Err(no_node());
            };
            match node.kind {
                NodeKind::Array => Ok(store.get(&want).await?.attrs()),
                _ => Ok(node.attrs.clone()),
            }
        }
        // Not a container: a single array, which has no path.
        Err(chunkwise::Error::Format(chunkwise::formats::FormatError::Unsupported { .. }))
            if path.is_none() =>
        {
            let options = OpenOptions {
                cache: coordinator.policy(),
                cache_key: cache_key.map(str::to_string),
                ..Default::default()
            };
            Ok(open_array_cached(source, headers, options, coordinator)
                .await?
                .attrs())
        }
        Err(e) => Err(e),
    }
}

/// What `chunkwise ls` lists: the nodes of a container (an HDF5 file, a Zarr store) as its
/// store listing gives them, or for a single-array source (Blosc2 `.b2nd`, a Zarr array
/// root) one node: the array at `/` with its shape and dtype.
///
/// # Errors
/// The open's errors (a source that is neither a container nor an array).
pub async fn nodes_command(
    source: &str,
    headers: Vec<(String, String)>,
    coordinator: CacheCoordinator,
    cache_key: Option<&str>,
) -> Result<Vec<chunkwise::formats::Node>, chunkwise::Error> {
    match open_store_cached(source, headers.clone(), coordinator.clone(), cache_key).await {
        Ok(store) => Ok(store.nodes().to_vec()),
        // Not a container: a single array.
        Err(chunkwise::Error::Format(chunkwise::formats::FormatError::Unsupported { .. })) => {
            let options = OpenOptions {
                cache: coordinator.policy(),
                cache_key: cache_key.map(str::to_string),
                ..Default::default()
            };
            let arr = open_array_cached(source, headers, options, coordinator).await?;
            Ok(vec![chunkwise::formats::Node {
                path: "/".into(),
                kind: chunkwise::formats::NodeKind::Array,
                shape: Some(arr.shape().to_vec()),
                dtype: Some(arr.info().dtype.to_string()),
                error: None,
                attrs: Default::default(),
                dims: arr.dims(),
            }])
        }
        Err(e) => Err(e),
    }
}

/// `chunkwise chunks` with a cache coordinator: as [`chunks_command`], from the dataset's
/// discovery record when `coordinator` holds it (no request).
///
/// # Errors
/// As [`chunks_command`].
pub async fn chunks_command_cached(
    source: &str,
    path: Option<&str>,
    headers: Vec<(String, String)>,
    json: bool,
    coordinator: CacheCoordinator,
    cache_key: Option<&str>,
) -> Result<String, chunkwise::Error> {
    let options = OpenOptions {
        path: path.map(str::to_string),
        cache_key: cache_key.map(str::to_string),
        ..Default::default()
    };
    let arr = open_array_cached(source, headers, options, coordinator).await?;
    use chunkwise::formats::FormatSeed;
    let seed = arr.seed();
    let Some(chunkwise::formats::hdf5::Hdf5Seed { dataset, .. }) = seed
        .as_ref()
        .and_then(chunkwise::formats::hdf5::Hdf5Seed::from_seed)
    else {
        return Err(not_hdf5(source, arr.info().format));
    };
    let map: &[chunkwise::formats::hdf5::discover::ChunkInfo] = match &dataset.layout {
        chunkwise::formats::hdf5::discover::Layout::Chunked { entries, .. } => entries,
        _ => &[],
    };
    Ok(format_chunk_map(source, &dataset.path, map, json))
}

/// The error of `chunkwise chunks` on a source of another format than HDF5: what the
/// command reads, and where the chunk facts of the others are.
fn not_hdf5(source: &str, format: &str) -> chunkwise::Error {
    let format = match format {
        "zarr2" => "a Zarr v2 array",
        "zarr3" => "a Zarr v3 array",
        "b2nd" => "a Blosc2 .b2nd array",
        other => other,
    };
    chunkwise::Error::InvalidArgument(format!(
        "{}: chunks reads HDF5 datasets; this is {format} (for b2nd and zarr use info: chunk \
         shape, chunk count and codecs)",
        chunkwise::cache::identity::redact_url(source)
    ))
}

fn format_chunk_map(
    source: &str,
    path: &str,
    map: &[chunkwise::formats::hdf5::discover::ChunkInfo],
    json: bool,
) -> String {
    if json {
        return serde_json::to_string(map).expect("chunk map serialises");
    }
    let mut out = format!(
        "{} {} ({} allocated chunks)\n{:<24} {:>14} {:>10} {:>11}\n",
        chunkwise::cache::identity::redact_url(source),
        path,
        map.len(),
        "offset",
        "address",
        "size",
        "filter_mask"
    );
    for c in map {
        out.push_str(&format!(
            "{:<24} {:>14} {:>10} {:>11}\n",
            format!("{:?}", c.offset),
            c.address,
            c.size,
            c.filter_mask
        ));
    }
    out
}

/// `chunkwise chunks`: the chunk map of the HDF5 dataset at `path` of `source`, as a JSON
/// list of `{"offset": [element coordinates], "address": N, "size": N, "filter_mask": N}`
/// (absolute byte addresses, stored sizes in bytes; `json`) or one line per chunk. A
/// dataset that is not chunked has an empty map.
///
/// # Errors
/// I/O errors; [`chunkwise::formats::FormatError`] when the source is not HDF5 or the
/// dataset cannot be discovered.
pub async fn chunks_command(
    source: &str,
    path: Option<&str>,
    headers: Vec<(String, String)>,
    json: bool,
) -> Result<String, chunkwise::Error> {
    let traffic = Traffic::new();
    let t = transport(source, headers, &traffic)?;
    let arr = chunkwise::formats::hdf5::Hdf5Array::open_source(&*t, path, 64 * 1024).await?;
    let map = arr.chunk_map();
    if json {
        return Ok(serde_json::to_string(map).expect("chunk map serialises"));
    }
    let mut out = format!(
        "{} {} ({} allocated chunks)\n{:<24} {:>14} {:>10} {:>11}\n",
        chunkwise::cache::identity::redact_url(source),
        arr.meta().path,
        map.len(),
        "offset",
        "address",
        "size",
        "filter_mask"
    );
    for c in map {
        out.push_str(&format!(
            "{:<24} {:>14} {:>10} {:>11}\n",
            format!("{:?}", c.offset),
            c.address,
            c.size,
            c.filter_mask
        ));
    }
    Ok(out)
}

/// The chunk geometry of an HDF5 dataset, from chunkwise's own chunk map (discovery over
/// range reads), in the form the chunk-cache simulator takes: scaled chunk coordinates and
/// stored sizes of every allocated chunk; chunks not listed are unallocated.
///
/// # Errors
/// I/O and format errors of discovery; [`chunkwise::Error::InvalidArgument`] for a dataset
/// that is not chunked (HDF5's chunk cache only serves chunked datasets).
pub async fn chunk_geometry(
    source: &str,
    path: Option<&str>,
    headers: Vec<(String, String)>,
) -> Result<chunkwise::chunk_trace::ChunkGeometry, chunkwise::Error> {
    use chunkwise::chunk_trace::{ChunkGeometry, StoredChunk};
    use chunkwise::formats::hdf5::discover::Layout;
    let traffic = Traffic::new();
    let t = transport(source, headers, &traffic)?;
    let arr = chunkwise::formats::hdf5::Hdf5Array::open_source(&*t, path, 64 * 1024).await?;
    let meta = arr.meta();
    let Layout::Chunked { chunk, entries, .. } = &meta.layout else {
        return Err(chunkwise::Error::InvalidArgument(format!(
            "{} is {}, not chunked: HDF5's chunk cache serves chunked datasets only",
            meta.path,
            meta.layout_name()
        )));
    };
    let chunks = entries
        .iter()
        .map(|c| StoredChunk {
            coords: c.offset.iter().zip(chunk).map(|(o, n)| o / n).collect(),
            address: Some(c.address),
            stored_size: c.size,
        })
        .collect();
    Ok(ChunkGeometry {
        shape: meta.shape.clone(),
        chunk_shape: chunk.clone(),
        element_size: meta.dtype.itemsize as u64,
        filtered: !meta.filters.is_empty(),
        chunks,
        default_stored_size: Some(0),
    })
}

/// The source kind and credentials of `--source` (`auto` or `caterva2`), `--username` with
/// `--password-env VAR` (the password read from the environment variable `VAR`, never taken
/// on the command line), or `--token-env VAR` (a `c2subauth` token).
///
/// # Errors
/// `INVALID_ARGUMENT` for another `--source`, credentials without `--source caterva2`, a
/// username without a password (or the reverse), both a login and a token, or a variable
/// that is unset (named; its value never shown).
pub fn caterva2_options(
    source: &str,
    username: Option<&str>,
    password_env: Option<&str>,
    token_env: Option<&str>,
) -> Result<
    (
        chunkwise::array::SourceKind,
        Option<chunkwise::formats::caterva2::Credentials>,
    ),
    chunkwise::Error,
> {
    use chunkwise::array::SourceKind;
    use chunkwise::formats::caterva2::Credentials;
    let bad = |m: String| chunkwise::Error::InvalidArgument(m);
    let kind = match source {
        "auto" => SourceKind::Detected,
        "caterva2" => SourceKind::Caterva2,
        other => {
            return Err(bad(format!(
                "--source {other:?}: use auto (the default) or caterva2"
            )))
        }
    };
    let var = |name: &str| {
        std::env::var(name).map_err(|_| bad(format!("environment variable {name} is not set")))
    };
    let credentials = match (username, password_env, token_env) {
        (None, None, None) => None,
        (Some(u), Some(p), None) => Some(Credentials::Login {
            username: u.to_string(),
            password: var(p)?,
        }),
        (None, None, Some(t)) => Some(Credentials::Token(var(t)?)),
        (Some(_), None, None) | (None, Some(_), None) => {
            return Err(bad(
                "--username and --password-env go together (the password is read from the \
                 environment variable named)"
                    .into(),
            ))
        }
        _ => {
            return Err(bad(
                "give either --username with --password-env or --token-env, not both".into(),
            ))
        }
    };
    if credentials.is_some() && kind != SourceKind::Caterva2 {
        return Err(bad(
            "--username, --password-env and --token-env are for --source caterva2".into(),
        ));
    }
    Ok((kind, credentials))
}
