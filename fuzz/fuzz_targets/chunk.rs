//! Arbitrary bytes as one Blosc2 chunk: `decode_chunk` gives bytes or a typed error, never a
//! panic, a hang or an allocation beyond what the chunk header may claim.
#![no_main]

use chunkwise::codec::blosc2::{decode_chunk, ChunkHeader};
use libfuzzer_sys::fuzz_target;

/// Chunks claiming more than this many decoded bytes are skipped: the format allows up to 2 GiB
/// (a 32-byte special-value chunk may claim that much), which would only exercise the allocator.
const MAX_NBYTES: usize = 16 << 20;

fuzz_target!(|data: &[u8]| {
    let Ok(h) = ChunkHeader::parse(data) else {
        return;
    };
    if h.nbytes > MAX_NBYTES {
        return;
    }
    if let Ok(out) = decode_chunk(data) {
        assert_eq!(out.len(), h.nbytes);
    }
});
