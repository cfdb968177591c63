//! An in-memory [`RangeSource`]: a byte buffer served by range, for tests and for complete
//! copies of small sources.

use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo};
use bytes::Bytes;

/// Serves ranges of a buffer held in memory. Never fails except for unsatisfiable ranges.
#[derive(Debug, Clone)]
pub struct MemorySource {
    info: SourceInfo,
    data: Bytes,
}

impl MemorySource {
    /// A source named `location` holding `data`.
    pub fn new(location: impl Into<String>, data: impl Into<Bytes>) -> Self {
        let data = data.into();
        let info = SourceInfo {
            location: location.into(),
            len: data.len() as u64,
            etag: None,
            last_modified: None,
        };
        Self { info, data }
    }

    /// A source serving `data` under the identity (location, validators) of `info`; used when
    /// a complete copy of a remote object stands in for it.
    pub fn with_info(info: SourceInfo, data: Bytes) -> Self {
        Self {
            info: SourceInfo {
                len: data.len() as u64,
                ..info
            },
            data,
        }
    }

    /// All the bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.data
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl RangeSource for MemorySource {
    fn location(&self) -> &str {
        &self.info.location
    }
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        let r = range.resolve(&self.info.location, self.data.len() as u64)?;
        Ok(Fetched {
            bytes: self.data.slice(r.start as usize..r.end as usize),
            range: r,
            info: self.info.clone(),
            whole: None,
        })
    }
}
