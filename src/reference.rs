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
//! - `payload` (only when exported with payload): the compressed payload the export's cache
//!   held for the source, each entry under its storage key after the source's cache identity
//!   (`{"key": "/data\nlen=...\nchunk 3", ...}`), either inline
//!   (`{"encoding": "base64", "chunks": [{"key", "data"}]}`) or, past
//!   [`SIDECAR_THRESHOLD`] bytes, in a sidecar blob next to the document
//!   (`{"encoding": "sidecar", "sidecar": "ref.json.payload", "sha256", "chunks": [{"key",
//!   "offset", "len"}]}`); put back into the payload cache at reopen.
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

/// Payload past this many bytes goes to a sidecar blob ([`Reference::to_json_with_sidecar`]):
/// 1 MiB.
pub const SIDECAR_THRESHOLD: u64 = 1 << 20;

/// Most bytes of a payload sidecar [`Reference::attach_sidecar`] takes (1 GiB).
pub const MAX_SIDECAR_BYTES: u64 = 1 << 30;

/// One payload entry of a reference: its storage key after the source's cache identity
/// (`{source_id}\n` removed) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadEntry {
    /// The storage key's rest (scope, stamp and item).
    pub key: String,
    /// The entry's bytes (a Blosc2 chunk or block, as the payload cache keeps it).
    pub data: bytes::Bytes,
}

/// Where a document's payload lives when it is in a sidecar blob not attached yet.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// The blob's file name, next to the document (no directory part).
    pub sidecar: String,
    /// Hex SHA-256 of the blob.
    pub sha256: String,
    /// Each entry's key, offset and length in the blob.
    pub chunks: Vec<SidecarChunk>,
}

/// One entry of a [`Sidecar`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidecarChunk {
    /// As [`PayloadEntry::key`].
    pub key: String,
    /// Byte offset in the blob.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

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
    /// Payload put back into the payload cache at reopen (empty without `with_payload`).
    pub payload: Vec<PayloadEntry>,
    /// A payload sidecar the document names and [`Reference::attach_sidecar`] has not read
    /// yet ([`open_reference`] refuses the reference until then).
    pub sidecar: Option<Sidecar>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    payload: Option<Value>,
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

/// Writes what the digest is taken of: `v` as compact JSON with the keys of every object
/// sorted, and its numbers as JavaScript writes them: `JSON.stringify` writes the float 2.0
/// as `2` (and -0.0 as `0`), so a float with no fraction within 2^53 is written as that
/// integer, and a document that went through a JS object keeps its digest. Streamed into
/// the hasher (a document with big chunk maps is megabytes).
fn write_canonical<W: std::io::Write>(v: &Value, w: &mut W) -> std::io::Result<()> {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            w.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(&mut *w, k)?;
                w.write_all(b":")?;
                write_canonical(&m[k], w)?;
            }
            w.write_all(b"}")
        }
        Value::Array(a) => {
            w.write_all(b"[")?;
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                write_canonical(x, w)?;
            }
            w.write_all(b"]")
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                write!(w, "{}", f as i64)
            }
            _ => Ok(serde_json::to_writer(&mut *w, n)?),
        },
        other => Ok(serde_json::to_writer(&mut *w, other)?),
    }
}

/// An `io::Write` into a SHA-256.
struct Hashing(sha2::Sha256);

impl std::io::Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        sha2::Digest::update(&mut self.0, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `sha256` a document with the fields of `body` (every field but `sha256`) carries:
/// hex SHA-256 of its canonical compact JSON (keys sorted, floats without a fraction as
/// integers).
pub fn digest(body: &Value) -> String {
    use sha2::Digest;
    let mut h = Hashing(sha2::Sha256::new());
    write_canonical(
        body,
        &mut std::io::BufWriter::with_capacity(1 << 16, &mut h),
    )
    .expect("hashing does not fail");
    crate::cache::identity::hex(&h.0.finalize())
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
    /// With `with_payload`, also the compressed payload the store's coordinator holds for
    /// the source (chunks read before the export, or kept by a DISK cache), each entry under
    /// its storage key after the source's cache identity ([`PayloadEntry`]).
    ///
    /// # Errors
    /// The errors of opening an array other than [`FormatError::Unsupported`]; a record that
    /// is not JSON ([`Error::InvalidArgument`], never seen: records are written as JSON);
    /// [`Error::Cache`] when the payload cannot be listed.
    pub async fn export(store: &RemoteStore, with_payload: bool) -> Result<Reference> {
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
        let mut payload = Vec::new();
        if with_payload {
            let prefix = format!("{}\n", key.source_id());
            for (k, data) in store.coordinator().payload_with_prefix(&prefix).await? {
                payload.push(PayloadEntry {
                    key: k[prefix.len()..].to_string(),
                    data,
                });
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
            payload,
            sidecar: None,
        })
    }

    /// The document's body (every field but `sha256`) with `payload` as its payload field.
    fn body(&self, payload: Option<Value>) -> Value {
        serde_json::to_value(Body {
            chunkwise_reference: REFERENCE_VERSION,
            url: self.url.clone(),
            kind: self.kind.clone(),
            identity: self.identity.clone(),
            mutable: self.mutable,
            records: self.records.clone(),
            payload,
        })
        .expect("references serialise")
    }

    /// The payload inline, base64 (`None` when there is none).
    fn inline_payload(&self) -> Option<Value> {
        use base64::Engine;
        if self.payload.is_empty() {
            return self.sidecar.as_ref().map(sidecar_value);
        }
        let chunks: Vec<Value> = self
            .payload
            .iter()
            .map(|e| {
                serde_json::json!({
                    "key": e.key,
                    "data": base64::engine::general_purpose::STANDARD.encode(&e.data),
                })
            })
            .collect();
        Some(serde_json::json!({"encoding": "base64", "chunks": chunks}))
    }

    /// `body` with its `sha256`, keys sorted.
    fn signed(mut body: Value) -> Value {
        let sum = digest(&body);
        body.as_object_mut()
            .expect("the body is an object")
            .insert("sha256".into(), Value::String(sum));
        sorted(&body)
    }

    /// The document as a JSON value (the body and its `sha256`; payload inline): what JS
    /// gets.
    pub fn to_value(&self) -> Value {
        Self::signed(self.body(self.inline_payload()))
    }

    /// The document as JSON bytes (pretty-printed, keys sorted; payload inline).
    pub fn to_json(&self) -> Vec<u8> {
        pretty(&self.to_value())
    }

    /// The document as JSON bytes and, when the payload holds more than `threshold` bytes
    /// ([`SIDECAR_THRESHOLD`] for the CLI), the sidecar blob to write next to it under the
    /// file name `sidecar_name` (the entries back to back; the document names the blob, its
    /// SHA-256 and each entry's offset and length). At or under the threshold: as
    /// [`Reference::to_json`], no blob.
    pub fn to_json_with_sidecar(
        &self,
        sidecar_name: &str,
        threshold: u64,
    ) -> (Vec<u8>, Option<Vec<u8>>) {
        let total: u64 = self.payload.iter().map(|e| e.data.len() as u64).sum();
        if total <= threshold || self.payload.is_empty() {
            return (self.to_json(), None);
        }
        let mut blob = Vec::with_capacity(total as usize);
        let mut chunks = Vec::with_capacity(self.payload.len());
        for e in &self.payload {
            chunks.push(SidecarChunk {
                key: e.key.clone(),
                offset: blob.len() as u64,
                len: e.data.len() as u64,
            });
            blob.extend_from_slice(&e.data);
        }
        let side = Sidecar {
            sidecar: sidecar_name.to_string(),
            sha256: crate::cache::identity::sha256_hex(&blob),
            chunks,
        };
        let doc = Self::signed(self.body(Some(sidecar_value(&side))));
        (pretty(&doc), Some(blob))
    }

    /// Reads the payload of a document whose payload is in a sidecar ([`Reference::sidecar`])
    /// from the blob's bytes; a document without a sidecar is left as it is.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a blob over [`MAX_SIDECAR_BYTES`], whose SHA-256 is not
    /// the one the document names, or that an entry's offset and length overrun.
    pub fn attach_sidecar(&mut self, blob: &[u8]) -> Result<()> {
        let Some(side) = &self.sidecar else {
            return Ok(());
        };
        if blob.len() as u64 > MAX_SIDECAR_BYTES {
            return Err(bad(format!(
                "sidecar {}: {} bytes, over {MAX_SIDECAR_BYTES}",
                side.sidecar,
                blob.len()
            )));
        }
        if crate::cache::identity::sha256_hex(blob) != side.sha256.to_ascii_lowercase() {
            return Err(bad(format!(
                "sidecar {}: its sha256 is not the document's (changed or another export's)",
                side.sidecar
            )));
        }
        let mut payload = Vec::with_capacity(side.chunks.len());
        for c in &side.chunks {
            let range = c
                .offset
                .checked_add(c.len)
                .filter(|&end| end <= blob.len() as u64)
                .map(|end| c.offset as usize..end as usize)
                .ok_or_else(|| {
                    bad(format!(
                        "sidecar {}: entry {} overruns it",
                        side.sidecar, c.key
                    ))
                })?;
            payload.push(PayloadEntry {
                key: c.key.clone(),
                data: bytes::Bytes::copy_from_slice(&blob[range]),
            });
        }
        self.payload = payload;
        self.sidecar = None;
        Ok(())
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
        let (payload, sidecar) = match body.payload {
            None => (Vec::new(), None),
            Some(p) => read_payload(p)?,
        };
        Ok(Reference {
            url: body.url,
            kind: body.kind,
            identity: body.identity,
            mutable: body.mutable,
            records: body.records,
            payload,
            sidecar,
        })
    }
}

/// Pretty JSON bytes of `v`, with a final newline.
fn pretty(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).expect("references serialise");
    out.push(b'\n');
    out
}

/// The payload field of a document whose payload is in the sidecar `side`.
fn sidecar_value(side: &Sidecar) -> Value {
    let mut v = serde_json::to_value(side).expect("sidecars serialise");
    v.as_object_mut()
        .expect("an object")
        .insert("encoding".into(), "sidecar".into());
    v
}

/// The payload field of a document: inline entries, or the sidecar it names.
fn read_payload(mut p: Value) -> Result<(Vec<PayloadEntry>, Option<Sidecar>)> {
    use base64::Engine;
    let Some(obj) = p.as_object_mut() else {
        return Err(bad("payload is not an object"));
    };
    let encoding = obj.remove("encoding");
    match encoding.as_ref().and_then(Value::as_str) {
        Some("base64") => {
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Inline {
                chunks: Vec<InlineChunk>,
            }
            #[derive(serde::Deserialize)]
            #[serde(deny_unknown_fields)]
            struct InlineChunk {
                key: String,
                data: String,
            }
            let inline: Inline =
                serde_json::from_value(p).map_err(|e| bad(format!("payload: {e}")))?;
            let mut out = Vec::with_capacity(inline.chunks.len());
            for c in inline.chunks {
                let data = base64::engine::general_purpose::STANDARD
                    .decode(c.data.as_bytes())
                    .map_err(|e| bad(format!("payload entry {}: {e}", c.key)))?;
                out.push(PayloadEntry {
                    key: c.key,
                    data: data.into(),
                });
            }
            Ok((out, None))
        }
        Some("sidecar") => {
            let side: Sidecar =
                serde_json::from_value(p).map_err(|e| bad(format!("payload: {e}")))?;
            let name = &side.sidecar;
            if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
                return Err(bad(format!(
                    "payload sidecar {name:?} is not a file name next to the document"
                )));
            }
            Ok((Vec::new(), Some(side)))
        }
        _ => Err(bad(format!(
            "payload encoding {} (base64 or sidecar)",
            encoding.unwrap_or(Value::Null)
        ))),
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
/// A reference's payload ([`Reference::payload`]) is put into the payload cache under the
/// reopen's key (not under NONE), so reads of those chunks make no request either.
///
/// Identity is checked when reads receive answers (a rewritten source fails them with
/// `SOURCE_CHANGED`). A Zarr reference reopens warm only at a URL of the same public part
/// (the store's remembered metadata names its base).
///
/// # Errors
/// [`Error::InvalidArgument`] for a kind this function does not open, a payload sidecar not
/// attached, a URL scheme other than http and https, or a store that opened as another kind than the reference's; otherwise as
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
    if let Some(side) = &reference.sidecar {
        return Err(bad(format!(
            "its payload is in the sidecar {}, not read yet (Reference::attach_sidecar)",
            side.sidecar
        )));
    }
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
    if target.retains_payload() {
        for e in &reference.payload {
            target
                .put_payload_at(&format!("{}\n{}", key.source_id(), e.key), e.data.clone())
                .await;
        }
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
