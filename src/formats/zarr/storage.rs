//! [`ZarrStorage`]: the `zarrs` readable storage over a [`ZarrStore`], so `zarrs` parses
//! metadata and decodes chunks while the transport, what is remembered and the request
//! pattern stay chunkwise's.
//!
//! - Metadata keys go through the store's remembering layer ([`ZarrStore::metadata`]).
//! - Chunk and shard byte ranges go through the store's reads (identical reads in flight are
//!   made once); several bounded ranges of one key asked together are coalesced with the
//!   one coalescer ([`crate::io::read_coalesced`]).
//! - Bounded reads of one key asked at the same time are gathered into one batch and read
//!   through the coalescer: `zarrs` reads the inner chunks of a shard each on its own (all
//!   started together), and the batch turns them into one request (or as few as
//!   [`CoalesceOptions`] allow). A read waits one scheduler turn for its siblings to join.
//! - Every read checks it got the bytes it asked for: a short object (a shard shorter than
//!   its index, a range past the end) is a [`ZarrError::Invalid`] naming the key, never a
//!   short buffer handed to a decoder.
//!
//! `zarrs` carries storage errors as text (`StorageError::Other`); the typed [`ZarrError`]
//! behind each is kept here and recovered by [`ZarrStorage::typed_error`], matched by the
//! variant that carries it and that text exactly.

use super::store::{is_metadata_key, ZarrStore};
use super::ZarrError;
use crate::io::{ByteRange, CoalesceOptions, IoError};
use bytes::Bytes;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use zarrs::storage::byte_range::{ByteRange as ZRange, ByteRangeIterator};
use zarrs::storage::{AsyncMaybeBytesIterator, AsyncReadableStorageTraits, StorageError, StoreKey};

/// Most typed errors kept for [`ZarrStorage::typed_error`] (older ones are dropped: their
/// error then surfaces as `zarrs`' text).
const MAX_KEPT_ERRORS: usize = 64;

#[cfg(not(target_arch = "wasm32"))]
type Boxed<T> = futures::future::BoxFuture<'static, T>;
#[cfg(target_arch = "wasm32")]
type Boxed<T> = futures::future::LocalBoxFuture<'static, T>;
type SharedBatch = futures::future::Shared<Boxed<Result<Option<Vec<Bytes>>, ZarrError>>>;

/// Bounded reads of one key gathered to be read together.
#[derive(Default)]
struct Batch {
    ranges: Vec<Range<u64>>,
    /// The read of `ranges`, once started (no range joins after that).
    read: Option<SharedBatch>,
}

/// Returns `Pending` once (waking itself), so futures started together all run up to
/// their read before the first of them sends it.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        if self.0 {
            std::task::Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
}

/// The `zarrs` storage of one [`ZarrStore`] (see the module documentation).
pub struct ZarrStorage {
    store: Arc<ZarrStore>,
    /// Object sizes learnt from suffix (shard index) reads, by key.
    sizes: Mutex<HashMap<String, u64>>,
    /// Batches by key: at most one gathering, and those in flight.
    batches: Mutex<HashMap<String, Vec<Arc<Mutex<Batch>>>>>,
    options: Mutex<CoalesceOptions>,
    errors: Mutex<Vec<ZarrError>>,
    /// Chunk-data keys found absent, when tracked ([`ZarrStorage::track_absent`]).
    absent: Mutex<Option<std::collections::HashSet<String>>>,
    /// Keys whose batches wait before they start ([`ZarrStorage::hold`]): how many holds, and
    /// the reads waiting.
    holds: Mutex<HashMap<String, (usize, Vec<std::task::Waker>)>>,
}

/// A hold on the batches of one key ([`ZarrStorage::hold`]); dropping it lets them start.
pub struct BatchHold<'a> {
    storage: &'a ZarrStorage,
    key: String,
}

impl Drop for BatchHold<'_> {
    fn drop(&mut self) {
        let wakers = {
            let mut g = lock(&self.storage.holds);
            match g.get_mut(&self.key) {
                Some((n, _)) if *n > 1 => {
                    *n -= 1;
                    Vec::new()
                }
                Some(_) => g.remove(&self.key).map(|(_, w)| w).unwrap_or_default(),
                None => Vec::new(),
            }
        };
        for w in wakers {
            w.wake();
        }
    }
}

/// Ready once no [`BatchHold`] is on `key`.
struct Released<'a> {
    storage: &'a ZarrStorage,
    key: &'a str,
}

impl std::future::Future for Released<'_> {
    type Output = ();
    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let mut g = lock(&self.storage.holds);
        match g.get_mut(self.key) {
            Some((_, wakers)) => {
                if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    wakers.push(cx.waker().clone());
                }
                std::task::Poll::Pending
            }
            None => std::task::Poll::Ready(()),
        }
    }
}

impl std::fmt::Debug for ZarrStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZarrStorage")
            .field("store", &self.store.base())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section leaves the data consistent: a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl ZarrStorage {
    /// The storage of `store`.
    pub fn new(store: Arc<ZarrStore>) -> ZarrStorage {
        ZarrStorage {
            store,
            sizes: Mutex::new(HashMap::new()),
            batches: Mutex::new(HashMap::new()),
            options: Mutex::new(CoalesceOptions::default()),
            errors: Mutex::new(Vec::new()),
            absent: Mutex::new(None),
            holds: Mutex::new(HashMap::new()),
        }
    }

    /// Holds the batches of `key` (a chunk or shard key) from starting until the returned
    /// guard is dropped, so that reads started by several `zarrs` calls join one batch: a
    /// read waits one scheduler turn for its siblings, but `zarrs`' combinators poll a read
    /// that woke itself again before they return, so the reads of separate calls (the boxes
    /// of one shard's touched inner chunks) would each start a batch of their own. The
    /// caller drops the guard once every call has been polled (see
    /// `ZarrArray::load_from_shard`), never later: reads wait for nothing else.
    pub fn hold(&self, key: &str) -> BatchHold<'_> {
        let key = key.trim_start_matches('/').to_string();
        lock(&self.holds).entry(key.clone()).or_default().0 += 1;
        BatchHold { storage: self, key }
    }

    /// Starts remembering which chunk-data keys were absent (not found) when read, for
    /// [`ZarrStorage::was_absent`]. For sharded arrays, whose shards `zarrs` reads (and fills
    /// when absent) on its own: the set grows with absent shards, not inner chunks.
    pub fn track_absent(&self) {
        lock(&self.absent).get_or_insert_with(Default::default);
    }

    /// Whether a read of chunk-data `key` found it absent (only while tracked).
    pub fn was_absent(&self, key: &str) -> bool {
        lock(&self.absent)
            .as_ref()
            .is_some_and(|s| s.contains(key.trim_start_matches('/')))
    }

    fn note_absent(&self, key: &str) {
        if let Some(s) = lock(&self.absent).as_mut() {
            if !is_metadata_key(key) {
                s.insert(key.to_string());
            }
        }
    }

    /// The store it reads.
    pub fn store(&self) -> &Arc<ZarrStore> {
        &self.store
    }

    /// The typed error behind `e`, if this storage raised it (it is then forgotten).
    ///
    /// `zarrs`' storage traits return [`StorageError`], whose only variant for a store's own
    /// failure is `StorageError::Other(String)`: text. So [`ZarrStorage`] keeps each typed
    /// error it raises beside the text it hands `zarrs`, and this takes it back for the
    /// `Other` whose text is exactly that error's text. Other variants are `zarrs`' own.
    pub fn typed_error(&self, e: &StorageError) -> Option<ZarrError> {
        let StorageError::Other(text) = e else {
            return None;
        };
        let mut g = lock(&self.errors);
        let i = g.iter().position(|e| e.to_string() == *text)?;
        Some(g.remove(i))
    }

    fn raise(&self, e: ZarrError) -> StorageError {
        let text = e.to_string();
        let mut g = lock(&self.errors);
        if g.len() >= MAX_KEPT_ERRORS {
            g.remove(0);
        }
        g.push(e);
        StorageError::Other(text)
    }

    fn short(&self, key: &str, asked: &str, got: usize) -> ZarrError {
        let len = lock(&self.sizes).get(key).copied();
        ZarrError::Invalid {
            key: self.store.url(key),
            detail: match len {
                Some(n) => format!("object of {n} bytes holds {got} of the bytes {asked} read"),
                None => format!("only {got} bytes of {asked} read"),
            },
        }
    }

    /// Sets how gathered reads are coalesced (gap, merged size, requests in flight).
    pub fn set_options(&self, options: &CoalesceOptions) {
        *lock(&self.options) = options.clone();
    }

    /// Reads the bounded, non-empty `wanted` ranges of `key` in a batch with every other
    /// bounded read of `key` started in the same scheduler turn; `None` when the object does
    /// not exist.
    ///
    /// # Errors
    /// [`ZarrError::Invalid`] for a range outside the object when its size is known from an
    /// earlier read (a shard index read tells the shard's size); I/O errors.
    async fn read_batched(
        &self,
        key: &str,
        wanted: &[Range<u64>],
    ) -> Result<Option<Vec<Bytes>>, ZarrError> {
        let covers = |b: &Batch| {
            wanted.iter().all(|r| {
                b.ranges
                    .binary_search_by_key(&(r.start, r.end), |x| (x.start, x.end))
                    .is_ok()
            })
        };
        // A batch in flight that holds every wanted range serves this read; else join the
        // batch still gathering (or start one).
        let (batch, joined) = {
            let mut g = lock(&self.batches);
            let list = g.entry(key.to_string()).or_default();
            if let Some(b) = list.iter().find(|b| {
                let b = lock(b);
                b.read.is_some() && covers(&b)
            }) {
                (b.clone(), true)
            } else {
                let b = match list.iter().find(|b| lock(b).read.is_none()) {
                    Some(b) => b.clone(),
                    None => {
                        let b = Arc::<Mutex<Batch>>::default();
                        list.push(b.clone());
                        b
                    }
                };
                lock(&b).ranges.extend(wanted.iter().cloned());
                (b, false)
            }
        };
        if !joined {
            YieldOnce(false).await;
            Released {
                storage: self,
                key: key.trim_start_matches('/'),
            }
            .await;
        }
        let (read, ranges, started) = {
            let mut b = lock(&batch);
            let started = b.read.is_none();
            if started {
                let mut ranges = std::mem::take(&mut b.ranges);
                crate::sort::sort_by_key(&mut ranges, |r| (r.start, r.end));
                ranges.dedup();
                let size = lock(&self.sizes).get(key).copied();
                let outside =
                    size.and_then(|n| ranges.iter().find(|r| r.end > n).map(|r| (r.clone(), n)));
                let store = self.store.clone();
                let k = key.to_string();
                let wanted = ranges.clone();
                let options = lock(&self.options).clone();
                let fut: Boxed<_> = Box::pin(async move {
                    if let Some((r, n)) = outside {
                        return Err(ZarrError::Invalid {
                            key: store.url(&k),
                            detail: format!(
                                "shard index points at bytes {}..{}, outside the shard's {n} \
                                 bytes",
                                r.start, r.end
                            ),
                        });
                    }
                    match store.read_ranges(&k, &wanted, &options).await {
                        Err(ZarrError::Io(
                            e @ (IoError::BadContentRange { .. }
                            | IoError::RangeNotSatisfiable { .. }),
                        )) => Err(ZarrError::Invalid {
                            key: store.url(&k),
                            detail: format!("bytes outside the object were asked for: {e}"),
                        }),
                        r => r,
                    }
                });
                b.read = Some(futures::FutureExt::shared(fut));
                b.ranges = ranges;
            }
            (b.read.clone().expect("started"), b.ranges.clone(), started)
        };
        let result = read.await;
        if started {
            let mut g = lock(&self.batches);
            if let Some(list) = g.get_mut(key) {
                list.retain(|b| !Arc::ptr_eq(b, &batch));
                if list.is_empty() {
                    g.remove(key);
                }
            }
        }
        let Some(got) = result? else {
            return Ok(None);
        };
        wanted
            .iter()
            .map(|r| {
                let i = ranges
                    .binary_search_by_key(&(r.start, r.end), |x| (x.start, x.end))
                    .expect("every wanted range is in its batch");
                Ok(got[i].clone())
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn note_size(&self, key: &str, len: u64) {
        lock(&self.sizes).insert(key.to_string(), len);
    }

    /// One range of `key`, checked for length; `None`: the object does not exist.
    async fn read_one(&self, key: &str, r: ZRange) -> Result<Option<Bytes>, ZarrError> {
        let (ours, want) = match r {
            ZRange::FromStart(o, Some(n)) => (ByteRange::bounded(o..o.saturating_add(n)), Some(n)),
            ZRange::FromStart(o, None) => (ByteRange::Offset(o), None),
            ZRange::Suffix(n) => (ByteRange::Suffix(n), Some(n)),
        };
        if want == Some(0) {
            return Ok(Some(Bytes::new()));
        }
        let got = match self.store.read(key, ours).await {
            Err(ZarrError::Io(
                IoError::BadContentRange { .. } | IoError::RangeNotSatisfiable { .. },
            )) => {
                return Err(ZarrError::Invalid {
                    key: self.store.url(key),
                    detail: format!("the object ends before the bytes {} read", ours.to_header()),
                })
            }
            r => r?,
        };
        let Some(f) = got else {
            return Ok(None);
        };
        // A suffix read is a shard index read: remember the shard's size, against which
        // the inner-chunk ranges its index gives are checked. (Not for every chunk read, so
        // the map grows with shards, not chunks.)
        if matches!(r, ZRange::Suffix(_)) {
            self.note_size(key, f.info.len.max(f.bytes.len() as u64));
        }
        if let Some(n) = want {
            if f.bytes.len() as u64 != n {
                return Err(self.short(key, &ours.to_header(), f.bytes.len()));
            }
        }
        Ok(Some(f.bytes))
    }

    async fn read_many(
        &self,
        key: &str,
        ranges: Vec<ZRange>,
    ) -> Result<Option<Vec<Bytes>>, ZarrError> {
        if is_metadata_key(key) {
            let Some(text) = self.store.metadata(key).await? else {
                return Ok(None);
            };
            let all = Bytes::from(text.into_bytes());
            let n = all.len() as u64;
            return ranges
                .into_iter()
                .map(|r| {
                    let (s, e) = match r {
                        ZRange::FromStart(o, None) => (o, n),
                        ZRange::FromStart(o, Some(l)) => (o, o.saturating_add(l)),
                        ZRange::Suffix(l) => (n.saturating_sub(l), n),
                    };
                    if s > e || e > n {
                        Err(self.short(key, &format!("{s}..{e}"), all.len()))
                    } else {
                        Ok(all.slice(s as usize..e as usize))
                    }
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some);
        }
        // Bounded ranges (chunk data, inner chunks of a shard): batched and coalesced.
        let bounded: Option<Vec<Range<u64>>> = ranges
            .iter()
            .map(|r| match r {
                ZRange::FromStart(o, Some(n)) if *n > 0 => o.checked_add(*n).map(|e| *o..e),
                _ => None,
            })
            .collect();
        if let Some(b) = bounded.filter(|b| !b.is_empty()) {
            return self.read_batched(key, &b).await;
        }
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            match self.read_one(key, r).await? {
                Some(b) => out.push(b),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }
}

fn storage_key(key: &StoreKey) -> &str {
    key.as_str().trim_start_matches('/')
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl AsyncReadableStorageTraits for ZarrStorage {
    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        let k = storage_key(key);
        let ranges: Vec<ZRange> = byte_ranges.collect();
        // The fetches are awaited here; the stream only hands out finished bytes (zarrs
        // needs it `Send`, which a fetch in wasm is not).
        match self.read_many(k, ranges).await {
            Ok(Some(v)) => Ok(Some(Box::pin(futures::stream::iter(v.into_iter().map(Ok))))),
            Ok(None) => {
                self.note_absent(k);
                Ok(None)
            }
            Err(e) => Err(self.raise(e)),
        }
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        let k = storage_key(key);
        if let Some(n) = lock(&self.sizes).get(k).copied() {
            return Ok(Some(n));
        }
        if is_metadata_key(k) {
            return match self.store.metadata(k).await {
                Ok(t) => Ok(t.map(|t| t.len() as u64)),
                Err(e) => Err(self.raise(e)),
            };
        }
        match self.store.read(k, ByteRange::Suffix(1)).await {
            Ok(Some(f)) => {
                self.note_size(k, f.info.len);
                Ok(Some(f.info.len))
            }
            Ok(None) => {
                self.note_absent(k);
                Ok(None)
            }
            Err(e) => Err(self.raise(e)),
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::io::RangeSource;

    /// A kept error comes back only for the `StorageError::Other` that carries exactly its
    /// text, once; not for another error whose text merely contains it (the key `c/1` is a
    /// prefix of `c/10`), nor for `zarrs`' own variants.
    #[test]
    fn typed_errors_are_found_by_variant_and_exact_text() {
        let opener = |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
            Err(IoError::NotFound {
                location: url.into(),
            })
        };
        let storage = ZarrStorage::new(Arc::new(ZarrStore::new("mem://s", Arc::new(opener))));
        let status = |key: &str| {
            ZarrError::Io(IoError::HttpStatus {
                location: format!("mem://s/a/{key}"),
                status: 503,
            })
        };
        let first = storage.raise(status("c/1"));
        let second = storage.raise(status("c/10"));
        assert_eq!(storage.typed_error(&second), Some(status("c/10")));
        assert_eq!(storage.typed_error(&second), None);
        let wrapped = StorageError::Other(format!("while reading: {first}"));
        assert_eq!(storage.typed_error(&wrapped), None);
        assert_eq!(storage.typed_error(&StorageError::ReadOnly), None);
        assert_eq!(storage.typed_error(&first), Some(status("c/1")));
    }
}
