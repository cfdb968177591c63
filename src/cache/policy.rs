//! Cache policies (spec: "Policies, accounting, and persistence").

/// Default bound of retained compressed payload: 256 MiB (spec).
pub const DEFAULT_MAX_CACHE_BYTES: u64 = 256 * 1024 * 1024;

/// Where compressed payload is retained between operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// Retained in memory (wasm linear memory in JS hosts) for the owner's lifetime.
    #[default]
    Memory,
    /// Retained on disk across processes (natively: a cache directory of blobs, each with a
    /// JSON marker holding schema version, byte size and SHA-256; see
    /// [`crate::cache::CacheCoordinator::disk`]). Not available in wasm builds.
    Disk,
    /// Not retained between operations. Discovery state and, for small sources, the complete
    /// copy fetched at open are still kept for the session (spec: "NONE does not mean that
    /// readers discard all discovery state").
    None,
}

impl std::str::FromStr for CachePolicy {
    type Err = String;
    /// Parses `memory`, `disk` or `none` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "memory" => Ok(CachePolicy::Memory),
            "disk" => Ok(CachePolicy::Disk),
            "none" => Ok(CachePolicy::None),
            _ => Err(format!(
                "unknown cache policy {:?} (expected memory, disk or none)",
                crate::error::excerpt(s)
            )),
        }
    }
}
