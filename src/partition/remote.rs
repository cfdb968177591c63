//! The arrays of a remote Zarr store, read from its consolidated metadata.
//!
//! Plain HTTP cannot list a store, so a remote store is described by what it publishes in one
//! object: a v3 root `zarr.json` with inline `consolidated_metadata`, or a v2 `.zmetadata`.
//! Those metadata documents fill a [`MemoryStore`] that [`super::zarr::read_arrays`] reads as
//! it reads a directory. No chunk object is listed or read, so every array's stored bytes are
//! unknown and the model falls back to its stated estimate (the uncompressed size, see
//! [`super::Array`]); `nobjects_seen` stays unknown too.

use super::zarr::MemoryStore;
use super::PartitionError;
use crate::io::{ByteRange, IoError, RangeSource};
use serde_json::Value;
use std::sync::Arc;

/// Largest metadata object accepted (bytes): consolidated metadata of very large stores can be
/// tens of MB, beyond that it is more likely an error than metadata.
pub const MAX_METADATA_BYTES: u64 = 256 * 1024 * 1024;

async fn get(
    open: &dyn Fn(&str) -> Arc<dyn RangeSource>,
    base: &str,
    key: &str,
) -> Result<Option<Vec<u8>>, PartitionError> {
    let url = format!("{}/{key}", base.trim_end_matches('/'));
    let src = open(&url);
    match src.read(ByteRange::Offset(0)).await {
        Ok(f) if f.info.len > MAX_METADATA_BYTES => Err(PartitionError::Store {
            key: key.into(),
            message: format!(
                "{} bytes is more than a metadata object may hold",
                f.info.len
            ),
        }),
        Ok(f) => Ok(Some(f.bytes.to_vec())),
        Err(IoError::NotFound { .. }) => Ok(None),
        Err(e) => Err(PartitionError::Store {
            key: key.into(),
            message: e.to_string(),
        }),
    }
}

fn json(key: &str, bytes: &[u8]) -> Result<Value, PartitionError> {
    serde_json::from_slice(bytes).map_err(|e| PartitionError::Store {
        key: key.into(),
        message: format!("not JSON: {e}"),
    })
}

/// Fetches the consolidated metadata of the store at `base` (a URL without trailing key) and
/// returns its metadata objects as a [`MemoryStore`]. `open` makes a [`RangeSource`] for a
/// URL (an `HttpSource` natively, a `FetchSource` in wasm), so traffic counting and retries
/// are the caller's.
///
/// Tries `zarr.json` first (v3; its `consolidated_metadata.metadata` maps node paths to their
/// `zarr.json` documents), then `.zmetadata` (v2; its `metadata` maps keys such as
/// `tas/.zarray` to documents). A v3 root that is itself an array is a one-array store.
///
/// # Errors
/// [`PartitionError::NotAZarrStore`] when neither is found or a v3 group has no consolidated
/// metadata (its children cannot be discovered without listing);
/// [`PartitionError::Store`] for transport errors and malformed documents.
pub async fn consolidated_metadata(
    open: &dyn Fn(&str) -> Arc<dyn RangeSource>,
    base: &str,
) -> Result<MemoryStore, PartitionError> {
    let mut store = MemoryStore::default();
    if let Some(raw) = get(open, base, "zarr.json").await? {
        let root = json("zarr.json", &raw)?;
        let nodes = root
            .pointer("/consolidated_metadata/metadata")
            .and_then(Value::as_object);
        let is_array = root.get("node_type").and_then(Value::as_str) == Some("array");
        if nodes.is_none() && !is_array {
            return Err(PartitionError::NotAZarrStore {
                scope: format!(
                    "{base} (a v3 group without consolidated_metadata: its children cannot be \
                     found over HTTP; run zarr.consolidate_metadata on the store)"
                ),
            });
        }
        for (path, doc) in nodes.into_iter().flatten() {
            let key = format!("{}/zarr.json", path.trim_matches('/'));
            store
                .objects
                .insert(key, serde_json::to_vec(doc).expect("JSON value serialises"));
        }
        store.objects.insert("zarr.json".into(), raw);
        return Ok(store);
    }
    if let Some(raw) = get(open, base, ".zmetadata").await? {
        let doc = json(".zmetadata", &raw)?;
        let entries = doc
            .get("metadata")
            .and_then(Value::as_object)
            .ok_or_else(|| PartitionError::Store {
                key: ".zmetadata".into(),
                message: "no \"metadata\" object".into(),
            })?;
        for (key, value) in entries {
            store.objects.insert(
                key.trim_start_matches('/').to_string(),
                serde_json::to_vec(value).expect("JSON value serialises"),
            );
        }
        return Ok(store);
    }
    Err(PartitionError::NotAZarrStore {
        scope: format!("{base} (neither zarr.json nor .zmetadata found)"),
    })
}
