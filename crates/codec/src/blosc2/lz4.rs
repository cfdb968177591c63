//! LZ4 block decoding (the block format of lz4_Block_format.md in the LZ4 project), written for
//! speed on Blosc's streams: long overlapping matches (runs in shuffled data) and short literal
//! runs are copied in fixed 16-byte pieces where the output has room, which the compiler turns
//! into single vector moves. Every length is checked against both buffers; the common
//! sequence (C's fast loop) uses raw-pointer moves inside bounds checked once per sequence,
//! the rest is safe Rust.
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
/// run's first 8 bytes are built in a register ([`repeat_pattern`]) and stored every
/// `dist * (8 / dist)` bytes (a whole number of periods, at least 5). No call to `memmove`
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
            if dist >= 8 {
                let mut i = 0;
                while i < len {
                    copy8_within(out, from + i, op + i);
                    i += 8;
                }
            } else {
                // Eight bytes of the run in a register, stored every `period` bytes: no
                // byte-by-byte copy, no reads of bytes just written.
                let mut x = [0u8; 8];
                x.copy_from_slice(&out[from..from + 8]);
                let p = repeat_pattern(u64::from_le_bytes(x), dist).to_le_bytes();
                let period = PERIOD8[dist] as usize;
                let mut i = 0;
                while i < len {
                    out[op + i..op + i + 8].copy_from_slice(&p);
                    i += period;
                }
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

/// `dist * (8 / dist)` for `dist` in 1..=7 (index 0 unused): the longest whole number of
/// periods in eight bytes, a table rather than a division on the hot path.
const PERIOD8: [u8; 8] = [8, 8, 8, 6, 8, 5, 6, 7];

/// The first `dist` bytes of `x` (little-endian, `dist` in 1..=7) repeated over all eight:
/// the run an LZ77 match at distance `dist` writes, as a word.
#[inline(always)]
fn repeat_pattern(x: u64, dist: usize) -> u64 {
    let bits = 8 * dist as u32;
    let mut p = x & (u64::MAX >> (64 - bits));
    p |= p << bits;
    if 2 * bits < 64 {
        p |= p << (2 * bits);
    }
    if 4 * bits < 64 {
        p |= p << (4 * bits);
    }
    p
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
#[inline]
pub fn decompress(input: &[u8], out: &mut [u8]) -> Option<usize> {
    decompress_after(input, out, 0)
}

/// Decode one LZ4 block into `out[start..]`, returning the bytes written there, or `None` for
/// a malformed block or one that does not fit. Matches may reach back into `out[..start]`:
/// with a dictionary there, this is `LZ4_decompress_safe_usingDict` (lz4.c) with the
/// dictionary just before the output. `out[..start]` is only read.
// Out of line: one call per stream, and profiles then show the codec on its own.
#[inline(never)]
pub fn decompress_after(input: &[u8], out: &mut [u8], start: usize) -> Option<usize> {
    let ilen = input.len();
    let olen = out.len();
    let mut ip = 0usize;
    let mut op = start;
    if start > olen {
        return None;
    }
    loop {
        // The common sequence (C's LZ4 fast loop): under 15 literals, with 32 input bytes and
        // 64 output bytes of room. Its literals are followed by an offset (the last sequence,
        // literals only, ends the input) and 16 literal bytes are copied whatever the count;
        // a match under 19 bytes is copied in fixed moves without a length loop, a longer one
        // reads its length bytes and goes through `copy_match`.
        if ip + 32 <= ilen && op + 64 <= olen {
            let token = input[ip];
            let (lit, ml) = ((token >> 4) as usize, (token & 15) as usize);
            if lit < 15 {
                let ipp = input.as_ptr();
                let opp = out.as_mut_ptr();
                // SAFETY: ip + 1 + 16 <= ip + 32 <= ilen and op + 16 <= op + 64 <= olen, and
                // `input` and `out` are distinct slices.
                unsafe { core::ptr::copy_nonoverlapping(ipp.add(ip + 1), opp.add(op), 16) };
                ip += 1 + lit;
                op += lit;
                // SAFETY: ip + 2 <= (old ip) + 1 + 14 + 2 <= ilen.
                let dist = unsafe { u16::from_le_bytes(*ipp.add(ip).cast::<[u8; 2]>()) } as usize;
                ip += 2;
                if dist == 0 || dist > op {
                    return None;
                }
                if ml == 15 {
                    // A long match (runs in shuffled data): its length bytes, then the
                    // general copy.
                    let mlen = read_len(input, &mut ip, ml, olen)? + 4;
                    if op + mlen > olen {
                        return None;
                    }
                    copy_match(out, op, dist, mlen);
                    op += mlen;
                    continue;
                }
                let mlen = ml + 4;
                if dist >= 8 {
                    // C's `offset >= 8` shortcut: 18 bytes (the longest match here) in
                    // pieces of 16 (or 8 + 8) and 2, each read wholly before the bytes it
                    // writes (`from + 16 <= op` for the 16-byte piece, `from + 8 + 8 <=
                    // op + 8` and `from + 18 <= op + 16` for the others), so LZ77 order
                    // holds; the bytes past `op + mlen` are rewritten later.
                    let from = op - dist;
                    // SAFETY: from >= 0 (dist <= op); the reads end at from + 18 <= op + 10
                    // and the writes at op + 18 <= (old op) + 14 + 18 <= olen; each piece's
                    // source lies before its destination, as above.
                    unsafe {
                        let (s, d) = (opp.add(from), opp.add(op));
                        if dist >= 16 {
                            core::ptr::copy_nonoverlapping(s, d, 16);
                        } else {
                            core::ptr::copy_nonoverlapping(s, d, 8);
                            core::ptr::copy_nonoverlapping(s.add(8), d.add(8), 8);
                        }
                        core::ptr::copy_nonoverlapping(s.add(16), d.add(16), 2);
                    }
                } else {
                    // A run of period `dist` < 8: its first eight bytes as a word, stored at
                    // op, op + P, op + 2P (P = the largest multiple of dist <= 8, at least 5),
                    // which covers the 18 bytes.
                    let from = op - dist;
                    let period = PERIOD8[dist] as usize;
                    // SAFETY: the read is from..from + 8 <= op + 7 <= olen; the writes end at
                    // op + 2 * 7 + 8 <= (old op) + 14 + 22 <= olen.
                    unsafe {
                        let x = core::ptr::read_unaligned(opp.add(from).cast::<u64>());
                        let p = repeat_pattern(u64::from_le(x), dist).to_le();
                        core::ptr::write_unaligned(opp.add(op).cast::<u64>(), p);
                        core::ptr::write_unaligned(opp.add(op + period).cast::<u64>(), p);
                        core::ptr::write_unaligned(opp.add(op + 2 * period).cast::<u64>(), p);
                    }
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
            return Some(op - start);
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

    /// A block compressed against a dictionary (lz4_flex's `compress_with_dict`, LZ4's
    /// `usingDict` format) decodes after that dictionary, whose bytes stay as they were; the
    /// same block with the dictionary missing is refused, never decoded against bytes that are
    /// not there.
    #[test]
    fn decodes_after_a_dictionary() {
        let dict: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut inp: Vec<u8> = Vec::new();
        for k in 0..40usize {
            inp.extend_from_slice(&dict[(k * 61) % 2900..][..90]);
            inp.extend((0..7).map(|i| (k * 3 + i) as u8));
        }
        let enc = lz4_flex::block::compress_with_dict(&inp, &dict);
        let plain = lz4_flex::block::compress(&inp);
        assert!(enc.len() < plain.len(), "{} vs {}", enc.len(), plain.len());
        for room in [0usize, 1, 64] {
            let mut buf = dict.clone();
            buf.resize(dict.len() + inp.len() + room, 0xAA);
            assert_eq!(
                decompress_after(&enc, &mut buf, dict.len()),
                Some(inp.len())
            );
            assert_eq!(&buf[..dict.len()], &dict[..], "dictionary left as it was");
            assert!(
                buf[dict.len()..dict.len() + inp.len()] == inp[..],
                "room {room}"
            );
        }
        let mut out = vec![0u8; inp.len()];
        assert_eq!(decompress(&enc, &mut out), None, "no dictionary");
        let past = out.len() + 1;
        assert_eq!(
            decompress_after(&enc, &mut out, past),
            None,
            "start past the end"
        );
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
    fn short_distance_runs_round_trip() {
        // Runs of every period 1-15 and many lengths between random literals: the fast
        // sequence's short-distance moves and the general copy.
        let mut s = 99u32;
        let mut rnd = || {
            s = s.wrapping_mul(1103515245).wrapping_add(12345);
            (s >> 16) as u8
        };
        let mut inp = Vec::new();
        for period in 1..=15usize {
            for len in (4..=40).chain([60, 100, 300]) {
                let lits = (rnd() % 20) as usize;
                inp.extend((0..lits).map(|_| rnd()));
                let base = inp.len();
                inp.extend((0..period).map(|_| rnd()));
                for i in 0..len {
                    inp.push(inp[base + i]);
                }
            }
        }
        for cut in [inp.len(), inp.len() / 2 + 3, 200] {
            let inp = &inp[..cut];
            let enc = lz4_flex::block::compress(inp);
            let mut out = vec![0u8; inp.len()];
            assert_eq!(decompress(&enc, &mut out), Some(inp.len()));
            assert_eq!(out, inp);
        }
    }

    #[test]
    fn period_table() {
        for (dist, &p) in PERIOD8.iter().enumerate().skip(1) {
            assert_eq!(p as usize, dist * (8 / dist));
        }
    }

    #[test]
    fn repeat_pattern_is_periodic() {
        let x = u64::from_le_bytes([1, 2, 3, 4, 5, 6, 7, 8]);
        for dist in 1..8 {
            let p = repeat_pattern(x, dist).to_le_bytes();
            for (k, &b) in p.iter().enumerate() {
                assert_eq!(b as usize, k % dist + 1, "dist {dist}");
            }
        }
    }

    #[test]
    fn garbage_and_truncation_never_panic() {
        let data: Vec<u8> = (0..20_000u32).map(|i| ((i / 5) ^ (i % 7)) as u8).collect();
        crate::blosc2::tests::check_stream_decoder(&lz4_flex::block::compress(&data), decompress);
    }
}
