//! Read the arrays of a Zarr v2/v3 store from its metadata objects and a listing of sizes,
//! never reading a chunk (blobmap's `hierarchy` module).
//!
//! Array roots come from where the metadata objects are (`zarr.json` with `node_type: array`,
//! or `.zarray`), never from the shape of chunk keys. Sizes come from the listing; the only
//! objects fetched are `.zarray`, `.zattrs` and `zarr.json`, which are always hot, so reading a
//! store for partitioning cannot trigger a tape recall.
//!
//! The store is reached through [`MetadataStore`] ("list keys with sizes" and "get one object"),
//! so a remote object store can plug in; [`DirStore`] (native only) and [`MemoryStore`] are
//! provided.

use std::collections::{BTreeMap, HashMap};

use super::json::Json;
use super::model::{Array, KeyEncoding, METADATA_BASENAMES};
use super::{PartitionError, Warning};

/// Path segments skipped by default: staging and snapshot directories that a filesystem walk
/// shows but an object-store listing hides (`.sgwtmp`, `.versitygw`, `.snapshot`).
pub const DEFAULT_EXCLUDE: [&str; 3] = [".sgwtmp", ".versitygw", ".snapshot"];

/// Largest metadata object read, in bytes; a bigger one is skipped with a warning.
pub const MAX_METADATA_BYTES: usize = 16 << 20;

/// The two capabilities partitioning needs from a store.
pub trait MetadataStore {
    /// Call `visit(key, size)` for every object whose key starts with `prefix` (`""` for all).
    /// Keys are `/`-separated and relative to the store root; `size` is the object's length in
    /// bytes, or `None` where the listing cannot tell. An array none of whose objects has a size
    /// gets `stored_bytes = None`, so its total falls back to the uncompressed estimate
    /// (`nobjects × uncompressed_object_bytes`), which is correct but pessimistic; objects without
    /// a size add nothing to a sum that has some.
    fn list(
        &self,
        prefix: &str,
        visit: &mut dyn FnMut(&str, Option<u64>),
    ) -> Result<(), PartitionError>;

    /// The bytes of one object, `Ok(None)` when it does not exist.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, PartitionError>;
}

/// A store held in memory: key to bytes (sizes are the byte lengths).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    /// Objects by key.
    pub objects: BTreeMap<String, Vec<u8>>,
}

impl MetadataStore for MemoryStore {
    fn list(
        &self,
        prefix: &str,
        visit: &mut dyn FnMut(&str, Option<u64>),
    ) -> Result<(), PartitionError> {
        for (k, v) in self.objects.range(prefix.to_owned()..) {
            if !k.starts_with(prefix) {
                break;
            }
            visit(k, Some(v.len() as u64));
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, PartitionError> {
        Ok(self.objects.get(key).cloned())
    }
}

/// A store that is a local directory; keys are paths relative to it. Symbolic links are not
/// followed, so a walk always ends. Entries are listed in sorted order.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone)]
pub struct DirStore {
    root: std::path::PathBuf,
}

#[cfg(not(target_arch = "wasm32"))]
impl DirStore {
    /// A store rooted at `root`.
    pub fn new(root: impl Into<std::path::PathBuf>) -> DirStore {
        DirStore { root: root.into() }
    }

    fn walk(
        &self,
        dir: &std::path::Path,
        rel: &str,
        prefix: &str,
        visit: &mut dyn FnMut(&str, Option<u64>),
    ) -> Result<(), PartitionError> {
        let io = |e: std::io::Error| PartitionError::Store {
            key: if rel.is_empty() {
                ".".into()
            } else {
                rel.to_owned()
            },
            message: e.to_string(),
        };
        let mut entries: Vec<(String, std::fs::Metadata)> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let meta = entry.metadata().map_err(io)?; // does not follow symlinks
            entries.push((entry.file_name().to_string_lossy().into_owned(), meta));
        }
        crate::sort::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
        for (name, meta) in entries {
            let key = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if meta.is_dir() {
                // Descend only where the prefix can still match.
                if key.starts_with(prefix) || prefix.starts_with(&format!("{key}/")) {
                    self.walk(&dir.join(&name), &key, prefix, visit)?;
                }
            } else if meta.is_file() && key.starts_with(prefix) {
                visit(&key, Some(meta.len()));
            }
        }
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl MetadataStore for DirStore {
    fn list(
        &self,
        prefix: &str,
        visit: &mut dyn FnMut(&str, Option<u64>),
    ) -> Result<(), PartitionError> {
        self.walk(&self.root, "", prefix, visit)
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, PartitionError> {
        let path = key
            .split('/')
            .filter(|p| !p.is_empty())
            .fold(self.root.clone(), |p, s| p.join(s));
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(PartitionError::Store {
                key: key.to_owned(),
                message: e.to_string(),
            }),
        }
    }
}

/// Arrays found in a store, sorted by path, and warnings met on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreArrays {
    /// One per array whose metadata could be used, sorted by path (relative to the scope).
    pub arrays: Vec<Array>,
    /// Skipped arrays, encoding disagreements, unassigned or stale objects.
    pub warnings: Vec<Warning>,
}

#[derive(Default)]
struct Tally {
    stored_bytes: u64,
    nobjects: u64,
    sample_keys: Vec<String>,
}

/// Describe every array under `scope` (a key prefix, `""` for the store root) from two walks of
/// the listing: one for metadata keys, one to sum sizes per array, so memory grows with the
/// number of arrays, not objects. Keys under a segment in `exclude` are ignored.
///
/// Per array: v3 `shape`, `chunk_grid.configuration.chunk_shape` (the stored object, the shard
/// when a `sharding_indexed` codec gives an inner `chunk_shape`), `data_type`,
/// `chunk_key_encoding`; v2 `shape`, `chunks`, `dtype`, `dimension_separator`. Where the keys
/// present contradict the declared encoding, the keys win. A coordinate is a 1-D array whose
/// dimension names (`_ARRAY_DIMENSIONS` in the attributes, or v3 `dimension_names`) are exactly
/// its own name.
///
/// Errors: [`PartitionError::NotAZarrStore`] when no metadata object is under the scope;
/// [`PartitionError::Store`] when listing or reading fails. Unusable array metadata is skipped
/// with a [`Warning::UnreadableMetadata`].
pub fn read_arrays(
    store: &dyn MetadataStore,
    scope: &str,
    exclude: &[&str],
) -> Result<StoreArrays, PartitionError> {
    let scope = scope.trim_matches('/');
    let prefix = if scope.is_empty() {
        String::new()
    } else {
        format!("{scope}/")
    };
    let relative =
        |key: &str| -> String { key.strip_prefix(prefix.as_str()).unwrap_or(key).to_owned() };
    let is_excluded = |rel: &str| rel.split('/').any(|p| exclude.contains(&p));
    let mut warnings = Vec::new();

    let mut metadata_keys: Vec<String> = Vec::new();
    store.list(&prefix, &mut |key, _| {
        if !is_excluded(&relative(key)) && METADATA_BASENAMES.contains(&basename(key)) {
            metadata_keys.push(key.to_owned());
        }
    })?;
    if metadata_keys.is_empty() {
        return Err(PartitionError::NotAZarrStore {
            scope: if scope.is_empty() {
                ".".into()
            } else {
                scope.into()
            },
        });
    }

    // v2 keeps attributes in `.zattrs`; fold them in so coordinate detection has one path.
    let mut attributes: HashMap<String, Json> = HashMap::new();
    for key in metadata_keys.iter().filter(|k| basename(k) == ".zattrs") {
        if let Some(v) = load(store, key, &mut warnings)? {
            attributes.insert(relative(dirname(key)), v);
        }
    }
    let mut metas: BTreeMap<String, Json> = BTreeMap::new();
    for key in &metadata_keys {
        let base = basename(key);
        if base != "zarr.json" && base != ".zarray" {
            continue;
        }
        let Some(mut meta) = load(store, key, &mut warnings)? else {
            continue;
        };
        if !is_array(&meta) {
            continue;
        }
        let root = relative(dirname(key));
        if base == ".zarray" {
            if let (Some(attrs), Json::Object(entries)) = (attributes.get(&root), &mut meta) {
                entries.retain(|(k, _)| k != "attributes");
                entries.push(("attributes".into(), attrs.clone()));
            }
        }
        metas.insert(root, meta);
    }

    let mut tallies: HashMap<String, Tally> = metas
        .keys()
        .map(|k| (k.clone(), Tally::default()))
        .collect();
    let mut unassigned = 0u64;
    store.list(&prefix, &mut |key, size| {
        let rel = relative(key);
        if is_excluded(&rel) || METADATA_BASENAMES.contains(&basename(key)) {
            return;
        }
        match owner(&rel, &tallies) {
            None => unassigned += 1,
            Some(root) => {
                let t = tallies.get_mut(&root).expect("owner is a tally key");
                t.stored_bytes = t.stored_bytes.saturating_add(size.unwrap_or(0));
                t.nobjects += 1;
                if t.sample_keys.len() < 4 {
                    t.sample_keys.push(rel);
                }
            }
        }
    })?;
    if unassigned > 0 {
        warnings.push(Warning::UnassignedObjects { count: unassigned });
    }

    let mut arrays = Vec::new();
    for (root, meta) in &metas {
        let tally = &tallies[root];
        let a = match to_array(root, meta, tally) {
            Ok((a, declared)) => {
                if a.key_encoding != declared {
                    warnings.push(Warning::EncodingMismatch {
                        path: display(root),
                        declared,
                        observed: a.key_encoding,
                    });
                }
                a
            }
            Err(message) => {
                warnings.push(Warning::UnreadableMetadata {
                    path: display(root),
                    message,
                });
                continue;
            }
        };
        if let Some(seen) = a.nobjects_seen {
            if seen > a.nobjects() {
                warnings.push(Warning::StaleObjects {
                    path: display(root),
                    seen,
                    grid: a.nobjects(),
                });
            }
        }
        arrays.push(a);
    }
    Ok(StoreArrays { arrays, warnings })
}

fn display(root: &str) -> String {
    if root.is_empty() {
        ".".into()
    } else {
        root.into()
    }
}

fn basename(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

fn dirname(key: &str) -> &str {
    key.rfind('/').map(|i| &key[..i]).unwrap_or("")
}

/// Fetch and parse one metadata object; `None` (with a warning) when it is missing, too large,
/// not JSON, or not an object.
fn load(
    store: &dyn MetadataStore,
    key: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Option<Json>, PartitionError> {
    let Some(raw) = store.get(key)? else {
        return Ok(None);
    };
    let skip = |message: String| Warning::UnreadableMetadata {
        path: key.to_owned(),
        message,
    };
    if raw.len() > MAX_METADATA_BYTES {
        warnings.push(skip(format!(
            "{} bytes, above the {MAX_METADATA_BYTES} byte limit",
            raw.len()
        )));
        return Ok(None);
    }
    let parsed = std::str::from_utf8(&raw)
        .map_err(|e| e.to_string())
        .and_then(|t| Json::parse(t).map_err(|e| e.to_string()));
    match parsed {
        Ok(v @ Json::Object(_)) => Ok(Some(v)),
        Ok(_) => Ok(None),
        Err(message) => {
            warnings.push(skip(message));
            Ok(None)
        }
    }
}

fn is_array(meta: &Json) -> bool {
    if meta.get("node_type").and_then(Json::as_str) == Some("array") {
        return true;
    }
    meta.get("shape").is_some()
        && (meta.get("chunks").is_some() || meta.get("chunk_grid").is_some())
}

/// The deepest array root that is an ancestor of `rel`.
fn owner(rel: &str, roots: &HashMap<String, Tally>) -> Option<String> {
    let mut end = rel.len();
    loop {
        end = rel[..end].rfind('/').unwrap_or(0);
        let candidate = &rel[..end];
        if roots.contains_key(candidate) {
            return Some(candidate.to_owned());
        }
        if end == 0 {
            return None;
        }
    }
}

fn uints(v: Option<&Json>, field: &str) -> Result<Vec<u64>, String> {
    match v {
        Some(Json::Array(items)) => items
            .iter()
            .map(|x| {
                x.as_u64()
                    .ok_or_else(|| format!("{field}: not a non-negative integer"))
            })
            .collect(),
        _ => Err(format!("{field}: missing or not a list")),
    }
}

/// Build an array; returns it with the declared encoding (before the keys had their say).
fn to_array(root: &str, meta: &Json, tally: &Tally) -> Result<(Array, KeyEncoding), String> {
    let v3 = meta.get("zarr_format").and_then(Json::as_u64) == Some(3)
        || meta.get("chunk_grid").is_some();
    let (shape, chunks, shards, itemsize, declared) = if v3 {
        let shape = uints(meta.get("shape"), "shape")?;
        let objects = uints(
            meta.get("chunk_grid")
                .and_then(|g| g.get("configuration"))
                .and_then(|c| c.get("chunk_shape")),
            "chunk_grid.configuration.chunk_shape",
        )?;
        let inner = inner_chunk(meta)?;
        let itemsize = itemsize(meta.get("data_type"))?;
        let encoding = v3_encoding(meta);
        let shards = match &inner {
            Some(i) if *i != objects => Some(objects.clone()),
            _ => None,
        };
        (shape, inner.unwrap_or(objects), shards, itemsize, encoding)
    } else {
        let shape = uints(meta.get("shape"), "shape")?;
        let chunks = uints(meta.get("chunks"), "chunks")?;
        let itemsize = itemsize(meta.get("dtype"))?;
        let sep = meta
            .get("dimension_separator")
            .and_then(Json::as_str)
            .unwrap_or(".");
        let encoding = if sep == "/" {
            KeyEncoding::V2Slash
        } else {
            KeyEncoding::V2Flat
        };
        (shape, chunks, None, itemsize, encoding)
    };
    let observed = observed_encoding(root, &tally.sample_keys, shape.len());
    let a = Array {
        path: root.to_owned(),
        is_coordinate: is_coordinate(root, meta, &shape),
        shape,
        chunks,
        itemsize,
        shards,
        stored_bytes: (tally.stored_bytes > 0).then_some(tally.stored_bytes),
        nobjects_seen: (tally.nobjects > 0).then_some(tally.nobjects),
        key_encoding: observed.unwrap_or(declared),
    };
    a.validate("metadata").map_err(|e| e.to_string())?;
    Ok((a, declared))
}

fn inner_chunk(meta: &Json) -> Result<Option<Vec<u64>>, String> {
    let Some(Json::Array(codecs)) = meta.get("codecs") else {
        return Ok(None);
    };
    for codec in codecs {
        if codec.get("name").and_then(Json::as_str) == Some("sharding_indexed") {
            if let Some(shape) = codec
                .get("configuration")
                .and_then(|c| c.get("chunk_shape"))
            {
                return uints(Some(shape), "sharding_indexed.chunk_shape").map(Some);
            }
        }
    }
    Ok(None)
}

fn v3_encoding(meta: &Json) -> KeyEncoding {
    let enc = meta.get("chunk_key_encoding");
    let name = enc
        .and_then(|e| e.get("name"))
        .and_then(Json::as_str)
        .unwrap_or("default");
    let sep = enc
        .and_then(|e| e.get("configuration"))
        .and_then(|c| c.get("separator"))
        .and_then(Json::as_str)
        .unwrap_or(if name == "default" { "/" } else { "." });
    match (name, sep) {
        ("v2", "/") => KeyEncoding::V2Slash,
        ("v2", _) => KeyEncoding::V2Flat,
        _ => KeyEncoding::V3Slash,
    }
}

/// Infer the encoding from keys present, only on decisive evidence: for a 1-D array the two v2
/// encodings produce the same keys, so a bare digit there proves nothing.
fn observed_encoding(root: &str, samples: &[String], ndim: usize) -> Option<KeyEncoding> {
    for key in samples {
        let rest = if root.is_empty() {
            key.as_str()
        } else {
            key.get(root.len()..).unwrap_or("").trim_matches('/')
        };
        let head = rest.split('/').next().unwrap_or("");
        if head == "c" {
            return Some(KeyEncoding::V3Slash);
        }
        let digits: String = head.chars().filter(|&c| c != '.').collect();
        let all_digits = !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit());
        if head.contains('.') && all_digits {
            return Some(KeyEncoding::V2Flat);
        }
        if ndim > 1 && all_digits {
            return Some(KeyEncoding::V2Slash);
        }
    }
    None
}

fn is_coordinate(root: &str, meta: &Json, shape: &[u64]) -> bool {
    let attrs = match meta.get("attributes") {
        Some(Json::Object(e)) if !e.is_empty() => meta.get("attributes"),
        _ => meta.get("_ARRAY_DIMENSIONS"),
    };
    let dims = match attrs {
        Some(a @ Json::Object(_)) => a.get("_ARRAY_DIMENSIONS"),
        other => other,
    };
    let dims = match dims {
        Some(Json::Array(d)) if !d.is_empty() => Some(d),
        // v3 stores written by xarray name their dimensions here instead.
        _ => match meta.get("dimension_names") {
            Some(Json::Array(d)) if !d.is_empty() => Some(d),
            _ => None,
        },
    };
    let Some(dims) = dims else { return false };
    shape.len() == 1 && dims.len() == 1 && dims[0].as_str() == Some(basename(root))
}

/// Bytes per element: a v3 name (`float32`) or a numpy string (`<f4`, `|b1`).
fn itemsize(dtype: Option<&Json>) -> Result<u64, String> {
    let name = dtype.and_then(Json::as_str);
    let size = name.and_then(|n| match n {
        "bool" | "int8" | "uint8" => Some(1),
        "int16" | "uint16" | "float16" => Some(2),
        "int32" | "uint32" | "float32" => Some(4),
        "int64" | "uint64" | "float64" | "complex64" => Some(8),
        "complex128" => Some(16),
        _ => {
            let tail = n.trim_start_matches(['<', '>', '|', '=']);
            let digits = tail.get(1..)?;
            if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                digits.parse().ok()
            } else {
                None
            }
        }
    });
    size.ok_or_else(|| {
        format!(
            "cannot size dtype {}",
            dtype
                .map(Json::to_pretty_string)
                .unwrap_or_else(|| "(missing)".into())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(objects: &[(&str, &str)]) -> MemoryStore {
        MemoryStore {
            objects: objects
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
                .collect(),
        }
    }

    #[test]
    fn reads_v2_with_attributes_and_sizes() {
        let s = store(&[
            (".zgroup", r#"{"zarr_format": 2}"#),
            (
                "time/.zarray",
                r#"{"shape": [4], "chunks": [4], "dtype": "<i8", "zarr_format": 2}"#,
            ),
            ("time/.zattrs", r#"{"_ARRAY_DIMENSIONS": ["time"]}"#),
            ("time/0", "12345678"),
            (
                "tas/.zarray",
                r#"{"shape": [4, 2], "chunks": [2, 2], "dtype": "<f4", "dimension_separator": "/"}"#,
            ),
            ("tas/.zattrs", r#"{"_ARRAY_DIMENSIONS": ["time", "x"]}"#),
            ("tas/0/0", "abc"),
            ("tas/1/0", "de"),
            ("stray", "x"),
        ]);
        let got = read_arrays(&s, "", &DEFAULT_EXCLUDE).unwrap();
        let mut tas = Array::new("tas", &[4, 2], &[2, 2], 4);
        tas.stored_bytes = Some(5);
        tas.nobjects_seen = Some(2);
        tas.key_encoding = KeyEncoding::V2Slash;
        let mut time = Array::new("time", &[4], &[4], 8);
        time.stored_bytes = Some(8);
        time.nobjects_seen = Some(1);
        time.is_coordinate = true;
        time.key_encoding = KeyEncoding::V2Flat;
        assert_eq!(got.arrays, vec![tas, time]);
        assert_eq!(got.warnings, vec![Warning::UnassignedObjects { count: 1 }]);
    }

    #[test]
    fn keys_override_declared_encoding_and_bad_metadata_is_skipped() {
        let s = store(&[
            (
                "a/.zarray",
                r#"{"shape": [4, 2], "chunks": [2, 2], "dtype": "<f4"}"#,
            ),
            ("a/0/0", "abc"),
            (
                "b/.zarray",
                r#"{"shape": [4], "chunks": [0], "dtype": "<f4"}"#,
            ),
            ("c/.zarray", "not json"),
        ]);
        let got = read_arrays(&s, "", &[]).unwrap();
        assert_eq!(got.arrays.len(), 1);
        assert_eq!(got.arrays[0].key_encoding, KeyEncoding::V2Slash);
        assert_eq!(got.warnings.len(), 3);
        assert!(matches!(
            &got.warnings[0],
            Warning::UnreadableMetadata { path, .. } if path == "c/.zarray"
        ));
        assert_eq!(
            got.warnings[1],
            Warning::EncodingMismatch {
                path: "a".into(),
                declared: KeyEncoding::V2Flat,
                observed: KeyEncoding::V2Slash
            }
        );
        assert!(matches!(
            &got.warnings[2],
            Warning::UnreadableMetadata { path, message } if path == "b" && message.contains("chunks")
        ));
    }

    #[test]
    fn v3_with_v2_keys_and_excluded_staging() {
        let s = store(&[
            ("s/zarr.json", r#"{"zarr_format": 3, "node_type": "group"}"#),
            (
                "s/a/zarr.json",
                r#"{"zarr_format": 3, "node_type": "array", "shape": [8, 2],
                    "data_type": "int16",
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
                    "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
                    "attributes": {"_ARRAY_DIMENSIONS": ["t", "x"]}}"#,
            ),
            ("s/a/0.0", "1234"),
            ("s/a/1.0", "12"),
            ("s/a/.sgwtmp/part", "123456789"),
            ("s/.sgwtmp/b/zarr.json", r#"{"node_type": "array"}"#),
            (
                "other/zarr.json",
                r#"{"zarr_format": 3, "node_type": "group"}"#,
            ),
        ]);
        let got = read_arrays(&s, "/s/", &DEFAULT_EXCLUDE).unwrap();
        let mut a = Array::new("a", &[8, 2], &[2, 2], 2);
        a.stored_bytes = Some(6);
        a.nobjects_seen = Some(2);
        a.key_encoding = KeyEncoding::V2Flat;
        assert_eq!(got.arrays, vec![a]);
        assert_eq!(got.warnings, vec![]);
    }

    #[test]
    fn empty_scope_is_not_a_store() {
        let s = store(&[("x/0", "1")]);
        assert_eq!(
            read_arrays(&s, "", &[]),
            Err(PartitionError::NotAZarrStore { scope: ".".into() })
        );
    }

    #[test]
    fn observed_encoding_needs_decisive_keys() {
        assert_eq!(
            observed_encoding("tas", &["tas/c/0/0".into()], 2),
            Some(KeyEncoding::V3Slash)
        );
        assert_eq!(
            observed_encoding("tas", &["tas/0.0".into()], 2),
            Some(KeyEncoding::V2Flat)
        );
        assert_eq!(
            observed_encoding("tas", &["tas/0/0".into()], 2),
            Some(KeyEncoding::V2Slash)
        );
        assert_eq!(observed_encoding("cell", &["cell/0".into()], 1), None);
    }
}
