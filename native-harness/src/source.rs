//! Opening a SOURCE argument natively: an `http(s)://` URL through [`HttpSource`] with
//! retries, anything else as a local file; both counted into one [`Traffic`].

use chunkwise::array::{OpenOptions, RemoteArray};
use chunkwise::formats::zarr::{KeyOpener, ZarrStore};
use chunkwise::io::file::FileSource;
use chunkwise::io::http::{HttpOptions, HttpSource};
use chunkwise::io::retry::{RetryConfig, Retrying};
use chunkwise::io::{Counted, RangeSource, Traffic};
use std::sync::Arc;

/// Builds the transport for `source` (URL or path) counting into `traffic`. Retries wrap the
/// counter, so every attempt counts as a request.
pub fn transport(
    source: &str,
    headers: Vec<(String, String)>,
    traffic: &Traffic,
) -> Result<Arc<dyn RangeSource>, chunkwise::Error> {
    if source.starts_with("http://") || source.starts_with("https://") {
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

/// Opens an array at `source`. A Zarr store (a URL or path ending in `.zarr`, a local
/// directory, or a URL whose object is missing) is opened as Zarr with `options.path`.
pub async fn open_array(
    source: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
) -> Result<RemoteArray, chunkwise::Error> {
    if chunkwise::formats::zarr::looks_like_store(source) || std::path::Path::new(source).is_dir() {
        return open_zarr(source, headers, options).await;
    }
    let traffic = Traffic::new();
    let t = transport(source, headers.clone(), &traffic)?;
    match RemoteArray::open_source(t, traffic, options.clone()).await {
        // No single object: it may be a Zarr store (or array) root.
        Err(chunkwise::Error::Io(chunkwise::io::IoError::NotFound { .. })) => {
            open_zarr(source, headers, options).await
        }
        // A directory listing (HTML) or other unknown bytes: a Zarr root if it has Zarr
        // metadata, else the original error.
        Err(e @ chunkwise::Error::Format(chunkwise::formats::FormatError::Unrecognised { .. })) => {
            match open_zarr(source, headers, options).await {
                Err(chunkwise::Error::Io(chunkwise::io::IoError::NotFound { .. })) => Err(e),
                other => other,
            }
        }
        other => other,
    }
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
    Ok(
        if base.starts_with("http://") || base.starts_with("https://") {
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
        },
    )
}

/// Opens the Zarr array at `options.path` (or the store root) of the store at `base`.
pub async fn open_zarr(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
) -> Result<RemoteArray, chunkwise::Error> {
    let traffic = Traffic::new();
    let credential = chunkwise::cache::convert::credential_fingerprint(&headers);
    let store = zarr_store(base, headers, &traffic)?;
    let path = options.path.clone().unwrap_or_default();
    RemoteArray::open_zarr(store, &path, traffic, &credential, options).await
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
        source,
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
