//! Discovery metadata as a versioned, serialisable record, so a reopen rebuilds a reader
//! without a request (spec: remote cache design, "Discovery metadata" layer).
//!
//! One kind of record, JSON:
//!
//! ```json
//! {"version": 3,
//!  "source": {"location": "...", "len": 123, "etag": "\"abc\"", "last_modified": null},
//!  "format": "b2nd", "seed_version": 1, "seed": {"header": "<hex>", "index": "<hex>"}}
//! ```
//!
//! - `version`: [`DISCOVERY_VERSION`], the shape of this record; a record of another version
//!   (or of no known shape) is a miss.
//! - `source`: the identity seen at discovery (size in bytes, HTTP validators). It is trusted
//!   on reopen: sources are assumed immutable.
//! - `format`, `seed_version`, `seed`: a seed that its format owns and serialises (the
//!   format's own tag and version; `crate::formats::FormatSeed`), opaque here. The opener
//!   dispatches on the tag; a tag or version it does not know is a miss. An array's seed
//!   (`b2nd`, `hdf5`), an HDF5 file's listing (`hdf5-listing`) and a Zarr store's remembered
//!   metadata (`zarr`, whose `source` is the store's public base URL with no size) are all
//!   this one record.
//!
//! This module imports nothing from the formats.

use crate::io::SourceInfo;

/// Version of the record's shape. Raise it whenever the record's fields change (version 3:
/// the seed became a tagged, versioned value of its format's own type; version 2 records
/// are misses). A seed's own shape has its own version.
pub const DISCOVERY_VERSION: u32 = 3;

/// Size and validators of a source, as discovery saw them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceIdentity {
    /// Public URL ([`crate::cache::identity::public_url`]: no query, no user info) or path.
    pub location: String,
    /// Size in bytes.
    pub len: u64,
    /// HTTP `ETag`.
    pub etag: Option<String>,
    /// HTTP `Last-Modified`.
    pub last_modified: Option<String>,
}

impl SourceIdentity {
    /// An opaque token naming this version of the source, recorded with a complete copy of it
    /// (spec: remote cache design, "The marker records ... version token"): the ETag when the
    /// server sent one, else the Last-Modified date and the size, else the size alone.
    pub fn version_token(&self) -> String {
        match (&self.etag, &self.last_modified) {
            (Some(e), _) => e.clone(),
            (None, Some(lm)) => format!("{lm}; {} bytes", self.len),
            (None, None) => format!("{} bytes", self.len),
        }
    }
}

impl From<&SourceInfo> for SourceIdentity {
    fn from(i: &SourceInfo) -> Self {
        SourceIdentity {
            // Records are persisted: never the query or user info of a URL.
            location: crate::cache::identity::public_url(&i.location),
            len: i.len,
            etag: i.etag.clone(),
            last_modified: i.last_modified.clone(),
        }
    }
}

impl From<&SourceIdentity> for SourceInfo {
    fn from(i: &SourceIdentity) -> Self {
        SourceInfo {
            location: i.location.clone(),
            len: i.len,
            etag: i.etag.clone(),
            last_modified: i.last_modified.clone(),
        }
    }
}

/// A discovery record: an array's seed, or a container's listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiscoveryRecord {
    /// [`DISCOVERY_VERSION`].
    pub version: u32,
    /// The source as discovery saw it.
    pub source: SourceIdentity,
    /// The tag of the seed's type (its format's).
    pub format: String,
    /// The version of the seed's type.
    pub seed_version: u32,
    /// The seed, as its format serialised it.
    pub seed: serde_json::Value,
}

/// A container's listing: a [`DiscoveryRecord`] whose seed is the listing.
pub type NodesRecord = DiscoveryRecord;

/// JSON of a record.
pub fn to_json<T: serde::Serialize>(record: &T) -> Vec<u8> {
    serde_json::to_vec(record).expect("records serialise")
}

/// A record from JSON; `None` for malformed JSON or another [`DISCOVERY_VERSION`].
///
/// Parsed into a `serde_json::Value` first, then into `T`: the seeds inside are read from
/// `Value`s anyway, so every type has one deserializer in the wasm module (straight from
/// bytes, each record type compiled a second one: about 2 KB of the gzipped module with the
/// marker's). Likewise chunkwise parses JSON text with `from_slice` only, never `from_str`,
/// which compiles serde_json's parser a second time.
pub fn from_json<T: serde::de::DeserializeOwned + Versioned>(bytes: &[u8]) -> Option<T> {
    let r: T = serde_json::from_value(serde_json::from_slice(bytes).ok()?).ok()?;
    (r.version() == DISCOVERY_VERSION).then_some(r)
}

/// A record with a format version.
pub trait Versioned {
    /// The record's `version` field.
    fn version(&self) -> u32;
}
impl Versioned for DiscoveryRecord {
    fn version(&self) -> u32 {
        self.version
    }
}
impl Versioned for SourceRecord {
    fn version(&self) -> u32 {
        self.version
    }
}

/// The identity of a complete source copy (kept next to the copy's bytes).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceRecord {
    /// [`DISCOVERY_VERSION`].
    pub version: u32,
    /// The source as it was fetched.
    pub source: SourceIdentity,
}
