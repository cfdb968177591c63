//! LZ4 block decoding (the block format of lz4_Block_format.md in the LZ4 project), written for
//! speed on Blosc's streams: long overlapping matches (runs in shuffled data) and short literal
//! runs are copied in fixed 16-byte pieces where the output has room, which the compiler turns
//! into single vector moves. Safe Rust; every length is checked against both buffers.
//!
//! Grammar: a sequence is a token byte (high nibble literal length, low nibble match length - 4;
//! 15 means more length bytes follow, summed while each is 255), the literals, a 2-byte
//! little-endian offset (1..=65535) and the match. The last sequence has literals only.

/// The longest match [`copy_match`] (and literal run [`decompress`]) copies in fixed-size
/// moves; longer ones go through `memmove` / `memcpy`.
const WILD_MAX: usize = 64;

/// Copy 16 bytes from `src[from..]` to `out[to..]` (one vector move).
#[inline(always)]
fn copy16(src: &[u8], from: usize, out: &mut [u8], to: usize) {
    let mut t = [0u8; 16];
    t.copy_from_slice(&src[from..from + 16]);
    out[to..to + 16].copy_from_slice(&t);
}

/// Copy 16 bytes within `out` from `from` to `to` (one vector move; the ranges may overlap
/// only if `from + 16 <= to`, which every caller ensures, so the bytes read are final).
#[inline(always)]
fn copy16_within(out: &mut [u8], from: usize, to: usize) {
    let mut t = [0u8; 16];
    t.copy_from_slice(&out[from..from + 16]);
    out[to..to + 16].copy_from_slice(&t);
}

/// Copy 8 bytes within `out` from `from` to `to` (`from + 8 <= to`, as for [`copy16_within`]).
#[inline(always)]
fn copy8_within(out: &mut [u8], from: usize, to: usize) {
    let mut t = [0u8; 8];
    t.copy_from_slice(&out[from..from + 8]);
    out[to..to + 8].copy_from_slice(&t);
}

/// Copy `len` bytes within `out` from `op - dist` to `op` with LZ77 semantics (the source may
/// overlap the destination). Bytes past `op + len` may be overwritten when `out` has room; the
/// decoder writes them again later.
///
/// A match of at most [`WILD_MAX`] bytes with 16 bytes of room past it (all but the last few
/// short matches of a stream) is copied in fixed-size moves, as LZ4's `LZ4_wildCopy`: 16 bytes
/// at a time for distances of 16 and more, 8 for distances of 8 to 15; for shorter ones the
/// first 8 bytes go one by one, after which the run repeats with a period
/// `dist * ceil(8 / dist)` of at least 8, which 8-byte moves can copy. No call to `memmove`
/// (a function call per match in wasm). Longer matches (runs in shuffled data) go through
/// `memmove` in pieces that double, fewer and larger moves.
#[inline(always)]
pub(crate) fn copy_match(out: &mut [u8], op: usize, dist: usize, len: usize) {
    let from = op - dist;
    if len <= WILD_MAX && op + len + 16 <= out.len() {
        if dist >= 16 {
            let mut i = 0;
            while i < len {
                copy16_within(out, from + i, op + i);
                i += 16;
            }
        } else {
            let (mut i, period) = if dist >= 8 {
                (0, dist)
            } else {
                for k in 0..8 {
                    out[op + k] = out[from + k];
                }
                (8, dist * 8usize.div_ceil(dist))
            };
            while i < len {
                copy8_within(out, op + i - period, op + i);
                i += 8;
            }
        }
    } else if dist >= len {
        out.copy_within(from..from + len, op);
    } else if dist == 1 {
        let v = out[from];
        out[op..op + len].fill(v);
    } else {
        // Overlap: pieces no longer than the bytes already written, doubling each time, so each
        // piece starts at a multiple of `dist` from `from` (LZ77 semantics).
        let mut done = 0;
        while done < len {
            let n = (len - done).min(dist + done);
            out.copy_within(from..from + n, op + done);
            done += n;
        }
    }
}

#[inline(always)]
fn read_len(input: &[u8], ip: &mut usize, mut len: usize, limit: usize) -> Option<usize> {
    loop {
        let b = *input.get(*ip)?;
        *ip += 1;
        len += b as usize;
        if len > limit {
            return None;
        }
        if b != 255 {
            return Some(len);
        }
    }
}

/// Decode one LZ4 block into `out`, returning the bytes written, or `None` for a malformed
/// block or one that does not fit `out`.
// Out of line: one call per stream, and profiles then show the codec on its own.
#[inline(never)]
pub fn decompress(input: &[u8], out: &mut [u8]) -> Option<usize> {
    let ilen = input.len();
    let olen = out.len();
    let mut ip = 0usize;
    let mut op = 0usize;
    loop {
        // The common sequence (C's LZ4 fast loop): under 15 literals and a match under 19
        // bytes, with 32 input bytes and 64 output bytes of room. Its literals are followed by
        // an offset (the last sequence, literals only, ends the input), 16 literal bytes are
        // copied whatever the count, and a match from 16 or more bytes back in one or two
        // 16-byte moves, all without a length loop.
        if ip + 32 <= ilen && op + 64 <= olen {
            let token = input[ip];
            let (lit, ml) = ((token >> 4) as usize, (token & 15) as usize);
            if lit < 15 && ml < 15 {
                copy16(input, ip + 1, out, op);
                ip += 1 + lit;
                op += lit;
                let dist = u16::from_le_bytes([input[ip], input[ip + 1]]) as usize;
                ip += 2;
                if dist == 0 || dist > op {
                    return None;
                }
                let mlen = ml + 4;
                if dist >= 16 {
                    copy16_within(out, op - dist, op);
                    if mlen > 16 {
                        copy16_within(out, op - dist + 16, op + 16);
                    }
                } else {
                    copy_match(out, op, dist, mlen);
                }
                op += mlen;
                continue;
            }
        }
        let token = *input.get(ip)?;
        ip += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit = read_len(input, &mut ip, lit, olen)?;
        }
        if lit <= WILD_MAX && ip + lit + 16 <= ilen && op + lit + 16 <= olen {
            // Literals in 16-byte moves, the excess rewritten later (`LZ4_wildCopy16`).
            let mut i = 0;
            while i < lit {
                copy16(input, ip + i, out, op + i);
                i += 16;
            }
        } else {
            if ip + lit > ilen || op + lit > olen {
                return None;
            }
            out[op..op + lit].copy_from_slice(&input[ip..ip + lit]);
        }
        ip += lit;
        op += lit;
        if ip == ilen {
            return Some(op);
        }
        if ip + 2 > ilen {
            return None;
        }
        let dist = u16::from_le_bytes([input[ip], input[ip + 1]]) as usize;
        ip += 2;
        if dist == 0 || dist > op {
            return None;
        }
        let mut mlen = (token & 15) as usize;
        if mlen == 15 {
            mlen = read_len(input, &mut ip, mlen, olen)?;
        }
        mlen += 4;
        if op + mlen > olen {
            return None;
        }
        copy_match(out, op, dist, mlen);
        op += mlen;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_block() {
        // Literals "abc" then a match of 8 at offset 3 ("abcabcab"), then literal "Z".
        let block = [0x34u8, b'a', b'b', b'c', 3, 0, 0x10, b'Z'];
        let mut out = [0u8; 12];
        assert_eq!(decompress(&block, &mut out), Some(12));
        assert_eq!(&out, b"abcabcabcabZ");
        assert_eq!(decompress(&block, &mut [0u8; 11]), None);
        // Offset 0 and offsets before the output start are refused.
        assert_eq!(decompress(&[0x10, b'a', 0, 0, 0x00], &mut [0u8; 16]), None);
        assert_eq!(decompress(&[0x10, b'a', 2, 0, 0x00], &mut [0u8; 16]), None);
        // Truncated inside the offset.
        assert_eq!(decompress(&block[..5], &mut [0u8; 16]), None);
    }

    #[test]
    fn copy_match_is_lz77_byte_by_byte() {
        // Every distance up to 40 and length up to 80, far from the end of the output (the
        // 16-byte moves) and right at it (the exact copies).
        for dist in 1..=40usize {
            for len in (1..=80usize).chain([100, 130, 300]) {
                for room in [0usize, 1, 15, 16, 17, 64, 200] {
                    let op = 50;
                    let size = op + len + room;
                    let mut out: Vec<u8> = (0..size).map(|i| (i * 37 + 11) as u8).collect();
                    let mut want = out.clone();
                    for i in 0..len {
                        want[op + i] = want[op + i - dist];
                    }
                    copy_match(&mut out, op, dist, len);
                    assert_eq!(
                        out[..op + len],
                        want[..op + len],
                        "dist {dist} len {len} room {room}"
                    );
                }
            }
        }
    }

    #[test]
    fn round_trip_with_lz4_flex() {
        let mut s = 7u32;
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![],
            vec![1],
            vec![0u8; 100_000],
            (0..100_000u32).map(|i| (i / 3) as u8).collect(),
            (0..50_000u32).map(|i| (i % 7) as u8).collect(),
        ];
        inputs.push(
            (0..70_000)
                .map(|i| {
                    s = s.wrapping_mul(1103515245).wrapping_add(12345);
                    if i % 100 < 50 {
                        (s >> 24) as u8
                    } else {
                        (i % 13) as u8
                    }
                })
                .collect(),
        );
        for inp in inputs {
            let enc = lz4_flex::block::compress(&inp);
            let mut out = vec![0u8; inp.len()];
            assert_eq!(decompress(&enc, &mut out), Some(inp.len()));
            assert_eq!(out, inp);
        }
    }

    #[test]
    fn garbage_and_truncation_never_panic() {
        let data: Vec<u8> = (0..20_000u32).map(|i| ((i / 5) ^ (i % 7)) as u8).collect();
        crate::blosc2::tests::check_stream_decoder(&lz4_flex::block::compress(&data), decompress);
    }
}
