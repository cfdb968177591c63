//! The marker every persisted blob is published with, shared by the filesystem backend
//! ([`super::fs`]) and the key-value backend ([`super::marked`]): one JSON object naming the
//! entry's key, the blob's size and SHA-256, its version token and its last recorded use.
//!
//! ```json
//! {"schema": 3, "key": "K", "bytes": 1234, "sha256": "<hex of the blob>", "version": "", "used": 1764590000000}
//! ```
//!
//! A marker is trusted only as [`Marker::parse`] reads it (this schema, at most
//! [`MAX_MARKER_BYTES`], a 64-digit digest) and a blob only when [`Marker::describes`] it
//! (spec: remote cache design, "Readers validate marker schema, file size, bounded reads, and
//! SHA-256"). These names and fields are private to chunkwise and change with
//! [`SCHEMA_VERSION`].

use crate::cache::identity::sha256_hex;

/// Version of the marker format; a marker of another version is a miss.
///
/// 2: keys without URL queries or user info (schema 1 markers held them in clear).
/// 3: a version token and the time of last use.
pub const SCHEMA_VERSION: u32 = 3;

/// Largest marker trusted (bytes): markers hold a key, a digest and a version token, far
/// less than this; a larger one is damage (a miss, and its entry is removed).
pub const MAX_MARKER_BYTES: u64 = 1 << 20;

/// One blob's marker.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The entry's key, as given to the backend.
    pub key: String,
    /// The blob's size in bytes.
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the blob.
    pub sha256: String,
    /// The entry's version token (empty when none was given).
    #[serde(default)]
    pub version: String,
    /// When the entry was published or its use last recorded, ms since the Unix epoch.
    #[serde(default)]
    pub used: u64,
    /// The storage's own time of the marker's last change (a file's modification time, ms
    /// since the epoch; 0 where the storage keeps none). Not written: read with the marker.
    #[serde(skip)]
    pub touched: u64,
}

impl Marker {
    /// The marker of `blob` under `key` with version token `version`, used now.
    pub fn new(key: &str, blob: &[u8], version: &str) -> Marker {
        Marker {
            schema: SCHEMA_VERSION,
            key: key.to_string(),
            bytes: blob.len() as u64,
            sha256: sha256_hex(blob),
            version: version.to_string(),
            used: now_ms(),
            touched: 0,
        }
    }

    /// The marker in `raw`, if it is one to trust: at most [`MAX_MARKER_BYTES`], JSON of
    /// this schema, with a 64-digit digest.
    pub fn parse(raw: &[u8]) -> Option<Marker> {
        if raw.len() as u64 > MAX_MARKER_BYTES {
            return None;
        }
        // Through a `Value`, as discovery records are (`crate::cache::discovery::from_json`).
        let m: Marker = serde_json::from_value(serde_json::from_slice(raw).ok()?).ok()?;
        (m.schema == SCHEMA_VERSION && m.sha256.len() == 64).then_some(m)
    }

    /// The JSON written for this marker.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a marker serialises")
    }

    /// Whether `blob` is the one this marker describes (its size and SHA-256).
    pub fn describes(&self, blob: &[u8]) -> bool {
        blob.len() as u64 == self.bytes && sha256_hex(blob) == self.sha256
    }

    /// The entry's last use: the later of `used` and `touched`.
    pub fn last_use(&self) -> u64 {
        self.used.max(self.touched)
    }
}

/// Milliseconds since the Unix epoch, now (0 for a clock set before it).
pub fn now_ms() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() as u64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }
}
