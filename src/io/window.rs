//! [`Window`]: a byte range of another source, read as a source of its own.
//!
//! A stored member of a ZIP archive (a `.b2nd` frame inside a `.b2z`) is a contiguous range
//! of the archive. Reading it through a window translates every offset the member's reader
//! asks for (frame header, offsets chunk, chunks) into an archive offset, so the member is
//! read in place: no copy of it is made and only the bytes a read needs are fetched (spec:
//! remote cache design, ".b2z archives": "translate native frame offsets to archive
//! offsets").

use super::{ByteRange, Fetched, IoError, RangeSource, SourceInfo};
use std::ops::Range;
use std::sync::Arc;

/// The bytes `start..start + len` of `inner`, addressed from 0.
pub struct Window {
    inner: Arc<dyn RangeSource>,
    start: u64,
    len: u64,
    location: String,
}

impl Window {
    /// The window `range` of `inner`, named `location` in messages (e.g.
    /// `https://host/store.b2z member g/data.b2nd`). The caller checks that `range` lies inside
    /// `inner` (a read past the end of `inner` fails as `inner` fails it).
    pub fn new(inner: Arc<dyn RangeSource>, range: Range<u64>, location: String) -> Window {
        Window {
            inner,
            start: range.start,
            len: range.end.saturating_sub(range.start),
            location,
        }
    }

    /// Where the window lies in `inner`.
    pub fn range(&self) -> Range<u64> {
        self.start..self.start + self.len
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl RangeSource for Window {
    fn location(&self) -> &str {
        &self.location
    }

    /// Reads `range` of the window: one read of the translated range of the inner source.
    /// The answer's range is in window offsets, its info the window's (its length, the
    /// inner source's validators), and `whole` is never set (the inner answer's whole
    /// object is not the window's).
    ///
    /// # Errors
    /// [`IoError::RangeNotSatisfiable`] for a range starting past the window's end; the inner
    /// source's errors; [`IoError::BadContentRange`] if it serves other bytes than asked.
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        range.validate()?;
        let r = range.resolve(&self.location, self.len)?;
        let want = self.start + r.start..self.start + r.end;
        let f = self.inner.read(ByteRange::bounded(want.clone())).await?;
        if f.range != want {
            return Err(IoError::BadContentRange {
                location: self.location.clone(),
                detail: format!("asked {want:?} of the archive, got {:?}", f.range),
            });
        }
        Ok(Fetched {
            range: r,
            bytes: f.bytes,
            info: SourceInfo {
                location: self.location.clone(),
                len: self.len,
                ..f.info
            },
            whole: None,
        })
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;

    #[tokio::test]
    async fn a_window_passes_the_range_source_conformance_checks() {
        let data: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let inner = Arc::new(MemorySource::new("mem://archive", data.clone()));
        let w = Window::new(inner, 1000..4000, "mem://archive#m".into());
        crate::io::conformance::check_source(&w, &data[1000..4000]).await;
    }

    #[tokio::test]
    async fn offsets_are_translated_and_the_end_is_the_windows() {
        let data: Vec<u8> = (0..100u8).collect();
        let inner = Arc::new(MemorySource::new("mem://a", data));
        let w = Window::new(inner, 10..20, "mem://a#m".into());
        let f = w.read(ByteRange::bounded(2..5)).await.unwrap();
        assert_eq!(&f.bytes[..], &[12, 13, 14]);
        assert_eq!(f.range, 2..5);
        assert_eq!(f.info.len, 10);
        let f = w.read(ByteRange::Suffix(3)).await.unwrap();
        assert_eq!(&f.bytes[..], &[17, 18, 19]);
        assert!(w.read(ByteRange::bounded(10..12)).await.is_err());
    }
}
