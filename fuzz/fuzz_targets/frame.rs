//! Arbitrary bytes as a whole Blosc2 frame: header, `b2nd` metalayer, offsets chunk and trailer
//! must give a value or a typed error, never a panic, a hang or an unbounded allocation.
#![no_main]

use chunkwise::codec::blosc2::b2nd::B2ndMeta;
use chunkwise::codec::blosc2::frame::{parse_index, ChunkLocation, FrameHeader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The metalayer parser alone, on the raw input.
    let _ = B2ndMeta::parse(data);
    let Ok(header) = FrameHeader::parse_with_len(data, Some(data.len() as u64)) else {
        return;
    };
    if let Some(meta) = header.metalayer("b2nd") {
        if let Ok(meta) = B2ndMeta::parse(meta) {
            let _ = meta.check_frame(&header);
            let _ = meta.nchunks();
        }
    }
    let r = header.index_range();
    let Some(tail) = data.get(r.start as usize..r.end as usize) else {
        return;
    };
    if let Ok(index) = parse_index(&header, tail) {
        let data_range = header.data_range();
        for i in 0..index.nchunks() {
            if let ChunkLocation::Stored { offset } = index.chunks[i] {
                assert!(data_range.contains(&offset));
                let span = index.chunk_range(i).expect("stored chunk has a range");
                assert!(span.start == offset && span.end <= data_range.end);
            }
        }
    }
});
