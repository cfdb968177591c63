//! 128-bit vector kernels behind the Blosc2 decode filters of [`super::filters`]: byte
//! unshuffle, bit unshuffle, the DELTA running XOR and the BYTEDELTA running sum.
//!
//! One kernel text for two instruction sets, chosen at compile time: SSE2 on x86_64 (part of
//! the x86_64 baseline, so always present) and wasm SIMD128 on wasm32 when the module is built
//! with `target_feature = "simd128"` (see .cargo/config.toml). On other targets this module is
//! absent and the filters run their scalar code, which stays the reference the kernels are
//! tested against (filters.rs tests, and tests/wasm for the wasm build).
//!
//! The byte transpose is the unpack butterfly of C-Blosc2's shuffle-sse2.c
//! (`unshuffle{2,4,8,16}_sse2`): `log2(T)` rounds of interleaving pairs of vectors in units of
//! 1, 2, 4, 8 bytes, the results read in bit-reversed order. Bit unshuffle runs it on eight
//! bit-rows, then transposes each 8x8 bit matrix in a 64-bit lane (`TRANS_BIT_8X8` of
//! bitshuffle-generic.h), as `bshuf_untrans_bit_elem` does in two passes.
//!
//! Every entry point checks its slice lengths before any raw-pointer access and handles only
//! whole vectors; callers finish the leftovers with the scalar code.

#[cfg(target_arch = "x86_64")]
mod arch {
    use core::arch::x86_64::*;

    /// Sixteen bytes in one register.
    #[derive(Clone, Copy)]
    pub struct V(__m128i);

    /// Unaligned load of 16 bytes. Safety: `p..p + 16` is readable.
    #[inline(always)]
    pub unsafe fn load(p: *const u8) -> V {
        // SAFETY: the caller guarantees 16 readable bytes; loadu has no alignment need.
        unsafe { V(_mm_loadu_si128(p.cast())) }
    }

    /// Unaligned store of 16 bytes. Safety: `p..p + 16` is writable.
    #[inline(always)]
    pub unsafe fn store(p: *mut u8, v: V) {
        // SAFETY: the caller guarantees 16 writable bytes; storeu has no alignment need.
        unsafe { _mm_storeu_si128(p.cast(), v.0) }
    }

    /// Interleave the low halves of `a` and `b` in units of `W` bytes (`_mm_unpacklo_epi*`).
    #[inline(always)]
    pub fn lo<const W: usize>(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe {
            V(match W {
                1 => _mm_unpacklo_epi8(a.0, b.0),
                2 => _mm_unpacklo_epi16(a.0, b.0),
                4 => _mm_unpacklo_epi32(a.0, b.0),
                _ => _mm_unpacklo_epi64(a.0, b.0),
            })
        }
    }

    /// Interleave the high halves of `a` and `b` in units of `W` bytes (`_mm_unpackhi_epi*`).
    #[inline(always)]
    pub fn hi<const W: usize>(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe {
            V(match W {
                1 => _mm_unpackhi_epi8(a.0, b.0),
                2 => _mm_unpackhi_epi16(a.0, b.0),
                4 => _mm_unpackhi_epi32(a.0, b.0),
                _ => _mm_unpackhi_epi64(a.0, b.0),
            })
        }
    }

    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_xor_si128(a.0, b.0)) }
    }

    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_and_si128(a.0, b.0)) }
    }

    /// Byte-wise wrapping add.
    #[inline(always)]
    pub fn add8(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_add_epi8(a.0, b.0)) }
    }

    /// `m` in both 64-bit lanes.
    #[inline(always)]
    pub fn splat64(m: u64) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_set1_epi64x(m as i64)) }
    }

    #[inline(always)]
    pub fn zero() -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_setzero_si128()) }
    }

    /// Each 64-bit lane shifted left by `N` bits.
    #[inline(always)]
    pub fn shl64<const N: i32>(a: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_slli_epi64::<N>(a.0)) }
    }

    /// Each 64-bit lane shifted right (logical) by `N` bits.
    #[inline(always)]
    pub fn shr64<const N: i32>(a: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_srli_epi64::<N>(a.0)) }
    }

    /// The vector moved `N` bytes toward the high end (byte `i` to `i + N`), zeros shifted in.
    #[inline(always)]
    pub fn bytes_up<const N: i32>(a: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe { V(_mm_slli_si128::<N>(a.0)) }
    }

    /// The last `W`-byte unit of `a` in every unit.
    #[inline(always)]
    pub fn splat_last<const W: usize>(a: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 CPU has it.
        unsafe {
            V(match W {
                1 => _mm_set1_epi8((_mm_extract_epi16::<7>(a.0) >> 8) as i8),
                2 => {
                    let t = _mm_shufflehi_epi16::<0xFF>(a.0);
                    _mm_unpackhi_epi64(t, t)
                }
                4 => _mm_shuffle_epi32::<0xFF>(a.0),
                _ => _mm_unpackhi_epi64(a.0, a.0),
            })
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod arch {
    use core::arch::wasm32::*;

    /// Sixteen bytes in one register.
    #[derive(Clone, Copy)]
    pub struct V(v128);

    /// Unaligned load of 16 bytes. Safety: `p..p + 16` is readable.
    #[inline(always)]
    pub unsafe fn load(p: *const u8) -> V {
        // SAFETY: the caller guarantees 16 readable bytes; v128.load has no alignment need.
        unsafe { V(v128_load(p.cast())) }
    }

    /// Unaligned store of 16 bytes. Safety: `p..p + 16` is writable.
    #[inline(always)]
    pub unsafe fn store(p: *mut u8, v: V) {
        // SAFETY: the caller guarantees 16 writable bytes; v128.store has no alignment need.
        unsafe { v128_store(p.cast(), v.0) }
    }

    /// Interleave the low halves of `a` and `b` in units of `W` bytes.
    #[inline(always)]
    pub fn lo<const W: usize>(a: V, b: V) -> V {
        V(match W {
            1 => i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a.0, b.0),
            2 => i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(a.0, b.0),
            4 => i32x4_shuffle::<0, 4, 1, 5>(a.0, b.0),
            _ => i64x2_shuffle::<0, 2>(a.0, b.0),
        })
    }

    /// Interleave the high halves of `a` and `b` in units of `W` bytes.
    #[inline(always)]
    pub fn hi<const W: usize>(a: V, b: V) -> V {
        V(match W {
            1 => i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                a.0, b.0,
            ),
            2 => i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(a.0, b.0),
            4 => i32x4_shuffle::<2, 6, 3, 7>(a.0, b.0),
            _ => i64x2_shuffle::<1, 3>(a.0, b.0),
        })
    }

    #[inline(always)]
    pub fn xor(a: V, b: V) -> V {
        V(v128_xor(a.0, b.0))
    }

    #[inline(always)]
    pub fn and(a: V, b: V) -> V {
        V(v128_and(a.0, b.0))
    }

    /// Byte-wise wrapping add.
    #[inline(always)]
    pub fn add8(a: V, b: V) -> V {
        V(i8x16_add(a.0, b.0))
    }

    /// `m` in both 64-bit lanes.
    #[inline(always)]
    pub fn splat64(m: u64) -> V {
        V(u64x2_splat(m))
    }

    #[inline(always)]
    pub fn zero() -> V {
        V(u64x2_splat(0))
    }

    /// Each 64-bit lane shifted left by `N` bits.
    #[inline(always)]
    pub fn shl64<const N: i32>(a: V) -> V {
        V(i64x2_shl(a.0, N as u32))
    }

    /// Each 64-bit lane shifted right (logical) by `N` bits.
    #[inline(always)]
    pub fn shr64<const N: i32>(a: V) -> V {
        V(u64x2_shr(a.0, N as u32))
    }

    /// The vector moved `N` bytes toward the high end (byte `i` to `i + N`), zeros shifted in.
    #[inline(always)]
    pub fn bytes_up<const N: i32>(a: V) -> V {
        let z = u64x2_splat(0);
        // Indices 0-15 pick from `z`, 16-31 from `a`.
        V(match N {
            1 => i8x16_shuffle::<0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30>(
                z, a.0,
            ),
            2 => i8x16_shuffle::<0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29>(
                z, a.0,
            ),
            4 => {
                i8x16_shuffle::<0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27>(z, a.0)
            }
            _ => i64x2_shuffle::<0, 2>(z, a.0),
        })
    }

    /// The last `W`-byte unit of `a` in every unit.
    #[inline(always)]
    pub fn splat_last<const W: usize>(a: V) -> V {
        V(match W {
            1 => u8x16_splat(u8x16_extract_lane::<15>(a.0)),
            2 => i16x8_shuffle::<7, 7, 7, 7, 7, 7, 7, 7>(a.0, a.0),
            4 => i32x4_shuffle::<3, 3, 3, 3>(a.0, a.0),
            _ => i64x2_shuffle::<1, 1>(a.0, a.0),
        })
    }
}

use arch::*;

/// One round of the transpose butterfly: pairs `(x[2j], x[2j + 1])` interleaved in `W`-byte
/// units, low halves to `j`, high halves to `T / 2 + j`.
#[inline(always)]
fn butterfly<const T: usize, const W: usize>(x: &[V; T]) -> [V; T] {
    core::array::from_fn(|j| {
        if j < T / 2 {
            lo::<W>(x[2 * j], x[2 * j + 1])
        } else {
            let k = j - T / 2;
            hi::<W>(x[2 * k], x[2 * k + 1])
        }
    })
}

/// Transpose a 16 x `T` byte matrix, `T` in {2, 4, 8, 16}: `x[j]` holds byte `j` of sixteen
/// elements; the result's vector `r` holds bytes `16 r .. 16 r + 16` of the elements laid out
/// one after the other.
#[inline(always)]
fn transpose<const T: usize>(x: [V; T]) -> [V; T] {
    let mut x = x;
    x = butterfly::<T, 1>(&x);
    if T >= 4 {
        x = butterfly::<T, 2>(&x);
    }
    if T >= 8 {
        x = butterfly::<T, 4>(&x);
    }
    if T >= 16 {
        x = butterfly::<T, 8>(&x);
    }
    let bits = T.trailing_zeros();
    core::array::from_fn(|r| x[(r.reverse_bits() >> (usize::BITS - bits)) & (T - 1)])
}

/// Sixteen elements of `T` bytes from `T` streams `stride` bytes apart into `16 T` bytes.
/// Safety: `src + j * stride .. + 16` readable for `j < T`, `dst .. dst + 16 T` writable.
#[inline(always)]
unsafe fn unshuffle16<const T: usize>(src: *const u8, stride: usize, dst: *mut u8) {
    // SAFETY: as the caller guarantees.
    unsafe {
        let x: [V; T] = core::array::from_fn(|j| load(src.add(j * stride)));
        for (r, v) in transpose(x).into_iter().enumerate() {
            store(dst.add(16 * r), v);
        }
    }
}

#[inline(always)]
fn unshuffle_t<const T: usize>(start: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    assert!(src.len() >= T * n && dst.len() >= T * n);
    let full = n / 16 * 16;
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    for i in (start..full).step_by(16) {
        // SAFETY: i + 16 <= n, so stream j's bytes i..i + 16 lie inside src[..T n], and the
        // output bytes T i .. T (i + 16) inside dst[..T n] (checked above).
        unsafe { unshuffle16::<T>(s.add(i), n, d.add(T * i)) }
    }
    full.max(start)
}

/// [`unshuffle`] with 128-bit vectors only, from element `start` (a multiple of 16) on.
fn unshuffle128(typesize: usize, start: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    match typesize {
        2 => unshuffle_t::<2>(start, n, src, dst),
        4 => unshuffle_t::<4>(start, n, src, dst),
        8 => unshuffle_t::<8>(start, n, src, dst),
        16 => unshuffle_t::<16>(start, n, src, dst),
        _ => 0,
    }
}

/// Byte unshuffle of the first `n / 16 * 16` elements of `typesize` in {2, 4, 8, 16} (`src`
/// holds `typesize` streams of `n` bytes); returns the elements done (0 for other type sizes).
/// On x86_64 CPUs with AVX2 (detected at run time) 32 elements at a time
/// ([`super::simd_avx2`]), the last 16 with SSE2.
/// Panics if `src` or `dst` is shorter than `typesize * n`.
pub(super) fn unshuffle(typesize: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (just detected).
        let start = unsafe { super::simd_avx2::unshuffle(typesize, n, src, dst) };
        if start > 0 {
            return unshuffle128(typesize, start, n, src, dst);
        }
    }
    unshuffle128(typesize, 0, n, src, dst)
}

/// The 8x8 bit transpose of each 64-bit lane (`TRANS_BIT_8X8`, as
/// `filters::transpose_bits_8x8`).
#[inline(always)]
fn transpose_bits(x: V) -> V {
    let t = and(xor(x, shr64::<7>(x)), splat64(0x00AA_00AA_00AA_00AA));
    let x = xor(xor(x, t), shl64::<7>(t));
    let t = and(xor(x, shr64::<14>(x)), splat64(0x0000_CCCC_0000_CCCC));
    let x = xor(xor(x, t), shl64::<14>(t));
    let t = and(xor(x, shr64::<28>(x)), splat64(0x0000_0000_F0F0_F0F0));
    xor(xor(x, t), shl64::<28>(t))
}

/// Bytes `g .. g + 16` of eight bit-rows `rowlen` apart (row `k`: bit `k` of 128 one-byte
/// elements) into the 128 bytes of those elements at `dst`.
/// Safety: `rows + k * rowlen + g .. + 16` readable for `k < 8`; `dst .. + 128` writable.
#[inline(always)]
unsafe fn bitrows16(rows: *const u8, rowlen: usize, g: usize, dst: *mut u8) {
    // SAFETY: as the caller guarantees.
    unsafe {
        let x: [V; 8] = core::array::from_fn(|k| load(rows.add(k * rowlen + g)));
        for (r, v) in transpose(x).into_iter().enumerate() {
            store(dst.add(16 * r), transpose_bits(v));
        }
    }
}

/// Bit unshuffle of the first `rowlen / 16 * 16 * 8` elements (`rowlen = n / 8` with `n` the
/// whole element count rounded down to a multiple of 8), for `typesize` 1 to 16; returns the
/// number of groups of eight elements done (0 for larger type sizes). The layout is that of
/// `filters::bitunshuffle`. On x86_64 CPUs with AVX2 (detected at run time) 256 elements at a
/// time ([`super::simd_avx2`]), the last 128 with SSE2.
/// Panics if `src` or `dst` is shorter than `8 * rowlen * typesize`.
pub(super) fn bitunshuffle(typesize: usize, rowlen: usize, src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (just detected).
        let start = unsafe { super::simd_avx2::bitunshuffle(typesize, rowlen, src, dst) };
        if start > 0 {
            return bitunshuffle128(typesize, start, rowlen, src, dst);
        }
    }
    bitunshuffle128(typesize, 0, rowlen, src, dst)
}

/// The element count `8 * rowlen` of a bit unshuffle of `typesize`-byte elements, `None` for a
/// type size the kernels do not handle (0, or above 16). Panics if `src` or `dst` holds fewer
/// than `8 * rowlen * typesize` bytes.
pub(super) fn bit_elements(
    typesize: usize,
    rowlen: usize,
    src: &[u8],
    dst: &[u8],
) -> Option<usize> {
    let n = 8 * rowlen;
    if typesize == 0 || typesize > 16 {
        return None;
    }
    assert!(src.len() >= n * typesize && dst.len() >= n * typesize);
    Some(n)
}

/// [`bitunshuffle`] with 128-bit vectors only, from row byte `start` (a multiple of 16) on.
fn bitunshuffle128(
    typesize: usize,
    start: usize,
    rowlen: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let Some(n) = bit_elements(typesize, rowlen, src, dst) else {
        return 0;
    };
    let full = rowlen / 16 * 16;
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    if typesize == 1 {
        for g in (start..full).step_by(16) {
            // SAFETY: g + 16 <= rowlen: row k's bytes g..g + 16 lie in src[..n]; the output
            // elements 8 g .. 8 g + 128 lie in dst[..n] (checked above).
            unsafe { bitrows16(s, rowlen, g, d.add(8 * g)) }
        }
        return full.max(start);
    }
    // Per 128 elements: each byte plane into a byte-shuffled tile, then the tile unshuffled.
    let mut tile = [0u8; 16 * 128];
    let t = tile.as_mut_ptr();
    for g in (start..full).step_by(16) {
        for b in 0..typesize {
            // SAFETY: byte plane b's eight rows start at b n, inside src[..n typesize]; the
            // tile holds 128 bytes per plane for typesize <= 16 planes.
            unsafe { bitrows16(s.add(b * n), rowlen, g, t.add(128 * b)) }
        }
        let out = &mut dst[8 * g * typesize..(8 * g + 128) * typesize];
        let tile = &tile[..128 * typesize];
        if unshuffle(typesize, 128, tile, out) == 0 {
            // A type size without a vector kernel (3, 5, 6, ...).
            super::filters::unshuffle_scalar(typesize, tile, out);
        }
    }
    full.max(start)
}

/// DELTA's running XOR over `w`-byte words (`w` in {1, 2, 4, 8}) of `data[..len / 16 * 16]`,
/// each word XORed with all the words before it; returns the bytes done.
pub(super) fn xor_scan(w: usize, data: &mut [u8]) -> usize {
    match w {
        1 => xor_scan_w::<1>(data),
        2 => xor_scan_w::<2>(data),
        4 => xor_scan_w::<4>(data),
        8 => xor_scan_w::<8>(data),
        _ => 0,
    }
}

#[inline(always)]
fn xor_scan_w<const W: usize>(data: &mut [u8]) -> usize {
    let full = data.len() / 16 * 16;
    let p = data.as_mut_ptr();
    let mut carry = zero();
    for i in (0..full).step_by(16) {
        // SAFETY: i + 16 <= data.len().
        unsafe {
            let mut x = load(p.add(i));
            if W == 1 {
                x = xor(x, bytes_up::<1>(x));
            }
            if W <= 2 {
                x = xor(x, bytes_up::<2>(x));
            }
            if W <= 4 {
                x = xor(x, bytes_up::<4>(x));
            }
            x = xor(xor(x, bytes_up::<8>(x)), carry);
            carry = splat_last::<W>(x);
            store(p.add(i), x);
        }
    }
    full
}

/// `data[i] ^= r[i]` over whole vectors of `data[..n]`; returns the bytes done. Panics if `r`
/// is shorter than `n` or `data` than `n`.
pub(super) fn xor_with(n: usize, r: &[u8], data: &mut [u8]) -> usize {
    assert!(r.len() >= n && data.len() >= n);
    let full = n / 16 * 16;
    let (q, p) = (r.as_ptr(), data.as_mut_ptr());
    for i in (0..full).step_by(16) {
        // SAFETY: i + 16 <= n <= both lengths.
        unsafe { store(p.add(i), xor(load(p.add(i)), load(q.add(i)))) }
    }
    full
}

/// BYTEDELTA's running wrapping sum: `dst[i] = acc + src[0] + ... + src[i]` over whole vectors
/// of `src`; returns the bytes done and the running sum after them. Panics if `dst` is shorter
/// than `src`.
pub(super) fn sum_scan(src: &[u8], dst: &mut [u8], acc: u8) -> (usize, u8) {
    assert!(dst.len() >= src.len());
    let full = src.len() / 16 * 16;
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    let a = [acc; 16];
    // SAFETY: `a` holds 16 bytes.
    let mut carry = unsafe { load(a.as_ptr()) };
    let mut acc = acc;
    for i in (0..full).step_by(16) {
        // SAFETY: i + 16 <= src.len() <= dst.len().
        unsafe {
            let mut x = load(s.add(i));
            x = add8(x, bytes_up::<1>(x));
            x = add8(x, bytes_up::<2>(x));
            x = add8(x, bytes_up::<4>(x));
            x = add8(add8(x, bytes_up::<8>(x)), carry);
            carry = splat_last::<1>(x);
            store(d.add(i), x);
        }
    }
    if full > 0 {
        acc = dst[full - 1];
    }
    (full, acc)
}

#[cfg(test)]
mod tests {
    // The parity tests of filters.rs compare the filters with their scalar references; these
    // make sure the kernels themselves run on this target (no silent scalar fallback).
    #[test]
    fn kernels_do_whole_vectors() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 7 + i / 5) as u8).collect();
        let mut dst = vec![0u8; 4096];
        for ts in [2usize, 4, 8, 16] {
            assert_eq!(
                super::unshuffle(ts, 4096 / ts, &src, &mut dst),
                4096 / ts / 16 * 16
            );
        }
        assert_eq!(super::unshuffle(3, 1365, &src, &mut dst), 0);
        // The 128-bit path alone (AVX2 CPUs take the 256-bit one in `unshuffle`).
        for ts in [2usize, 4, 8, 16] {
            for n in [16usize, 47, 64, 100, 255] {
                let src = &src[..n * ts];
                let mut want = vec![0u8; n * ts];
                crate::blosc2::filters::unshuffle_scalar(ts, src, &mut want);
                let mut got = vec![0u8; n * ts];
                assert_eq!(super::unshuffle128(ts, 0, n, src, &mut got), n / 16 * 16);
                let k = n / 16 * 16 * ts;
                assert_eq!(got[..k], want[..k], "typesize {ts} n {n}");
            }
        }
        for ts in 1..=16usize {
            let rowlen = 4096 / ts / 8;
            assert_eq!(
                super::bitunshuffle(ts, rowlen, &src, &mut dst),
                rowlen / 16 * 16
            );
        }
        // The 128-bit bit unshuffle alone (AVX2 CPUs take the 256-bit one in `bitunshuffle`),
        // and from a start past the first groups, as after the 256-bit one.
        for ts in 1..=16usize {
            for rowlen in [16usize, 40, 48, 100] {
                let len = 8 * rowlen * ts;
                let src: Vec<u8> = (0..len as u32).map(|i| (i * 13 + i / 7) as u8).collect();
                let src = &src[..];
                let mut want = vec![0u8; len];
                crate::blosc2::filters::bitunshuffle_scalar(ts, src, &mut want, 5);
                let done = rowlen / 16 * 16;
                let k = 8 * done * ts;
                let mut got = vec![0u8; len];
                assert_eq!(super::bitunshuffle128(ts, 0, rowlen, src, &mut got), done);
                assert_eq!(got[..k], want[..k], "typesize {ts} rowlen {rowlen}");
                let mut got = vec![0u8; len];
                assert_eq!(super::bitunshuffle128(ts, 16, rowlen, src, &mut got), done);
                assert_eq!(
                    got[8 * 16 * ts..k],
                    want[8 * 16 * ts..k],
                    "typesize {ts} rowlen {rowlen} from 16"
                );
            }
        }
        let mut d = src.clone();
        assert_eq!(super::xor_scan(4, &mut d[..1000]), 992);
        assert_eq!(super::xor_with(1000, &src, &mut d), 992);
        assert_eq!(super::sum_scan(&src[..1000], &mut dst, 0).0, 992);
    }
}
