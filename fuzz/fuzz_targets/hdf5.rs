//! Arbitrary bytes as a whole HDF5 file in memory: listing the hierarchy, discovering every
//! listed dataset (chunk indexes walked level by level from a 512-byte head) and decoding a
//! few stored chunks must give a value or a typed error, never a panic, a hang or an
//! unbounded allocation.
#![no_main]

use chunkwise::formats::hdf5::{Hdf5Array, Hdf5Source};
use chunkwise::formats::{ArrayFormat, ChunkPlace, NodeKind};
use chunkwise::io::memory::MemorySource;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    let len = bytes.len() as u64;
    let src = MemorySource::new("mem://fuzz.h5", bytes.clone());
    // Half the inputs start from the whole file, half from a 512-byte head, so the rounds
    // of the discovery driver and the index prefetch run on damaged nodes too.
    let head = if data.last().is_some_and(|b| b & 1 == 1) {
        bytes.slice(..bytes.len().min(512))
    } else {
        bytes.clone()
    };
    futures::executor::block_on(async {
        let mut h = Hdf5Source::new(&src, head.clone(), len).with_readahead(512);
        let Ok(nodes) = h.list().await else {
            return;
        };
        for n in nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Array && n.error.is_none())
            .take(4)
        {
            let Ok(arr) = Hdf5Array::open(&src, head.clone(), len, Some(&n.path)).await else {
                continue;
            };
            let _ = arr.info();
            let n = arr.grid().nchunks().unwrap_or(0);
            for c in 0..n.min(4) {
                if let Ok(ChunkPlace::Stored(r)) = arr.locate(c) {
                    if let Some(stored) = bytes.get(r.start as usize..r.end as usize) {
                        let _ = arr.decode(c, stored);
                    }
                }
            }
        }
    });
});
