//! The filters of the Blosc2 pipeline, forward (encode) and backward (decode), on one block.
//!
//! Sources: `shuffle-generic.h` / `shuffle.c` (byte shuffle, bitshuffle wrappers),
//! `bitshuffle-generic.c` (`bshuf_trans_bit_elem_scal`), `delta.c`, `trunc-prec.c` and
//! plugins/filters/bytedelta/bytedelta.c in C-Blosc2.
//!
//! The decode filters run vector kernels ([`super::simd`]: SSE2 on x86_64, SIMD128 on wasm32
//! built with it) on whole vectors and the scalar code on the leftovers; the `*_scalar`
//! functions are the reference those kernels are tested against.

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
use super::simd;

/// Stand-ins for the kernels where no vector instruction set is compiled in: nothing done.
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
mod simd {
    pub(super) fn unshuffle(_: usize, _: usize, _: &[u8], _: &mut [u8]) -> usize {
        0
    }
    pub(super) fn bitunshuffle(_: usize, _: usize, _: &[u8], _: &mut [u8]) -> usize {
        0
    }
    pub(super) fn xor_scan(_: usize, _: &mut [u8]) -> usize {
        0
    }
    pub(super) fn xor_with(_: usize, _: &[u8], _: &mut [u8]) -> usize {
        0
    }
    pub(super) fn sum_scan(_: &[u8], _: &mut [u8], acc: u8) -> (usize, u8) {
        (0, acc)
    }
}

/// Byte shuffle: element `i`'s byte `j` goes to `dst[j * n + i]` with `n = len / typesize`;
/// the `len % typesize` trailing bytes are copied unchanged. `src` and `dst` have equal lengths.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let len = src.len();
    let n = len / typesize;
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    for j in 0..typesize {
        let out = &mut dst[j * n..(j + 1) * n];
        for (i, o) in out.iter_mut().enumerate() {
            *o = src[i * typesize + j];
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

fn unshuffle_const<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    // Groups of 16 elements through fixed-size arrays: no bounds checks in the inner loops,
    // which the compiler turns into byte shuffles.
    const L: usize = 16;
    let streams: [&[u8]; T] = core::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    let full = n / L * L;
    for (g, out) in dst[..full * T].chunks_exact_mut(L * T).enumerate() {
        let base = g * L;
        let lanes: [[u8; L]; T] = core::array::from_fn(|j| {
            let mut a = [0u8; L];
            a.copy_from_slice(&streams[j][base..base + L]);
            a
        });
        for (i, el) in out.chunks_exact_mut(T).enumerate() {
            for j in 0..T {
                el[j] = lanes[j][i];
            }
        }
    }
    for i in full..n {
        for j in 0..T {
            dst[i * T + j] = streams[j][i];
        }
    }
}

/// Swaps the bytes selected by `mask << shift` of `a` with the bytes selected by `mask` of `b`
/// (one step of a recursive byte-matrix transpose).
#[inline(always)]
fn swap_bytes(a: &mut u64, b: &mut u64, shift: u32, mask: u64) {
    let t = ((*a >> shift) ^ *b) & mask;
    *a ^= t << shift;
    *b ^= t;
}

/// Unshuffle for typesize `T` in {2, 4, 8}, eight elements at a time in 64-bit words: the
/// T x 8 byte matrix (row j: byte j of the eight elements) is transposed with shifts and masks,
/// which is several times fewer operations than moving single bytes when no SIMD is available
/// (wasm32 without simd128) and no slower natively.
fn unshuffle_words<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) {
    const M32: u64 = 0x0000_0000_FFFF_FFFF;
    const M16: u64 = 0x0000_FFFF_0000_FFFF;
    const M8: u64 = 0x00FF_00FF_00FF_00FF;
    let streams: [&[u8]; T] = core::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    let full = n / 8 * 8;
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    for (g, out) in dst[..full * T].chunks_exact_mut(8 * T).enumerate() {
        let base = g * 8;
        let mut x: [u64; T] = core::array::from_fn(|j| word(streams[j], base));
        match T {
            2 => {
                // Interleave the bytes of the two rows.
                let spread = |v: u64| {
                    let v = (v | (v << 16)) & M16;
                    (v | (v << 8)) & M8
                };
                x = core::array::from_fn(|k| {
                    let (a, b) = ((x[0] >> (32 * k)) & M32, (x[1] >> (32 * k)) & M32);
                    spread(a) | (spread(b) << 8)
                });
            }
            4 => {
                // Transpose the two 4 x 4 byte blocks (elements 0-3 in the low halves, 4-7 in
                // the high halves), then gather the 32-bit elements in order.
                let [mut a, mut b, mut c, mut d] = [x[0], x[1], x[2], x[3]];
                swap_bytes(&mut a, &mut c, 16, M16);
                swap_bytes(&mut b, &mut d, 16, M16);
                swap_bytes(&mut a, &mut b, 8, M8);
                swap_bytes(&mut c, &mut d, 8, M8);
                let y = [
                    (a & M32) | (b << 32),
                    (c & M32) | (d << 32),
                    (a >> 32) | (b & !M32),
                    (c >> 32) | (d & !M32),
                ];
                x = core::array::from_fn(|k| y[k]);
            }
            _ => {
                // 8 x 8 byte transpose: 4-byte, 2-byte, then 1-byte blocks.
                for r in 0..4 {
                    let (lo, hi) = x.split_at_mut(r + 4);
                    swap_bytes(&mut lo[r], &mut hi[0], 32, M32);
                }
                for r in [0, 1, 4, 5] {
                    let (lo, hi) = x.split_at_mut(r + 2);
                    swap_bytes(&mut lo[r], &mut hi[0], 16, M16);
                }
                for r in [0, 2, 4, 6] {
                    let (lo, hi) = x.split_at_mut(r + 1);
                    swap_bytes(&mut lo[r], &mut hi[0], 8, M8);
                }
            }
        }
        for (o, v) in out.chunks_exact_mut(8).zip(x) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
    for i in full..n {
        for j in 0..T {
            dst[i * T + j] = streams[j][i];
        }
    }
}

/// Inverse of [`shuffle`] (`unshuffle_generic` in shuffle-generic.h; vector kernels for
/// type sizes 2, 4, 8 and 16 as `unshuffle{2,4,8,16}_sse2` in shuffle-sse2.c).
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize.max(1);
    if typesize > 1 && n > 0 {
        let done = simd::unshuffle(typesize, n, src, dst);
        if done > 0 {
            for i in done..n {
                for j in 0..typesize {
                    dst[i * typesize + j] = src[j * n + i];
                }
            }
            let tail = n * typesize;
            dst[tail..].copy_from_slice(&src[tail..]);
            return;
        }
    }
    unshuffle_scalar(typesize, src, dst)
}

/// The scalar reference of [`unshuffle`] (`unshuffle_generic` in shuffle-generic.h), the
/// same result on every target; public for the parity tests of the vector kernels.
pub fn unshuffle_scalar(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let len = src.len();
    let n = len / typesize;
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    match typesize {
        2 => unshuffle_words::<2>(n, src, dst),
        4 => unshuffle_words::<4>(n, src, dst),
        8 => unshuffle_words::<8>(n, src, dst),
        16 => unshuffle_const::<16>(n, src, dst),
        _ => {
            for j in 0..typesize {
                let stream = &src[j * n..(j + 1) * n];
                for (i, &b) in stream.iter().enumerate() {
                    dst[i * typesize + j] = b;
                }
            }
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Transpose an 8x8 bit matrix held in a u64 (bit `8r + c` <-> bit `8c + r`); its own inverse
/// (`TRANS_BIT_8X8` in bitshuffle-generic.h).
#[inline(always)]
fn transpose_bits_8x8(mut x: u64) -> u64 {
    let mut t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Bit shuffle of the first `n - n % 8` elements (`n = len / typesize`): output row
/// `8 * b + k` (each `n / 8` bytes) holds bit `k` of byte `b` of every element, element `i` at
/// bit `i % 8` of byte `i / 8`. Remaining bytes are copied unchanged (`bitshuffle` in shuffle.c).
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = (src.len() / typesize) & !7;
    let rowlen = n / 8;
    for b in 0..typesize {
        for g in 0..rowlen {
            let mut x = 0u64;
            for m in 0..8 {
                x |= (src[(g * 8 + m) * typesize + b] as u64) << (8 * m);
            }
            let y = transpose_bits_8x8(x);
            for k in 0..8 {
                dst[(b * 8 + k) * rowlen + g] = (y >> (8 * k)) as u8;
            }
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Inverse of [`bitshuffle`]. `format_version` is the chunk's version byte: chunks of format
/// version 2 (C-Blosc 1.x) copy the whole block unchanged when the element count is not a
/// multiple of 8 (`bitunshuffle` in shuffle.c; vector kernel as `bshuf_untrans_bit_elem`,
/// a bit transpose then a byte unshuffle, for type sizes up to 16).
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8) {
    bitunshuffle_from(typesize, src, dst, format_version, true)
}

/// The scalar reference of [`bitunshuffle`], the same result on every target; public for the
/// parity tests of the vector kernels.
pub fn bitunshuffle_scalar(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8) {
    bitunshuffle_from(typesize, src, dst, format_version, false)
}

fn bitunshuffle_from(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8, vec: bool) {
    let nall = src.len() / typesize;
    if format_version == 2 && !nall.is_multiple_of(8) {
        dst.copy_from_slice(src);
        return;
    }
    let n = nall & !7;
    let rowlen = n / 8;
    let g0 = if vec {
        simd::bitunshuffle(typesize, rowlen, src, dst)
    } else {
        0
    };
    if typesize == 1 {
        // One byte per element: eight rows, gather one byte of each per group of 8 elements.
        for g in g0..rowlen {
            let mut x = 0u64;
            for k in 0..8 {
                x |= (src[k * rowlen + g] as u64) << (8 * k);
            }
            dst[g * 8..g * 8 + 8].copy_from_slice(&transpose_bits_8x8(x).to_le_bytes());
        }
    } else {
        for b in 0..typesize {
            let rows = &src[b * 8 * rowlen..(b + 1) * 8 * rowlen];
            for g in g0..rowlen {
                let mut x = 0u64;
                for k in 0..8 {
                    x |= (rows[k * rowlen + g] as u64) << (8 * k);
                }
                let y = transpose_bits_8x8(x);
                let base = g * 8 * typesize + b;
                for m in 0..8 {
                    dst[base + m * typesize] = (y >> (8 * m)) as u8;
                }
            }
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// The element width DELTA works in: 1, 2, 4 or 8 bytes (`delta.c` falls back to 8 for
/// multiples of 8 and to 1 otherwise).
fn delta_width(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

macro_rules! xor_words {
    ($w:expr, $dst:expr, $a:expr, $b:expr) => {
        match $w {
            1 => {
                for ((d, a), b) in $dst.iter_mut().zip($a).zip($b) {
                    *d = *a ^ *b;
                }
            }
            _ => {
                for ((d, a), b) in $dst
                    .chunks_exact_mut($w)
                    .zip($a.chunks_exact($w))
                    .zip($b.chunks_exact($w))
                {
                    for k in 0..$w {
                        d[k] = a[k] ^ b[k];
                    }
                }
            }
        }
    };
}

/// DELTA forward on one block (`delta_encoder` in delta.c). `dref` is the chunk's first block
/// (original data); `is_first` says whether this block is that block. `src` and `dst` have the
/// block's length. Block 0 stores each word XOR the previous word; other blocks store each word
/// XOR the same word of block 0. Trailing bytes beyond whole words are left as in `dst`.
pub fn delta_encode(typesize: usize, dref: &[u8], is_first: bool, src: &[u8], dst: &mut [u8]) {
    let w = delta_width(typesize);
    let nw = src.len() / w;
    if nw == 0 {
        return;
    }
    if is_first {
        dst[..w].copy_from_slice(&dref[..w]);
        let n = nw * w;
        xor_words!(w, dst[w..n], &src[w..n], &dref[..n - w]);
    } else {
        let n = nw * w;
        xor_words!(w, dst[..n], &src[..n], &dref[..n]);
    }
}

/// DELTA backward in place on one block (`delta_decoder` in delta.c). For the first block the
/// words are a running XOR; for other blocks `dref` is the decoded first block, of at least this
/// block's length.
pub fn delta_decode(typesize: usize, dref: Option<&[u8]>, data: &mut [u8]) {
    delta_decode_from(typesize, dref, data, true)
}

/// The scalar reference of [`delta_decode`]; public for the parity tests of the vector kernels.
pub fn delta_decode_scalar(typesize: usize, dref: Option<&[u8]>, data: &mut [u8]) {
    delta_decode_from(typesize, dref, data, false)
}

fn delta_decode_from(typesize: usize, dref: Option<&[u8]>, data: &mut [u8], vec: bool) {
    let w = delta_width(typesize);
    let nw = data.len() / w;
    match dref {
        None => {
            // Bytes done by the kernel: whole vectors, so whole words.
            let done = if vec {
                simd::xor_scan(w, &mut data[..nw * w])
            } else {
                0
            };
            match w {
                1 => {
                    let mut prev = if done > 0 { data[done - 1] } else { 0 };
                    for (i, b) in data.iter_mut().enumerate().skip(done) {
                        if i > 0 {
                            *b ^= prev;
                        }
                        prev = *b;
                    }
                }
                _ => {
                    for i in (done / w).max(1)..nw {
                        for k in 0..w {
                            data[i * w + k] ^= data[(i - 1) * w + k];
                        }
                    }
                }
            }
        }
        Some(r) => {
            let n = nw * w;
            let done = if vec { simd::xor_with(n, r, data) } else { 0 };
            for (d, r) in data[done..n].iter_mut().zip(&r[done..n]) {
                *d ^= *r;
            }
        }
    }
}

/// BYTEDELTA forward (`bytedelta_forward`): after a byte shuffle, each of the `typesize`
/// streams of `len / typesize` bytes stores byte differences (wrapping). Trailing bytes are copied.
pub fn bytedelta_encode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize;
    for j in 0..typesize {
        let mut prev = 0u8;
        for i in j * n..(j + 1) * n {
            let v = src[i];
            dst[i] = v.wrapping_sub(prev);
            prev = v;
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// Inverse of [`bytedelta_encode`] (`bytedelta_backward`): a running wrapping sum per stream.
/// C leaves the trailing `len % typesize` bytes unwritten; this copies them.
pub fn bytedelta_decode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bytedelta_decode_from(typesize, src, dst, false, true)
}

/// The scalar reference of [`bytedelta_decode`]; public for the parity tests of the vector
/// kernels.
pub fn bytedelta_decode_scalar(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bytedelta_decode_from(typesize, src, dst, false, false)
}

/// Inverse of the legacy BYTEDELTA (filter 34, `bytedelta_backward_buggy` in C-Blosc2's
/// plugins/filters/bytedelta/bytedelta.c), as every C-Blosc2 build with its SIMD path (SSSE3
/// on x86-64, which its CMake enables for that file, or NEON on ARM64) wrote and reads it:
/// within each stream the running sum covers the whole 16-byte groups, then restarts at 0
/// for the last `len % 16` bytes (the bug fixed as filter 35). A stream under 16 bytes is
/// one plain running sum. Trailing `len % typesize` bytes are copied.
pub fn bytedelta_decode_legacy(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bytedelta_decode_from(typesize, src, dst, true, true)
}

/// The scalar reference of [`bytedelta_decode_legacy`]; public for the parity tests of the
/// vector kernels.
pub fn bytedelta_decode_legacy_scalar(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bytedelta_decode_from(typesize, src, dst, true, false)
}

fn bytedelta_decode_from(typesize: usize, src: &[u8], dst: &mut [u8], legacy: bool, vec: bool) {
    let n = src.len() / typesize;
    let groups = n / 16 * 16;
    for j in 0..typesize {
        let s = &src[j * n..(j + 1) * n];
        let d = &mut dst[j * n..(j + 1) * n];
        let (done, mut acc) = if vec { simd::sum_scan(s, d, 0) } else { (0, 0) };
        for (i, (o, &v)) in d.iter_mut().zip(s).enumerate().skip(done) {
            if legacy && i == groups {
                acc = 0;
            }
            acc = acc.wrapping_add(v);
            *o = acc;
        }
    }
    let tail = n * typesize;
    dst[tail..].copy_from_slice(&src[tail..]);
}

/// TRUNC_PREC forward (`truncate_precision` in trunc-prec.c): zero the low mantissa bits of f32
/// (typesize 4, 23-bit mantissa) or f64 (typesize 8, 52-bit mantissa) so that `prec_bits`
/// significant bits remain (if `prec_bits` is negative, `-prec_bits` bits are removed).
/// Other type sizes are copied unchanged. Nothing is undone on decode.
pub fn trunc_prec(typesize: usize, prec_bits: i8, src: &[u8], dst: &mut [u8]) {
    dst.copy_from_slice(src);
    let mant = match typesize {
        4 => 23i32,
        8 => 52,
        _ => return,
    };
    let zeroed = if prec_bits >= 0 {
        mant - prec_bits as i32
    } else {
        -(prec_bits as i32)
    };
    if zeroed <= 0 || zeroed > mant {
        return;
    }
    if typesize == 4 {
        let mask = !((1u32 << zeroed) - 1);
        for el in dst.chunks_exact_mut(4) {
            let v = u32::from_le_bytes([el[0], el[1], el[2], el[3]]) & mask;
            el.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        let mask = !((1u64 << zeroed) - 1);
        for el in dst.chunks_exact_mut(8) {
            let mut b = [0u8; 8];
            b.copy_from_slice(el);
            el.copy_from_slice(&(u64::from_le_bytes(b) & mask).to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn shuffle_layout_and_inverse() {
        // Two u16 elements 0x0201, 0x0403 plus one trailing byte.
        let src = [1u8, 2, 3, 4, 9];
        let mut dst = [0u8; 5];
        shuffle(2, &src, &mut dst);
        assert_eq!(dst, [1, 3, 2, 4, 9]);
        for ts in [1usize, 2, 3, 4, 7, 8, 16, 17] {
            for len in [0usize, 1, 5, 64, 1000, 1003] {
                let src = data(len, (ts * 1000 + len) as u32);
                let mut a = vec![0u8; len];
                let mut b = vec![0u8; len];
                shuffle(ts, &src, &mut a);
                unshuffle(ts, &a, &mut b);
                assert_eq!(b, src, "typesize {ts} len {len}");
            }
        }
    }

    #[test]
    fn bitshuffle_layout_and_inverse() {
        // typesize 1, 8 elements: element 0 = 0x01, element 3 = 0x80.
        let src = [1u8, 0, 0, 0x80, 0, 0, 0, 0];
        let mut dst = [0u8; 8];
        bitshuffle(1, &src, &mut dst);
        // Row k holds bit k of each element: bit 0 only in element 0, bit 7 only in element 3.
        assert_eq!(dst, [0b1, 0, 0, 0, 0, 0, 0, 0b1000]);
        for ts in [1usize, 2, 3, 4, 8, 12] {
            for len in [0usize, 8, 17, 64 * 8, 1000, 4096 + 5] {
                let src = data(len, (ts * 7 + len) as u32);
                let mut a = vec![0u8; len];
                let mut b = vec![0u8; len];
                bitshuffle(ts, &src, &mut a);
                bitunshuffle(ts, &a, &mut b, 5);
                assert_eq!(b, src, "typesize {ts} len {len}");
            }
        }
        // Format version 2 with an element count not a multiple of 8: plain copy.
        let src = data(12, 3);
        let mut b = vec![0u8; 12];
        bitunshuffle(4, &src, &mut b, 2);
        assert_eq!(b, src);
    }

    #[test]
    fn delta_values_and_inverse() {
        let b0 = [1u8, 3, 7, 15];
        let mut enc = [0u8; 4];
        delta_encode(1, &b0, true, &b0, &mut enc);
        assert_eq!(enc, [1, 1 ^ 3, 3 ^ 7, 7 ^ 15]);
        let mut dec = enc;
        delta_decode(1, None, &mut dec);
        assert_eq!(dec, b0);
        for ts in [1usize, 2, 3, 4, 8, 16] {
            let first = data(256, ts as u32);
            let other = data(200, 99 + ts as u32);
            let mut e0 = vec![0u8; 256];
            let mut e1 = other.clone();
            delta_encode(ts, &first, true, &first, &mut e0);
            delta_encode(ts, &first, false, &other, &mut e1);
            delta_decode(ts, None, &mut e0);
            assert_eq!(e0, first);
            delta_decode(ts, Some(&first), &mut e1);
            assert_eq!(e1, other);
        }
    }

    #[test]
    fn bytedelta_values_and_inverse() {
        let src = [5u8, 7, 6, 1, 2, 4, 9];
        let mut enc = [0u8; 7];
        bytedelta_encode(2, &src, &mut enc);
        assert_eq!(enc, [5, 2, 255, 1, 1, 2, 9]);
        let mut dec = [0u8; 7];
        bytedelta_decode(2, &enc, &mut dec);
        assert_eq!(dec, src);
    }

    /// Type sizes and lengths for the vector-versus-scalar checks: whole vectors, leftovers of
    /// every kind, and lengths that are not a multiple of the type size.
    pub(crate) const PARITY_TYPESIZES: [usize; 9] = [1, 2, 3, 4, 5, 8, 12, 16, 17];
    pub(crate) fn parity_lengths(ts: usize) -> Vec<usize> {
        let mut v = vec![0, 1, 7, 15, 16, 17, 31, 33, 100, 255, 1000, 4099];
        for k in [1usize, 2, 3, 16, 17, 130] {
            v.push(16 * k * ts);
            v.push(16 * k * ts + 1);
            v.push(128 * k * ts + 8 * ts + (ts - 1));
        }
        v
    }

    #[test]
    fn vector_unshuffle_matches_scalar() {
        for ts in PARITY_TYPESIZES {
            for len in parity_lengths(ts) {
                let src = data(len, (ts * 31 + len) as u32);
                let mut a = vec![0xA5u8; len];
                let mut b = vec![0x5Au8; len];
                unshuffle(ts, &src, &mut a);
                unshuffle_scalar(ts, &src, &mut b);
                assert_eq!(a, b, "typesize {ts} len {len}");
            }
        }
    }

    #[test]
    fn vector_bitunshuffle_matches_scalar() {
        for ts in PARITY_TYPESIZES {
            for len in parity_lengths(ts) {
                for version in [2u8, 5] {
                    let src = data(len, (ts * 17 + len) as u32);
                    let mut a = vec![0xA5u8; len];
                    let mut b = vec![0x5Au8; len];
                    bitunshuffle(ts, &src, &mut a, version);
                    bitunshuffle_scalar(ts, &src, &mut b, version);
                    assert_eq!(a, b, "typesize {ts} len {len} version {version}");
                }
            }
        }
    }

    #[test]
    fn vector_delta_matches_scalar() {
        for ts in PARITY_TYPESIZES {
            for len in parity_lengths(ts) {
                let src = data(len, (ts * 13 + len) as u32);
                let r = data(len, (ts * 7 + len + 1) as u32);
                let (mut a, mut b) = (src.clone(), src.clone());
                delta_decode(ts, None, &mut a);
                delta_decode_scalar(ts, None, &mut b);
                assert_eq!(a, b, "first block, typesize {ts} len {len}");
                let (mut a, mut b) = (src.clone(), src.clone());
                delta_decode(ts, Some(&r), &mut a);
                delta_decode_scalar(ts, Some(&r), &mut b);
                assert_eq!(a, b, "other block, typesize {ts} len {len}");
            }
        }
    }

    #[test]
    fn vector_bytedelta_matches_scalar() {
        for ts in PARITY_TYPESIZES {
            for len in parity_lengths(ts) {
                let src = data(len, (ts * 11 + len) as u32);
                let mut a = vec![0xA5u8; len];
                let mut b = vec![0x5Au8; len];
                bytedelta_decode(ts, &src, &mut a);
                bytedelta_decode_scalar(ts, &src, &mut b);
                assert_eq!(a, b, "typesize {ts} len {len}");
                bytedelta_decode_legacy(ts, &src, &mut a);
                bytedelta_decode_legacy_scalar(ts, &src, &mut b);
                assert_eq!(a, b, "legacy, typesize {ts} len {len}");
            }
        }
    }

    #[test]
    fn trunc_prec_zeroes_low_bits() {
        let v = 1.2345678f32;
        let mut out = [0u8; 4];
        trunc_prec(4, 10, &v.to_le_bytes(), &mut out);
        assert_eq!(u32::from_le_bytes(out), v.to_bits() & !((1 << 13) - 1));
        let w = 1.2345678901234f64;
        let mut out = [0u8; 8];
        trunc_prec(8, -20, &w.to_le_bytes(), &mut out);
        assert_eq!(u64::from_le_bytes(out), w.to_bits() & !((1 << 20) - 1));
    }
}
