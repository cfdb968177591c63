//! AVX2 byte unshuffle for x86_64 CPUs that have it (detected at run time by
//! [`super::simd`]): the unpack butterfly of simd.rs on 256-bit vectors, 32 elements at a time
//! (`unshuffle{2,4,8,16}_avx2` in C-Blosc2's shuffle-avx2.c). AVX2 unpacks work within each
//! 128-bit lane, so after the butterfly lane 0 of the vectors holds elements 0-15 and lane 1
//! elements 16-31; `vperm2i128` puts the lanes back in order on the way out.

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

/// Thirty-two elements of `T` bytes from `T` streams `stride` bytes apart into `32 T` bytes.
/// Safety: `src + j * stride .. + 32` readable for `j < T`, `dst .. dst + 32 T` writable.
#[target_feature(enable = "avx2")]
unsafe fn unshuffle32<const T: usize>(src: *const u8, stride: usize, dst: *mut u8) {
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
    let at = |r: usize| x[(r.reverse_bits() >> (usize::BITS - bits)) & (T - 1)];
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
        unsafe { unshuffle32::<T>(s.add(i), n, d.add(T * i)) }
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
