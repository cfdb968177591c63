//! Arbitrary bytes as one Blosc2 chunk: `decode_chunk` gives bytes or a typed error, never a
//! panic, a hang or an allocation beyond what the chunk header may claim. The two other ways
//! a read decodes a chunk agree with it: the group decoder (`GroupDecoder`, whole reads and
//! `decodeChunk`) and the block path (`block_spans` then `BlockDecoder::decode_block` per
//! block, sparse reads) give the same bytes wherever they and `decode_chunk` both succeed,
//! so no path can return other values than another for the same stored chunk.
#![no_main]

use chunkwise::codec::blosc2::{
    block_dependencies, block_spans, decode_chunk, BlockDecoder, ChunkHeader, GroupDecoder,
    GroupTarget,
};
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
    let whole = decode_chunk(data);
    if let Ok(out) = &whole {
        assert_eq!(out.len(), h.nbytes);
    }

    // The group decoder, into the whole chunk and group by group.
    if h.nbytes > 0 {
        let mut groups = vec![0u8; h.nbytes];
        let done = GroupDecoder::new().decode(&h, &data, GroupTarget::Whole(&mut groups));
        if let (true, Ok(out)) = (done, &whole) {
            assert!(groups == *out, "group decoder differs from decode_chunk");
        }
        let mut each = vec![0u8; h.nbytes];
        let mut next = 0;
        let mut put = |offset: usize, bytes: &[u8]| {
            assert_eq!(offset, next, "groups out of order");
            each[offset..offset + bytes.len()].copy_from_slice(bytes);
            next = offset + bytes.len();
            true
        };
        let done = GroupDecoder::new().decode(&h, &data, GroupTarget::Each(&mut put));
        if done {
            assert_eq!(next, h.nbytes, "groups do not cover the chunk");
            if let Ok(out) = &whole {
                assert!(each == *out, "groups handed on differ from decode_chunk");
            }
        }
    }

    // The block path: each block from its span alone.
    let Ok(spans) = block_spans(data) else {
        return;
    };
    let mut decoder = BlockDecoder::new();
    let mut blocks = Vec::with_capacity(h.nbytes);
    let mut first: Option<Vec<u8>> = None;
    for (i, span) in spans.iter().enumerate() {
        let Some(stream) = data.get(span.clone()) else {
            return;
        };
        let reference = if block_dependencies(&h, i).is_empty() {
            None
        } else {
            first.as_deref()
        };
        let mut dst = vec![0u8; h.block_nbytes(i)];
        if decoder
            .decode_block(&h, i, stream, reference, &mut dst)
            .is_err()
        {
            return;
        }
        if i == 0 {
            first = Some(dst.clone());
        }
        blocks.extend_from_slice(&dst);
    }
    if let Ok(out) = &whole {
        assert!(blocks == *out, "block path differs from decode_chunk");
    }
});
