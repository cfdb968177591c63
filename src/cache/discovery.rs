//! Discovery metadata as a versioned, serialisable record, so a reopen rebuilds a reader
//! without a request (spec: remote cache design, "Discovery metadata" layer).
//!
//! A record is JSON:
//!
//! ```json
//! {"version": 1,
//!  "source": {"location": "...", "len": 123, "etag": "\"abc\"", "last_modified": null},
//!  "seed": {"format": "b2nd", "header": "<hex>", "index": "<hex>"}}
//! ```
//!
//! - `version`: [`DISCOVERY_VERSION`]; a record of another version is a miss.
//! - `source`: the identity seen at discovery (size in bytes, HTTP validators). It is trusted
//!   on reopen: sources are assumed immutable.
//! - `seed`, by `format`:
//!   - `b2nd`: `header` the frame header bytes, `index` the offsets chunk and trailer bytes
//!     (hex), exactly what [`crate::formats::b2nd::B2ndArray::from_parts`] takes;
//!   - `hdf5`: `dataset` the [`DatasetMeta`] of the dataset (path, shape, dtype, fill value,
//!     filter pipeline, layout with the chunk map), serialised field by field by serde.
//!
//! A container listing is stored as a [`NodesRecord`] (`{"version", "source", "nodes"}`).

use crate::formats::hdf5::discover::DatasetMeta;
use crate::formats::{ArrayFormat, Node};
use crate::io::SourceInfo;
use bytes::Bytes;

/// Version of the record format. Raise it whenever a seed's meaning changes (a field of
/// [`DatasetMeta`] added without a serde default also changes the format; old records then
/// fail to parse and are misses).
pub const DISCOVERY_VERSION: u32 = 2;

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

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(b: &bytes::Bytes, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::cache::identity::hex(b))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bytes::Bytes, D::Error> {
        let s = String::deserialize(d)?;
        crate::cache::identity::unhex(&s)
            .map(bytes::Bytes::from)
            .ok_or_else(|| serde::de::Error::custom("not hexadecimal"))
    }
}

/// What a format needs to rebuild its reader without I/O.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "format", rename_all = "lowercase")]
pub enum Seed {
    /// A `.b2nd` frame: header bytes and index bytes.
    B2nd {
        /// The frame header.
        #[serde(with = "hex_bytes")]
        header: Bytes,
        /// The offsets chunk and trailer.
        #[serde(with = "hex_bytes")]
        index: Bytes,
    },
    /// An HDF5 dataset.
    Hdf5 {
        /// Its discovered metadata, chunk map included.
        dataset: DatasetMeta,
    },
}

impl Seed {
    /// The reader this seed describes, for the source at `location` of `len` bytes.
    ///
    /// # Errors
    /// [`crate::Error::Format`] when the seed does not describe a valid array (a record
    /// that deserialised but is inconsistent); callers treat that as a cache miss.
    pub fn rebuild(&self, location: &str, len: u64) -> crate::Result<Box<dyn ArrayFormat>> {
        Ok(match self {
            Seed::B2nd { header, index } => Box::new(crate::formats::b2nd::B2ndArray::from_parts(
                location.to_string(),
                header.clone(),
                index.clone(),
                len,
            )?),
            Seed::Hdf5 { dataset } => Box::new(
                crate::formats::hdf5::Hdf5Array::from_meta(
                    location.to_string(),
                    dataset.clone(),
                    len,
                )
                .map_err(|e| e.into_error(location))?,
            ),
        })
    }
}

/// One array's discovery record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiscoveryRecord {
    /// [`DISCOVERY_VERSION`].
    pub version: u32,
    /// The source as discovery saw it.
    pub source: SourceIdentity,
    /// The format's seed.
    pub seed: Seed,
}

/// A container's listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodesRecord {
    /// [`DISCOVERY_VERSION`].
    pub version: u32,
    /// The source as discovery saw it.
    pub source: SourceIdentity,
    /// Groups and arrays.
    pub nodes: Vec<Node>,
}

/// JSON of a record.
pub fn to_json<T: serde::Serialize>(record: &T) -> Vec<u8> {
    serde_json::to_vec(record).expect("records serialise")
}

/// A record from JSON; `None` for malformed JSON or another [`DISCOVERY_VERSION`].
pub fn from_json<T: serde::de::DeserializeOwned + Versioned>(bytes: &[u8]) -> Option<T> {
    let r: T = serde_json::from_slice(bytes).ok()?;
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
impl Versioned for NodesRecord {
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
