//! JavaScript bindings of the blob partitioner: `partition`, `diff`, `resolve` on plain objects.
//!
//! Inputs and outputs use the manifest's own JSON shapes (snake_case fields, schema version 3),
//! so a manifest fetched as JSON can be passed straight in. Errors are thrown as `Error` with a
//! `code` (`MANIFEST_SCHEMA`, `PARTITION_INVALID`, `JSON`, ...) and, for validation errors, the
//! offending `field` path.

use wasm_bindgen::prelude::*;

use crate::partition::{self, Array, Blob, Json, Manifest, PartitionError, Policy};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
export interface PartitionArray {
  path: string; shape: number[]; chunks: number[]; itemsize: number;
  shards?: number[] | null; stored_bytes?: number | null; nobjects_seen?: number | null;
  is_coordinate?: boolean; key_encoding?: "v3_slash" | "v2_slash" | "v2_flat";
}
export interface PartitionOptions {
  scope?: string;
  policy?: Record<string, number>;
  previous?: object | null;
  /** ISO 8601 UTC; defaults to now, to the second. */
  generated_at?: string;
}
export interface PartitionResult { manifest: object; warnings: string[] }
export interface ManifestDiff {
  added: object[]; removed: object[]; modified: [object, object][];
  is_additive: boolean; is_empty: boolean; describe: string;
}
export interface KeyResolution {
  kind: "blob" | "hot" | "pinned" | "unmanaged";
  blob_id: string | null; definition_id: string | null; bucket_index: number | null;
}
/** Compute the blob definitions for one scope. Throws Error with `code` and `field`. */
export function partition(arrays: PartitionArray[], options?: PartitionOptions): PartitionResult;
/** Compare two manifests by blob id; `old` null for a first run. */
export function diff(old: object | null, next: object): ManifestDiff;
/** Resolve a scope-relative object key to its blob instance. */
export function resolveKey(manifest: object, key: string): KeyResolution;
"#;

/// The `ChunkwiseError` of a partition error, with the input `field` at fault when it has one.
fn throw(e: PartitionError) -> JsValue {
    let field = match &e {
        PartitionError::Schema { field, .. } | PartitionError::Invalid { field, .. } => {
            Some(field.as_str())
        }
        _ => None,
    };
    super::chunkwise_error(&e.to_string(), e.code(), field)
}

fn to_json(v: JsValue, what: &str) -> Result<Json, JsValue> {
    let invalid = |message: String| {
        throw(PartitionError::Invalid {
            field: what.to_owned(),
            message,
        })
    };
    let text = super::stringify(&v).map_err(invalid)?;
    Json::parse(&text).map_err(|e| invalid(e.to_string()))
}

fn to_js(v: &Json) -> Result<JsValue, JsValue> {
    let invalid = |message: String| {
        throw(PartitionError::Invalid {
            field: "result".into(),
            message,
        })
    };
    let text = serde_json::to_string(v).map_err(|e| invalid(e.to_string()))?;
    super::parse_json(&text).map_err(invalid)
}

fn manifest_from(v: JsValue, what: &str) -> Result<Option<Manifest>, JsValue> {
    if v.is_null() || v.is_undefined() {
        return Ok(None);
    }
    Manifest::from_json(&to_json(v, what)?)
        .map(Some)
        .map_err(throw)
}

fn now() -> String {
    // `toISOString` gives `2026-12-01T00:00:00.000Z`; blobmap writes seconds and `+00:00`.
    let iso: String = js_sys::Date::new_0().to_iso_string().into();
    format!("{}+00:00", iso.get(..19).unwrap_or(&iso))
}

/// Partition `arrays` (a list of array objects) with `options` `{scope, policy, previous,
/// generated_at}`; returns `{manifest, warnings}`.
#[wasm_bindgen(js_name = partition, skip_typescript)]
pub fn partition_js(arrays: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let arrays: Vec<Array> = match to_json(arrays, "arrays")? {
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| Array::from_json(v, &format!("arrays[{i}]")))
            .collect::<Result<_, _>>()
            .map_err(throw)?,
        other => {
            return Err(throw(PartitionError::Invalid {
                field: "arrays".into(),
                message: format!("expected array, got {}", other.type_name()),
            }))
        }
    };
    let options = if options.is_null() || options.is_undefined() {
        Json::Object(Vec::new())
    } else {
        to_json(options, "options")?
    };
    let scope = match options.get("scope") {
        None | Some(Json::Null) => "",
        Some(Json::String(s)) => s.as_str(),
        Some(other) => {
            return Err(throw(PartitionError::Invalid {
                field: "options.scope".into(),
                message: format!("expected string, got {}", other.type_name()),
            }))
        }
    };
    let policy = match options.get("policy") {
        None | Some(Json::Null) => None,
        Some(p) => Some(Policy::from_json(p, "options.policy").map_err(throw)?),
    };
    let previous = match options.get("previous") {
        None | Some(Json::Null) => None,
        Some(p) => Some(Manifest::from_json(p).map_err(throw)?),
    };
    let generated_at = match options.get("generated_at").and_then(Json::as_str) {
        Some(t) => t.to_owned(),
        None => now(),
    };
    let out = partition::partition(
        scope,
        &arrays,
        policy.as_ref(),
        previous.as_ref(),
        &generated_at,
    )
    .map_err(throw)?;
    let result = Json::Object(vec![
        ("manifest".into(), out.manifest.to_json()),
        (
            "warnings".into(),
            Json::Array(
                out.warnings
                    .iter()
                    .map(|w| Json::str(w.to_string()))
                    .collect(),
            ),
        ),
    ]);
    to_js(&result)
}

/// Compare two manifest objects by blob id (`old` may be null for a first run); returns
/// `{added, removed, modified, is_additive, is_empty, describe}`.
#[wasm_bindgen(js_name = diff, skip_typescript)]
pub fn diff_js(old: JsValue, new: JsValue) -> Result<JsValue, JsValue> {
    let old = manifest_from(old, "old")?;
    let new = manifest_from(new, "new")?.ok_or_else(|| {
        throw(PartitionError::Invalid {
            field: "new".into(),
            message: "a manifest is required".into(),
        })
    })?;
    let d = partition::diff(old.as_ref(), &new);
    let blobs = |v: &[Blob]| Json::Array(v.iter().map(Blob::to_json).collect());
    let result = Json::Object(vec![
        ("added".into(), blobs(&d.added)),
        ("removed".into(), blobs(&d.removed)),
        (
            "modified".into(),
            Json::Array(
                d.modified
                    .iter()
                    .map(|(o, n)| Json::Array(vec![o.to_json(), n.to_json()]))
                    .collect(),
            ),
        ),
        ("is_additive".into(), Json::Bool(d.is_additive())),
        ("is_empty".into(), Json::Bool(d.is_empty())),
        ("describe".into(), Json::str(d.describe())),
    ]);
    to_js(&result)
}

/// Resolve a scope-relative object key against a manifest object; returns
/// `{kind, blob_id, definition_id, bucket_index}`.
#[wasm_bindgen(js_name = resolveKey, skip_typescript)]
pub fn resolve_js(manifest: JsValue, key: &str) -> Result<JsValue, JsValue> {
    let m = manifest_from(manifest, "manifest")?.ok_or_else(|| {
        throw(PartitionError::Invalid {
            field: "manifest".into(),
            message: "a manifest is required".into(),
        })
    })?;
    resolution_js(partition::resolve(&m, key))
}

fn resolution_js(r: partition::Resolution) -> Result<JsValue, JsValue> {
    let opt = |v: Option<String>| v.map(Json::String).unwrap_or(Json::Null);
    let result = Json::Object(vec![
        ("kind".into(), Json::str(r.kind.as_str())),
        ("blob_id".into(), opt(r.blob_id)),
        ("definition_id".into(), opt(r.definition_id)),
        (
            "bucket_index".into(),
            r.bucket_index.map(Json::uint).unwrap_or(Json::Null),
        ),
    ]);
    to_js(&result)
}

/// A resolver over one or more manifests, built once for many keys (`resolveKey` rebuilds one
/// per call). Keys are absolute: the manifest's scope included.
#[wasm_bindgen]
pub struct KeyResolver {
    inner: partition::Resolver,
}

#[wasm_bindgen]
impl KeyResolver {
    /// An empty resolver (it knows only the metadata basenames, which are always hot).
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> KeyResolver {
        KeyResolver {
            inner: partition::Resolver::new(),
        }
    }

    /// Adds a manifest object; its scope is prepended to its prefixes, and a later declaration
    /// of the same absolute prefix replaces an earlier one. Throws like `diff` on a bad manifest.
    pub fn add(&mut self, manifest: JsValue) -> Result<(), JsValue> {
        let m = manifest_from(manifest, "manifest")?.ok_or_else(|| {
            throw(PartitionError::Invalid {
                field: "manifest".into(),
                message: "a manifest is required".into(),
            })
        })?;
        self.inner.add(&m);
        Ok(())
    }

    /// Number of prefix entries (hot patterns and blob prefixes), one per cut.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// Resolves an absolute object key (scope included).
    #[wasm_bindgen(unchecked_return_type = "KeyResolution")]
    pub fn resolve(&self, key: &str) -> Result<JsValue, JsValue> {
        resolution_js(self.inner.lookup(key))
    }

    /// Whether an absolute key belongs to a blob (what `resolve(key).kind === "blob"` says,
    /// without building the result object).
    #[wasm_bindgen(js_name = isArchivable)]
    pub fn is_archivable(&self, key: &str) -> bool {
        self.inner.lookup(key).archivable()
    }
}
