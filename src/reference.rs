//! Portable references: a small versioned JSON document from which a store reopens on another
//! machine with no discovery request (spec: remote cache design, "Portable reference exports
//! are distinct from disposable runtime caches", "Immutable reference snapshots cannot
//! refresh"; python-blosc2's `RemoteStore` references for behaviour).
//!
//! A reference is the source's public locator and identity plus the discovery records the
//! store's coordinator holds for it ([`crate::cache::discovery`]: for an HDF5 file its
//! listing and each dataset's record, chunk map included; for a Zarr store its remembered
//! metadata). Reopening injects those records into a coordinator under the cache key computed
//! at reopen, so the ordinary open path ([`crate::open::open_store`]) finds them warm. Nothing
//! here knows a format: the store names the scopes of its records
//! ([`RemoteStore::record_scopes`]).
//!
//! The document:
//!
//! ```json
//! {"chunkwise_reference": 1,
//!  "url": "https://host/data.h5",
//!  "kind": "hdf5",
//!  "identity": {"len": 28426, "etag": "\"abc\"", "last_modified": null},
//!  "mutable": false,
//!  "records": {"#nodes": {...}, "/group/data": {...}},
//!  "sha256": "<64 hex digits>"}
//! ```
//!
//! - `url`: the public URL ([`crate::cache::identity::public_url`]: no user info, no query);
//!   request headers are never written.
//! - `identity`: size and HTTP validators of the source at export. Checked when a read
//!   receives an answer, as for any warm open: a source rewritten since fails with
//!   `SOURCE_CHANGED`.
//! - `mutable`: false, an immutable snapshot: reopened into a MEMORY coordinator of its own
//!   (it never grows a disk cache) and its store refuses [`RemoteStore::refresh`]; true, a
//!   writable runtime cache: the records go to the caller's coordinator (DISK included) and
//!   the store refreshes as any other. The reference file itself is never written.
//! - `records`: scope → discovery record, as the coordinator held it.
//! - `sha256`: hex SHA-256 of the canonical serialisation of every other field (compact JSON,
//!   object keys sorted, floats without a fraction written as integers, as JavaScript writes
//!   them): a document whose identity or records were edited is refused.

use crate::array::OpenOptions;
use crate::cache::{CacheCoordinator, CachePolicy, DEFAULT_MAX_CACHE_BYTES};
use crate::error::{Error, Result};
use crate::formats::{FormatError, NodeKind};
use crate::store::RemoteStore;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Version of the reference document ([`Reference::to_json`]'s `chunkwise_reference`); a
/// document of another version is refused.
pub const REFERENCE_VERSION: u32 = 1;

/// Most bytes of a reference document [`Reference::from_json`] reads (256 MiB: a chunk map of
/// 10,000 chunks is about 1 MiB of record).
pub const MAX_REFERENCE_BYTES: usize = 256 << 20;

/// The source's size and validators at export.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceIdentity {
    /// Size in bytes (0 for a Zarr store, which has no object of its own).
    pub len: u64,
    /// HTTP `ETag`.
    pub etag: Option<String>,
    /// HTTP `Last-Modified`.
    pub last_modified: Option<String>,
}

/// A portable reference: see the module documentation for the document.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Public URL of the source (no user info, no query).
    pub url: String,
    /// `"hdf5"`, `"zarr"` (or `"b2z"`): [`RemoteStore::kind`].
    pub kind: String,
    /// The source's identity at export.
    pub identity: ReferenceIdentity,
    /// Whether a reopen uses the caller's (writable) cache and may refresh.
    pub mutable: bool,
    /// Scope ([`crate::cache::SourceKey::scoped`]) → discovery record (its JSON).
    pub records: BTreeMap<String, Value>,
}

/// The document's fields other than `sha256`, as serialised.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    chunkwise_reference: u32,
    url: String,
    kind: String,
    identity: ReferenceIdentity,
    mutable: bool,
    records: BTreeMap<String, Value>,
}

/// `v` with the keys of every object sorted, whatever order the JSON library keeps.
fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// What the digest is taken of: `v` [`sorted`], and its numbers as JavaScript writes them.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), canonical(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        // JavaScript has one number type: `JSON.stringify` writes the float 2.0 as `2` (and
        // -0.0 as `0`). A float with no fraction within 2^53 is digested as that integer, so
        // a document that went through a JS object keeps its digest.
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Value::from(f as i64)
            }
            _ => v.clone(),
        },
        other => other.clone(),
    }
}

/// Hex SHA-256 of the canonical compact JSON of `body`.
fn digest(body: &Value) -> String {
    let bytes = serde_json::to_vec(&canonical(body)).expect("JSON values serialise");
    crate::cache::identity::sha256_hex(&bytes)
}

/// The error of a document that is not a reference this build reads.
fn bad(detail: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("reference: {detail}"))
}

impl Reference {
    /// Exports `store`: opens every array of its listing ([`RemoteStore::get`], so that each
    /// one's discovery record exists: an HDF5 dataset's chunk map is read here, that is the
    /// point), then collects the records of the store's scopes
    /// ([`RemoteStore::record_scopes`]) from its coordinator. Arrays listed with an `error`,
    /// and arrays refused as unsupported when opened, are left out (a reopen lists them as
    /// the export did, and opening one discovers it).
    ///
    /// `with_payload` is not supported yet: [`Error::InvalidArgument`].
    ///
    /// # Errors
    /// The errors of opening an array other than [`FormatError::Unsupported`]; a record that
    /// is not JSON ([`Error::InvalidArgument`], never seen: records are written as JSON).
    pub async fn export(store: &RemoteStore, with_payload: bool) -> Result<Reference> {
        if with_payload {
            return Err(bad(
                "exporting cached payload (--with-payload) is not supported yet",
            ));
        }
        for node in store.nodes() {
            if node.kind != NodeKind::Array || node.error.is_some() {
                continue;
            }
            match store.get(&node.path).await {
                Ok(_) | Err(Error::Format(FormatError::Unsupported { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        let key = store.source_key();
        let mut records = BTreeMap::new();
        for scope in store.record_scopes() {
            if let Some(bytes) = store.coordinator().record(&key.scoped(&scope)).await {
                let v: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| bad(format!("record {scope} is not JSON: {e}")))?;
                records.insert(scope, v);
            }
        }
        let info = store.source_info();
        Ok(Reference {
            url: crate::cache::identity::public_url(&info.location),
            kind: store.kind().to_string(),
            identity: ReferenceIdentity {
                len: info.len,
                etag: info.etag.clone(),
                last_modified: info.last_modified.clone(),
            },
            mutable: false,
            records,
        })
    }

    /// The document's body (every field but `sha256`).
    fn body(&self) -> Value {
        serde_json::to_value(Body {
            chunkwise_reference: REFERENCE_VERSION,
            url: self.url.clone(),
            kind: self.kind.clone(),
            identity: self.identity.clone(),
            mutable: self.mutable,
            records: self.records.clone(),
        })
        .expect("references serialise")
    }

    /// The document as a JSON value (the body and its `sha256`): what JS gets.
    pub fn to_value(&self) -> Value {
        let mut body = self.body();
        let sum = digest(&body);
        body.as_object_mut()
            .expect("the body is an object")
            .insert("sha256".into(), Value::String(sum));
        body
    }

    /// The document as JSON bytes (pretty-printed, keys sorted).
    pub fn to_json(&self) -> Vec<u8> {
        let mut out =
            serde_json::to_vec_pretty(&sorted(&self.to_value())).expect("references serialise");
        out.push(b'\n');
        out
    }

    /// Whether `bytes` look like a reference document: a JSON object with the key
    /// `chunkwise_reference` (checked without validating the rest).
    pub fn is_reference(bytes: &[u8]) -> bool {
        bytes.len() <= MAX_REFERENCE_BYTES
            && serde_json::from_slice::<Value>(bytes)
                .ok()
                .is_some_and(|v| v.get("chunkwise_reference").is_some())
    }

    /// A reference from its JSON document ([`Reference::to_json`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`reference: ...`) for bytes over [`MAX_REFERENCE_BYTES`],
    /// malformed or truncated JSON, a document without `chunkwise_reference` or of another
    /// version, missing, unknown or mistyped fields, a `sha256` that is not the digest of the
    /// rest (an edited identity or record), or a `url` with user info or a query.
    pub fn from_json(bytes: &[u8]) -> Result<Reference> {
        if bytes.len() > MAX_REFERENCE_BYTES {
            return Err(bad(format!(
                "{} bytes, over the {MAX_REFERENCE_BYTES} a reference may have",
                bytes.len()
            )));
        }
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
        Self::from_value(v)
    }

    /// A reference from its document as a JSON value (as [`Reference::from_json`]).
    ///
    /// # Errors
    /// As [`Reference::from_json`].
    pub fn from_value(mut v: Value) -> Result<Reference> {
        let Some(doc) = v.as_object_mut() else {
            return Err(bad("the document is not a JSON object"));
        };
        match doc.get("chunkwise_reference") {
            Some(Value::Number(n)) if n.as_u64() == Some(REFERENCE_VERSION as u64) => {}
            Some(other) => {
                return Err(bad(format!(
                    "version {other}; this build reads version {REFERENCE_VERSION}"
                )))
            }
            None => return Err(bad("no chunkwise_reference field: not a reference")),
        }
        let sum = match doc.remove("sha256") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(bad("sha256 is not a string")),
            None => return Err(bad("no sha256 field")),
        };
        if digest(&v) != sum.to_ascii_lowercase() {
            return Err(bad(
                "sha256 does not match the document: its identity or records were changed",
            ));
        }
        let body: Body = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
        if crate::cache::identity::public_url(&body.url) != body.url {
            return Err(bad(
                "url holds user info or a query (a reference names public URLs only)",
            ));
        }
        Ok(Reference {
            url: body.url,
            kind: body.kind,
            identity: body.identity,
            mutable: body.mutable,
            records: body.records,
        })
    }
}

/// Opens the store `reference` describes with no discovery request: its records are put in a
/// coordinator under the cache key of the URL opened (the reference's, or `url_override`: the
/// same object at, say, a signed URL, whose query and user info the reference never held)
/// and `headers` (sent with every request, never written), then the ordinary opener finds
/// them warm ([`crate::open::open_store`]; a Zarr reference through
/// [`crate::open::open_zarr_store`]).
///
/// An immutable reference (`mutable: false`) is opened with a MEMORY coordinator of its own
/// (NONE when `coordinator` is NONE; the payload bound of `coordinator`), so it never grows
/// a disk cache, and its store's [`RemoteStore::refresh`] fails with
/// [`Error::InvalidArgument`]. A mutable one puts its records into `coordinator` (under DISK
/// they are written to its directory) and refreshes as any store.
///
/// Identity is checked when reads receive answers (a rewritten source fails them with
/// `SOURCE_CHANGED`). A Zarr reference reopens warm only at a URL of the same public part
/// (the store's remembered metadata names its base).
///
/// # Errors
/// [`Error::InvalidArgument`] for a kind this function does not open, a URL scheme other than
/// http and https, or a store that opened as another kind than the reference's; otherwise as
/// [`crate::open::open_store`].
pub async fn open_reference(
    reference: &Reference,
    url_override: Option<&str>,
    headers: Vec<(String, String)>,
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteStore> {
    let url = url_override.unwrap_or(&reference.url);
    crate::open::check_scheme(url)?;
    let coordinator = if reference.mutable {
        coordinator
    } else if coordinator.policy() == CachePolicy::None {
        CacheCoordinator::none()
    } else {
        CacheCoordinator::memory(
            coordinator
                .max_cache_bytes()
                .unwrap_or(DEFAULT_MAX_CACHE_BYTES),
        )
    };
    let options = OpenOptions {
        cache: coordinator.policy(),
        ..options
    };
    let key = crate::open::source_key(url, &headers, &coordinator, options.cache_key.as_deref());
    let target = coordinator.for_source(&key);
    for (scope, record) in &reference.records {
        let json = serde_json::to_vec(record).expect("JSON values serialise");
        target.put_record(&key.scoped(scope), json).await;
    }
    let store = match reference.kind.as_str() {
        #[cfg(feature = "zarr")]
        "zarr" => crate::open::open_zarr_store(url, headers, options, coordinator).await?,
        #[cfg(not(feature = "zarr"))]
        "zarr" => return Err(crate::open::not_built(url, "zarr")),
        "hdf5" | "b2z" => crate::open::open_store(url, headers, options, coordinator).await?,
        other => return Err(bad(format!("kind {other:?} is not one this build opens"))),
    };
    if store.kind() != reference.kind {
        return Err(bad(format!(
            "{} opened as {}, the reference is of kind {}",
            crate::cache::identity::redact_url(url),
            store.kind(),
            reference.kind
        )));
    }
    if reference.mutable {
        return Ok(store);
    }
    Ok(store.with_reopen(Box::new(|_traffic: &crate::io::Traffic| {
        Err(Error::InvalidArgument(
            "an immutable reference snapshot cannot refresh: open the source itself, or a \
             reference exported as mutable"
                .into(),
        ))
    })))
}
