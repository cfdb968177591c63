//! Frames written by python-blosc2 4.14.1 (`tests/fixtures/gen_blosc2.py`): header, b2nd
//! metalayer, offsets and trailer parsed from the file bytes; expected values come from the
//! manifest and the `.npy` arrays saved before compression.

mod common;

use chunkwise::codec::blosc2::b2nd::B2ndMeta;
use chunkwise::codec::blosc2::decode_chunk;
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
        // The filter pipeline in the header holds the filters the fixture was written with
        // (gen_blosc2.py FILTERS; DELTA, TRUNC_PREC and BYTEDELTA go with SHUFFLE).
        let want: &[u8] = match f.filters.as_str() {
            "NOFILTER" => &[],
            "SHUFFLE" => &[1],
            "BITSHUFFLE" => &[2],
            "DELTA" => &[3, 1],
            "TRUNC_PREC" => &[4, 1],
            "BYTEDELTA" => &[1, 35],
            other => panic!("unknown filter {other}"),
        };
        let got: Vec<u8> = h.filters.iter().copied().filter(|&c| c != 0).collect();
        assert_eq!(got, want, "{}", f.name);
        if f.filters == "TRUNC_PREC" {
            assert_eq!(h.filters_meta[0], 13, "{} precision bits", f.name);
        }
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
            check_fixture(dir, f);
        }
    }
}

/// Decodes every chunk of a parsed frame (stored chunks with `decode_chunk`, special ones by
/// fill) and assembles the C-order array.
fn decode_array(p: &Parsed) -> Vec<u8> {
    let ts = p.header.typesize;
    common::assemble(
        &p.meta.shape,
        &p.meta.chunkshape,
        &p.meta.blockshape,
        ts,
        |i| match p.index.chunks[i] {
            ChunkLocation::Stored { .. } => {
                let r = p.index.chunk_range(i).unwrap();
                let out = decode_chunk(&p.bytes[r.start as usize..r.end as usize])
                    .unwrap_or_else(|e| panic!("chunk {i}: {e}"));
                assert_eq!(out.len(), p.header.chunksize);
                out
            }
            ChunkLocation::Special(kind) => {
                let mut b = vec![0xAA; p.header.chunksize];
                kind.fill(ts, &mut b).unwrap();
                b
            }
        },
    )
}

/// Every fixture decodes to exactly the array that was written (the `.npy` saved before
/// compression, and its SHA-256 recorded in the manifest).
#[test]
fn every_fixture_decodes_to_expected_array() {
    use sha2::{Digest, Sha256};
    for dir in ["blosc2", "sample"] {
        for f in &read_manifest(&fixture_dir(dir)).fixtures {
            let p = open(dir, f);
            let out = decode_array(&p);
            let digest: String = Sha256::digest(&out)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, f.sha256, "{dir}/{}", f.name);
            if let Some(npy) = &f.npy {
                let want = common::read_npy(&fixture_dir(dir).join(npy));
                assert_eq!(want.dtype, f.dtype, "{}", f.name);
                assert_eq!(want.shape, f.shape, "{}", f.name);
                assert!(out == want.data, "{}: decoded array differs", f.name);
            }
        }
    }
}

/// The > 8 MiB frame written by `gen_blosc2.py --big DIR` at test time (never committed). Runs
/// when `CHUNKWISE_BIG_B2ND_DIR` names that directory; otherwise it reports the skip.
#[test]
fn big_frame_decodes_when_generated() {
    let Ok(dir) = std::env::var("CHUNKWISE_BIG_B2ND_DIR") else {
        eprintln!("skipped: set CHUNKWISE_BIG_B2ND_DIR (python gen_blosc2.py --big DIR)");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let m = read_manifest(&dir);
    for f in &m.fixtures {
        let bytes = std::fs::read(dir.join(&f.file)).unwrap();
        assert!(bytes.len() > 8 << 20);
        let header = FrameHeader::parse_with_len(&bytes, Some(bytes.len() as u64)).unwrap();
        let meta = B2ndMeta::parse(header.metalayer("b2nd").unwrap()).unwrap();
        let r = header.index_range();
        let index = parse_index(&header, &bytes[r.start as usize..]).unwrap();
        let p = Parsed {
            bytes,
            header,
            meta,
            index,
        };
        let out = decode_array(&p);
        let want = common::read_npy(&dir.join(f.npy.as_ref().unwrap()));
        assert!(out == want.data, "{}", f.name);
    }
}

/// A super-chunk frame with chunks of different sizes: the header's chunksize is 0, so the chunk
/// count comes from the offsets chunk; the chunks decode to the bytes that were appended.
#[test]
fn variable_size_schunk_frame() {
    let dir = fixture_dir("blosc2");
    let m = read_manifest(&dir);
    assert!(!m.schunks.is_empty());
    for f in &m.schunks {
        let bytes = std::fs::read(dir.join(&f.file)).unwrap();
        let h = FrameHeader::parse_with_len(&bytes, Some(bytes.len() as u64)).unwrap();
        assert_eq!(h.chunksize, 0, "{}", f.name);
        assert_eq!(h.nchunks(), 0, "{}: header alone cannot count", f.name);
        assert_eq!(h.nbytes as usize, f.chunk_nbytes.iter().sum::<usize>());
        assert!(h.metalayer("b2nd").is_none());
        let r = h.index_range();
        let index = parse_index(&h, &bytes[r.start as usize..]).unwrap();
        assert_eq!(index.nchunks(), f.chunk_nbytes.len(), "{}", f.name);
        let mut all = Vec::new();
        for (i, want) in f.chunk_nbytes.iter().enumerate() {
            let cr = index.chunk_range(i).expect("stored chunk");
            let out = decode_chunk(&bytes[cr.start as usize..cr.end as usize]).unwrap();
            assert_eq!(out.len(), *want, "{} chunk {i}", f.name);
            all.extend_from_slice(&out);
        }
        assert!(
            all == std::fs::read(dir.join(&f.bin)).unwrap(),
            "{}",
            f.name
        );
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
    // python-blosc2 4.14.1 stores it as a special-value offset (0x81 in the top byte), no bytes.
    assert_eq!(
        p.index.chunks[1],
        ChunkLocation::Special(SpecialKind::Zeros)
    );
    assert_eq!(p.index.chunk_range(1), None);
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

// ---------------------------------------------------------------------------------------------
// Bad input: typed errors, never a panic.

/// Byte positions of header fields (`new_header_frame` in C-Blosc2 `frame.c`).
const AT_HEADER_LEN: usize = 11;
const AT_FRAME_LEN: usize = 16;
const AT_FLAGS: usize = 25;
const AT_NBYTES: usize = 30;
const AT_CBYTES: usize = 39;
const AT_TYPESIZE: usize = 48;

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture_dir("blosc2").join(format!("{name}.b2nd"))).unwrap()
}

fn put_be(bytes: &mut [u8], at: usize, v: &[u8]) {
    bytes[at..at + v.len()].copy_from_slice(v);
}

/// Parses header, metalayer and index of `bytes` as a whole object.
fn parse_all(bytes: &[u8]) -> Result<(FrameHeader, B2ndMeta, FrameIndex), FrameError> {
    let h = FrameHeader::parse_with_len(bytes, Some(bytes.len() as u64))?;
    let meta = B2ndMeta::parse(h.metalayer("b2nd").ok_or(FrameError::BadMagic)?)?;
    let r = h.index_range();
    let tail = bytes
        .get(r.start as usize..r.end as usize)
        .ok_or(FrameError::BadMagic)?;
    let index = parse_index(&h, tail)?;
    Ok((h, meta, index))
}

#[test]
fn wrong_magic_is_rejected() {
    let mut b = fixture_bytes("cf_lz4_shuffle");
    b[3] = b'X';
    assert!(matches!(FrameHeader::parse(&b), Err(FrameError::BadMagic)));
    // Even on a prefix too short to hold the header size.
    assert!(matches!(
        FrameHeader::parse(&b[..5]),
        Err(FrameError::BadMagic)
    ));
    assert!(matches!(
        FrameHeader::parse(b"PK\x03\x04 not a frame at all"),
        Err(FrameError::BadMagic)
    ));
}

#[test]
fn header_longer_than_frame_is_rejected() {
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_FRAME_LEN, &100u64.to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "frame_len",
            ..
        })
    ));
    // A claimed header size beyond the limit is refused, not requested.
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_HEADER_LEN, &i32::MAX.to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "header_len",
            ..
        })
    ));
    put_be(&mut b, AT_HEADER_LEN, &10i32.to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "header_len",
            ..
        })
    ));
}

#[test]
fn frame_len_must_match_object_size() {
    let b = fixture_bytes("cf_lz4_shuffle");
    let n = b.len() as u64;
    assert!(FrameHeader::parse_with_len(&b, Some(n)).is_ok());
    match FrameHeader::parse_with_len(&b, Some(n + 1)) {
        Err(FrameError::FrameLenMismatch {
            frame_len,
            object_len,
        }) => {
            assert_eq!(frame_len, n);
            assert_eq!(object_len, n + 1);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sizes_outside_the_frame_are_rejected() {
    // Data section past the frame end.
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_CBYTES, &(1i64 << 40).to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "cbytes",
            ..
        })
    ));
    put_be(&mut b, AT_CBYTES, &(-1i64).to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "cbytes",
            ..
        })
    ));
    // Negative sizes, zero typesize.
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_NBYTES, &(-5i64).to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "nbytes",
            ..
        })
    ));
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_TYPESIZE, &0i32.to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "typesize",
            ..
        })
    ));
    // A huge uncompressed size claims more chunks than the limit: refused before allocating.
    let mut b = fixture_bytes("cf_lz4_shuffle");
    put_be(&mut b, AT_NBYTES, &(i64::MAX).to_be_bytes());
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::OutOfRange {
            field: "nchunks",
            ..
        })
    ));
}

#[test]
fn unsupported_flags_are_typed() {
    let mut b = fixture_bytes("cf_lz4_shuffle");
    b[AT_FLAGS + 1] = 1; // sparse frame
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::Unsupported { .. })
    ));
    let mut b = fixture_bytes("cf_lz4_shuffle");
    b[AT_FLAGS] = 0x02; // 32-bit offsets
    assert!(matches!(
        FrameHeader::parse(&b),
        Err(FrameError::Unsupported { .. })
    ));
}

#[test]
fn nchunks_inconsistent_with_offsets_chunk() {
    // 6 chunks of 768 bytes; claim one more chunk's worth of bytes: 7 chunks in the header but 6
    // offsets in the (uncompressed) offsets chunk.
    let mut b = fixture_bytes("cf_lz4_shuffle");
    let h = FrameHeader::parse(&b).unwrap();
    assert_eq!(h.nchunks(), 6);
    let more = h.nbytes + h.chunksize as i64;
    put_be(&mut b, AT_NBYTES, &more.to_be_bytes());
    let h = FrameHeader::parse(&b).unwrap();
    assert_eq!(h.nchunks(), 7);
    let r = h.index_range();
    assert!(matches!(
        parse_index(&h, &b[r.start as usize..]),
        Err(FrameError::OutOfRange {
            field: "offsets chunk nbytes",
            ..
        })
    ));
}

#[test]
fn offsets_outside_the_data_section_are_rejected() {
    let mut b = fixture_bytes("cf_lz4_shuffle");
    let h = FrameHeader::parse(&b).unwrap();
    let start = h.index_range().start as usize;
    // The offsets chunk of this frame is stored uncompressed: offsets follow its 32-byte header.
    assert_eq!(b[start + 2] & 0x02, 0x02, "memcpy'd offsets chunk");
    let first = start + CHUNK_HEADER_LEN + 8; // chunk 1
    b[first..first + 8].copy_from_slice(&(h.cbytes - 10).to_le_bytes());
    match parse_index(&h, &b[start..]) {
        Err(FrameError::ChunkOffset { chunk, offset, .. }) => {
            assert_eq!(chunk, 1);
            assert_eq!(offset, h.cbytes - 10);
        }
        other => panic!("{other:?}"),
    }
    // An unknown special-value code.
    b[first..first + 8].copy_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0xf0]);
    assert!(matches!(
        parse_index(&h, &b[start..]),
        Err(FrameError::ChunkOffset { chunk: 1, .. })
    ));
    // A tail of the wrong length.
    assert!(matches!(
        parse_index(&h, &b[start + 1..]),
        Err(FrameError::TailLen { .. })
    ));
}

#[test]
fn trailer_claims_are_bounded() {
    let mut b = fixture_bytes("vlmeta_f4");
    let n = b.len();
    // Trailer length larger than the index bytes.
    b[n - 22..n - 18].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        parse_all(&b),
        Err(FrameError::OutOfRange {
            field: "trailer_len",
            ..
        })
    ));
    let mut b = fixture_bytes("vlmeta_f4");
    b[n - 23] = 0x00;
    assert!(matches!(
        parse_all(&b),
        Err(FrameError::Malformed {
            field: "trailer length",
            ..
        })
    ));
}

#[test]
fn b2nd_metalayer_limits() {
    let b = fixture_bytes("nd1_i8");
    let h = FrameHeader::parse(&b).unwrap();
    let meta = h.metalayer("b2nd").unwrap().to_vec();
    assert!(B2ndMeta::parse(&meta).is_ok());
    // ndim 17 (byte 2 of the metalayer is the positive fixint ndim).
    let mut m = meta.clone();
    m[2] = 17;
    assert!(matches!(
        B2ndMeta::parse(&m),
        Err(FrameError::OutOfRange {
            field: "b2nd ndim",
            ..
        })
    ));
    // chunkshape 0: [0x97, ver, ndim, 0x91, d3 + 8 bytes, 0x91, d2 + 4 bytes, ...]
    let mut m = meta.clone();
    assert_eq!(m[13], 0x91);
    assert_eq!(m[14], 0xd2);
    m[15..19].copy_from_slice(&0i32.to_be_bytes());
    assert!(matches!(
        B2ndMeta::parse(&m),
        Err(FrameError::OutOfRange {
            field: "b2nd chunkshape",
            ..
        })
    ));
    // A metalayer whose chunk grid disagrees with the frame header.
    let mut m = meta.clone();
    m[15..19].copy_from_slice(&100i32.to_be_bytes());
    let bad = B2ndMeta::parse(&m).unwrap();
    assert!(bad.check_frame(&h).is_err());
}

/// Every 7th truncation of a small fixture: header, metalayer and index parse to an error (or,
/// for the full file, to the right values), never a panic.
#[test]
fn truncations_never_panic() {
    for name in ["cf_zstd_delta", "vlmeta_f4", "zeros_f8", "nd3_u2"] {
        let b = fixture_bytes(name);
        for n in (0..b.len()).step_by(7) {
            let cut = &b[..n];
            assert!(parse_all(cut).is_err(), "{name} cut at {n}");
            // The header alone parses from a prefix that holds it.
            if let Ok(h) = FrameHeader::parse(cut) {
                assert!(n >= h.header_len);
                let r = h.index_range();
                // A truncated tail is a typed error.
                if (r.start as usize) < n {
                    assert!(parse_index(&h, &b[r.start as usize..n]).is_err());
                }
            }
        }
    }
}

/// A small deterministic generator (xorshift64*), so byte flips are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Seeded byte flips in the header and the index of several fixtures: an error or a parse, never
/// a panic; when parsing succeeds every stored chunk still lies inside the data section.
#[test]
fn byte_flips_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for name in [
        "cf_zstd_delta",
        "vlmeta_f4",
        "zeros_f8",
        "zero_chunk_inside",
    ] {
        let orig = fixture_bytes(name);
        let h0 = FrameHeader::parse(&orig).unwrap();
        let idx0 = h0.index_range().start as usize;
        // Positions in the header and in the index bytes (where the parser looks).
        let positions: Vec<usize> = (0..h0.header_len).chain(idx0..orig.len()).collect();
        for _ in 0..3000 {
            let mut b = orig.clone();
            let flips = 1 + rng.next() % 3;
            for _ in 0..flips {
                let at = positions[(rng.next() % positions.len() as u64) as usize];
                b[at] ^= 1 << (rng.next() % 8);
            }
            if let Ok((h, _meta, index)) = parse_all(&b) {
                let data = h.data_range();
                for i in 0..index.nchunks() {
                    if let ChunkLocation::Stored { offset } = index.chunks[i] {
                        assert!(data.contains(&offset));
                        let r = index.chunk_range(i).unwrap();
                        assert!(r.end <= data.end);
                    }
                }
            }
        }
    }
}

/// Seeded byte flips anywhere in small frames, then decoding every chunk: each step gives an
/// error or bytes of the claimed size, never a panic. Blosc2 frames carry no checksum (the
/// fingerprint type is 0), so a flip inside a data chunk or inside the offsets chunk can yield
/// other data without an error; a flip anywhere else (header fields, metalayers, trailer) must
/// give an error or exactly the written array.
#[test]
fn byte_flips_then_decode_never_panic() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let m = read_manifest(&fixture_dir("blosc2"));
    let mut exact_checks = 0;
    for name in [
        "cf_zstd_delta",
        "cf_lz4_bitshuffle",
        "delta_partial_i4",
        "split_never",
    ] {
        let f = m.fixtures.iter().find(|f| f.name == name).unwrap();
        let orig = fixture_bytes(name);
        let want = common::read_npy(&fixture_dir("blosc2").join(f.npy.as_ref().unwrap())).data;
        // Data chunks and the offsets chunk of the unmodified frame.
        let h0 = FrameHeader::parse(&orig).unwrap();
        let idx = h0.index_range().start as usize;
        let off_cbytes = u32::from_le_bytes(orig[idx + 12..idx + 16].try_into().unwrap()) as usize;
        let payload = h0.header_len..idx + off_cbytes;
        for _ in 0..1000 {
            let mut b = orig.clone();
            let at = (rng.next() % b.len() as u64) as usize;
            b[at] ^= 1 << (rng.next() % 8);
            let Ok((h, meta, index)) = parse_all(&b) else {
                continue;
            };
            if meta.check_frame(&h).is_err() || meta.shape != f.shape {
                continue;
            }
            let mut ok = true;
            let mut chunks = Vec::new();
            for i in 0..index.nchunks() {
                match index.chunks[i] {
                    ChunkLocation::Stored { .. } => {
                        let r = index.chunk_range(i).unwrap();
                        match decode_chunk(&b[r.start as usize..r.end as usize]) {
                            Ok(out) if out.len() == h.chunksize => chunks.push(out),
                            _ => ok = false,
                        }
                    }
                    ChunkLocation::Special(_) => ok = false,
                }
            }
            if !ok {
                continue;
            }
            if !payload.contains(&at) {
                let out = common::assemble(
                    &meta.shape,
                    &meta.chunkshape,
                    &meta.blockshape,
                    h.typesize,
                    |i| chunks[i].clone(),
                );
                assert!(out == want, "{name}: flip at {at} gave wrong data");
                exact_checks += 1;
            }
        }
    }
    // Flips outside the payload that still parse (metalayer bytes, fingerprint, ...) do occur.
    eprintln!("{exact_checks} flips outside the payload decoded; all exact");
    assert!(exact_checks > 0);
}

/// Chunks that C-Blosc2 compressed with a dictionary (`use_dict=True`): every stored chunk
/// carries the flag (so the values checked by `every_fixture_decodes_to_expected_array` did go
/// through the dictionary), decodes to its part of the `.npy` written, and is refused by the
/// block-level path, which then reads it whole. `dict_memcpyed_u8`'s first chunk is memcpyed
/// with the flag set, which C-Blosc2 3.3 cannot read back; its bytes are the data.
#[test]
fn dictionary_chunks_decode_to_expected() {
    use chunkwise::codec::blosc2::{block_spans, ChunkHeader, CodecError};
    let m = read_manifest(&fixture_dir("blosc2"));
    let mut with_dict = 0;
    let mut memcpyed_flagged = 0;
    for name in [
        "dict_zstd_i4",
        "dict_lz4_f4",
        "dict_lz4hc_delta_i4",
        "dict_memcpyed_u8",
    ] {
        let f = m.fixtures.iter().find(|f| f.name == name).expect(name);
        let p = open("blosc2", f);
        for i in 0..p.index.chunks.len() {
            let r = p.index.chunk_range(i).unwrap();
            let chunk = &p.bytes[r.start as usize..r.end as usize];
            let h = ChunkHeader::parse(chunk).unwrap();
            assert_eq!(h.blosc2_flags & 1, 1, "{name} chunk {i}: dictionary flag");
            if h.memcpyed {
                assert!(!h.has_dict(), "{name} chunk {i}");
                memcpyed_flagged += 1;
                continue;
            }
            assert!(h.has_dict(), "{name} chunk {i}");
            with_dict += 1;
            assert!(matches!(
                block_spans(&chunk[..h.prefix_len()]),
                Err(CodecError::NotSplittable { .. })
            ));
        }
        let want = common::read_npy(&fixture_dir("blosc2").join(f.npy.as_ref().unwrap()));
        assert!(
            decode_array(&p) == want.data,
            "{name}: decoded array differs"
        );
    }
    assert_eq!((with_dict, memcpyed_flagged), (30, 1));
}

/// Damaged dictionary sections of real chunks are typed errors, never a panic or values: a
/// size of 0 or over 32 KiB (BLOSC2_MAXDICTSIZE), a dictionary past the chunk's end, a block
/// starting inside the dictionary, and the flag cleared (the streams then need bytes that are
/// not there: C zstd's "dictionary mismatch", an LZ4 match before the output).
#[test]
fn damaged_dictionary_sections_are_errors() {
    use chunkwise::codec::blosc2::{decode_chunk, ChunkHeader, CodecError};
    let m = read_manifest(&fixture_dir("blosc2"));
    for name in ["dict_zstd_i4", "dict_lz4_f4"] {
        let f = m.fixtures.iter().find(|f| f.name == name).unwrap();
        let p = open("blosc2", f);
        let r = p.index.chunk_range(0).unwrap();
        let chunk = p.bytes[r.start as usize..r.end as usize].to_vec();
        let h = ChunkHeader::parse(&chunk).unwrap();
        let at = h.prefix_len();
        let with_size = |n: i32| {
            let mut c = chunk.clone();
            c[at..at + 4].copy_from_slice(&n.to_le_bytes());
            decode_chunk(&c)
        };
        for n in [0, -1, 32769] {
            assert!(
                matches!(
                    with_size(n),
                    Err(CodecError::InvalidHeader {
                        field: "dictionary size",
                        ..
                    })
                ),
                "{name}: size {n}"
            );
        }
        assert!(
            matches!(
                with_size(h.cbytes as i32 - at as i32 - 3),
                Err(CodecError::Truncated {
                    what: "dictionary",
                    ..
                })
            ),
            "{name}"
        );
        let mut c = chunk.clone();
        c[h.header_len..h.header_len + 4].copy_from_slice(&(at as i32 + 4).to_le_bytes());
        assert!(
            matches!(
                decode_chunk(&c),
                Err(CodecError::BadBlockStart { block: 0, .. })
            ),
            "{name}: block 0 inside the dictionary"
        );
        let mut c = chunk.clone();
        c[31] &= !1;
        let e = decode_chunk(&c).unwrap_err();
        assert!(matches!(e, CodecError::BadStream { .. }), "{name}: {e}");
    }
}

/// Frames python-blosc2 writes for objects whose values are not in their chunks (a saved lazy
/// expression, fixed metalayer `b2o`; a Proxy's local copy, `proxy-source`): their chunks are
/// uninitialised, and read as a frame they gave zeros without an error. Opening one is
/// UNSUPPORTED, naming what it is; the ordinary operand beside them opens.
#[tokio::test]
async fn carriers_are_refused_when_opened() {
    use bytes::Bytes;
    use chunkwise::formats::b2nd::B2ndArray;
    use chunkwise::formats::FormatError;
    use chunkwise::io::memory::MemorySource;
    let dir = fixture_dir("blosc2");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let carriers = m["carriers"].as_array().expect("carriers listed");
    assert_eq!(carriers.len(), 2);
    let open = |file: &str| {
        let bytes = Bytes::from(std::fs::read(dir.join(file)).unwrap());
        let len = bytes.len() as u64;
        let src = MemorySource::new(file.to_string(), bytes.clone());
        async move { B2ndArray::open(&src, bytes, len).await }
    };
    for c in carriers {
        let (file, metalayer) = (
            c["file"].as_str().unwrap(),
            c["metalayer"].as_str().unwrap(),
        );
        match open(file).await {
            Err(chunkwise::Error::Format(FormatError::Unsupported { detail, .. })) => {
                assert!(detail.contains(metalayer), "{file}: {detail}");
                if metalayer == "b2o" {
                    assert!(detail.contains("\"lazyexpr\""), "{file}: {detail}");
                }
            }
            Err(e) => panic!("{file}: {e}"),
            Ok(_) => panic!("{file}: opened as an array"),
        }
    }
    assert!(open("carrier_operand_f8.b2nd").await.is_ok());
}

/// Well-formed frames using what chunkwise does not read (`gen_blosc2.py --unsupported`): a
/// C-Blosc2 plugin codec (ZFP) or filter (NDCELL) opens (its metadata is readable) and is
/// UNSUPPORTED when a chunk is decoded; a sparse frame's `chunks.b2frame` is UNSUPPORTED
/// when opened. Both were DECODE and INVALID_DATA, codes for damaged data.
#[tokio::test]
async fn unsupported_frames_say_so() {
    use bytes::Bytes;
    use chunkwise::formats::b2nd::B2ndArray;
    use chunkwise::formats::{ArrayFormat, ChunkPlace};
    use chunkwise::io::memory::MemorySource;
    let dir = fixture_dir("blosc2_unsupported");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let frames = m["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3);
    for f in frames {
        let (file, when) = (f["file"].as_str().unwrap(), f["when"].as_str().unwrap());
        let bytes = Bytes::from(std::fs::read(dir.join(file)).unwrap());
        let src = MemorySource::new(file.to_string(), bytes.clone());
        let opened = B2ndArray::open(&src, bytes.clone(), bytes.len() as u64).await;
        let err = match (when, opened) {
            ("open", Err(e)) => e,
            ("read", Ok(a)) => {
                let ChunkPlace::Stored(r) = a.locate(0).unwrap() else {
                    panic!("{file}: chunk 0 not stored");
                };
                let e = a
                    .decode(0, &bytes[r.start as usize..r.end as usize])
                    .unwrap_err();
                chunkwise::Error::Format(e)
            }
            (_, r) => panic!("{file}: open gave {:?}", r.err()),
        };
        assert_eq!(err.code(), f["code"].as_str().unwrap(), "{file}: {err}");
    }
}
