//! Opening Caterva2 datasets ([`crate::formats::caterva2`]): the client of a URL base with
//! its credentials, the cache identity of a dataset, the discovery record and the
//! mutable-source check, and the server's roots and datasets as a store.
//!
//! Identity: a dataset is keyed by `{base}/api/info/{path}` (its public URL) plus the salted
//! fingerprint of the request headers and of the credentials
//! ([`Credentials::fingerprint_header`]), so nothing secret enters a key or a record, and
//! another user's credentials never see these entries. Its version is the `ETag` of
//! `api/info` (caterva2's dataset validator), its `mtime` and `schunk.cbytes`: the payload
//! identity holds them, so chunks of another version are never served for this one.
//!
//! Freshness: immutable by default (a held record is trusted: a warm open makes no request;
//! a login, if any, happens at the first chunk). With `assume_immutable: false` an open
//! asks `api/info` once and compares `ETag`, `mtime` and `cbytes` with the record: the same,
//! the cache is reused (`reused`); changed, the dataset's entries are dropped and the new
//! `api/info` is recorded (`invalidated`). A lazy expression is always `invalidated` then:
//! its `api/info` does not change when one of its operands does.

use super::{record, seed_of, source_key, Result};
use crate::array::{OpenOptions, RemoteArray};
use crate::cache::{CacheCoordinator, CacheStatus, SourceKey};
use crate::formats::caterva2::{client::Client, Caterva2Array, Caterva2Seed, Credentials};
use crate::formats::{FormatSeed, Node, NodeKind};
use crate::io::memory::MemorySource;
use crate::io::request::{host_requester, Requests};
use crate::io::{SourceInfo, Traffic};
use crate::store::{Container, RemoteStore};
use bytes::Bytes;
use futures::StreamExt;
use std::sync::Arc;

/// Scope prefix of a dataset's discovery record.
const SCOPE: &str = "#caterva2";

/// The client of the server at `base`, counting into a traffic of its own.
///
/// # Errors
/// [`crate::io::IoError::Network`] when the HTTP client cannot be built;
/// `INVALID_ARGUMENT` for a base that is no `http(s)` URL.
pub fn client(
    base: &str,
    headers: Vec<(String, String)>,
    credentials: Option<Credentials>,
) -> Result<(Arc<Client>, Traffic)> {
    if !super::is_url(base) {
        return Err(crate::Error::InvalidArgument(format!(
            "a Caterva2 source is an http(s) URL base, not {:?}",
            crate::io::url::redact_url(base)
        )));
    }
    let traffic = Traffic::new();
    let requests = Requests::new(host_requester(base)?, traffic.clone());
    Ok((
        Arc::new(Client::new(base, requests, headers, credentials)),
        traffic,
    ))
}

/// The cache key of `location` (a URL of the server) under `headers` and `credentials`.
fn key(
    location: &str,
    headers: &[(String, String)],
    credentials: Option<&Credentials>,
    coordinator: &CacheCoordinator,
    cache_key: Option<&str>,
) -> SourceKey {
    let mut covered = headers.to_vec();
    covered.extend(credentials.map(Credentials::fingerprint_header));
    source_key(location, &covered, coordinator, cache_key)
}

/// The dataset path of `options.path`.
///
/// # Errors
/// `INVALID_ARGUMENT` when it is missing or empty.
fn dataset_path(options: &OpenOptions) -> Result<String> {
    let path = crate::formats::caterva2::normalise_path(options.path.as_deref().unwrap_or(""));
    if path.is_empty() {
        return Err(crate::Error::InvalidArgument(
            "a Caterva2 source needs the dataset's path (path / --path, such as \
             @public/dir/ds.b2nd)"
                .into(),
        ));
    }
    Ok(path)
}

/// The identity of a dataset's version, as its record holds it: `len` its stored bytes
/// (`schunk.cbytes`), `etag` the `api/info` `ETag`, `last_modified` its `mtime`.
fn identity_of(location: &str, array: &Caterva2Array) -> SourceInfo {
    let info = array.api_info();
    SourceInfo {
        location: location.to_string(),
        len: info.schunk.as_ref().map_or(0, |s| s.cbytes),
        etag: array.etag().map(str::to_string),
        last_modified: info.mtime.clone(),
    }
}

/// Opens the dataset `options.path` of the Caterva2 server at `base` (its URL base),
/// sending `headers` and authenticating with `options.credentials`, whose caches
/// `coordinator` owns. A cold open makes one request (`api/info`); a warm one none (with
/// `assume_immutable` false, one `api/info`). Reads fetch `api/chunk` per touched chunk not
/// cached (at most [`crate::formats::caterva2::CONCURRENCY`] at a time unless
/// `options.concurrency` was set to another value than its default), and `api/fetch`
/// slices for lazy expressions and small selections of large chunks.
///
/// # Errors
/// `INVALID_ARGUMENT` without a path, for a base that is no URL, or when the login is
/// refused (before the first request sent); `NOT_FOUND` naming the dataset (404);
/// `HTTP_STATUS` for 401/403 (the dataset's root needs other credentials); `INVALID_DATA`
/// for an `api/info` that is not the JSON expected or whose geometry is inconsistent;
/// `UNSUPPORTED` for its dtype.
pub async fn open_caterva2(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let path = dataset_path(&options)?;
    let (client, traffic) = client(base, headers.clone(), options.credentials.clone())?;
    open_dataset(client, traffic, &path, &headers, options, coordinator).await
}

/// [`open_caterva2`] with its client made (shared by a store's datasets).
pub(crate) async fn open_dataset(
    client: Arc<Client>,
    traffic: Traffic,
    path: &str,
    headers: &[(String, String)],
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let location = client.url("info", path, "");
    let key = key(
        &location,
        headers,
        options.credentials.as_ref(),
        &coordinator,
        options.cache_key.as_deref(),
    );
    let coordinator = coordinator.for_source(&key);
    let record_key = key.scoped(&format!("{SCOPE}:{path}"));
    let concurrency = if options.concurrency == OpenOptions::default().concurrency {
        crate::formats::caterva2::CONCURRENCY
    } else {
        options.concurrency
    };
    let mut status = CacheStatus::Created;
    let mut fresh = None;
    match coordinator.discovery_lookup(&record_key).await {
        Ok(rec) => match Caterva2Seed::from_seed(&seed_of(&rec)) {
            Some(seed) if seed.path == path => {
                let held = Caterva2Array::from_info(client.clone(), path, seed.info, seed.etag);
                match held {
                    Ok(held) if options.assume_immutable => {
                        return Ok(assemble(
                            held.with_concurrency(concurrency),
                            &location,
                            coordinator,
                            &key,
                            options,
                            traffic,
                        )
                        .with_cache_status(CacheStatus::Reused));
                    }
                    Ok(held) => {
                        let now = Caterva2Array::discover(client.clone(), path).await?;
                        // A lazy expression's own info does not change when an operand
                        // does: it is computed afresh, never reused unseen.
                        if identity_of(&location, &now) == identity_of(&location, &held)
                            && !now.api_info().is_lazy()
                        {
                            return Ok(assemble(
                                held.with_concurrency(concurrency),
                                &location,
                                coordinator,
                                &key,
                                options,
                                traffic,
                            )
                            .with_cache_status(CacheStatus::Reused));
                        }
                        // Nothing of the recorded version may serve the new one.
                        coordinator.forget_source(&key).await;
                        status = CacheStatus::Invalidated;
                        fresh = Some(now);
                    }
                    Err(_) => status = CacheStatus::Invalidated,
                }
            }
            _ => status = CacheStatus::Invalidated,
        },
        Err(true) => status = CacheStatus::Invalidated,
        Err(false) => {}
    }
    let array = match fresh {
        Some(a) => a,
        None => Caterva2Array::discover(client.clone(), path).await?,
    };
    let info = identity_of(&location, &array);
    coordinator
        .put_discovery(&record_key, &record(&info, array.to_seed_value().to_seed()))
        .await;
    Ok(assemble(
        array.with_concurrency(concurrency),
        &location,
        coordinator,
        &key,
        options,
        traffic,
    )
    .with_cache_status(status))
}

/// The handle of `array`: its payload identity is the key, the dataset path and its
/// version (`ETag`, `mtime`, `cbytes`); chunks are kept as stored (no conversion).
fn assemble(
    array: Caterva2Array,
    location: &str,
    coordinator: CacheCoordinator,
    key: &SourceKey,
    options: OpenOptions,
    traffic: Traffic,
) -> RemoteArray {
    let info = identity_of(location, &array);
    let identity: Arc<str> = Arc::from(format!(
        "{}\ncaterva2;cbytes={};etag={};mtime={}",
        key.scoped(array.path()),
        info.len,
        info.etag.as_deref().unwrap_or(""),
        info.last_modified.as_deref().unwrap_or("")
    ));
    RemoteArray::from_parts(
        // Never read: a Caterva2 dataset's chunks come through its loader.
        Arc::new(MemorySource::new(location, Bytes::new())),
        Box::new(array),
        coordinator,
        options,
        traffic,
        key.clone(),
        identity,
        None,
        info,
        None,
    )
}

/// Most containers whose members a listing asks for.
const MAX_CONTAINERS: usize = 256;

/// Whether a listed name is a container caterva2 lists the members of (its
/// `BLOSC2_CONTAINER_SUFFIXES`: `.b2z`, `.h5`, `.hdf5`).
fn is_container(name: &str) -> bool {
    let n = name.trim_end_matches('/').to_ascii_lowercase();
    n.ends_with(".b2z") || n.ends_with(".h5") || n.ends_with(".hdf5")
}

/// The roots (`GET api/roots`) of the server `client` talks to and the datasets of each
/// (`GET api/list/{root}`, all at once), as nodes: each root a group `/@public`, each
/// dataset an array `/@public/dir/ds.b2nd` (directories and containers as groups between:
/// a `.b2z` or HDF5 file's members from its own `api/list`), shapes and dtypes not read
/// (`None`: `get` reads them). A root that refuses its listing (401/403)
/// is listed with the error as its reason.
///
/// # Errors
/// Those of `api/roots`; [`crate::formats::FormatError::Invalid`] for answers that are not
/// the JSON expected.
pub async fn list(client: &Client) -> Result<Vec<Node>> {
    let url = client.url("roots", "", "");
    let (roots, _): (std::collections::BTreeMap<String, serde_json::Value>, _) =
        client.get_json(&url, &url).await?;
    let listings = futures::future::join_all(roots.keys().map(|root| async move {
        let url = client.url("list", root, "");
        let got: Result<(Vec<String>, _)> = client.get_json(&url, &url).await;
        (root.clone(), got.map(|(names, _)| names))
    }))
    .await;
    // Containers (a `.b2z`, an HDF5 file) are listed as one name: their members come from
    // `api/list` of each (at most MAX_CONTAINERS, 6 at a time), as `container/member`.
    let containers: Vec<String> = listings
        .iter()
        .filter_map(|(root, names)| names.as_ref().ok().map(|n| (root, n)))
        .flat_map(|(root, names)| {
            names
                .iter()
                .filter(|n| is_container(n))
                .map(move |n| format!("{root}/{}", n.trim_matches('/')))
        })
        .take(MAX_CONTAINERS)
        .collect();
    let mut members = std::collections::BTreeMap::<String, Vec<String>>::new();
    let listed = futures::stream::iter(containers.into_iter().map(|c| async move {
        let url = client.url("list", &c, "");
        let got: Result<(Vec<String>, _)> = client.get_json(&url, &url).await;
        (c, got.map(|(names, _)| names).unwrap_or_default())
    }))
    .buffer_unordered(6)
    .collect::<Vec<_>>()
    .await;
    // One by one, a later answer for a container replacing an earlier (as `collect` would
    // keep it): `collect` into the map compiles a sort and a bulk build of its own.
    for (container, names) in listed {
        members.insert(container, names);
    }
    let group = |path: String, error: Option<String>| Node {
        path,
        kind: NodeKind::Group,
        shape: None,
        dtype: None,
        error,
        attrs: Default::default(),
        dims: None,
    };
    let mut nodes = vec![group("/".into(), None)];
    let mut groups = std::collections::BTreeSet::new();
    for (root, names) in listings {
        let names = match names {
            Ok(n) => n,
            Err(e) => {
                nodes.push(group(format!("/{root}"), Some(e.message())));
                continue;
            }
        };
        nodes.push(group(format!("/{root}"), None));
        let expanded = names.iter().flat_map(|name| {
            let name = name.trim_matches('/').to_string();
            match members.get(&format!("{root}/{name}")) {
                Some(inner) if !inner.is_empty() => inner
                    .iter()
                    .map(|m| format!("{name}/{}", m.trim_matches('/')))
                    .collect(),
                _ => vec![name],
            }
        });
        for name in expanded.take(crate::store::MAX_NODES) {
            let name = name.as_str();
            let mut dir = format!("/{root}");
            let parts: Vec<&str> = name.split('/').collect();
            for p in &parts[..parts.len().saturating_sub(1)] {
                dir = format!("{dir}/{p}");
                if groups.insert(dir.clone()) {
                    nodes.push(group(dir.clone(), None));
                }
            }
            nodes.push(Node {
                path: format!("/{root}/{name}"),
                kind: NodeKind::Array,
                shape: None,
                dtype: None,
                error: None,
                attrs: Default::default(),
                dims: None,
            });
        }
    }
    Ok(crate::formats::redact_node_errors(nodes))
}

/// Opens the Caterva2 server at `base` as a store: its roots and datasets listed
/// ([`list`]: `api/roots`, then `api/list/{root}` of every root at once), each dataset got
/// with [`RemoteStore::get`] (`/@public/dir/ds.b2nd`) as [`open_caterva2`] opens it, sharing
/// the store's client (one login), traffic and caches. The listing is not cached: each open
/// and [`RemoteStore::refresh`] lists again.
///
/// # Errors
/// As [`client`] and [`list`]; `INVALID_ARGUMENT` for `assume_immutable` false (a store
/// assumes an immutable listing; its datasets' freshness is checked when opened one by one).
pub async fn open_store(
    base: &str,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteStore> {
    if !options.assume_immutable {
        super::refuse_mutable(base, "a store (Caterva2)")?;
    }
    let (client, traffic) = client(base, headers.clone(), options.credentials.clone())?;
    let location = client.url("roots", "", "");
    let key = key(
        &location,
        &headers,
        options.credentials.as_ref(),
        &coordinator,
        options.cache_key.as_deref(),
    );
    let nodes = list(&client).await?;
    let info = SourceInfo {
        location: client.base().to_string(),
        ..Default::default()
    };
    Ok(RemoteStore::from_parts(
        Container::Caterva2(client),
        traffic,
        coordinator.for_source(&key),
        key,
        OpenOptions {
            path: None,
            ..options
        },
        info,
        nodes,
        CacheStatus::Created,
    ))
}
