//! Every stored chunk of every `.b2nd` fixture (written by python-blosc2 4.14.1) decoded by
//! our decoder and by real C-Blosc2 gives identical bytes. C-Blosc2 as built here has no
//! plugins, so chunks using the BYTEDELTA filter cannot be decoded by it; they are counted
//! and left to the fixture tests, which compare them with the arrays written. So are chunks
//! with a dictionary that C-Blosc2 2.15 (blosc2-sys) does not read: LZ4 and LZ4HC ones (it
//! decodes only ZSTD with a dictionary; 3.x, which wrote the fixtures, reads both) and the
//! memcpyed chunks C-Blosc2 3.3 writes with the dictionary flag set.

use chunkwise::codec::blosc2::frame::{parse_index, ChunkLocation, FrameHeader};
use chunkwise::codec::blosc2::{decode_chunk, ChunkHeader};
use native_harness::bench_decode::cblosc2::Dctx;
use std::path::Path;

const BYTEDELTA: u8 = 35;
/// The ZSTD codec's format code in a chunk header's flags (blosc2.h `BLOSC_ZSTD_FORMAT`).
const ZSTD_FORMAT: u8 = 4;

#[test]
fn every_fixture_chunk_decodes_like_c_blosc2() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut files = Vec::new();
    for sub in ["blosc2", "sample"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "b2nd" || x == "b2frame") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut ctx = Dctx::new(1);
    let (mut compared, mut bytedelta) = (0usize, 0usize);
    let (mut zstd_dict, mut other_dict) = (0usize, 0usize);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let name = f.display();
        let header = FrameHeader::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = header.index_range();
        let index = parse_index(&header, &bytes[r.start as usize..r.end as usize])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, loc) in index.chunks.iter().enumerate() {
            let ChunkLocation::Stored { .. } = loc else {
                continue;
            };
            let range = index.chunk_range(i).unwrap();
            let chunk = &bytes[range.start as usize..range.end as usize];
            let h = ChunkHeader::parse(chunk).unwrap();
            let ours = decode_chunk(chunk).unwrap_or_else(|e| panic!("{name} chunk {i}: {e}"));
            if h.filters.contains(&BYTEDELTA) {
                bytedelta += 1;
                continue;
            }
            if h.blosc2_flags & 1 != 0 {
                if !h.has_dict() || h.format != ZSTD_FORMAT {
                    other_dict += 1;
                    continue;
                }
                zstd_dict += 1;
            }
            let mut theirs = vec![0u8; h.nbytes];
            // A chunk with a dictionary gets a new context: C-Blosc2 2.15 can crash freeing the
            // previous chunk's dictionary when one context decodes a second such chunk.
            let mut fresh;
            let c = if h.has_dict() {
                fresh = Dctx::new(1);
                &mut fresh
            } else {
                &mut ctx
            };
            let n = c
                .decompress_into(chunk, &mut theirs)
                .unwrap_or_else(|rc| panic!("{name} chunk {i}: C-Blosc2 returned {rc}"));
            assert_eq!(n, h.nbytes, "{name} chunk {i}");
            assert!(
                ours == theirs,
                "{name} chunk {i}: our bytes differ from C-Blosc2's"
            );
            compared += 1;
        }
    }
    println!(
        "{} files: {compared} chunks identical to C-Blosc2 ({zstd_dict} ZSTD with a dictionary), \
         {bytedelta} BYTEDELTA chunks and {other_dict} other chunks with the dictionary flag not comparable",
        files.len()
    );
    assert!(compared > 300, "only {compared} chunks compared");
    assert!(
        zstd_dict >= 9,
        "only {zstd_dict} ZSTD chunks with a dictionary compared"
    );
}
