//! Side-by-side decode speed of the ZSTD and zlib-inflate implementations chunkwise could use,
//! on the streams of real chunks; native side (bench.mjs is the wasm32 side). For each case
//! file of gen_streams.py: MB/s of each decoder that handles it, the fastest of 9 rounds that
//! interleave the decoders, checked against CASE.raw.
//!
//! Usage (a crate of its own, outside the workspace):
//!   python gen_streams.py DIR                      (the venv's python-blosc2 and numpy)
//!   cargo build --release && cargo build --release --lib --target wasm32-unknown-unknown
//!   target/release/codec-candidates DIR/*.streams
//!   node bench.mjs target/wasm32-unknown-unknown/release/codec_candidates.wasm DIR/*.streams

use std::time::Instant;

fn records(b: &[u8]) -> Vec<(&[u8], usize)> {
    let mut v = Vec::new();
    let mut p = 0;
    while p < b.len() {
        let cl = u32::from_le_bytes(b[p..p + 4].try_into().unwrap()) as usize;
        let dl = u32::from_le_bytes(b[p + 4..p + 8].try_into().unwrap()) as usize;
        v.push((&b[p + 8..p + 8 + cl], dl));
        p += 8 + cl;
    }
    v
}

const ROUNDS: usize = 9;

fn main() {
    let total: usize = 64 << 20;
    println!("| case | decoder | native MB/s | vs first |\n|---|---|---:|---:|");
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).unwrap();
        let raw = std::fs::read(path.replace(".streams", ".raw")).unwrap();
        let recs = records(&bytes);
        let name = std::path::Path::new(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let decs: &[usize] = if name.starts_with("zstd") {
            &[0, 1, 2]
        } else {
            &[3, 4, 5]
        };
        let mut out = vec![0u8; raw.len()];
        let run = |d: usize, out: &mut [u8]| {
            let mut o = 0;
            for &(s, dl) in &recs {
                let n = codec_candidates::decode(d, s, &mut out[o..o + dl]).expect("decode failed");
                assert_eq!(n, dl);
                o += dl;
            }
        };
        for &d in decs {
            out.fill(0);
            run(d, &mut out);
            assert!(
                out == raw,
                "{name}: {} output differs",
                codec_candidates::NAMES[d]
            );
        }
        // Rounds interleave the decoders, so a load change on the shared machine hits all of
        // them alike; the fastest round of each counts.
        let per_round = (total / raw.len() / ROUNDS).max(1);
        let mut best = vec![0f64; decs.len()];
        for _ in 0..ROUNDS {
            for (k, &d) in decs.iter().enumerate() {
                let t = Instant::now();
                for _ in 0..per_round {
                    run(d, &mut out);
                }
                best[k] =
                    best[k].max((per_round * raw.len()) as f64 / t.elapsed().as_secs_f64() / 1e6);
            }
        }
        for (k, &d) in decs.iter().enumerate() {
            println!(
                "| {name} | {} | {:.0} | {:.2} |",
                codec_candidates::NAMES[d],
                best[k],
                best[k] / best[0]
            );
        }
    }
}
