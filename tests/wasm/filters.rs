//! The Blosc2 decode filters in wasm: the module is built with SIMD128 (.cargo/config.toml),
//! and every vector kernel (unshuffle, bit unshuffle, DELTA, BYTEDELTA) gives the bytes of the
//! scalar reference on type sizes 1 to 17 and lengths with leftovers of every kind.
#![cfg(target_arch = "wasm32")]

use chunkwise::codec::blosc2::filters;
use wasm_bindgen_test::wasm_bindgen_test;

fn data(len: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as u8
        })
        .collect()
}

const TYPESIZES: [usize; 9] = [1, 2, 3, 4, 5, 8, 12, 16, 17];

fn lengths(ts: usize) -> Vec<usize> {
    let mut v = vec![0, 1, 7, 15, 16, 17, 31, 33, 100, 255, 1000, 4099];
    for k in [1usize, 2, 3, 16, 17, 130] {
        v.push(16 * k * ts);
        v.push(16 * k * ts + 1);
        v.push(128 * k * ts + 8 * ts + (ts - 1));
    }
    v
}

#[wasm_bindgen_test]
fn built_with_simd128() {
    assert!(
        cfg!(target_feature = "simd128"),
        "the wasm build must enable simd128 (.cargo/config.toml)"
    );
}

#[wasm_bindgen_test]
fn unshuffle_and_bitunshuffle_match_scalar() {
    for ts in TYPESIZES {
        for len in lengths(ts) {
            let src = data(len, (ts * 31 + len) as u32);
            let mut a = vec![0xA5u8; len];
            let mut b = vec![0x5Au8; len];
            filters::unshuffle(ts, &src, &mut a);
            filters::unshuffle_scalar(ts, &src, &mut b);
            assert_eq!(a, b, "unshuffle typesize {ts} len {len}");
            for version in [2u8, 5] {
                filters::bitunshuffle(ts, &src, &mut a, version);
                filters::bitunshuffle_scalar(ts, &src, &mut b, version);
                assert_eq!(a, b, "bitunshuffle typesize {ts} len {len} v{version}");
            }
        }
    }
}

#[wasm_bindgen_test]
fn delta_and_bytedelta_match_scalar() {
    for ts in TYPESIZES {
        for len in lengths(ts) {
            let src = data(len, (ts * 13 + len) as u32);
            let r = data(len, (ts * 7 + len + 1) as u32);
            let (mut a, mut b) = (src.clone(), src.clone());
            filters::delta_decode(ts, None, &mut a);
            filters::delta_decode_scalar(ts, None, &mut b);
            assert_eq!(a, b, "delta first block typesize {ts} len {len}");
            let (mut a, mut b) = (src.clone(), src.clone());
            filters::delta_decode(ts, Some(&r), &mut a);
            filters::delta_decode_scalar(ts, Some(&r), &mut b);
            assert_eq!(a, b, "delta other block typesize {ts} len {len}");
            let mut a = vec![0xA5u8; len];
            let mut b = vec![0x5Au8; len];
            filters::bytedelta_decode(ts, &src, &mut a);
            filters::bytedelta_decode_scalar(ts, &src, &mut b);
            assert_eq!(a, b, "bytedelta typesize {ts} len {len}");
            filters::bytedelta_decode_legacy(ts, &src, &mut a);
            filters::bytedelta_decode_legacy_scalar(ts, &src, &mut b);
            assert_eq!(a, b, "legacy bytedelta typesize {ts} len {len}");
        }
    }
}
