//! Arbitrary bytes as the array metadata of a Zarr store in memory: the first byte picks
//! v3 (`zarr.json`, odd) or v2 (`.zarray`, even), the rest is the document. Opening the
//! array (metadata, data type, codec chain, chunk grid) and reading a small selection (every
//! chunk missing, so fill values) must give a value or a typed error, never a panic, a hang
//! or an unbounded allocation.
#![no_main]

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::formats::zarr::ZarrStore;
use chunkwise::io::memory::MemorySource;
use chunkwise::io::{IoError, RangeSource, Traffic};
use chunkwise::selection::Selection;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

/// Largest array read whole (bytes, as its metadata claims).
const READ_LIMIT: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let Some((&first, doc)) = data.split_first() else {
        return;
    };
    let name = if first & 1 == 1 { "zarr.json" } else { ".zarray" };
    let doc = bytes::Bytes::copy_from_slice(doc);
    let opener = move |url: &str| -> Result<Arc<dyn RangeSource>, IoError> {
        if url.rsplit('/').next() == Some(name) {
            Ok(Arc::new(MemorySource::new(url, doc.clone())))
        } else {
            Err(IoError::NotFound {
                location: url.to_string(),
            })
        }
    };
    let store = Arc::new(ZarrStore::new("mem://fuzz.zarr", Arc::new(opener)));
    futures::executor::block_on(async {
        let key = chunkwise::cache::CacheCoordinator::none().source_key("mem://fuzz.zarr", &[]);
        let Ok(arr) =
            RemoteArray::open_zarr(store, "", Traffic::new(), key, OpenOptions::default()).await
        else {
            return;
        };
        let info = arr.info();
        // `None`: more bytes than a u64 counts, so never read
        if info.nbytes.is_some_and(|n| n <= READ_LIMIT) {
            let _ = arr.read(&Selection::all(), &ReadOptions::default()).await;
        }
    });
});
