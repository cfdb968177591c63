//! Opening a SOURCE argument natively: an `http(s)://` URL through [`HttpSource`] with
//! retries, anything else as a local file; both counted into one [`Traffic`].

use chunkwise::array::{OpenOptions, RemoteArray};
use chunkwise::cache::{CacheCoordinator, CachePolicy};
use chunkwise::formats::zarr::{KeyOpener, ZarrStore};
use chunkwise::io::file::FileSource;
use chunkwise::io::http::{HttpOptions, HttpSource};
use chunkwise::io::retry::{RetryConfig, Retrying};
use chunkwise::io::{Counted, RangeSource, Traffic};
use chunkwise::store::RemoteStore;
use std::sync::Arc;

/// Whether `source` is an `http://` or `https://` URL (the scheme in any case, as RFC 3986
/// section 3.1 says schemes are case-insensitive); anything else is a local path.
pub fn is_url(source: &str) -> bool {
    let has = |scheme: &str| {
        source
            .get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    has("http://") || has("https://")
}

/// Builds the transport for `source` (URL or path) counting into `traffic`. Retries wrap the
/// counter, so every attempt counts as a request.
pub fn transport(
    source: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn RangeSource>, chunkwise::Error> {
    if is_url(source) {
        let http = HttpSource::with_options(
            source,
            HttpOptions {
                headers,
                ..Default::default()
            },
        )?;
        let counted = Counted::new(http, traffic.clone());
        Ok(Arc::new(Retrying::new(counted, RetryConfig::default())))
    } else {
        let file = FileSource::open(source)?;
        Ok(Arc::new(Counted::new(file, traffic.clone())))
    }
}

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

/// The cache identity of a SOURCE argument under `coordinator`'s salt: `cache_key` when
/// given (`--cache-key`), else the URL as given (its query and user info only in the salted
/// fingerprint), or a local file's canonical path; with the fingerprint of `headers`.
pub fn source_key(
    source: &str,
    headers: &[(String, String)],
    coordinator: &CacheCoordinator,
    cache_key: Option<&str>,
) -> chunkwise::cache::SourceKey {
    let location = if is_url(source) {
        source.to_string()
    } else {
        std::fs::canonicalize(source)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| source.to_string())
    };
    coordinator.key_for(&location, headers, cache_key)
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

/// Opens an array at `source` whose caches `coordinator` owns. A URL ending in `.zarr`, a
/// local directory, or a URL with no object of its own (404) or with bytes of no known format
/// opens as a Zarr store (or array) root.
pub async fn open_array_cached(
    source: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray, chunkwise::Error> {
    if chunkwise::formats::zarr::looks_like_store(source) || std::path::Path::new(source).is_dir() {
        return open_zarr(source, headers, options, coordinator).await;
    }
    let traffic = Traffic::new();
    let key = source_key(source, &headers, &coordinator, options.cache_key.as_deref());
    let t = transport(source, headers.clone(), &traffic)?;
    let first =
        RemoteArray::open_with_cache(t, traffic, options.clone(), coordinator.clone(), key).await;
    chunkwise::formats::zarr::or_zarr(first, false, || {
        open_zarr(source, headers, options, coordinator)
    })
    .await
}

/// A Zarr store at `base` (URL or local directory): one counted, retried source per object
/// key, sharing one HTTP client.
pub fn zarr_store(
    base: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<ZarrStore>, chunkwise::Error> {
    Ok(Arc::new(ZarrStore::new(
        base,
        zarr_opener(base, headers, traffic)?,
    )))
}

/// The object opener of a Zarr store at `base`: an [`HttpSource`] per key (sharing one
/// client, counted into `traffic`, retried) for a URL, a [`FileSource`] per key otherwise.
pub fn zarr_opener(
    base: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn KeyOpener>, chunkwise::Error> {
    let traffic = traffic.clone();
    Ok(if is_url(base) {
        let options = HttpOptions {
            headers,
            ..Default::default()
        };
        let client = HttpSource::client_for(&options).map_err(|message| {
            chunkwise::io::IoError::Network {
                location: base.to_string(),
                message,
            }
        })?;
        Arc::new(
            move |url: &str| -> Result<Arc<dyn RangeSource>, chunkwise::io::IoError> {
                let http = HttpSource::with_client(url, client.clone(), options.clone())?;
                let counted = Counted::new(http, traffic.clone());
                Ok(Arc::new(Retrying::new(counted, RetryConfig::default())))
            },
        )
    } else {
        Arc::new(
            move |path: &str| -> Result<Arc<dyn RangeSource>, chunkwise::io::IoError> {
                let file = FileSource::open(path)?;
                Ok(Arc::new(Counted::new(file, traffic.clone())))
            },
        )
    })
}

/// Opens the Zarr array at `options.path` (or the store root) of the store at `base`, whose
/// caches (remembered metadata, converted chunks) `coordinator` owns.
pub async fn open_zarr(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray, chunkwise::Error> {
    let traffic = Traffic::new();
    let key = source_key(base, &headers, &coordinator, options.cache_key.as_deref());
    let store = zarr_store(base, headers, &traffic)?;
    let path = options.path.clone().unwrap_or_default();
    RemoteArray::open_zarr_with_cache(store, &path, traffic, key, options, coordinator).await
}

/// Opens the container at `source` (an HDF5 file, or a Zarr store: a URL ending in `.zarr`,
/// a local directory, or a URL with no object of its own) as a store whose caches
/// `coordinator` owns, under the cache identity `cache_key` when given.
pub async fn open_store_cached(
    source: &str,
    headers: Vec<(String, String)>,
    coordinator: CacheCoordinator,
    cache_key: Option<&str>,
) -> Result<RemoteStore, chunkwise::Error> {
    let zarr = |headers: Vec<(String, String)>, coordinator: CacheCoordinator| async move {
        let traffic = Traffic::new();
        let key = source_key(source, &headers, &coordinator, cache_key);
        let store = zarr_store(source, headers, &traffic)?;
        RemoteStore::open_zarr(store, traffic, OpenOptions::default(), coordinator, key).await
    };
    if chunkwise::formats::zarr::looks_like_store(source) || std::path::Path::new(source).is_dir() {
        return zarr(headers, coordinator).await;
    }
    let traffic = Traffic::new();
    let key = source_key(source, &headers, &coordinator, cache_key);
    let t = transport(source, headers.clone(), &traffic)?;
    let first =
        RemoteStore::open(t, traffic, OpenOptions::default(), coordinator.clone(), key).await;
    chunkwise::formats::zarr::or_zarr(first, true, || zarr(headers, coordinator)).await
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
    let Some(chunkwise::cache::Seed::Hdf5 { dataset }) = arr.seed() else {
        return Err(chunkwise::formats::FormatError::Unsupported {
            location: source.to_string(),
            format: "hdf5",
            detail: format!(
                "chunk maps are listed for HDF5 datasets; this is {}",
                arr.info().format
            ),
        }
        .into());
    };
    let map: &[chunkwise::formats::hdf5::discover::ChunkInfo] = match &dataset.layout {
        chunkwise::formats::hdf5::discover::Layout::Chunked { entries, .. } => entries,
        _ => &[],
    };
    Ok(format_chunk_map(source, &dataset.path, map, json))
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
    let Layout::Chunked { chunk, entries } = &meta.layout else {
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
