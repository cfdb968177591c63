//! Warming up a format's read path while the first request of an open is in flight.
//!
//! A wasm engine compiles a module's functions lazily (V8: each function with its baseline
//! compiler, Liftoff, on its first call), so the first open and read of a page pays for
//! compiling the JSON or object-header parsing, the format's metadata and codec code, the
//! read pipeline and the decoder: for a Zarr v3 array about 30 ms of CPU between the
//! metadata's answer and the chunk request and 20 ms between the chunk's answer and the
//! values, measured in headless Chromium (`scripts/bench-first-preview.mjs`, "Critical path
//! by phase"). During the first round trip the thread only waits. `beside` spends that
//! wait opening and reading a tiny array of the same format held in memory ([`read`]), so
//! that the same functions are compiled before the real answers arrive. The format is
//! guessed from the location's name ([`format_of`]); each format warms up once per wasm
//! instance, and only while the open still waits: an open that completes first (a cached
//! one) stops its warm-up at its next step.

use crate::array::{OpenOptions, RemoteArray};
use crate::cache::CacheCoordinator;
use crate::error::Result;
use crate::io::memory::MemorySource;
use crate::io::Traffic;
#[cfg(feature = "zarr")]
use crate::io::{IoError, RangeSource};
use crate::pipeline::{ArrayData, ReadOptions};
use crate::selection::Selection;
#[cfg(target_arch = "wasm32")]
use std::future::Future;
#[cfg(target_arch = "wasm32")]
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
#[cfg(target_arch = "wasm32")]
use std::time::Duration;

/// A format with a warm-up array. Each holds the same 16x16 float32 array, values `0.5 * i`
/// in C order, written by that format's reference library with its usual settings
/// (`tests/fixtures/gen_warm_up.py`, into `src/open/warm_up/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Zarr v3 store by zarr-python (`v3.zarr`): a group with consolidated metadata,
    /// `/field` in one chunk, the default codecs (bytes, zstd).
    #[cfg(feature = "zarr")]
    Zarr,
    /// An HDF5 file by h5py (`field.h5`): `/field` in 8x8 chunks, gzip + shuffle, superblock
    /// v0, chunk index B-tree v1.
    #[cfg(feature = "hdf5")]
    Hdf5,
    /// A `.b2nd` frame by python-blosc2 (`field.b2nd`): 8x8 chunks of 4x4 blocks, ZSTD +
    /// SHUFFLE.
    #[cfg(feature = "b2nd")]
    B2nd,
}

#[cfg(target_arch = "wasm32")]
impl Format {
    /// The bit of this format in [`STARTED`].
    fn bit(self) -> u8 {
        match self {
            #[cfg(feature = "zarr")]
            Format::Zarr => 1,
            #[cfg(feature = "hdf5")]
            Format::Hdf5 => 2,
            #[cfg(feature = "b2nd")]
            Format::B2nd => 4,
        }
    }
}

/// The format a location names, from its name alone (no request): a Zarr store root
/// ([`super::is_zarr_root`]), a name ending in `.h5`, `.hdf5`, `.he5` or `.nc` (HDF5,
/// netCDF-4), or `.b2nd`, in a build with that format; `None` otherwise (no warm-up: a
/// wrong guess would only spend the wait on code the open does not run).
pub fn format_of(location: &str) -> Option<Format> {
    #[cfg(feature = "zarr")]
    if super::is_zarr_root(location) {
        return Some(Format::Zarr);
    }
    #[cfg(feature = "hdf5")]
    if [".h5", ".hdf5", ".he5", ".nc"]
        .iter()
        .any(|e| super::name_ends_with(location, e))
    {
        return Some(Format::Hdf5);
    }
    #[cfg(feature = "b2nd")]
    if super::name_ends_with(location, ".b2nd") {
        return Some(Format::B2nd);
    }
    let _ = location;
    None
}

/// The base URL of the warm-up arrays: never fetched (every object is in memory); a
/// reserved name (RFC 2606) in case it is ever printed.
const BASE: &str = "https://warm-up.invalid/";

/// The objects of the Zarr warm-up store, keys relative to its root.
#[cfg(feature = "zarr")]
const ZARR_OBJECTS: [(&str, &[u8]); 3] = [
    ("zarr.json", include_bytes!("warm_up/v3.zarr/zarr.json")),
    (
        "field/zarr.json",
        include_bytes!("warm_up/v3.zarr/field/zarr.json"),
    ),
    ("field/c/0/0", include_bytes!("warm_up/v3.zarr/field/c/0/0")),
];

/// Formats whose warm-up has started in this instance (bits of [`Format::bit`]).
#[cfg(target_arch = "wasm32")]
static STARTED: AtomicU8 = AtomicU8::new(0);

/// Formats whose warm-up read its values to the end.
#[cfg(target_arch = "wasm32")]
static FINISHED: AtomicU8 = AtomicU8::new(0);

/// Opens the warm-up array of `format` and reads it whole ([`open_array`], then the read).
/// Returns the values read (16x16 `<f4`).
///
/// # Errors
/// None expected: the arrays are fixed. An error would be [`open_array`]'s or
/// [`RemoteArray::read`]'s.
pub async fn read(format: Format) -> Result<ArrayData> {
    read_all(&open_array(format).await?).await
}

/// The whole of a warm-up array, read through the one read pipeline.
async fn read_all(array: &RemoteArray) -> Result<ArrayData> {
    let selection = Selection::parse("0:16, 0:16").map_err(crate::Error::from)?;
    array.read(&selection, &ReadOptions::default()).await
}

/// Opens the warm-up array of `format` through the same steps as a remote one (the one
/// opener's format detection and discovery for HDF5 and `.b2nd`, a
/// [`crate::formats::zarr::ZarrStore`] for Zarr), its objects in [`MemorySource`]s, with a
/// memory cache of its own.
///
/// # Errors
/// None expected: the arrays are fixed. An error would be [`RemoteArray::open_with_cache`]'s
/// or [`RemoteArray::open_zarr_with_cache`]'s.
pub async fn open_array(format: Format) -> Result<RemoteArray> {
    let coordinator = CacheCoordinator::memory(1 << 20);
    let options = OpenOptions {
        path: Some("/field".to_string()),
        ..Default::default()
    };
    match format {
        #[cfg(feature = "zarr")]
        Format::Zarr => {
            let base = format!("{BASE}v3.zarr");
            let root = base.clone();
            let opener =
                move |location: &str| -> std::result::Result<Arc<dyn RangeSource>, IoError> {
                    let key = location.strip_prefix(root.as_str()).unwrap_or(location);
                    match ZARR_OBJECTS
                        .iter()
                        .find(|(name, _)| *name == key.trim_start_matches('/'))
                    {
                        Some((_, bytes)) => Ok(Arc::new(MemorySource::new(location, *bytes))),
                        None => Err(IoError::NotFound {
                            location: location.to_string(),
                        }),
                    }
                };
            // In wasm nothing is `Send`: the store lives on the one thread.
            #[allow(clippy::arc_with_non_send_sync)]
            let store = Arc::new(crate::formats::zarr::ZarrStore::new(
                &base,
                Arc::new(opener),
            ));
            let key = super::source_key(&base, &[], &coordinator, None);
            RemoteArray::open_zarr_with_cache(
                store,
                "/field",
                Traffic::new(),
                key,
                options,
                coordinator,
            )
            .await
        }
        #[cfg(feature = "hdf5")]
        Format::Hdf5 => {
            let bytes: &'static [u8] = include_bytes!("warm_up/field.h5");
            single(&format!("{BASE}field.h5"), bytes, options, coordinator).await
        }
        #[cfg(feature = "b2nd")]
        Format::B2nd => {
            let bytes: &'static [u8] = include_bytes!("warm_up/field.b2nd");
            let options = OpenOptions {
                path: None,
                ..options
            };
            single(&format!("{BASE}field.b2nd"), bytes, options, coordinator).await
        }
    }
}

/// Opens the single-object source `bytes` named `location` as [`super::open_array`] opens
/// a remote object: [`RemoteArray::open_with_cache`].
#[cfg(any(feature = "hdf5", feature = "b2nd"))]
async fn single(
    location: &str,
    bytes: &'static [u8],
    options: OpenOptions,
    coordinator: CacheCoordinator,
) -> Result<RemoteArray> {
    let key = super::source_key(location, &[], &coordinator, None);
    let source = Arc::new(MemorySource::new(location, bytes));
    RemoteArray::open_with_cache(source, Traffic::new(), options, coordinator, key).await
}

/// Runs `open` with the warm-up of `format` ([`read`]) beside it, the first time one of
/// that format is opened in this instance (`format` `None`: `open` alone). The warm-up is a
/// task of its own (`spawn_local`: polled from the event loop, not from inside `open`, whose
/// poll stack it would deepen), started after a zero-length timer, so that `open` sends its
/// first request first; it stops at its next step once `open` has completed (an open from
/// the cache then skips it), since the read that follows compiles what it needs itself.
/// Later opens of the format run alone.
#[cfg(target_arch = "wasm32")]
pub async fn beside<T>(format: Option<Format>, open: impl Future<Output = T>) -> T {
    let Some(format) = format else {
        return open.await;
    };
    if STARTED.fetch_or(format.bit(), Ordering::Relaxed) & format.bit() != 0 {
        return open.await;
    }
    let done = std::rc::Rc::new(std::cell::Cell::new(false));
    let stop = done.clone();
    wasm_bindgen_futures::spawn_local(async move {
        // Each step after a turn of the event loop (a zero-length timer), so that an answer
        // to the real open that arrived meanwhile is handled first. A failure only means
        // less was compiled ahead.
        crate::io::sleep::sleep(Duration::ZERO).await;
        if stop.get() {
            return;
        }
        let Ok(array) = open_array(format).await else {
            return;
        };
        crate::io::sleep::sleep(Duration::ZERO).await;
        if stop.get() {
            return;
        }
        if read_all(&array).await.is_ok() {
            FINISHED.fetch_or(format.bit(), Ordering::Relaxed);
        }
    });
    let value = open.await;
    done.set(true);
    value
}

/// Forgets that `format` warmed up in this instance, so that the next `beside` runs its
/// warm-up again (for tests: a test binary shares one instance).
#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub fn forget(format: Format) {
    STARTED.fetch_and(!format.bit(), Ordering::Relaxed);
    FINISHED.fetch_and(!format.bit(), Ordering::Relaxed);
}

/// Whether a warm-up of `format` (`beside`) read its values to the end in this instance.
#[cfg(target_arch = "wasm32")]
pub fn finished(format: Format) -> bool {
    FINISHED.load(Ordering::Relaxed) & format.bit() != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formats() -> Vec<Format> {
        vec![
            #[cfg(feature = "zarr")]
            Format::Zarr,
            #[cfg(feature = "hdf5")]
            Format::Hdf5,
            #[cfg(feature = "b2nd")]
            Format::B2nd,
        ]
    }

    #[tokio::test(flavor = "current_thread")]
    async fn every_warm_up_array_reads_the_values_written() {
        let expected: Vec<f32> = (0..256).map(|i| i as f32 * 0.5).collect();
        for format in formats() {
            let data = read(format)
                .await
                .unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!(data.shape, vec![16, 16], "{format:?}");
            assert_eq!(data.dtype.to_string(), "<f4", "{format:?}");
            let values: Vec<f32> = data
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect();
            assert_eq!(values, expected, "{format:?}");
        }
    }

    #[test]
    fn the_format_comes_from_the_name() {
        #[cfg(feature = "zarr")]
        assert_eq!(
            format_of("https://h.test/a/b.zarr/?x=1"),
            Some(Format::Zarr)
        );
        #[cfg(feature = "hdf5")]
        {
            assert_eq!(format_of("https://h.test/a/B.H5"), Some(Format::Hdf5));
            assert_eq!(format_of("https://h.test/a/b.nc#frag"), Some(Format::Hdf5));
        }
        #[cfg(feature = "b2nd")]
        assert_eq!(
            format_of("https://h.test/a/b.b2nd?sig=s"),
            Some(Format::B2nd)
        );
        assert_eq!(format_of("https://h.test/a/b.bin"), None);
        assert_eq!(format_of("https://h.test/a/b.h5.gz"), None);
    }
}
