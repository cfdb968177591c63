//! Frames written by python-blosc2 4.14.1 (`tests/fixtures/gen_blosc2.py`): header, b2nd
//! metalayer, offsets and trailer parsed from the file bytes; expected values come from the
//! manifest and the `.npy` arrays saved before compression.

mod common;

use chunkwise::codec::blosc2::b2nd::B2ndMeta;
use chunkwise::codec::blosc2::frame::{
    parse_index, ChunkLocation, FrameError, FrameHeader, FrameIndex, SpecialKind, CHUNK_HEADER_LEN,
    HEADER_MIN_LEN,
};
use common::{fixture_dir, read_manifest, Fixture};

const CODEC_IDS: &[(&str, u8)] = &[
    ("BLOSCLZ", 0),
    ("LZ4", 1),
    ("LZ4HC", 2),
    ("ZLIB", 4),
    ("ZSTD", 5),
];

const NEEDS_DECODER: &[&str] = &["nd3_u2", "nd4_f4", "field2d_f4", "volume3d_f4"];

struct Parsed {
    bytes: Vec<u8>,
    header: FrameHeader,
    meta: B2ndMeta,
    index: FrameIndex,
}

fn open(dir: &str, f: &Fixture) -> Parsed {
    let bytes = std::fs::read(fixture_dir(dir).join(&f.file)).unwrap();
    let header = FrameHeader::parse_with_len(&bytes, Some(bytes.len() as u64))
        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
    let meta = B2ndMeta::parse(header.metalayer("b2nd").expect("b2nd metalayer")).unwrap();
    let r = header.index_range();
    let index = parse_index(&header, &bytes[r.start as usize..r.end as usize])
        .unwrap_or_else(|e| panic!("{}: {e}", f.name));
    Parsed {
        bytes,
        header,
        meta,
        index,
    }
}

fn itemsize(dtype: &str) -> usize {
    dtype[2..].parse().unwrap()
}

fn check_fixture(dir: &str, f: &Fixture) {
    let p = open(dir, f);
    let (h, m, ix) = (&p.header, &p.meta, &p.index);
    assert_eq!(h.frame_len, p.bytes.len() as u64, "{}", f.name);
    assert_eq!(m.shape, f.shape, "{}", f.name);
    assert_eq!(m.chunkshape, f.chunks, "{}", f.name);
    assert_eq!(m.blockshape, f.blocks, "{}", f.name);
    assert_eq!(m.dtype, f.dtype, "{}", f.name);
    assert_eq!(m.dtype_format, 0);
    assert_eq!(h.typesize, itemsize(&f.dtype), "{}", f.name);
    m.check_frame(h).unwrap();
    let grid: u64 = f
        .shape
        .iter()
        .zip(&f.chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .product();
    assert_eq!(h.nchunks() as u64, grid, "{}", f.name);
    assert_eq!(ix.nchunks() as u64, grid, "{}", f.name);
    // Arrays made through asarray carry the codec and clevel they were written with.
    if !f.notes.starts_with("blosc2.") {
        let id = CODEC_IDS.iter().find(|(n, _)| *n == f.codec).unwrap().1;
        assert_eq!(h.codec, id, "{}", f.name);
        assert_eq!(h.clevel, f.clevel, "{}", f.name);
        let split = match f.splitmode.as_str() {
            "ALWAYS" => 1,
            "NEVER" => 2,
            _ => 3,
        };
        assert_eq!(h.splitmode, split, "{}", f.name);
    }
    // Every stored chunk: its range (from offsets alone) starts at a chunk header whose cbytes
    // is exactly the range length, and chunks tile the data section (written once).
    let mut stored_total = 0u64;
    for i in 0..ix.nchunks() {
        match ix.chunks[i] {
            ChunkLocation::Stored { offset } => {
                let r = ix.chunk_range(i).unwrap();
                assert_eq!(r.start, offset);
                let o = offset as usize;
                let hdr = &p.bytes[o..o + CHUNK_HEADER_LEN];
                let cbytes = u32::from_le_bytes(hdr[12..16].try_into().unwrap()) as u64;
                let nbytes = u32::from_le_bytes(hdr[4..8].try_into().unwrap()) as u64;
                assert_eq!(r.end - r.start, cbytes, "{} chunk {i}", f.name);
                assert_eq!(nbytes, h.chunksize as u64, "{} chunk {i}", f.name);
                stored_total += cbytes;
            }
            ChunkLocation::Special(_) => assert!(ix.chunk_range(i).is_none()),
        }
    }
    assert_eq!(stored_total, h.cbytes as u64, "{}", f.name);
    // Variable-length metalayers equal what was written (python-blosc2 msgpack-encodes them).
    assert_eq!(ix.vlmetalayers.len(), f.vlmeta.len(), "{}", f.name);
    for (k, v) in &f.vlmeta {
        let mut want = Vec::new();
        match v {
            serde_json::Value::String(s) => rmp::encode::write_str(&mut want, s).unwrap(),
            serde_json::Value::Number(n) => {
                rmp::encode::write_uint(&mut want, n.as_u64().unwrap()).unwrap();
            }
            other => panic!("unexpected vlmeta value {other}"),
        }
        assert_eq!(ix.vlmetalayer(k), Some(want.as_slice()), "{} {k}", f.name);
    }
}

#[test]
fn every_fixture_parses_and_matches_manifest() {
    for dir in ["blosc2", "sample"] {
        let m = read_manifest(&fixture_dir(dir));
        assert_eq!(m.blosc2, "4.14.1");
        assert!(!m.fixtures.is_empty());
        for f in &m.fixtures {
            // Until the chunk decoder is merged, frames with a compressed offsets chunk must
            // report exactly that.
            if NEEDS_DECODER.contains(&f.name.as_str()) {
                let bytes = std::fs::read(fixture_dir(dir).join(&f.file)).unwrap();
                let h = FrameHeader::parse(&bytes).unwrap();
                let r = h.index_range();
                let e = parse_index(&h, &bytes[r.start as usize..]).unwrap_err();
                assert!(matches!(
                    e,
                    FrameError::Chunk {
                        what: "offsets chunk",
                        ..
                    }
                ));
                continue;
            }
            check_fixture(dir, f);
        }
    }
}

#[test]
fn fixture_set_covers_the_matrix() {
    let m = read_manifest(&fixture_dir("blosc2"));
    for codec in ["BLOSCLZ", "LZ4", "LZ4HC", "ZLIB", "ZSTD"] {
        for filt in [
            "NOFILTER",
            "SHUFFLE",
            "BITSHUFFLE",
            "DELTA",
            "TRUNC_PREC",
            "BYTEDELTA",
        ] {
            assert!(
                m.fixtures
                    .iter()
                    .any(|f| f.codec == codec && f.filters == filt),
                "{codec} x {filt}"
            );
        }
    }
    for nd in 1..=4 {
        assert!(m.fixtures.iter().any(|f| f.shape.len() == nd), "{nd}-D");
    }
}

/// Frames whose every chunk is a special value decode without the chunk decoder.
#[test]
fn special_value_frames_assemble_to_expected() {
    let dir = "blosc2";
    let m = read_manifest(&fixture_dir(dir));
    for (name, kind) in [
        ("zeros_f8", SpecialKind::Zeros),
        ("nans_f4", SpecialKind::Nan),
    ] {
        let f = m.fixtures.iter().find(|f| f.name == name).unwrap();
        let p = open(dir, f);
        assert!(p
            .index
            .chunks
            .iter()
            .all(|c| *c == ChunkLocation::Special(kind)));
        let ts = p.header.typesize;
        let out = common::assemble(
            &p.meta.shape,
            &p.meta.chunkshape,
            &p.meta.blockshape,
            ts,
            |_| {
                let mut b = vec![0xAA; p.header.chunksize];
                kind.fill(ts, &mut b).unwrap();
                b
            },
        );
        let want = common::read_npy(&fixture_dir(dir).join(f.npy.as_ref().unwrap()));
        assert_eq!(want.dtype, f.dtype);
        assert_eq!(want.shape, f.shape);
        assert_eq!(out, want.data, "{name}");
    }
}

/// The one all-zero chunk of `zero_chunk_inside` (rows 0..20, columns 20..40) is chunk 1.
#[test]
fn zero_chunk_inside_is_located() {
    let m = read_manifest(&fixture_dir("blosc2"));
    let f = m
        .fixtures
        .iter()
        .find(|f| f.name == "zero_chunk_inside")
        .unwrap();
    let p = open("blosc2", f);
    assert_eq!(p.index.nchunks(), 4);
    for i in [0, 2, 3] {
        assert!(matches!(p.index.chunks[i], ChunkLocation::Stored { .. }));
    }
    // Either a special-value offset or a stored chunk whose header flags it as zeros.
    match p.index.chunks[1] {
        ChunkLocation::Special(k) => assert_eq!(k, SpecialKind::Zeros),
        ChunkLocation::Stored { offset } => {
            let flags2 = p.bytes[offset as usize + 31];
            assert_eq!((flags2 >> 4) & 7, 1, "zeros special chunk");
        }
    }
}

#[test]
fn short_prefixes_ask_for_exact_shortfall() {
    let m = read_manifest(&fixture_dir("blosc2"));
    let f = &m.fixtures[0];
    let bytes = std::fs::read(fixture_dir("blosc2").join(&f.file)).unwrap();
    let full = FrameHeader::parse(&bytes).unwrap();
    for n in 0..15 {
        match FrameHeader::parse(&bytes[..n]) {
            Err(FrameError::NeedMore { needed, got }) => {
                assert_eq!(needed, HEADER_MIN_LEN);
                assert_eq!(got, n);
            }
            other => panic!("prefix {n}: {other:?}"),
        }
    }
    for n in 15..full.header_len {
        match FrameHeader::parse(&bytes[..n]) {
            Err(FrameError::NeedMore { needed, .. }) => assert_eq!(needed, full.header_len),
            other => panic!("prefix {n}: {other:?}"),
        }
    }
    assert_eq!(FrameHeader::parse(&bytes[..full.header_len]).unwrap(), full);
}
