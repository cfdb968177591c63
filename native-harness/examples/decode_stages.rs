//! The stages of decoding one C-Blosc2 chunk, ours and C-Blosc2's side by side (single
//! thread): the whole chunk, LZ4 alone over every stream of the chunk, the byte (or bit)
//! unshuffle alone over every block. The data and parameters are those of the `lz4 shuffle`
//! and `lz4 bitshuffle` rows of `chunkwise bench decode` (4 MiB chunks, C-Blosc2 picks the
//! block size). MB/s of decoded output, the fastest of 7 rounds.
//!
//! `cargo run --release -p native-harness --example decode_stages`

use std::time::Instant;

use chunkwise::codec::blosc2::{block_spans, decode_chunk_into, filters, lz4, ChunkHeader};
use native_harness::bench_decode::cblosc2::{compress, Dctx, Params};
use native_harness::bench_decode::{float32_data, int64_data};

// C-Blosc2's internal LZ4 1.10 and its run-time dispatched filters (shuffle.c), linked
// statically from blosc2-sys.
extern "C" {
    fn LZ4_decompress_safe(src: *const u8, dst: *mut u8, csize: i32, cap: i32) -> i32;
    fn unshuffle(typesize: i32, blocksize: i32, src: *const u8, dst: *mut u8);
    fn bitunshuffle(typesize: i32, blocksize: i32, src: *const u8, dst: *mut u8, fmt: u8) -> i32;
}

/// MB/s of `bytes` per call of `f`, the fastest of 7 rounds of ~64 MiB.
fn mbps(bytes: usize, mut f: impl FnMut()) -> f64 {
    let reps = (64usize << 20).div_ceil(bytes).max(1);
    f();
    (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            (reps * bytes) as f64 / t.elapsed().as_secs_f64() / 1e6
        })
        .fold(0.0, f64::max)
}

/// One compressed stream: its bytes and its decoded size.
struct Stream<'a> {
    body: &'a [u8],
    out_len: usize,
}

fn streams_of(chunk: &[u8]) -> (ChunkHeader, Vec<Stream<'_>>) {
    let h = ChunkHeader::parse(chunk).unwrap();
    let spans = block_spans(chunk).unwrap();
    let mut v = Vec::new();
    for (b, span) in spans.iter().enumerate() {
        let ns = h.block_nstreams(b);
        let neblock = h.block_nbytes(b) / ns;
        let mut pos = span.start;
        for _ in 0..ns {
            let cs = i32::from_le_bytes(chunk[pos..pos + 4].try_into().unwrap());
            pos += 4;
            if cs <= 0 {
                pos += usize::from(cs < 0);
                continue;
            }
            // Streams stored raw (`cs == neblock`) are copies, not LZ4: left out.
            if cs as usize != neblock {
                v.push(Stream {
                    body: &chunk[pos..pos + cs as usize],
                    out_len: neblock,
                });
            }
            pos += cs as usize;
        }
    }
    (h, v)
}

/// Sequence statistics of the LZ4 streams: literal and match lengths, offsets.
fn stats(streams: &[Stream]) {
    let (mut seqs, mut lit_hist, mut ml_hist, mut off_hist) =
        (0usize, [0usize; 6], [0usize; 6], [0usize; 5]);
    let bucket = |x: usize| match x {
        0 => 0,
        1..=14 => 1,
        15..=32 => 2,
        33..=64 => 3,
        65..=1024 => 4,
        _ => 5,
    };
    for s in streams {
        let b = s.body;
        let mut ip = 0;
        loop {
            let t = b[ip];
            ip += 1;
            let mut lit = (t >> 4) as usize;
            if lit == 15 {
                loop {
                    let x = b[ip];
                    ip += 1;
                    lit += x as usize;
                    if x != 255 {
                        break;
                    }
                }
            }
            ip += lit;
            lit_hist[bucket(lit)] += 1;
            seqs += 1;
            if ip >= b.len() {
                break;
            }
            let off = u16::from_le_bytes([b[ip], b[ip + 1]]) as usize;
            ip += 2;
            off_hist[match off {
                1 => 0,
                2..=7 => 1,
                8..=15 => 2,
                16..=255 => 3,
                _ => 4,
            }] += 1;
            let mut ml = (t & 15) as usize;
            if ml == 15 {
                loop {
                    let x = b[ip];
                    ip += 1;
                    ml += x as usize;
                    if x != 255 {
                        break;
                    }
                }
            }
            ml_hist[bucket(ml + 4)] += 1;
        }
    }
    println!("  {seqs} sequences; literals 0/1-14/15-32/33-64/65-1024/more {lit_hist:?}; match same {ml_hist:?}; offsets 1/2-7/8-15/16-255/more {off_hist:?}");
}

fn main() {
    let f32d = float32_data(1 << 20);
    let i64d = int64_data(1 << 19);
    for (name, data, ts) in [("float32", &f32d, 4usize), ("int64", &i64d, 8)] {
        for (fname, fcode) in [("shuffle", 1u8), ("bitshuffle", 2)] {
            let p = Params {
                codec: 1,
                clevel: 5,
                typesize: ts,
                blocksize: 0,
                splitmode: 4,
                filters: [0, 0, 0, 0, 0, fcode],
                filters_meta: [0; 6],
                nthreads: 1,
            };
            let chunk = compress(&p, data).unwrap();
            let (h, streams) = streams_of(&chunk);
            if std::env::var_os("STAGES_STATS").is_some() {
                stats(&streams);
            }
            if let Some(k) = std::env::var_os("STAGES_LZ4_ONLY") {
                // Only our LZ4 over this case's streams, for a profiler.
                if k.to_str() == Some(&format!("{fname}-{name}")) {
                    let mut tmp = vec![0u8; h.blocksize];
                    for _ in 0..20_000 {
                        for s in &streams {
                            lz4::decompress(s.body, &mut tmp[..s.out_len]).unwrap();
                        }
                    }
                }
                continue;
            }
            let n = data.len();
            let mut out = vec![0u8; n];
            let ours = mbps(n, || decode_chunk_into(&chunk, &mut out).unwrap());
            assert!(out == *data);
            let mut dctx = Dctx::new(1);
            let c = mbps(n, || {
                dctx.decompress_into(&chunk, &mut out).unwrap();
            });
            // LZ4 alone: every stream into one block-sized buffer (as the decoders do).
            let mut tmp = vec![0u8; h.blocksize];
            let lz_bytes: usize = streams.iter().map(|s| s.out_len).sum();
            let lz_ours = mbps(lz_bytes, || {
                for s in &streams {
                    let r = lz4::decompress(s.body, &mut tmp[..s.out_len]);
                    assert_eq!(r, Some(s.out_len));
                }
            });
            let lz_c = mbps(lz_bytes, || {
                for s in &streams {
                    // SAFETY: the pointers and sizes describe live buffers.
                    let r = unsafe {
                        LZ4_decompress_safe(
                            s.body.as_ptr(),
                            tmp.as_mut_ptr(),
                            s.body.len() as i32,
                            s.out_len as i32,
                        )
                    };
                    assert_eq!(r as usize, s.out_len);
                }
            });
            // The filter alone, block by block from one block-sized source (warm in cache).
            let bs = h.blocksize;
            let nblocks = n / bs;
            let src: Vec<u8> = (0..bs).map(|i| (i * 131 + 7) as u8).collect();
            let (fl_ours, fl_c) = if fcode == 1 {
                (
                    mbps(n, || {
                        for b in 0..nblocks {
                            filters::unshuffle(ts, &src, &mut out[b * bs..(b + 1) * bs]);
                        }
                    }),
                    mbps(n, || {
                        for b in 0..nblocks {
                            // SAFETY: src and the block of out hold bs bytes.
                            unsafe {
                                unshuffle(
                                    ts as i32,
                                    bs as i32,
                                    src.as_ptr(),
                                    out[b * bs..].as_mut_ptr(),
                                )
                            }
                        }
                    }),
                )
            } else {
                (
                    mbps(n, || {
                        for b in 0..nblocks {
                            filters::bitunshuffle(
                                ts,
                                &src,
                                &mut out[b * bs..(b + 1) * bs],
                                h.version,
                            );
                        }
                    }),
                    mbps(n, || {
                        for b in 0..nblocks {
                            // SAFETY: src and the block of out hold bs bytes.
                            unsafe {
                                bitunshuffle(
                                    ts as i32,
                                    bs as i32,
                                    src.as_ptr(),
                                    out[b * bs..].as_mut_ptr(),
                                    h.version,
                                );
                            }
                        }
                    }),
                )
            };
            println!(
                "lz4 {fname:10} {name:7} blocksize {bs:7} lz4 streams {:4} ({:.0}% of bytes): whole ours {ours:6.0} C {c:6.0} ({:.2}x) | lz4 ours {lz_ours:6.0} C {lz_c:6.0} ({:.2}x) | filter ours {fl_ours:6.0} C {fl_c:6.0} ({:.2}x)",
                streams.len(),
                100.0 * lz_bytes as f64 / n as f64,
                ours / c,
                lz_ours / lz_c,
                fl_ours / fl_c,
            );
        }
    }
}
