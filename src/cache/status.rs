//! [`CacheStatus`]: what an open found in the discovery layer, reported by
//! `RemoteArray::cache_status` and `RemoteStore::cache_status` (python-blosc2's
//! `cache_status` values, spec: remote cache design, "Freshness and refresh").

/// What an open (or a store's refresh) did with the discovery record of its source and
/// scope. Serialised lowercase: `"created"`, `"reused"`, `"invalidated"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheStatus {
    /// No record was held: the source was discovered and its record stored.
    Created,
    /// A held record was used (no discovery request).
    Reused,
    /// A record was held but dropped, and the source discovered afresh: its identity
    /// changed (the mutable-source check of `OpenOptions::assume_immutable`), the record
    /// was of another version or no longer built a reader, or a store was refreshed.
    Invalidated,
}

impl CacheStatus {
    /// The lowercase name (`"created"`, `"reused"`, `"invalidated"`).
    pub fn as_str(self) -> &'static str {
        match self {
            CacheStatus::Created => "created",
            CacheStatus::Reused => "reused",
            CacheStatus::Invalidated => "invalidated",
        }
    }
}

impl std::fmt::Display for CacheStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_python_blosc2_names() {
        for s in [
            CacheStatus::Created,
            CacheStatus::Reused,
            CacheStatus::Invalidated,
        ] {
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(CacheStatus::Invalidated.as_str(), "invalidated");
    }
}
