//! Blob partition of array stores for tape tiering (blobmap): pure decisions, no I/O.
//!
//! Arrays in ([`Array`], written by hand or read from Zarr metadata by [`zarr::read_arrays`]),
//! a [`Manifest`] of blob definitions out ([`partition`]); [`diff`] says whether a repartition
//! kept every existing blob, and [`resolve`] maps an object key to its blob instance by
//! arithmetic. Behaviour follows the public blobmap tool (spec: `blobmap-partition.md`; defaults,
//! schema 3 and validation rules: facts.md, "blobmap partition").
//!
//! Nothing here reads a clock or logs: the caller supplies `generated_at`, and warnings are
//! returned as [`Warning`] values.

mod cut;
mod diff;
pub mod json;
mod model;
pub mod remote;
mod resolve;
pub mod zarr;

use std::fmt;

pub use cut::{bucket_width, default_hot_always, partition, Partitioned};
pub use diff::{diff, Diff};
pub use json::Json;
pub use model::{
    arrays_from_json_text, generated_by, is_valid_id, Array, Blob, Bucket, KeyEncoding, Manifest,
    ManifestFields, Pin, Policy, GIB, METADATA_BASENAMES, SCHEMA_VERSION,
};
pub use resolve::{resolve, Resolution, ResolutionKind, Resolver};

/// Why partition input or a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// A manifest document does not match schema version 3. `field` is the path to the offending
    /// value (`schema_version`, `blobs[0].bucket.width`, `document` for the top level).
    #[error("{field}: {message}")]
    Schema { field: String, message: String },
    /// A value breaks a rule of the model: duplicate blob ids, a bucketed blob with several
    /// prefixes, a pin without a reason, a zero chunk extent, a negative size. `field` names it.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// Text that is not JSON.
    #[error("not JSON: {message}")]
    Json { message: String },
    /// No Zarr metadata object under the scope.
    #[error("{scope}: no zarr metadata found")]
    NotAZarrStore { scope: String },
    /// The store could not be listed or a metadata object could not be read.
    #[error("{key}: {message}")]
    Store { key: String, message: String },
}

impl PartitionError {
    /// A stable, machine-readable code (`error.code` in JS).
    pub fn code(&self) -> &'static str {
        match self {
            PartitionError::Schema { .. } => "MANIFEST_SCHEMA",
            PartitionError::Invalid { .. } => "PARTITION_INVALID",
            PartitionError::Json { .. } => "JSON",
            PartitionError::NotAZarrStore { .. } => "NOT_A_ZARR_STORE",
            PartitionError::Store { .. } => "STORE",
        }
    }
}

/// Something worth telling an operator that does not stop the run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// Two paths sanitised to the same blob id; `used` carries a `_2`, `_3` suffix that depends on
    /// listing order, so it is not stable across repartitions.
    IdCollision { wanted: String, used: String },
    /// One object of this array is already above `t_max_bytes`; the cut cannot go finer.
    ObjectAboveMax { path: String, object_bytes: u64 },
    /// Array metadata could not be used; the array was skipped.
    UnreadableMetadata { path: String, message: String },
    /// The declared key encoding disagrees with the keys present; the keys won.
    EncodingMismatch {
        path: String,
        declared: KeyEncoding,
        observed: KeyEncoding,
    },
    /// Data objects under no array: they resolve as unmanaged and stay hot.
    UnassignedObjects { count: u64 },
    /// More objects stored than the declared grid holds (left over from an append or rechunk).
    StaleObjects { path: String, seen: u64, grid: u64 },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Warning::IdCollision { wanted, used } => write!(
                f,
                "blob id {wanted:?} collides; using {used:?}. The suffix depends on listing order, \
                 so check for array paths that differ only in punctuation"
            ),
            Warning::ObjectAboveMax { path, object_bytes } => write!(
                f,
                "{path}: a single object is {:.1} GiB, above t_max; cannot cut finer than one object",
                *object_bytes as f64 / GIB as f64
            ),
            Warning::UnreadableMetadata { path, message } => {
                write!(f, "{path}: unreadable array metadata ({message})")
            }
            Warning::EncodingMismatch {
                path,
                declared,
                observed,
            } => write!(
                f,
                "{path}: metadata says {declared} but keys look like {observed}; using {observed}"
            ),
            Warning::UnassignedObjects { count } => write!(
                f,
                "{count} objects belong to no array; they resolve as unmanaged and stay hot"
            ),
            Warning::StaleObjects { path, seen, grid } => write!(
                f,
                "{path}: {seen} objects stored but the declared grid holds {grid}; stale chunks \
                 from an append or rechunk skew sizing"
            ),
        }
    }
}
