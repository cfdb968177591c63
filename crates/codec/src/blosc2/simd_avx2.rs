//! AVX2 byte and bit unshuffle for x86_64 CPUs that have it (detected at run time by
//! [`super::simd`]): the unpack butterfly of simd.rs on 256-bit vectors, 32 elements at a time
//! (`unshuffle{2,4,8,16}_avx2` in C-Blosc2's shuffle-avx2.c), and simd.rs's bit unshuffle
//! 256 elements at a time (as `bshuf_untrans_bit_elem_AVX` of bitshuffle-avx2.c). AVX2 unpacks
//! work within each 128-bit lane, so after the butterfly lane 0 of the vectors holds elements
//! 0-15 and lane 1 elements 16-31; `vperm2i128` puts the lanes back in order on the way out.

use core::arch::x86_64::*;

#[target_feature(enable = "avx2")]
fn lo<const W: usize>(a: __m256i, b: __m256i) -> __m256i {
    match W {
        1 => _mm256_unpacklo_epi8(a, b),
        2 => _mm256_unpacklo_epi16(a, b),
        4 => _mm256_unpacklo_epi32(a, b),
        _ => _mm256_unpacklo_epi64(a, b),
    }
}

#[target_feature(enable = "avx2")]
fn hi<const W: usize>(a: __m256i, b: __m256i) -> __m256i {
    match W {
        1 => _mm256_unpackhi_epi8(a, b),
        2 => _mm256_unpackhi_epi16(a, b),
        4 => _mm256_unpackhi_epi32(a, b),
        _ => _mm256_unpackhi_epi64(a, b),
    }
}

/// One round of the butterfly (as `simd::butterfly`), within each 128-bit lane.
#[target_feature(enable = "avx2")]
fn butterfly<const T: usize, const W: usize>(x: &[__m256i; T]) -> [__m256i; T] {
    let mut y = [_mm256_setzero_si256(); T];
    for j in 0..T / 2 {
        y[j] = lo::<W>(x[2 * j], x[2 * j + 1]);
        y[T / 2 + j] = hi::<W>(x[2 * j], x[2 * j + 1]);
    }
    y
}

/// The 8x8 bit transpose of each 64-bit lane (`TRANS_BIT_8X8`, as `simd::transpose_bits`).
#[target_feature(enable = "avx2")]
fn transpose_bits(x: __m256i) -> __m256i {
    let swap = |x: __m256i, t: __m256i, shl: __m256i| _mm256_xor_si256(_mm256_xor_si256(x, t), shl);
    let t = _mm256_and_si256(
        _mm256_xor_si256(x, _mm256_srli_epi64::<7>(x)),
        _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA),
    );
    let x = swap(x, t, _mm256_slli_epi64::<7>(t));
    let t = _mm256_and_si256(
        _mm256_xor_si256(x, _mm256_srli_epi64::<14>(x)),
        _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC),
    );
    let x = swap(x, t, _mm256_slli_epi64::<14>(t));
    let t = _mm256_and_si256(
        _mm256_xor_si256(x, _mm256_srli_epi64::<28>(x)),
        _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0),
    );
    swap(x, t, _mm256_slli_epi64::<28>(t))
}

/// Thirty-two elements of `T` bytes from `T` streams `stride` bytes apart into `32 T` bytes;
/// with `BITS` (and `T` = 8: eight bit-rows, as `simd::bitrows16`), each 64-bit lane of the
/// result then bit-transposed, which turns bytes `0..32` of eight bit-rows into the 256
/// one-byte elements they hold.
/// Safety: `src + j * stride .. + 32` readable for `j < T`, `dst .. dst + 32 T` writable.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle32<const T: usize, const BITS: bool>(
    src: *const u8,
    stride: usize,
    dst: *mut u8,
) {
    let mut x = [_mm256_setzero_si256(); T];
    for (j, v) in x.iter_mut().enumerate() {
        // SAFETY: as the caller guarantees; loadu has no alignment need.
        *v = unsafe { _mm256_loadu_si256(src.add(j * stride).cast()) };
    }
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
    let at = |r: usize| {
        let v = x[(r.reverse_bits() >> (usize::BITS - bits)) & (T - 1)];
        if BITS {
            transpose_bits(v)
        } else {
            v
        }
    };
    for q in 0..T / 2 {
        let (a, b) = (at(2 * q), at(2 * q + 1));
        // SAFETY: 32 q + 32 <= 16 T and 16 T + 32 q + 32 <= 32 T: inside the caller's
        // 32 T bytes; storeu has no alignment need.
        unsafe {
            _mm256_storeu_si256(
                dst.add(32 * q).cast(),
                _mm256_permute2x128_si256::<0x20>(a, b),
            );
            _mm256_storeu_si256(
                dst.add(16 * T + 32 * q).cast(),
                _mm256_permute2x128_si256::<0x31>(a, b),
            );
        }
    }
}

#[target_feature(enable = "avx2")]
fn unshuffle_t<const T: usize>(n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    assert!(src.len() >= T * n && dst.len() >= T * n);
    let full = n / 32 * 32;
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    for i in (0..full).step_by(32) {
        // SAFETY: i + 32 <= n, so stream j's bytes i..i + 32 lie inside src[..T n] and the
        // output bytes T i .. T (i + 32) inside dst[..T n] (checked above).
        unsafe { unshuffle32::<T, false>(s.add(i), n, d.add(T * i)) }
    }
    full
}

/// Byte unshuffle of the first `n / 32 * 32` elements for `typesize` in {2, 4, 8, 16}, as
/// `simd::unshuffle`; returns the elements done (0 for other type sizes).
///
/// # Safety
/// The CPU must have AVX2 (`is_x86_feature_detected!("avx2")`).
pub(super) unsafe fn unshuffle(typesize: usize, n: usize, src: &[u8], dst: &mut [u8]) -> usize {
    // SAFETY: the caller checked that the CPU has AVX2.
    unsafe {
        match typesize {
            2 => unshuffle_t::<2>(n, src, dst),
            4 => unshuffle_t::<4>(n, src, dst),
            8 => unshuffle_t::<8>(n, src, dst),
            16 => unshuffle_t::<16>(n, src, dst),
            _ => 0,
        }
    }
}

/// Bit unshuffle as `simd::bitunshuffle`, 256 elements (32 bytes of each bit-row) at a time:
/// each byte plane's eight bit-rows into a tile of one-byte elements, then the tile byte
/// unshuffled into `dst`. Returns the groups of eight elements done (`rowlen / 32 * 32`; 0 for
/// type sizes above 16). Panics if `src` or `dst` is shorter than `8 * rowlen * typesize`.
///
/// # Safety
/// The CPU must have AVX2 (`is_x86_feature_detected!("avx2")`).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn bitunshuffle(
    typesize: usize,
    rowlen: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let Some(n) = super::simd::bit_elements(typesize, rowlen, src, dst) else {
        return 0;
    };
    let full = rowlen / 32 * 32;
    let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
    if typesize == 1 {
        for g in (0..full).step_by(32) {
            // SAFETY: g + 32 <= rowlen: row k's bytes g..g + 32 lie in src[..n]; the output
            // elements 8 g .. 8 g + 256 lie in dst[..n] (checked above).
            unsafe { unshuffle32::<8, true>(s.add(g), rowlen, d.add(8 * g)) }
        }
        return full;
    }
    let mut tile = [0u8; 16 * 256];
    let t = tile.as_mut_ptr();
    for g in (0..full).step_by(32) {
        for b in 0..typesize {
            // SAFETY: byte plane b's eight rows start at b n, inside src[..n typesize], and
            // g + 32 <= rowlen; the tile holds 256 bytes per plane for typesize <= 16 planes.
            unsafe { unshuffle32::<8, true>(s.add(b * n + g), rowlen, t.add(256 * b)) }
        }
        let out = &mut dst[8 * g * typesize..(8 * g + 256) * typesize];
        let tile = &tile[..256 * typesize];
        // SAFETY: this CPU has AVX2, as this function's caller guarantees.
        if unsafe { unshuffle(typesize, 256, tile, out) } == 0 {
            // A type size without a vector kernel (3, 5, 6, ...).
            super::filters::unshuffle_scalar(typesize, tile, out);
        }
    }
    full
}
