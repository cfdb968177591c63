//! Chunk-level tests: encode/decode round trips over every option, hand-built Blosc1 and
//! special-value chunks, block-level decoding, and damaged input.

use super::*;

/// Seeded garbage and damaged copies of `valid` (a stream of a block codec) fed to
/// `decompress` with destinations of random sizes: it must return `None` or a length within
/// the destination, never panic. Shared by the BloscLZ and LZ4 stream decoders' tests.
pub(crate) fn check_stream_decoder(
    valid: &[u8],
    decompress: impl Fn(&[u8], &mut [u8]) -> Option<usize>,
) {
    let mut st = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        st
    };
    for round in 0..3000 {
        let input: Vec<u8> = if round % 2 == 0 {
            (0..next() % 300).map(|_| next() as u8).collect()
        } else {
            let mut v = valid[..(next() as usize) % valid.len()].to_vec();
            if let Some(b) = v.get_mut((next() as usize) % valid.len().max(1)) {
                *b ^= next() as u8;
            }
            v
        };
        let mut out = vec![0u8; (next() % 25_000) as usize];
        if let Some(n) = decompress(&input, &mut out) {
            assert!(n <= out.len());
        }
    }
}

fn smooth(len: usize, typesize: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut i = 0u64;
    while out.len() < len {
        let v = i * 3 + (i / 7) % 5;
        out.extend_from_slice(&v.to_le_bytes()[..typesize.min(8)]);
        out.resize(out.len() + typesize.saturating_sub(8), 0);
        i += 1;
    }
    out.truncate(len);
    out
}

fn random(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 32) as u8
        })
        .collect()
}

const ALL_CODECS: [Codec; 5] = [
    Codec::BloscLz,
    Codec::Lz4,
    Codec::Lz4Hc,
    Codec::Zlib,
    Codec::Zstd,
];

/// The codecs this build encodes (ZLIB and ZSTD with the feature `zlib-zstd-encoder`).
fn codecs() -> impl Iterator<Item = Codec> {
    ALL_CODECS.into_iter().filter(|c| c.can_encode())
}
const FILTERS: [Filter; 4] = [
    Filter::NoFilter,
    Filter::Shuffle,
    Filter::BitShuffle,
    Filter::ByteDelta,
];

#[test]
fn round_trip_all_options() {
    let mut cases = 0;
    for codec in codecs() {
        for filter in FILTERS {
            for delta in [false, true] {
                for split in [SplitMode::Always, SplitMode::Never, SplitMode::Auto] {
                    for typesize in [1usize, 2, 4, 8, 3] {
                        for (len, bs) in [(1000usize, None), (10_007, Some(4096)), (40, Some(16))] {
                            let data = if len % 2 == 0 {
                                smooth(len, typesize)
                            } else {
                                random(len, len as u64)
                            };
                            let opts = EncodeOptions {
                                codec,
                                clevel: 5,
                                filter,
                                delta,
                                trunc_prec: None,
                                blocksize: bs,
                                split,
                            };
                            let chunk = encode_chunk(&data, typesize, &opts).unwrap();
                            let h = ChunkHeader::parse(&chunk).unwrap();
                            assert_eq!(h.nbytes, len);
                            assert_eq!(h.cbytes, chunk.len());
                            let got = decode_chunk(&chunk).unwrap();
                            assert_eq!(got, data, "{codec:?} {filter:?} delta {delta} {split:?} ts {typesize} len {len}");
                            check_blocks(&chunk, &data);
                            cases += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(cases, codecs().count() * 4 * 2 * 3 * 5 * 3);
}

/// Decode every block alone from its span and compare with the matching slice.
fn check_blocks(chunk: &[u8], data: &[u8]) {
    let h = ChunkHeader::parse(chunk).unwrap();
    let spans = block_spans(&chunk[..h.prefix_len()]).unwrap();
    assert_eq!(spans.len(), h.nblocks());
    let mut block0 = vec![0u8; h.block_nbytes(0)];
    decode_block(&h, 0, &chunk[spans[0].clone()], None, &mut block0).unwrap();
    for (i, span) in spans.iter().enumerate() {
        let mut out = vec![0u8; h.block_nbytes(i)];
        let reference = if block_dependencies(&h, i) == [0] {
            Some(&block0[..])
        } else {
            None
        };
        decode_block(&h, i, &chunk[span.clone()], reference, &mut out).unwrap();
        let s = i * h.blocksize;
        assert_eq!(out, &data[s..s + out.len()], "block {i}");
    }
}

#[test]
fn delta_block_needs_reference() {
    let data = smooth(8192, 4);
    let opts = EncodeOptions {
        delta: true,
        blocksize: Some(1024),
        ..Default::default()
    };
    let chunk = encode_chunk(&data, 4, &opts).unwrap();
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(block_dependencies(&h, 3), vec![0]);
    assert!(block_dependencies(&h, 0).is_empty());
    let spans = block_spans(&chunk[..h.prefix_len()]).unwrap();
    let mut out = vec![0u8; 1024];
    let err = decode_block(&h, 3, &chunk[spans[3].clone()], None, &mut out).unwrap_err();
    assert!(matches!(
        err,
        CodecError::MissingReference {
            block: 3,
            reference: 0,
            ..
        }
    ));
}

#[test]
fn trunc_prec_chunk() {
    let vals: Vec<f32> = (0..2000).map(|i| (i as f32).sin() * 100.0).collect();
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    let opts = EncodeOptions {
        trunc_prec: Some(12),
        ..Default::default()
    };
    let chunk = encode_chunk(&data, 4, &opts).unwrap();
    let got = decode_chunk(&chunk).unwrap();
    let expect: Vec<u8> = vals
        .iter()
        .flat_map(|v| (v.to_bits() & !((1u32 << 11) - 1)).to_le_bytes())
        .collect();
    assert_eq!(got, expect);
}

#[test]
fn memcpyed_and_small_chunks() {
    for (len, clevel) in [(0usize, 5u8), (10, 5), (1000, 0)] {
        let data = random(len, 7);
        let opts = EncodeOptions {
            clevel,
            ..Default::default()
        };
        let chunk = encode_chunk(&data, 1, &opts).unwrap();
        let h = ChunkHeader::parse(&chunk).unwrap();
        assert!(h.memcpyed);
        assert_eq!(chunk.len(), 32 + len);
        assert_eq!(decode_chunk(&chunk).unwrap(), data);
    }
    // Incompressible data falls back to a memcpyed chunk too.
    let data = random(5000, 9);
    let chunk = encode_chunk(
        &data,
        1,
        &EncodeOptions {
            filter: Filter::NoFilter,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(ChunkHeader::parse(&chunk).unwrap().memcpyed);
    assert_eq!(decode_chunk(&chunk).unwrap(), data);
    check_blocks(&chunk, &data);
}

fn special_chunk(kind: u8, nbytes: usize, typesize: usize, value: &[u8]) -> Vec<u8> {
    let mut c = vec![0u8; 32];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x01 | 0x04 | 0x10;
    c[3] = typesize as u8;
    c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[8..12].copy_from_slice(&(nbytes as i32).to_le_bytes());
    c[12..16].copy_from_slice(&((32 + value.len()) as i32).to_le_bytes());
    c[31] = kind << 4;
    c.extend_from_slice(value);
    c
}

#[test]
fn special_value_chunks() {
    let z = special_chunk(1, 4000, 4, &[]);
    assert_eq!(decode_chunk(&z).unwrap(), vec![0u8; 4000]);
    let n = decode_chunk(&special_chunk(2, 80, 8, &[])).unwrap();
    assert!(n
        .chunks(8)
        .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
    assert_eq!(n.len(), 80);
    let v = decode_chunk(&special_chunk(3, 12, 4, &[1, 2, 3, 4])).unwrap();
    assert_eq!(v, [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]);
    assert_eq!(
        decode_chunk(&special_chunk(4, 16, 2, &[])).unwrap(),
        vec![0u8; 16]
    );
    assert!(matches!(
        block_spans(&z),
        Err(CodecError::NotSplittable { .. })
    ));
    // NaN needs typesize 4 or 8; value chunk needs its value.
    assert!(decode_chunk(&special_chunk(2, 12, 2, &[])).is_err());
    assert!(decode_chunk(&special_chunk(3, 12, 4, &[])).is_err());
}

/// A Blosc1 chunk (16-byte header, as numcodecs writes) built by hand: shuffle, LZ4, not split,
/// two blocks, each one stream.
#[test]
fn blosc1_chunk() {
    let data = smooth(96, 4);
    let bs = 64;
    let mut chunk = vec![2u8, 1, 0x01 | 0x10 | (1 << 5), 4];
    chunk.extend_from_slice(&96i32.to_le_bytes());
    chunk.extend_from_slice(&(bs as i32).to_le_bytes());
    chunk.extend_from_slice(&0i32.to_le_bytes());
    chunk.extend_from_slice(&[0u8; 8]);
    for (k, blk) in data.chunks(bs).enumerate() {
        let start = chunk.len() as i32;
        chunk[16 + 4 * k..20 + 4 * k].copy_from_slice(&start.to_le_bytes());
        let mut sh = vec![0u8; blk.len()];
        filters::shuffle(4, blk, &mut sh);
        let comp = lz4_flex::block::compress(&sh);
        chunk.extend_from_slice(&(comp.len() as i32).to_le_bytes());
        chunk.extend_from_slice(&comp);
    }
    let cbytes = chunk.len() as i32;
    chunk[12..16].copy_from_slice(&cbytes.to_le_bytes());
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(h.header_len, 16);
    assert_eq!(h.filters, [0, 0, 0, 0, 0, 1]);
    assert_eq!(decode_chunk(&chunk).unwrap(), data);
    check_blocks(&chunk, &data);
}

#[test]
fn run_streams() {
    // One block, split into 2 streams: a zero run (size 0) and a run of byte 7 (size -7, token 1).
    let mut chunk = vec![5u8, 1, 0x05 | (1 << 5), 2];
    chunk.extend_from_slice(&64i32.to_le_bytes());
    chunk.extend_from_slice(&64i32.to_le_bytes());
    chunk.extend_from_slice(&0i32.to_le_bytes());
    chunk.extend_from_slice(&[0u8; 16]);
    chunk.extend_from_slice(&36i32.to_le_bytes());
    chunk.extend_from_slice(&0i32.to_le_bytes());
    chunk.extend_from_slice(&(-7i32).to_le_bytes());
    chunk.push(1);
    let cbytes = chunk.len() as i32;
    chunk[12..16].copy_from_slice(&cbytes.to_le_bytes());
    let expect: Vec<u8> = (0..64).map(|i| if i % 2 == 0 { 0 } else { 7 }).collect();
    // No filter in the pipeline: streams are the two halves.
    let got = decode_chunk(&chunk).unwrap();
    let mut halves = vec![0u8; 32];
    halves.extend(std::iter::repeat_n(7u8, 32));
    assert_eq!(got, halves);
    // With SHUFFLE in the last slot the halves interleave.
    chunk[21] = 1;
    assert_eq!(decode_chunk(&chunk).unwrap(), expect);
    // A bad token is an error.
    let last = chunk.len() - 1;
    chunk[last] = 2;
    assert!(matches!(
        decode_chunk(&chunk),
        Err(CodecError::BadStream { .. })
    ));
}

#[test]
fn lying_headers_and_truncation() {
    let data = smooth(20_000, 4);
    let opts = EncodeOptions {
        blocksize: Some(4096),
        ..Default::default()
    };
    let chunk = encode_chunk(&data, 4, &opts).unwrap();
    for cut in [0, 10, 16, 31, 32, 40, chunk.len() / 2, chunk.len() - 1] {
        assert!(decode_chunk(&chunk[..cut]).is_err(), "cut {cut}");
    }
    let patch = |at: usize, v: i32| {
        let mut c = chunk.clone();
        c[at..at + 4].copy_from_slice(&v.to_le_bytes());
        c
    };
    for (at, v) in [
        (4, -1),
        (4, 40_000),
        (4, i32::MAX),
        (8, 0),
        (8, -5),
        (8, 30_000),
        (12, 5),
        (12, i32::MAX),
        (32, 1_000_000),
        (32, 0),
        (36, -4),
    ] {
        let r = decode_chunk(&patch(at, v));
        assert!(
            r.is_err() || r.as_ref().unwrap().len() == 20_000,
            "field {at} = {v}: {r:?}"
        );
    }
    assert!(matches!(
        decode_chunk(&patch(32, 1_000_000)),
        Err(CodecError::BadBlockStart { block: 0, .. })
    ));
    let mut small = vec![0u8; 10];
    assert!(matches!(
        decode_chunk_into(&chunk, &mut small),
        Err(CodecError::DestinationSize { .. })
    ));
}

#[test]
fn random_byte_flips_never_panic() {
    let mut chunks = Vec::new();
    for codec in codecs() {
        for filter in FILTERS {
            let data = smooth(6000, 4);
            let opts = EncodeOptions {
                codec,
                filter,
                delta: filter == Filter::Shuffle,
                blocksize: Some(2048),
                ..Default::default()
            };
            chunks.push((encode_chunk(&data, 4, &opts).unwrap(), data));
        }
    }
    let mut s = 0x1234_5678u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut oks = 0;
    for round in 0..4000 {
        let (chunk, data) = &chunks[round % chunks.len()];
        let mut c = chunk.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % c.len();
            c[at] ^= 1 << (next() % 8);
        }
        if let Ok(out) = decode_chunk(&c) {
            let h = ChunkHeader::parse(&c).unwrap();
            assert_eq!(out.len(), h.nbytes);
            if out == *data {
                oks += 1;
            }
        }
        if let Ok(h) = ChunkHeader::parse(&c) {
            if let Ok(spans) = block_spans(&c[..h.prefix_len().min(c.len())]) {
                for (i, sp) in spans.iter().enumerate().take(4) {
                    let mut out = vec![0u8; h.block_nbytes(i)];
                    let body = c.get(sp.clone()).unwrap_or(&[]);
                    let _ = decode_block(&h, i, body, Some(&data[..]), &mut out);
                }
            }
        }
    }
    // Some flips land in unused bits (e.g. the reserved byte) and decode to the original.
    assert!(oks > 0);
}

/// ZLIB and ZSTD encode with the feature `zlib-zstd-encoder` and, without it, are refused
/// with `Unsupported` naming the feature and the codec id (at every level, even 0, whose
/// chunk would be memcpyed), never a panic or a chunk of another codec.
#[test]
fn zlib_and_zstd_encode_only_with_their_feature() {
    let data = smooth(4000, 4);
    for codec in [Codec::Zlib, Codec::Zstd] {
        for clevel in [0u8, 5] {
            let opts = EncodeOptions {
                codec,
                clevel,
                ..Default::default()
            };
            let got = encode_chunk(&data, 4, &opts);
            if cfg!(feature = "zlib-zstd-encoder") {
                assert!(codec.can_encode());
                assert_eq!(decode_chunk(&got.unwrap()).unwrap(), data);
            } else {
                assert!(!codec.can_encode());
                match got {
                    Err(CodecError::Unsupported { what, value }) => {
                        assert!(what.contains("zlib-zstd-encoder"), "{what}");
                        assert_eq!(value, i64::from(codec.id()));
                    }
                    other => panic!("{codec:?} at clevel {clevel}: {other:?}"),
                }
            }
        }
    }
    for codec in ALL_CODECS {
        assert_eq!(Codec::from_id(codec.id()), Some(codec));
    }
}
