//! [`Validated`]: a source whose every answer must match an identity recorded earlier.
//!
//! A discovery record is trusted on reopen without a request (sources are assumed
//! immutable), but the payload reads that follow do reach the server, and their answers
//! carry the object's current size, `ETag` and `Last-Modified`. Checking each against the
//! record turns a source rewritten at the same URL into [`IoError::SourceChanged`] instead
//! of a result mixing cached chunks of the old version with fetched chunks of the new one.
//! The rule is the transport's own between two answers (`content_range::Validators`): the
//! lengths must be equal, and an `ETag` or `Last-Modified` carried by both must be equal.

use super::content_range::Validators;
use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo};
use std::sync::Arc;

/// A [`RangeSource`] that checks every answer of `inner` against a recorded identity.
pub struct Validated {
    inner: Arc<dyn RangeSource>,
    expected: Validators,
}

impl Validated {
    /// Wraps `inner`, whose answers must match `recorded` (size and validators of the
    /// version the caller's cached state describes).
    pub fn new(inner: Arc<dyn RangeSource>, recorded: SourceInfo) -> Validated {
        Validated {
            inner,
            expected: Validators::expecting(recorded),
        }
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl RangeSource for Validated {
    fn location(&self) -> &str {
        self.inner.location()
    }

    /// # Errors
    /// Those of the inner source, and [`IoError::SourceChanged`] when the answer's size or
    /// validators differ from the recorded ones.
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        let f = self.inner.read(range).await?;
        self.expected.check(&f.info)?;
        Ok(f)
    }
    // `read_many` is the trait's provided one: it calls `read` above for each range, so
    // every answer is checked.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;
    use bytes::Bytes;

    fn info(len: u64, etag: Option<&str>) -> SourceInfo {
        SourceInfo {
            location: "mem://a".into(),
            len,
            etag: etag.map(str::to_string),
            last_modified: None,
        }
    }

    #[test]
    fn answers_of_another_version_are_refused() {
        futures::executor::block_on(async {
            let now = Arc::new(MemorySource::with_info(
                info(4, Some("\"v2\"")),
                Bytes::from_static(b"abcd"),
            ));
            let same = Validated::new(now.clone(), info(4, Some("\"v2\"")));
            assert_eq!(
                &same.read(ByteRange::bounded(0..2)).await.unwrap().bytes[..],
                b"ab"
            );
            let old = Validated::new(now.clone(), info(4, Some("\"v1\"")));
            let e = old.read(ByteRange::bounded(0..2)).await.unwrap_err();
            assert!(matches!(e, IoError::SourceChanged { .. }), "{e:?}");
            let e = old.read_many(&[0..1, 2..3], 2).await.unwrap_err();
            assert!(matches!(e, IoError::SourceChanged { .. }), "{e:?}");
            let shorter = Validated::new(now, info(3, None));
            let e = shorter.read(ByteRange::bounded(0..2)).await.unwrap_err();
            assert!(matches!(e, IoError::SourceChanged { .. }), "{e:?}");
        })
    }
}
