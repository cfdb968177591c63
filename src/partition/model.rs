//! The partitioner's input ([`Array`]) and output ([`Manifest`] of [`Blob`]s, [`Pin`]s and a
//! [`Policy`]), with manifest JSON (schema version 3) in and out.
//!
//! Rules follow blobmap's `model` and `schema` modules (spec: `blobmap-partition.md`; defaults,
//! schema and validation rules: facts.md, "blobmap partition").

use std::fmt;
use std::ops::Deref;

use super::json::Json;
use super::PartitionError;

/// Manifest format version, checked strictly on read.
pub const SCHEMA_VERSION: u64 = 3;

/// 1024³ bytes.
pub const GIB: u64 = 1 << 30;

/// Object basenames that are never archivable: Zarr v2/v3 metadata objects.
pub const METADATA_BASENAMES: [&str; 5] =
    ["zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"];

/// How the chunk index is laid out in an object key. Per array: a v2 `.zarray` carries its own
/// `dimension_separator`, and a v3 array may opt in to v2-style keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyEncoding {
    /// `tas/c/137/0/0` (Zarr v3 default).
    #[default]
    V3Slash,
    /// `tas/137/0/0` (v2 with `dimension_separator: "/"`).
    V2Slash,
    /// `tas/137.0.0` (v2 default).
    V2Flat,
}

impl KeyEncoding {
    /// The manifest name: `v3_slash`, `v2_slash` or `v2_flat`.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyEncoding::V3Slash => "v3_slash",
            KeyEncoding::V2Slash => "v2_slash",
            KeyEncoding::V2Flat => "v2_flat",
        }
    }

    /// Parse a manifest name; `None` for anything else.
    pub fn parse(name: &str) -> Option<KeyEncoding> {
        match name {
            "v3_slash" => Some(KeyEncoding::V3Slash),
            "v2_slash" => Some(KeyEncoding::V2Slash),
            "v2_flat" => Some(KeyEncoding::V2Flat),
            _ => None,
        }
    }
}

impl fmt::Display for KeyEncoding {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One Zarr array: structure from its metadata, size from a listing.
///
/// Shapes and chunks are in elements, sizes in bytes. Derived sizes saturate at `u64::MAX`
/// instead of overflowing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Array {
    /// Path relative to the scope (`tas`, `deep/nest/tas`); empty for an array at the scope root.
    pub path: String,
    /// Full shape, elements per dimension.
    pub shape: Vec<u64>,
    /// Inner chunk shape. Not the stored object when the array is sharded.
    pub chunks: Vec<u64>,
    /// Bytes per element.
    pub itemsize: u64,
    /// Shard shape when sharded; then one shard is one stored object.
    pub shards: Option<Vec<u64>>,
    /// Compressed bytes summed from a listing; `None` falls back to the uncompressed estimate.
    pub stored_bytes: Option<u64>,
    /// Objects actually present; `None` (or 0) means "assume the full grid".
    pub nobjects_seen: Option<u64>,
    /// A dimension coordinate: always hot, whatever its size.
    pub is_coordinate: bool,
    /// Key layout of this array's chunk objects.
    pub key_encoding: KeyEncoding,
}

impl Array {
    /// A plain array with the given shape, chunks and item size; other fields at their defaults.
    pub fn new(path: &str, shape: &[u64], chunks: &[u64], itemsize: u64) -> Array {
        Array {
            path: path.to_owned(),
            shape: shape.to_vec(),
            chunks: chunks.to_vec(),
            itemsize,
            shards: None,
            stored_bytes: None,
            nobjects_seen: None,
            is_coordinate: false,
            key_encoding: KeyEncoding::V3Slash,
        }
    }

    /// Shape of one stored object in elements: the shard when sharded, else the chunk.
    pub fn object_shape(&self) -> &[u64] {
        self.shards.as_deref().unwrap_or(&self.chunks)
    }

    /// Objects along each dimension (ceiling of shape / object shape).
    pub fn object_grid(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(self.object_shape())
            .map(|(&s, &c)| s.div_ceil(c.max(1)))
            .collect()
    }

    /// Objects the array has when fully written (the full grid, not `nobjects_seen`).
    pub fn nobjects(&self) -> u64 {
        self.object_grid()
            .iter()
            .fold(1u64, |acc, &n| acc.saturating_mul(n))
    }

    /// Bytes of one object without compression: a hard ceiling whatever the codec does.
    pub fn uncompressed_object_bytes(&self) -> u64 {
        self.object_shape()
            .iter()
            .fold(self.itemsize, |acc, &n| acc.saturating_mul(n))
    }

    /// `stored_bytes` when known, else `nobjects × uncompressed_object_bytes`.
    pub fn total_bytes(&self) -> u64 {
        self.stored_bytes.unwrap_or_else(|| {
            self.nobjects()
                .saturating_mul(self.uncompressed_object_bytes())
        })
    }

    /// Mean bytes per stored object, divided by the objects actually seen; at least 1.
    pub fn avg_object_bytes(&self) -> u64 {
        let seen = match self.nobjects_seen {
            Some(n) if n > 0 => n,
            _ => self.nobjects(),
        };
        (self.total_bytes() / seen.max(1)).max(1)
    }

    /// Where the array's chunk keys begin, relative to the scope: `tas/c` for `v3_slash`,
    /// `tas` for the v2 encodings (`c` alone for a v3 array at the scope root).
    pub fn chunk_prefix(&self) -> String {
        match self.key_encoding {
            KeyEncoding::V3Slash if self.path.is_empty() => "c".to_owned(),
            KeyEncoding::V3Slash => format!("{}/c", self.path),
            KeyEncoding::V2Slash | KeyEncoding::V2Flat => self.path.clone(),
        }
    }

    /// Check the shape fields agree.
    ///
    /// Errors: [`PartitionError::Invalid`] naming `<field>.chunks`, `.shards` or `.itemsize` when
    /// lengths differ from `shape`, a chunk or shard extent is 0, or the item size is 0. `field`
    /// is the caller's name for this array (e.g. `arrays[3]`).
    pub fn validate(&self, field: &str) -> Result<(), PartitionError> {
        let invalid = |name: &str, message: String| PartitionError::Invalid {
            field: format!("{field}.{name}"),
            message,
        };
        if self.chunks.len() != self.shape.len() {
            return Err(invalid(
                "chunks",
                format!(
                    "has {} dimensions but shape has {}",
                    self.chunks.len(),
                    self.shape.len()
                ),
            ));
        }
        if self.chunks.contains(&0) {
            return Err(invalid("chunks", "extents must be >= 1".into()));
        }
        if let Some(shards) = &self.shards {
            if shards.len() != self.shape.len() {
                return Err(invalid(
                    "shards",
                    format!(
                        "has {} dimensions but shape has {}",
                        shards.len(),
                        self.shape.len()
                    ),
                ));
            }
            if shards.contains(&0) {
                return Err(invalid("shards", "extents must be >= 1".into()));
            }
        }
        if self.itemsize == 0 {
            return Err(invalid("itemsize", "must be >= 1".into()));
        }
        Ok(())
    }

    /// Read one element of an arrays file: an object with the field names above (`path`,
    /// `shape`, `chunks`, `itemsize` required; `shards`, `stored_bytes`, `nobjects_seen` may be
    /// absent or null; `is_coordinate` defaults to false, `key_encoding` to `v3_slash`).
    ///
    /// Errors: [`PartitionError::Invalid`] naming the field for a wrong type, a negative number,
    /// an unknown field or key encoding, or anything [`Array::validate`] rejects.
    pub fn from_json(v: &Json, field: &str) -> Result<Array, PartitionError> {
        let entries = match v {
            Json::Object(e) => e,
            other => return Err(expected(field, "object", other)),
        };
        let mut a = Array::new("", &[], &[], 0);
        let (mut has_path, mut has_shape, mut has_chunks, mut has_itemsize) =
            (false, false, false, false);
        for (k, val) in entries {
            let f = format!("{field}.{k}");
            match k.as_str() {
                "path" => {
                    a.path = string(val, &f)?.to_owned();
                    has_path = true;
                }
                "shape" => {
                    a.shape = uint_list(val, &f)?;
                    has_shape = true;
                }
                "chunks" => {
                    a.chunks = uint_list(val, &f)?;
                    has_chunks = true;
                }
                "itemsize" => {
                    a.itemsize = uint(val, &f)?;
                    has_itemsize = true;
                }
                "shards" => {
                    a.shards = match val {
                        Json::Null => None,
                        _ => Some(uint_list(val, &f)?),
                    }
                }
                "stored_bytes" => a.stored_bytes = opt_uint(val, &f)?,
                "nobjects_seen" => a.nobjects_seen = opt_uint(val, &f)?,
                "is_coordinate" => {
                    a.is_coordinate = match val {
                        Json::Bool(b) => *b,
                        other => return Err(expected(&f, "boolean", other)),
                    }
                }
                "key_encoding" => {
                    let name = string(val, &f)?;
                    a.key_encoding = KeyEncoding::parse(name).ok_or_else(|| {
                        invalid(
                            &f,
                            format!("{name:?} is not one of v3_slash, v2_slash, v2_flat"),
                        )
                    })?;
                }
                _ => return Err(invalid(field, format!("unexpected field {k:?}"))),
            }
        }
        for (present, name) in [
            (has_path, "path"),
            (has_shape, "shape"),
            (has_chunks, "chunks"),
            (has_itemsize, "itemsize"),
        ] {
            if !present {
                return Err(invalid(field, format!("missing required field {name:?}")));
            }
        }
        a.validate(field)?;
        Ok(a)
    }

    /// Render as an arrays-file element (all fields, in declaration order).
    pub fn to_json(&self) -> Json {
        let list = |v: &[u64]| Json::Array(v.iter().map(|&n| Json::uint(n)).collect());
        let opt = |v: Option<u64>| v.map(Json::uint).unwrap_or(Json::Null);
        Json::Object(vec![
            ("path".into(), Json::str(&self.path)),
            ("shape".into(), list(&self.shape)),
            ("chunks".into(), list(&self.chunks)),
            ("itemsize".into(), Json::uint(self.itemsize)),
            (
                "shards".into(),
                self.shards.as_deref().map(list).unwrap_or(Json::Null),
            ),
            ("stored_bytes".into(), opt(self.stored_bytes)),
            ("nobjects_seen".into(), opt(self.nobjects_seen)),
            ("is_coordinate".into(), Json::Bool(self.is_coordinate)),
            ("key_encoding".into(), Json::str(self.key_encoding.as_str())),
        ])
    }
}

/// Read an arrays file: a JSON list of [`Array::from_json`] objects.
///
/// Errors: [`PartitionError::Json`] for text that is not JSON, [`PartitionError::Invalid`]
/// naming `arrays[i].<field>` otherwise.
pub fn arrays_from_json_text(text: &str) -> Result<Vec<Array>, PartitionError> {
    match Json::parse(text)? {
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| Array::from_json(v, &format!("arrays[{i}]")))
            .collect(),
        other => Err(expected("arrays", "array", &other)),
    }
}

/// Thresholds that shape the cut, all in bytes except `width_clamp` (a factor) and `pow2_floor`
/// (objects). Defaults from facts.md: 100 GiB, 0, 16 MiB, 8, 64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Target upper bound for one blob.
    pub t_max_bytes: u64,
    /// Floor below which neighbouring arrays are coalesced; 0 disables coalescing.
    pub t_min_bytes: u64,
    /// Arrays smaller than this stay hot.
    pub t_hot_bytes: u64,
    /// A blob may not exceed `width_clamp × t_max_bytes` even uncompressed.
    pub width_clamp: u64,
    /// Widths at or above this are rounded down to a power of two.
    pub pow2_floor: u64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            t_max_bytes: 100 * GIB,
            t_min_bytes: 0,
            t_hot_bytes: 16 << 20,
            width_clamp: 8,
            pow2_floor: 64,
        }
    }
}

const POLICY_FIELDS: [&str; 5] = [
    "t_max_bytes",
    "t_min_bytes",
    "t_hot_bytes",
    "width_clamp",
    "pow2_floor",
];

impl Policy {
    /// Render the five thresholds in blobmap's field order.
    pub fn to_json(&self) -> Json {
        let values = [
            self.t_max_bytes,
            self.t_min_bytes,
            self.t_hot_bytes,
            self.width_clamp,
            self.pow2_floor,
        ];
        Json::Object(
            POLICY_FIELDS
                .iter()
                .zip(values)
                .map(|(k, v)| ((*k).to_owned(), Json::uint(v)))
                .collect(),
        )
    }

    /// Read a policy object; absent fields take their defaults and unknown fields are ignored
    /// (a newer writer may add thresholds).
    ///
    /// Errors: [`PartitionError::Invalid`] naming `<field>.<name>` when a known field is not a
    /// non-negative integer.
    pub fn from_json(v: &Json, field: &str) -> Result<Policy, PartitionError> {
        let entries = match v {
            Json::Object(e) => e,
            other => return Err(expected(field, "object", other)),
        };
        let mut p = Policy::default();
        for (k, val) in entries {
            let slot = match k.as_str() {
                "t_max_bytes" => &mut p.t_max_bytes,
                "t_min_bytes" => &mut p.t_min_bytes,
                "t_hot_bytes" => &mut p.t_hot_bytes,
                "width_clamp" => &mut p.width_clamp,
                "pow2_floor" => &mut p.pow2_floor,
                _ => continue,
            };
            *slot = uint(val, &format!("{field}.{k}"))?;
        }
        Ok(p)
    }
}

/// The arithmetic that turns a chunk index into a blob number: `instance = index / width`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bucket {
    /// Which key segment after the prefix holds the chunk index (usually 0, time).
    pub index: u64,
    /// Objects along that dimension per blob; at least 1.
    pub width: u64,
    /// How to parse the index out of a key.
    pub key_encoding: KeyEncoding,
}

impl Bucket {
    /// Render as `{"index", "width", "key_encoding"}`.
    pub fn to_json(&self) -> Json {
        Json::Object(vec![
            ("index".into(), Json::uint(self.index)),
            ("width".into(), Json::uint(self.width)),
            ("key_encoding".into(), Json::str(self.key_encoding.as_str())),
        ])
    }
}

/// A set of objects that move to and from tape together. Instance `n` is named `<id>_<n>`;
/// an unbucketed blob has the single instance `<id>_0`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Blob {
    /// Stable id of `[a-z0-9_]`; the join key for tier state.
    pub id: String,
    /// Key prefixes claimed, relative to the scope; exactly one when bucketed.
    pub prefixes: Vec<String>,
    /// Bucketing rule, or `None` for a plain prefix blob.
    pub bucket: Option<Bucket>,
}

impl Blob {
    /// A plain (unbucketed) blob.
    pub fn new(id: &str, prefixes: &[&str]) -> Blob {
        Blob {
            id: id.to_owned(),
            prefixes: prefixes.iter().map(|p| (*p).to_owned()).collect(),
            bucket: None,
        }
    }

    /// The tape instance name for bucket `n`: `<id>_<n>`.
    pub fn instance(&self, n: u64) -> String {
        format!("{}_{}", self.id, n)
    }

    /// Render as `{"id", "prefixes", "bucket"}` (bucket `null` when unbucketed).
    pub fn to_json(&self) -> Json {
        Json::Object(vec![
            ("id".into(), Json::str(&self.id)),
            (
                "prefixes".into(),
                Json::Array(self.prefixes.iter().map(Json::str).collect()),
            ),
            (
                "bucket".into(),
                self.bucket.map(|b| b.to_json()).unwrap_or(Json::Null),
            ),
        ])
    }
}

/// A deliberate instruction to keep a prefix hot; carried across repartitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pin {
    /// Prefix kept hot, relative to the scope; empty pins the whole scope.
    pub prefix: String,
    /// Why; required and non-blank.
    pub reason: String,
    /// Who set it.
    pub by: String,
    /// ISO 8601 UTC time it was set.
    pub at: String,
    /// ISO 8601 UTC review time; expiry is reported, never enforced.
    pub until: Option<String>,
}

impl Pin {
    /// A pin with only prefix and reason.
    pub fn new(prefix: &str, reason: &str) -> Pin {
        Pin {
            prefix: prefix.to_owned(),
            reason: reason.to_owned(),
            by: String::new(),
            at: String::new(),
            until: None,
        }
    }

    /// Whether a scope-relative key is at or below the pinned prefix.
    pub fn covers(&self, key: &str) -> bool {
        self.prefix.is_empty()
            || key == self.prefix
            || (key.starts_with(&self.prefix) && key.as_bytes()[self.prefix.len()] == b'/')
    }

    /// Whether the review time has passed (ISO 8601 strings compare in time order).
    pub fn expired(&self, now: &str) -> bool {
        self.until.as_deref().is_some_and(|u| now > u)
    }

    /// Render as `{"prefix", "reason", "by", "at", "until"}`.
    pub fn to_json(&self) -> Json {
        Json::Object(vec![
            ("prefix".into(), Json::str(&self.prefix)),
            ("reason".into(), Json::str(&self.reason)),
            ("by".into(), Json::str(&self.by)),
            ("at".into(), Json::str(&self.at)),
            (
                "until".into(),
                self.until.as_deref().map(Json::str).unwrap_or(Json::Null),
            ),
        ])
    }
}

/// Every field of a manifest. Build one and pass it to [`Manifest::new`], which validates.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFields {
    /// Prefix the definitions apply to, relative to the data store.
    pub scope: String,
    /// Blob definitions (one per cut decision, not per object).
    pub blobs: Vec<Blob>,
    /// Glob patterns never archivable: `**/<basename>` or `<path>/**`.
    pub hot_always: Vec<String>,
    /// Deliberate hot prefixes.
    pub pinned: Vec<Pin>,
    /// Thresholds that produced the cut.
    pub policy: Policy,
    /// Starts at 1; bumped whenever the definitions change.
    pub epoch: u64,
    /// ISO 8601 UTC time of the producing run (supplied by the caller).
    pub generated_at: String,
    /// Producer name and version.
    pub generated_by: String,
    /// Measured numbers per array path, for debugging only; never read by resolution.
    pub provenance: Vec<(String, Json)>,
}

impl ManifestFields {
    /// Fields with the given scope, blobs and hot patterns; everything else defaulted (no pins,
    /// default policy, epoch 1, empty timestamps and provenance, `generated_by` = this crate).
    pub fn new(scope: &str, blobs: Vec<Blob>, hot_always: Vec<String>) -> ManifestFields {
        ManifestFields {
            scope: scope.to_owned(),
            blobs,
            hot_always,
            pinned: Vec::new(),
            policy: Policy::default(),
            epoch: 1,
            generated_at: String::new(),
            generated_by: generated_by(),
            provenance: Vec::new(),
        }
    }
}

/// The `generated_by` value this crate writes: `chunkwise <version>`.
pub fn generated_by() -> String {
    format!("chunkwise {}", env!("CARGO_PKG_VERSION"))
}

/// The blob definitions for one scope. Always valid: [`Manifest::new`] is the only constructor
/// and checks every rule; read access to the fields is through `Deref` to [`ManifestFields`].
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    fields: ManifestFields,
}

impl Deref for Manifest {
    type Target = ManifestFields;
    fn deref(&self) -> &ManifestFields {
        &self.fields
    }
}

impl Manifest {
    /// Validate and wrap.
    ///
    /// Errors: [`PartitionError::Invalid`] naming the field, for: a duplicate blob id, an id not
    /// of `[a-z0-9_]+`, a blob with no prefixes, a bucketed blob with other than one prefix, a
    /// bucket width of 0, epoch 0, a pin with a blank reason, two pins on one prefix
    /// (facts.md, "blobmap partition").
    pub fn new(fields: ManifestFields) -> Result<Manifest, PartitionError> {
        let mut seen = std::collections::HashSet::new();
        for (i, b) in fields.blobs.iter().enumerate() {
            let field = format!("blobs[{i}]");
            if !seen.insert(b.id.as_str()) {
                return Err(invalid(
                    &format!("{field}.id"),
                    format!("duplicate blob id {:?}", b.id),
                ));
            }
            if !is_valid_id(&b.id) {
                return Err(invalid(
                    &format!("{field}.id"),
                    format!("{:?} is not [a-z0-9_]+", b.id),
                ));
            }
            if b.prefixes.is_empty() {
                return Err(invalid(
                    &format!("{field}.prefixes"),
                    format!("{}: no prefixes", b.id),
                ));
            }
            if let Some(bucket) = b.bucket {
                if b.prefixes.len() != 1 {
                    return Err(invalid(
                        &format!("{field}.prefixes"),
                        format!(
                            "{}: a bucketed blob needs exactly one prefix, got {}",
                            b.id,
                            b.prefixes.len()
                        ),
                    ));
                }
                if bucket.width < 1 {
                    return Err(invalid(
                        &format!("{field}.bucket.width"),
                        format!("{}: width must be >= 1", b.id),
                    ));
                }
            }
        }
        if fields.epoch < 1 {
            return Err(invalid("epoch", "must be >= 1".into()));
        }
        let mut pins = std::collections::HashSet::new();
        for (i, pin) in fields.pinned.iter().enumerate() {
            if pin.reason.trim().is_empty() {
                return Err(invalid(
                    &format!("pinned[{i}].reason"),
                    format!(
                        "pin on {:?} has no reason; a pin nobody can explain is one nobody removes",
                        pin.prefix
                    ),
                ));
            }
            if !pins.insert(pin.prefix.as_str()) {
                return Err(invalid(
                    &format!("pinned[{i}].prefix"),
                    format!("duplicate pin on {:?}", pin.prefix),
                ));
            }
        }
        Ok(Manifest { fields })
    }

    /// Give back the fields (to change them and validate again through [`Manifest::new`]).
    pub fn into_fields(self) -> ManifestFields {
        self.fields
    }

    /// A copy with the epoch incremented and `generated_at` set to the caller's time.
    pub fn bumped(&self, generated_at: &str) -> Manifest {
        let mut fields = self.fields.clone();
        fields.epoch = fields.epoch.saturating_add(1);
        fields.generated_at = generated_at.to_owned();
        Manifest { fields }
    }

    /// The blob with this id, if any.
    pub fn by_id(&self, id: &str) -> Option<&Blob> {
        self.blobs.iter().find(|b| b.id == id)
    }

    /// The first pin covering a scope-relative key, if any.
    pub fn pin_for(&self, key: &str) -> Option<&Pin> {
        self.pinned.iter().find(|p| p.covers(key))
    }

    /// Ids of blob definitions covered by a pin: a consumer must not archive these even though
    /// no key resolves to them any more.
    pub fn pinned_blob_ids(&self) -> Vec<&str> {
        self.blobs
            .iter()
            .filter(|b| {
                b.prefixes
                    .iter()
                    .any(|p| self.pinned.iter().any(|pin| pin.covers(p)))
            })
            .map(|b| b.id.as_str())
            .collect()
    }

    /// The manifest document, fields in blobmap's order: schema_version, scope, epoch,
    /// generated_at, generated_by, policy, hot_always, pinned, blobs, provenance.
    pub fn to_json(&self) -> Json {
        let f = &self.fields;
        Json::Object(vec![
            ("schema_version".into(), Json::uint(SCHEMA_VERSION)),
            ("scope".into(), Json::str(&f.scope)),
            ("epoch".into(), Json::uint(f.epoch)),
            ("generated_at".into(), Json::str(&f.generated_at)),
            ("generated_by".into(), Json::str(&f.generated_by)),
            ("policy".into(), f.policy.to_json()),
            (
                "hot_always".into(),
                Json::Array(f.hot_always.iter().map(Json::str).collect()),
            ),
            (
                "pinned".into(),
                Json::Array(f.pinned.iter().map(Pin::to_json).collect()),
            ),
            (
                "blobs".into(),
                Json::Array(f.blobs.iter().map(Blob::to_json).collect()),
            ),
            ("provenance".into(), Json::Object(f.provenance.clone())),
        ])
    }

    /// Manifest text as blobmap writes it (`json.dumps(indent=2)`, no trailing newline).
    pub fn dumps(&self) -> String {
        self.to_json().to_pretty_string()
    }

    /// Parse manifest text. See [`Manifest::from_json`].
    pub fn loads(text: &str) -> Result<Manifest, PartitionError> {
        Manifest::from_json(&Json::parse(text)?)
    }

    /// Read a manifest document strictly (schema version 3).
    ///
    /// Errors: [`PartitionError::Schema`] naming the path (`schema_version`, `blobs[0].id`,
    /// `pinned[1].reason`, ...) when the document does not match the schema: another version, a
    /// missing required field, an unknown field, a wrong type, a negative or zero `epoch`, a
    /// `width` below 1. Then [`PartitionError::Invalid`] for the cross-field rules of
    /// [`Manifest::new`].
    pub fn from_json(doc: &Json) -> Result<Manifest, PartitionError> {
        let entries = object(doc, "document")?;
        for name in ["schema_version", "scope", "epoch", "hot_always", "blobs"] {
            if doc.get(name).is_none() {
                return Err(schema(
                    "document",
                    format!("missing required field {name:?}"),
                ));
            }
        }
        let mut fields = ManifestFields::new("", Vec::new(), Vec::new());
        fields.generated_by = String::new();
        for (k, v) in entries {
            let f = k.as_str();
            match f {
                "schema_version" => {
                    if schema_int(v, f)? != Some(SCHEMA_VERSION) {
                        return Err(schema(
                            f,
                            format!("expected {SCHEMA_VERSION}, got {}", v.to_pretty_string()),
                        ));
                    }
                }
                "scope" => fields.scope = schema_str(v, f)?.to_owned(),
                "epoch" => {
                    fields.epoch = match schema_int(v, f)? {
                        Some(n) if n >= 1 => n,
                        _ => {
                            return Err(schema(
                                f,
                                format!("{} is less than the minimum 1", v.to_pretty_string()),
                            ))
                        }
                    }
                }
                "generated_at" => fields.generated_at = schema_str(v, f)?.to_owned(),
                "generated_by" => fields.generated_by = schema_str(v, f)?.to_owned(),
                "policy" => {
                    for (pk, pv) in object(v, f)? {
                        if !pv.is_integer() {
                            return Err(schema(
                                &format!("policy.{pk}"),
                                format!("expected integer, got {}", pv.type_name()),
                            ));
                        }
                    }
                    fields.policy = Policy::from_json(v, f).map_err(to_schema)?;
                }
                "hot_always" => {
                    fields.hot_always = array(v, f)?
                        .iter()
                        .enumerate()
                        .map(|(i, s)| schema_str(s, &format!("hot_always[{i}]")).map(String::from))
                        .collect::<Result<_, _>>()?
                }
                "pinned" => {
                    fields.pinned = array(v, f)?
                        .iter()
                        .enumerate()
                        .map(|(i, p)| pin_from_json(p, &format!("pinned[{i}]")))
                        .collect::<Result<_, _>>()?
                }
                "blobs" => {
                    fields.blobs = array(v, f)?
                        .iter()
                        .enumerate()
                        .map(|(i, b)| blob_from_json(b, &format!("blobs[{i}]")))
                        .collect::<Result<_, _>>()?
                }
                "provenance" => fields.provenance = object(v, f)?.clone(),
                _ => return Err(schema("document", format!("unexpected field {k:?}"))),
            }
        }
        Manifest::new(fields)
    }
}

/// Whether an id is `[a-z0-9_]+`.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

fn pin_from_json(v: &Json, field: &str) -> Result<Pin, PartitionError> {
    let entries = object(v, field)?;
    for name in ["prefix", "reason"] {
        if v.get(name).is_none() {
            return Err(schema(field, format!("missing required field {name:?}")));
        }
    }
    let mut pin = Pin::new("", "");
    for (k, val) in entries {
        let f = format!("{field}.{k}");
        match k.as_str() {
            "prefix" => pin.prefix = schema_str(val, &f)?.to_owned(),
            "reason" => {
                pin.reason = schema_str(val, &f)?.to_owned();
                if pin.reason.is_empty() {
                    return Err(schema(&f, "must not be empty".into()));
                }
            }
            "by" => pin.by = schema_str(val, &f)?.to_owned(),
            "at" => pin.at = schema_str(val, &f)?.to_owned(),
            "until" => {
                pin.until = match val {
                    Json::Null => None,
                    Json::String(s) => Some(s.clone()),
                    other => {
                        return Err(schema(
                            &f,
                            format!("expected string or null, got {}", other.type_name()),
                        ))
                    }
                }
            }
            _ => return Err(schema(field, format!("unexpected field {k:?}"))),
        }
    }
    Ok(pin)
}

fn blob_from_json(v: &Json, field: &str) -> Result<Blob, PartitionError> {
    let entries = object(v, field)?;
    for name in ["id", "prefixes", "bucket"] {
        if v.get(name).is_none() {
            return Err(schema(field, format!("missing required field {name:?}")));
        }
    }
    let mut blob = Blob::new("", &[]);
    for (k, val) in entries {
        let f = format!("{field}.{k}");
        match k.as_str() {
            "id" => {
                blob.id = schema_str(val, &f)?.to_owned();
                if !is_valid_id(&blob.id) {
                    return Err(schema(
                        &f,
                        format!("{:?} does not match ^[a-z0-9_]+$", blob.id),
                    ));
                }
            }
            "prefixes" => {
                let items = array(val, &f)?;
                if items.is_empty() {
                    return Err(schema(&f, "needs at least 1 item(s)".into()));
                }
                blob.prefixes = items
                    .iter()
                    .enumerate()
                    .map(|(i, s)| schema_str(s, &format!("{f}[{i}]")).map(String::from))
                    .collect::<Result<_, _>>()?;
            }
            "bucket" => {
                blob.bucket = match val {
                    Json::Null => None,
                    other => Some(bucket_from_json(other, &f)?),
                }
            }
            _ => return Err(schema(field, format!("unexpected field {k:?}"))),
        }
    }
    Ok(blob)
}

fn bucket_from_json(v: &Json, field: &str) -> Result<Bucket, PartitionError> {
    let entries = object(v, field)?;
    for name in ["index", "width", "key_encoding"] {
        if v.get(name).is_none() {
            return Err(schema(field, format!("missing required field {name:?}")));
        }
    }
    let mut bucket = Bucket {
        index: 0,
        width: 1,
        key_encoding: KeyEncoding::V3Slash,
    };
    for (k, val) in entries {
        let f = format!("{field}.{k}");
        match k.as_str() {
            "index" => {
                bucket.index = schema_int(val, &f)?.ok_or_else(|| {
                    schema(
                        &f,
                        format!("{} is less than the minimum 0", val.to_pretty_string()),
                    )
                })?
            }
            "width" => {
                bucket.width = match schema_int(val, &f)? {
                    Some(n) if n >= 1 => n,
                    _ => {
                        return Err(schema(
                            &f,
                            format!("{} is less than the minimum 1", val.to_pretty_string()),
                        ))
                    }
                }
            }
            "key_encoding" => {
                let name = val.as_str().unwrap_or("");
                bucket.key_encoding = KeyEncoding::parse(name).ok_or_else(|| {
                    schema(
                        &f,
                        format!(
                            "{} is not one of [\"v3_slash\", \"v2_slash\", \"v2_flat\"]",
                            val.to_pretty_string()
                        ),
                    )
                })?
            }
            _ => return Err(schema(field, format!("unexpected field {k:?}"))),
        }
    }
    Ok(bucket)
}

fn schema(field: &str, message: String) -> PartitionError {
    PartitionError::Schema {
        field: field.to_owned(),
        message,
    }
}

fn to_schema(e: PartitionError) -> PartitionError {
    match e {
        PartitionError::Invalid { field, message } => PartitionError::Schema { field, message },
        other => other,
    }
}

fn invalid(field: &str, message: String) -> PartitionError {
    PartitionError::Invalid {
        field: field.to_owned(),
        message,
    }
}

fn expected(field: &str, what: &str, got: &Json) -> PartitionError {
    invalid(field, format!("expected {what}, got {}", got.type_name()))
}

fn object<'a>(v: &'a Json, field: &str) -> Result<&'a Vec<(String, Json)>, PartitionError> {
    match v {
        Json::Object(e) => Ok(e),
        other => Err(schema(
            field,
            format!("expected object, got {}", other.type_name()),
        )),
    }
}

fn array<'a>(v: &'a Json, field: &str) -> Result<&'a Vec<Json>, PartitionError> {
    match v {
        Json::Array(e) => Ok(e),
        other => Err(schema(
            field,
            format!("expected array, got {}", other.type_name()),
        )),
    }
}

fn schema_str<'a>(v: &'a Json, field: &str) -> Result<&'a str, PartitionError> {
    v.as_str()
        .ok_or_else(|| schema(field, format!("expected string, got {}", v.type_name())))
}

/// An integer per the schema: `Some(n)` when non-negative, `None` when negative.
fn schema_int(v: &Json, field: &str) -> Result<Option<u64>, PartitionError> {
    if !v.is_integer() {
        return Err(schema(
            field,
            format!("expected integer, got {}", v.type_name()),
        ));
    }
    Ok(v.as_u64())
}

fn string<'a>(v: &'a Json, field: &str) -> Result<&'a str, PartitionError> {
    v.as_str().ok_or_else(|| expected(field, "string", v))
}

fn uint(v: &Json, field: &str) -> Result<u64, PartitionError> {
    if !v.is_integer() {
        return Err(expected(field, "integer", v));
    }
    v.as_u64().ok_or_else(|| {
        invalid(
            field,
            format!(
                "{} is negative; sizes and counts are >= 0",
                v.to_pretty_string()
            ),
        )
    })
}

fn opt_uint(v: &Json, field: &str) -> Result<Option<u64>, PartitionError> {
    match v {
        Json::Null => Ok(None),
        other => uint(other, field).map(Some),
    }
}

fn uint_list(v: &Json, field: &str) -> Result<Vec<u64>, PartitionError> {
    match v {
        Json::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| uint(x, &format!("{field}[{i}]")))
            .collect(),
        other => Err(expected(field, "array", other)),
    }
}
