//! The [`RangeSource`] trait: one small async interface for every transport.

use super::{ByteRange, IoError};
use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use std::ops::Range;
use std::sync::Arc;

/// `Send` natively, nothing on wasm32 (where JS futures are not `Send`), so one trait
/// definition serves both targets.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}
/// `Send` natively, nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` natively, nothing on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}
/// `Sync` natively, nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// What a transport learned about the object it read from.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct SourceInfo {
    /// URL or path of the object.
    pub location: String,
    /// Total size of the object in bytes (from `Content-Range`, or the file size).
    pub len: u64,
    /// HTTP `ETag` validator, if the server sent one.
    pub etag: Option<String>,
    /// HTTP `Last-Modified` validator, if the server sent one.
    pub last_modified: Option<String>,
}

/// The bytes of one range read, with the absolute range they cover and the object's identity.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// Absolute byte range of `bytes` in the object (`bytes.len() == range.end - range.start`).
    pub range: Range<u64>,
    /// The bytes read.
    pub bytes: Bytes,
    /// Size and validators of the object, as learned by this read.
    pub info: SourceInfo,
    /// The whole object, when the server sent all of it in answer to a range request (it
    /// ignored `Range`, RFC 9110 §14.2, or the range covered the object): `bytes` is then a
    /// slice of it. A caller may keep it as the complete copy rather than ask again;
    /// [`super::Counted`] counts its length, the bytes that crossed the wire. `None` from
    /// every other answer.
    pub whole: Option<Bytes>,
}

/// An object that can be read by byte ranges: an HTTP URL, a file, a buffer in memory.
///
/// Only [`RangeSource::read`] and [`RangeSource::location`] are required; reading several
/// ranges is provided on top (bounded concurrency, results in request order), so every
/// transport and wrapper behaves the same. Wrappers (traffic counting, retries) are
/// themselves `RangeSource`s.
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
pub trait RangeSource: MaybeSend + MaybeSync {
    /// URL or path, for messages and cache identity.
    fn location(&self) -> &str;

    /// Reads one range.
    ///
    /// The returned [`Fetched::range`] is the absolute range served (clamped to the object's
    /// end for `Offset`/`Suffix`/over-long requests).
    ///
    /// # Errors
    /// [`IoError`]: not found, range not satisfiable, server ignoring ranges on a large object,
    /// malformed `Content-Range`, network failures.
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError>;

    /// Reads several bounded ranges, at most `concurrency` at a time (at least 1), and returns
    /// their bytes in the order asked. Ranges are read as given: callers coalesce first with
    /// [`super::coalesce`].
    async fn read_many(
        &self,
        ranges: &[Range<u64>],
        concurrency: usize,
    ) -> Result<Vec<Bytes>, IoError> {
        let futs = ranges.iter().cloned().map(|r| read_exact(self, r));
        stream::iter(futs)
            .buffered(concurrency.max(1))
            .try_collect()
            .await
    }
}

/// Reads exactly the bounded `range` of `source`.
///
/// # Errors
/// The source's errors; [`IoError::BadContentRange`] when it serves other bytes than asked
/// (a range past the end of the object).
pub async fn read_exact<S: RangeSource + ?Sized>(
    source: &S,
    range: Range<u64>,
) -> Result<Bytes, IoError> {
    let f = source.read(ByteRange::bounded(range.clone())).await?;
    if f.range != range {
        return Err(IoError::BadContentRange {
            location: source.location().to_string(),
            detail: format!("asked {range:?}, got {:?}", f.range),
        });
    }
    Ok(f.bytes)
}

#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl<T: RangeSource + ?Sized> RangeSource for Arc<T> {
    fn location(&self) -> &str {
        (**self).location()
    }
    async fn read(&self, range: ByteRange) -> Result<Fetched, IoError> {
        (**self).read(range).await
    }
    async fn read_many(
        &self,
        ranges: &[Range<u64>],
        concurrency: usize,
    ) -> Result<Vec<Bytes>, IoError> {
        (**self).read_many(ranges, concurrency).await
    }
}
