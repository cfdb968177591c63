//! Parity of chunkwise's pure-Rust Blosc2 chunk codec with C-Blosc2 2.15 (built from source by
//! blosc2-sys). Expected values are always the data written, never a library's read-back.
//!
//! All C calls run inside one test function: C-Blosc2 reads environment variables, and the
//! Blosc1 part sets one, so nothing else may run C code at the same time.

use chunkwise::codec::blosc2::{
    block_dependencies, block_spans, decode_block, decode_chunk, encode_chunk, ChunkHeader, Codec,
    EncodeOptions, Filter, SplitMode,
};
use native_harness::bench_decode::cblosc2::{self, Dctx, Params, Special};

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Seeded data of `len` bytes: kind 0 smooth ramp of typesize-wide integers, 1 random bytes,
/// 2 one repeated element, 3 zeros; kinds 4/5 are float32/float64 waves (for TRUNC_PREC).
fn make_data(kind: u8, len: usize, typesize: usize, seed: u64) -> Vec<u8> {
    let mut r = rng(seed);
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0u64;
    while out.len() < len {
        match kind {
            0 => {
                let v = i.wrapping_mul(3) + (r() % 4);
                out.extend_from_slice(&v.to_le_bytes()[..typesize.min(8)]);
            }
            1 => out.push(r() as u8),
            2 => out.extend_from_slice(
                &[0xA5, 0x17, 0x3C, 0x01, 0x99, 0x42, 0x07, 0xEE][..typesize.min(8)],
            ),
            3 => out.push(0),
            4 => out.extend_from_slice(&((i as f32 * 0.01).sin() * 1000.0).to_le_bytes()),
            _ => out.extend_from_slice(&((i as f64 * 0.01).cos() * 1e6).to_le_bytes()),
        }
        i += 1;
    }
    out.truncate(len);
    out
}

fn trunc(data: &[u8], typesize: usize, zeroed: u32) -> Vec<u8> {
    let mut out = data.to_vec();
    let whole = data.len() / typesize * typesize;
    if typesize == 4 {
        for c in out[..whole].chunks_exact_mut(4) {
            let v = u32::from_le_bytes(c.try_into().unwrap()) & !((1u32 << zeroed) - 1);
            c.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        for c in out[..whole].chunks_exact_mut(8) {
            let v = u64::from_le_bytes(c.try_into().unwrap()) & !((1u64 << zeroed) - 1);
            c.copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Decode every block alone from its span (with block 0 as DELTA reference where needed) and
/// compare with the matching slice of `expect`. Returns the number of blocks checked.
fn check_blocks(chunk: &[u8], expect: &[u8], what: &str) -> usize {
    let h = ChunkHeader::parse(chunk).unwrap();
    if h.special.is_some() {
        return 0;
    }
    let spans = block_spans(&chunk[..h.prefix_len()]).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(spans.len(), h.nblocks(), "{what}");
    let mut block0 = vec![0u8; h.block_nbytes(0)];
    decode_block(&h, 0, &chunk[spans[0].clone()], None, &mut block0).unwrap();
    for (i, span) in spans.iter().enumerate() {
        let mut out = vec![0u8; h.block_nbytes(i)];
        let reference = (!block_dependencies(&h, i).is_empty()).then_some(&block0[..]);
        decode_block(&h, i, &chunk[span.clone()], reference, &mut out)
            .unwrap_or_else(|e| panic!("{what}: block {i}: {e}"));
        let s = i * h.blocksize;
        assert!(out == expect[s..s + out.len()], "{what}: block {i} differs");
    }
    spans.len()
}

const CODEC_IDS: [(u8, &str); 5] = [
    (0, "blosclz"),
    (1, "lz4"),
    (2, "lz4hc"),
    (4, "zlib"),
    (5, "zstd"),
];

#[derive(Default)]
struct Counts {
    c_to_ours: usize,
    blocks: usize,
    ours_to_c: usize,
    special: usize,
    blosc1: usize,
    memcpyed_seen: usize,
    split_seen: usize,
    c_refuses_own: usize,
    c_loses_tail: usize,
}

fn c_chunks_decode_with_ours(n: &mut Counts) {
    // (filter name, pipeline, metas) — metas filled per typesize where needed.
    // BYTEDELTA is a plugin, and blosc2-sys builds C-Blosc2 without plugins: its chunks are
    // checked against python-blosc2 in `bytedelta_chunks_from_python_blosc2`.
    let pipelines: [(&str, [u8; 6]); 6] = [
        ("none", [0; 6]),
        ("shuffle", [0, 0, 0, 0, 0, 1]),
        ("bitshuffle", [0, 0, 0, 0, 0, 2]),
        ("delta", [0, 0, 0, 0, 0, 3]),
        ("delta+shuffle", [0, 0, 0, 0, 3, 1]),
        ("trunc_prec+shuffle", [0, 0, 0, 0, 4, 1]),
    ];
    // (nbytes, blocksize): whole chunk one block, blocks not dividing nbytes, tiny blocks,
    // nbytes not a multiple of typesize.
    let sizes = [
        (4096usize, 0usize),
        (20_000, 4096),
        (9_000, 256),
        (12_345, 2048),
        (100, 64),
    ];
    for (codec, cname) in CODEC_IDS {
        for (fname, filters) in pipelines {
            for splitmode in [1, 2] {
                for typesize in [1usize, 2, 4, 8] {
                    let is_trunc = filters[4] == 4;
                    if is_trunc && typesize < 4 {
                        continue;
                    }
                    for (si, &(nbytes, blocksize)) in sizes.iter().enumerate() {
                        // BYTEDELTA leaves trailing partial elements unwritten in C.
                        if filters[5] == 35 && nbytes % typesize != 0 {
                            continue;
                        }
                        let mut meta = [0u8; 6];
                        if filters[5] == 35 {
                            meta[5] = typesize as u8;
                        }
                        let zeroed = if typesize == 4 { 13 } else { 30 };
                        if is_trunc {
                            // meta = precision bits kept
                            meta[4] = if typesize == 4 { 23 - 13 } else { 52 - 30 };
                        }
                        let kinds: &[u8] = if is_trunc {
                            if typesize == 4 {
                                &[4, 3]
                            } else {
                                &[5, 3]
                            }
                        } else {
                            &[0, 1, 2, 3]
                        };
                        for &kind in kinds {
                            let data =
                                make_data(kind, nbytes, typesize, (si * 31 + kind as usize) as u64);
                            let expect = if is_trunc {
                                trunc(&data, typesize, zeroed)
                            } else {
                                data.clone()
                            };
                            let p = Params {
                                codec,
                                clevel: 5,
                                typesize,
                                blocksize,
                                splitmode,
                                filters,
                                filters_meta: meta,
                                // Some cases with threads, so blocks may be stored out of order.
                                nthreads: if si == 2 { 4 } else { 1 },
                            };
                            let what = format!(
                                "C {cname} {fname} split {splitmode} ts {typesize} nbytes {nbytes} bs {blocksize} kind {kind}"
                            );
                            let chunk = cblosc2::compress(&p, &data)
                                .unwrap_or_else(|e| panic!("{what}: C error {e}"));
                            let h = ChunkHeader::parse(&chunk)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            if h.special.is_some() && nbytes % typesize != 0 {
                                // C-Blosc2 writes zero chunks it then refuses to read.
                                let mut out = vec![0u8; nbytes];
                                assert!(Dctx::new(1).decompress_into(&chunk, &mut out).is_err());
                                n.c_refuses_own += 1;
                            }
                            n.memcpyed_seen += h.memcpyed as usize;
                            n.split_seen += (h.split && !h.memcpyed && typesize > 1) as usize;
                            let got =
                                decode_chunk(&chunk).unwrap_or_else(|e| panic!("{what}: {e}"));
                            // C's DELTA and TRUNC_PREC encoders leave the trailing partial element
                            // of the last block unwritten, so those bytes are lost in the chunk.
                            let cmp = if filters.contains(&3) || filters.contains(&4) {
                                nbytes - nbytes % typesize
                            } else {
                                nbytes
                            };
                            n.c_loses_tail += (cmp < nbytes) as usize;
                            assert!(got[..cmp] == expect[..cmp], "{what}: decoded bytes differ");
                            assert_eq!(got.len(), nbytes);
                            // Blocks decoded alone must match the data (and, for the lost tail
                            // bytes only, the whole-chunk decode).
                            let mut block_expect = expect[..cmp].to_vec();
                            block_expect.extend_from_slice(&got[cmp..]);
                            n.blocks += check_blocks(&chunk, &block_expect, &what);
                            n.c_to_ours += 1;
                        }
                    }
                }
            }
        }
    }
}

fn our_chunks_decode_with_c(n: &mut Counts) {
    let mut dctx = Dctx::new(1);
    let codecs = [
        Codec::BloscLz,
        Codec::Lz4,
        Codec::Lz4Hc,
        Codec::Zlib,
        Codec::Zstd,
    ];
    // No BYTEDELTA: the C-Blosc2 built by blosc2-sys has no plugins.
    let filters = [Filter::NoFilter, Filter::Shuffle, Filter::BitShuffle];
    for codec in codecs {
        for filter in filters {
            for delta in [false, true] {
                for split in [SplitMode::Always, SplitMode::Never] {
                    for typesize in [1usize, 2, 4, 8] {
                        for (nbytes, bs) in [
                            (4096usize, None),
                            (20_000, Some(4096)),
                            (12_345, Some(2048)),
                            (100, Some(64)),
                        ] {
                            for kind in [0u8, 1, 3] {
                                let data = make_data(kind, nbytes, typesize, 7 + kind as u64);
                                let opts = EncodeOptions {
                                    codec,
                                    clevel: 5,
                                    filter,
                                    delta,
                                    trunc_prec: None,
                                    blocksize: bs,
                                    split,
                                };
                                let what = format!("ours {codec:?} {filter:?} delta {delta} {split:?} ts {typesize} nbytes {nbytes} kind {kind}");
                                let chunk = encode_chunk(&data, typesize, &opts).unwrap();
                                let mut out = vec![0u8; nbytes];
                                let r = dctx.decompress_into(&chunk, &mut out);
                                assert_eq!(r, Ok(nbytes), "{what}");
                                assert!(out == data, "{what}: C decoded different bytes");
                                n.ours_to_c += 1;
                            }
                        }
                    }
                }
            }
        }
    }
}

fn special_chunks(n: &mut Counts) {
    for typesize in [1usize, 2, 4, 8] {
        for nbytes in [0usize, 64, 40_000, 1 << 20] {
            let p = Params {
                codec: 1,
                clevel: 5,
                typesize,
                blocksize: 0,
                splitmode: 4,
                filters: [0, 0, 0, 0, 0, 1],
                filters_meta: [0; 6],
                nthreads: 1,
            };
            let value: Vec<u8> = (0..typesize as u8).map(|b| 0x10 + b).collect();
            let mut kinds = vec![Special::Zeros, Special::Value(&value), Special::Uninit];
            if typesize >= 4 {
                kinds.push(Special::Nans);
            }
            for kind in kinds {
                let chunk = cblosc2::special_chunk(&p, nbytes, kind).unwrap();
                let h = ChunkHeader::parse(&chunk).unwrap();
                let got =
                    decode_chunk(&chunk).unwrap_or_else(|e| panic!("{kind:?} ts {typesize}: {e}"));
                assert_eq!(got.len(), nbytes);
                match kind {
                    Special::Zeros | Special::Uninit => assert!(got.iter().all(|&b| b == 0)),
                    Special::Value(v) => assert!(got.chunks(typesize).all(|c| c == v)),
                    Special::Nans => {
                        if typesize == 4 {
                            assert!(got
                                .chunks(4)
                                .all(|c| f32::from_le_bytes(c.try_into().unwrap()).is_nan()));
                        } else {
                            assert!(got
                                .chunks(8)
                                .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
                        }
                    }
                }
                if nbytes > 0 {
                    assert!(h.special.is_some(), "{kind:?}: not flagged special");
                }
                n.special += 1;
            }
        }
    }
}

/// Blosc1-format chunks (16-byte header) as numcodecs writes them: C-Blosc2's global
/// compressor with BLOSC_BLOSC1_COMPAT set.
fn blosc1_chunks(n: &mut Counts) {
    use blosc2_sys as ffi;
    std::env::set_var("BLOSC_BLOSC1_COMPAT", "1");
    for (name, cname) in [
        ("blosclz", c"blosclz"),
        ("lz4", c"lz4"),
        ("zlib", c"zlib"),
        ("zstd", c"zstd"),
    ] {
        for doshuffle in [0, 1, 2] {
            for typesize in [1usize, 4, 8] {
                for (nbytes, bs) in [(50_000usize, 8192usize), (3_000, 0)] {
                    let data = make_data(0, nbytes, typesize, 3);
                    let mut dst = vec![0u8; nbytes + 64];
                    // SAFETY: global-state setters with valid arguments; buffers are live.
                    let r = unsafe {
                        ffi::blosc1_set_compressor(cname.as_ptr());
                        ffi::blosc1_set_blocksize(bs);
                        ffi::blosc2_compress(
                            5,
                            doshuffle,
                            typesize as i32,
                            data.as_ptr().cast(),
                            nbytes as i32,
                            dst.as_mut_ptr().cast(),
                            dst.len() as i32,
                        )
                    };
                    assert!(r > 0, "blosc1 {name} C error {r}");
                    dst.truncate(r as usize);
                    let h = ChunkHeader::parse(&dst).unwrap();
                    assert_eq!(h.header_len, 16, "blosc1 {name}: not a Blosc1 header");
                    let what =
                        format!("blosc1 {name} shuffle {doshuffle} ts {typesize} nbytes {nbytes}");
                    let got = decode_chunk(&dst).unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(got == data, "{what}: differs");
                    n.blocks += check_blocks(&dst, &data, &what);
                    n.blosc1 += 1;
                }
            }
        }
    }
    // SAFETY: restore the defaults.
    unsafe { ffi::blosc1_set_blocksize(0) };
    std::env::remove_var("BLOSC_BLOSC1_COMPAT");
}

#[test]
fn blosc2_parity_with_c() {
    let mut n = Counts::default();
    c_chunks_decode_with_ours(&mut n);
    our_chunks_decode_with_c(&mut n);
    special_chunks(&mut n);
    blosc1_chunks(&mut n);
    let damaged = damaged_chunks_never_panic();
    println!(
        "blosc2 parity: {} C chunks decoded by ours ({} blocks decoded alone, {} memcpyed, {} split), \
         {} our chunks decoded by C, {} special-value chunks, {} Blosc1 chunks; \
         {} C chunks that C itself refuses to read were decoded right; \
         {} DELTA/TRUNC_PREC chunks compared without the trailing partial element C does not store; \
         {} damaged chunks refused or decoded to the claimed length",
        n.c_to_ours, n.blocks, n.memcpyed_seen, n.split_seen, n.ours_to_c, n.special, n.blosc1, n.c_refuses_own, n.c_loses_tail, damaged
    );
    assert!(n.memcpyed_seen > 0 && n.split_seen > 0);
}

/// ZSTD chunks C-Blosc2 2.15 compresses with a dictionary (`use_dict`) decode to the data with
/// our decoder and to the same bytes with C's. 2.15 refuses `use_dict` for other codecs; the
/// chunks C-Blosc2 3.3 wrote with LZ4 and LZ4HC dictionaries are the fixtures'
/// (tests/blosc2_fixtures.rs).
#[test]
fn c_dictionary_chunks_decode_with_ours() {
    let (mut with_dict, mut total) = (0usize, 0usize);
    let (codec, cname) = (5u8, "zstd");
    for typesize in [1usize, 2, 4, 8] {
        for (nbytes, blocksize) in [(65_536usize, 4096usize), (200_000, 16_384), (30_000, 0)] {
            for kind in [0u8, 1, 2] {
                let data = make_data(kind, nbytes, typesize, 77 + kind as u64);
                let p = Params {
                    codec,
                    clevel: 5,
                    typesize,
                    blocksize,
                    splitmode: 2,
                    filters: [0, 0, 0, 0, 0, 1],
                    filters_meta: [0; 6],
                    nthreads: 1,
                };
                let what = format!(
                    "C {cname} dict ts {typesize} nbytes {nbytes} bs {blocksize} kind {kind}"
                );
                let chunk = cblosc2::compress_with_dict(&p, &data)
                    .unwrap_or_else(|e| panic!("{what}: C error {e}"));
                let h = ChunkHeader::parse(&chunk).unwrap();
                let got = decode_chunk(&chunk).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(got == data, "{what}: decoded bytes differ");
                let mut theirs = vec![0u8; nbytes];
                // A new context per chunk: C-Blosc2 2.15 crashes freeing the previous
                // chunk's dictionary when a context decodes a second one.
                if Dctx::new(1).decompress_into(&chunk, &mut theirs).is_ok() {
                    assert!(theirs == got, "{what}: C decodes other bytes");
                } else {
                    assert!(h.memcpyed, "{what}: C refuses its own chunk");
                }
                total += 1;
                with_dict += h.has_dict() as usize;
            }
        }
    }
    println!("{total} C chunks made with use_dict: {with_dict} with a dictionary");
    assert!(with_dict >= 12, "{with_dict} chunks with a dictionary");
}

/// Damaged C-made chunks: truncations, lying header fields (nbytes, blocksize, cbytes, bstarts
/// entries) and seeded random byte flips give an error or output of the claimed length, never a
/// panic. Returns the number of damaged chunks tried.
fn damaged_chunks_never_panic() -> usize {
    let mut chunks = Vec::new();
    for (codec, _) in CODEC_IDS {
        for filters in [[0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 3, 1]] {
            for splitmode in [1, 2] {
                let data = make_data(0, 30_000, 4, 1);
                let p = Params {
                    codec,
                    clevel: 5,
                    typesize: 4,
                    blocksize: 4096,
                    splitmode,
                    filters,
                    filters_meta: [0; 6],
                    nthreads: 1,
                };
                chunks.push(cblosc2::compress(&p, &data).unwrap());
            }
        }
    }
    let mut r = rng(99);
    let rounds = 20_000;
    for round in 0..rounds {
        let mut c = chunks[round % chunks.len()].clone();
        match round % 4 {
            0 => c.truncate((r() as usize) % c.len()),
            1 => {
                // Lie in nbytes, blocksize, cbytes or a bstarts entry.
                let at = [4usize, 8, 12, 32, 36, 40][(r() % 6) as usize];
                let v = r() as i32 >> (r() % 31);
                c[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                for _ in 0..1 + r() % 8 {
                    let at = (r() as usize) % c.len();
                    c[at] ^= 1 << (r() % 8);
                }
            }
        }
        if let Ok(out) = decode_chunk(&c) {
            assert_eq!(out.len(), ChunkHeader::parse(&c).unwrap().nbytes);
        }
        if let Ok(h) = ChunkHeader::parse(&c) {
            if let Ok(spans) = block_spans(&c[..h.prefix_len().min(c.len())]) {
                let reference = vec![0u8; h.blocksize];
                for (i, span) in spans.iter().enumerate().take(3) {
                    let mut out = vec![0u8; h.block_nbytes(i)];
                    let body = c.get(span.clone()).unwrap_or(&[]);
                    let _ = decode_block(&h, i, body, Some(&reference), &mut out);
                }
            }
        }
    }
    rounds
}

const PY_BYTEDELTA: &str = r#"
import json, sys, blosc2
d = sys.argv[1]
spec = json.load(open(f"{d}/spec.json"))
for i, s in enumerate(spec):
    data = open(f"{d}/data_{i}.bin", "rb").read()
    chunk = blosc2.compress2(
        data, codec=blosc2.Codec(s["codec"]), clevel=5, typesize=s["typesize"],
        filters=[blosc2.Filter.SHUFFLE, blosc2.Filter.BYTEDELTA], filters_meta=[0, s["typesize"]],
        blocksize=s["blocksize"], splitmode=blosc2.SplitMode(s["split"]), nthreads=1)
    open(f"{d}/py_{i}.b2", "wb").write(chunk)
    ours = open(f"{d}/ours_{i}.b2", "rb").read()
    open(f"{d}/ours_{i}.out", "wb").write(blosc2.decompress2(ours))
"#;

/// BYTEDELTA chunks (a C-Blosc2 plugin missing from blosc2-sys's build) against python-blosc2
/// 4.14.1 from the project venv (scripts/setup.sh): its chunks decode with ours, ours decode
/// with it, both to the data written.
#[test]
fn bytedelta_chunks_from_python_blosc2() {
    let home = std::env::var("HOME").unwrap();
    let venv = std::env::var("CHUNKWISE_VENV").unwrap_or(format!("{home}/.cache/chunkwise/venv"));
    let python = format!("{venv}/bin/python");
    assert!(
        std::path::Path::new(&python).exists(),
        "{python} missing: run scripts/setup.sh"
    );
    let dir = std::env::temp_dir().join(format!("chunkwise-bytedelta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut spec = Vec::new();
    let mut datas = Vec::new();
    // (codec id for python-blosc2, our codec)
    let codecs = [
        (0, Codec::BloscLz),
        (1, Codec::Lz4),
        (4, Codec::Zlib),
        (5, Codec::Zstd),
    ];
    for (cid, codec) in codecs {
        for typesize in [1usize, 2, 4, 8] {
            for (split, ours_split) in [(1, SplitMode::Always), (2, SplitMode::Never)] {
                for (nbytes, bs) in [(40_000usize, 8192usize), (4096, 4096)] {
                    for kind in [0u8, 1] {
                        let i = datas.len();
                        let data = make_data(kind, nbytes, typesize, i as u64);
                        std::fs::write(dir.join(format!("data_{i}.bin")), &data).unwrap();
                        let opts = EncodeOptions {
                            codec,
                            filter: Filter::ByteDelta,
                            blocksize: Some(bs),
                            split: ours_split,
                            ..Default::default()
                        };
                        let ours = encode_chunk(&data, typesize, &opts).unwrap();
                        std::fs::write(dir.join(format!("ours_{i}.b2")), &ours).unwrap();
                        spec.push(format!(
                            r#"{{"codec": {cid}, "typesize": {typesize}, "blocksize": {bs}, "split": {split}}}"#
                        ));
                        datas.push(data);
                    }
                }
            }
        }
    }
    std::fs::write(dir.join("spec.json"), format!("[{}]", spec.join(","))).unwrap();
    let st = std::process::Command::new(&python)
        .arg("-c")
        .arg(PY_BYTEDELTA)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(st.success(), "python-blosc2 script failed");
    let mut split_seen = 0;
    let mut with_bytedelta = 0;
    for (i, data) in datas.iter().enumerate() {
        let py = std::fs::read(dir.join(format!("py_{i}.b2"))).unwrap();
        let h = ChunkHeader::parse(&py).unwrap();
        // python-blosc2 drops BYTEDELTA for typesize 1 (and stores incompressible chunks raw).
        if h.filters.contains(&35) {
            with_bytedelta += 1;
        }
        split_seen += (h.split && !h.memcpyed) as usize;
        assert!(
            decode_chunk(&py).unwrap() == *data,
            "case {i}: python chunk decoded wrong"
        );
        check_blocks(&py, data, &format!("python bytedelta case {i}"));
        let back = std::fs::read(dir.join(format!("ours_{i}.out"))).unwrap();
        assert!(
            back == *data,
            "case {i}: python-blosc2 decoded our chunk wrong"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "bytedelta parity with python-blosc2: {} cases ({with_bytedelta} with BYTEDELTA, {split_seen} split)",
        datas.len()
    );
    assert!(split_seen > 0 && with_bytedelta >= datas.len() / 2);
}

const PY_BYTEDELTA_LEGACY: &str = r#"
import json, sys, blosc2
d = sys.argv[1]
spec = json.load(open(f"{d}/spec.json"))
for i, s in enumerate(spec):
    data = open(f"{d}/data_{i}.bin", "rb").read()
    # Filter 34 is C-Blosc2's BLOSC_FILTER_BYTEDELTA_BUGGY (python-blosc2 has no name for it).
    chunk = blosc2.compress2(
        data, codec=blosc2.Codec(s["codec"]), clevel=5, typesize=s["typesize"],
        filters=[blosc2.Filter.SHUFFLE, 34], filters_meta=[0, s["typesize"]],
        blocksize=s["blocksize"], splitmode=blosc2.SplitMode(s["split"]), nthreads=1)
    open(f"{d}/py_{i}.b2", "wb").write(chunk)
    # C-Blosc2 reading its own chunk back.
    open(f"{d}/py_{i}.out", "wb").write(blosc2.decompress2(chunk))
"#;

/// Legacy BYTEDELTA chunks (filter 34, `BLOSC_FILTER_BYTEDELTA_BUGGY`, the only byte delta
/// C-Blosc2 wrote before 2.8) written by C-Blosc2 3.3 (the library inside python-blosc2
/// 4.14.1, which still registers that filter) decode with ours to the data written, as C
/// decodes them. Blocks are sized so that byte streams end in a partial 16-byte group, where
/// the legacy running sum restarts: decoding them as filter 35 gives other bytes.
#[test]
fn legacy_bytedelta_chunks_from_c_blosc2() {
    let python = native_harness::venv_python();
    assert!(
        python.exists(),
        "{} missing: run scripts/setup.sh",
        python.display()
    );
    let dir = std::env::temp_dir().join(format!("chunkwise-bytedelta34-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut spec = Vec::new();
    let mut datas = Vec::new();
    for cid in [0u8, 1, 5] {
        for typesize in [2usize, 4, 8] {
            for split in [1, 2] {
                // (nbytes, blocksize): a last block of 1808 bytes, one block of 1000 bytes.
                for (nbytes, bs) in [(10_000usize, 4096usize), (1000, 0)] {
                    for kind in [0u8, 1] {
                        let i = datas.len();
                        let data = make_data(kind, nbytes, typesize, 100 + i as u64);
                        std::fs::write(dir.join(format!("data_{i}.bin")), &data).unwrap();
                        spec.push(format!(
                            r#"{{"codec": {cid}, "typesize": {typesize}, "blocksize": {bs}, "split": {split}}}"#
                        ));
                        datas.push(data);
                    }
                }
            }
        }
    }
    std::fs::write(dir.join("spec.json"), format!("[{}]", spec.join(","))).unwrap();
    let st = std::process::Command::new(&python)
        .arg("-c")
        .arg(PY_BYTEDELTA_LEGACY)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(st.success(), "python-blosc2 script failed");
    let (mut legacy, mut differs) = (0, 0);
    for (i, data) in datas.iter().enumerate() {
        let py = std::fs::read(dir.join(format!("py_{i}.b2"))).unwrap();
        let back = std::fs::read(dir.join(format!("py_{i}.out"))).unwrap();
        assert!(
            back == *data,
            "case {i}: C-Blosc2 does not read its own chunk back"
        );
        let h = ChunkHeader::parse(&py).unwrap();
        let got = decode_chunk(&py).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(
            got == *data,
            "case {i}: legacy bytedelta chunk decoded wrong"
        );
        check_blocks(&py, data, &format!("legacy bytedelta case {i}"));
        if let Some(k) = h.filters.iter().position(|&f| f == 34) {
            legacy += 1;
            // The same chunk read as the fixed filter 35.
            let mut as35 = py.clone();
            as35[16 + k] = 35;
            differs += (decode_chunk(&as35).map_or(true, |d| d != *data)) as usize;
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    println!(
        "legacy bytedelta parity with C-Blosc2: {} cases ({legacy} with filter 34, {differs} \
         of which read as filter 35 give other bytes)",
        datas.len()
    );
    assert!(legacy >= datas.len() / 2 && differs > 0);
}

/// Decode one LZ4+SHUFFLE float32 chunk many times with ours only (for profilers).
#[test]
#[ignore]
fn profile_lz4_shuffle_decode() {
    let data: Vec<u8> = (0..1 << 20)
        .flat_map(|i| ((i as f32 * 0.001).sin() * 50.0 + (i % 1000) as f32 * 1e-4).to_le_bytes())
        .collect();
    let p = Params {
        codec: 1,
        clevel: 5,
        typesize: 4,
        blocksize: 0,
        splitmode: 4,
        filters: [0, 0, 0, 0, 0, 1],
        filters_meta: [0; 6],
        nthreads: 1,
    };
    let chunk = cblosc2::compress(&p, &data).unwrap();
    let h = ChunkHeader::parse(&chunk).unwrap();
    println!(
        "blocksize {} split {} cbytes {}",
        h.blocksize, h.split, h.cbytes
    );
    let mut out = vec![0u8; data.len()];
    let t = std::time::Instant::now();
    for _ in 0..200 {
        chunkwise::codec::blosc2::decode_chunk_into(&chunk, &mut out).unwrap();
    }
    println!(
        "ours: {:.0} MB/s",
        200.0 * data.len() as f64 / t.elapsed().as_secs_f64() / 1e6
    );
    let mut d = Dctx::new(1);
    let t = std::time::Instant::now();
    for _ in 0..200 {
        d.decompress_into(&chunk, &mut out).unwrap();
    }
    println!(
        "C: {:.0} MB/s",
        200.0 * data.len() as f64 / t.elapsed().as_secs_f64() / 1e6
    );
    assert!(out == data);
}

/// The decode benchmark in quick mode (run with `--release -- --ignored --nocapture`).
#[test]
#[ignore]
fn bench_decode_quick() {
    let rows = native_harness::bench_decode::run(true);
    println!("{}", native_harness::bench_decode::format_table(&rows));
}
