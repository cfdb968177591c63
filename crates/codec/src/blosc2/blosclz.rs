//! BloscLZ, Blosc's own LZ77 codec (`blosclz_decompress` in C-Blosc2's blosclz.c).
//!
//! Stream grammar: the first token is a literal run. A token byte `ctrl < 32` is a literal run
//! of `ctrl + 1` bytes that follow. A token `ctrl >= 32` is a match: length field
//! `(ctrl >> 5) - 1` (7 means more length bytes follow, summed while each is 255), then one
//! distance byte `code`; length = field + 3 and distance = `((ctrl & 31) << 8) + code + 1`.
//! When `ctrl & 31 == 31` and `code == 255`, a 16-bit big-endian value `f` follows and the
//! distance is `f + 8191 + 1`. A stream always ends with a literal run: the C decoder stops
//! before copying a match that has no byte after it.

const MAX_DISTANCE: usize = 8191;

/// Decode one BloscLZ stream into `out`, returning the bytes written, or `None` where C returns
/// 0 (overrun, reference before the output start, truncated token).
// Out of line: one call per stream, and profiles then show the codec on its own.
#[inline(never)]
pub fn decompress(input: &[u8], out: &mut [u8]) -> Option<usize> {
    if input.is_empty() {
        return Some(0);
    }
    let ilen = input.len();
    let olen = out.len();
    let mut ip = 1usize;
    let mut op = 0usize;
    let mut ctrl = (input[0] & 31) as usize;
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let mut ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    if ip + 1 >= ilen {
                        return None;
                    }
                    let code = input[ip];
                    ip += 1;
                    len += code as usize;
                    if code != 255 {
                        break;
                    }
                }
            } else if ip + 1 >= ilen {
                return None;
            }
            let code = input[ip] as usize;
            ip += 1;
            len += 3;
            let mut dist = ofs + code + 1;
            if code == 255 && ofs == 31 << 8 {
                if ip + 1 >= ilen {
                    return None;
                }
                ofs = ((input[ip] as usize) << 8) | input[ip + 1] as usize;
                ip += 2;
                dist = ofs + MAX_DISTANCE + 1;
            }
            if op + len > olen || dist > op {
                return None;
            }
            if ip >= ilen {
                break;
            }
            ctrl = input[ip] as usize;
            ip += 1;
            super::lz4::copy_match(out, op, dist, len);
            op += len;
        } else {
            let run = ctrl + 1;
            if op + run > olen || ip + run > ilen {
                return None;
            }
            if ip + 32 <= ilen && op + 32 <= olen {
                // Runs are at most 32 bytes: one fixed-size copy, the excess rewritten later.
                let mut t = [0u8; 32];
                t.copy_from_slice(&input[ip..ip + 32]);
                out[op..op + 32].copy_from_slice(&t);
            } else {
                out[op..op + run].copy_from_slice(&input[ip..ip + run]);
            }
            op += run;
            ip += run;
            if ip >= ilen {
                break;
            }
            ctrl = input[ip] as usize;
            ip += 1;
        }
    }
    Some(op)
}

const HASH_LOG: u32 = 12;

fn flush_literals(out: &mut Vec<u8>, lit: &[u8]) {
    for piece in lit.chunks(32) {
        out.push((piece.len() - 1) as u8);
        out.extend_from_slice(piece);
    }
}

/// Encode `input` as a BloscLZ stream the C decoder accepts: greedy matching with a 4-byte hash
/// (near distances only, up to 8191), literal runs of at most 32 bytes, and a final literal run.
/// The result may be longer than the input; callers then store the input raw.
pub fn compress(input: &[u8]) -> Vec<u8> {
    let n = input.len();
    let mut out = Vec::with_capacity(n + n / 32 + 8);
    if n == 0 {
        return out;
    }
    let mut table = vec![0u32; 1 << HASH_LOG];
    let hash = |p: usize| -> usize {
        let v = u32::from_le_bytes([input[p], input[p + 1], input[p + 2], input[p + 3]]);
        (v.wrapping_mul(2654435761) >> (32 - HASH_LOG)) as usize
    };
    let mut lit_start = 0usize;
    let mut ip = 0usize;
    // Matches must end at least one byte before the end, which then goes out as a literal.
    while n >= 5 && ip + 4 < n {
        let h = hash(ip);
        let cand = table[h] as usize;
        table[h] = ip as u32;
        let dist = ip.wrapping_sub(cand);
        if cand < ip
            && dist <= MAX_DISTANCE
            && input[cand..cand + 4] == input[ip..ip + 4]
            // The first token must be a literal.
            && ip > 0
        {
            let mut len = 4;
            while ip + len + 1 < n && input[cand + len] == input[ip + len] {
                len += 1;
            }
            flush_literals(&mut out, &input[lit_start..ip]);
            let d = dist - 1;
            let field = len - 3;
            let hi = (d >> 8) as u8;
            if field < 6 {
                out.push((((field + 1) as u8) << 5) | hi);
            } else {
                out.push((7u8 << 5) | hi);
                let mut rem = field - 6;
                while rem >= 255 {
                    out.push(255);
                    rem -= 255;
                }
                out.push(rem as u8);
            }
            out.push((d & 255) as u8);
            ip += len;
            lit_start = ip;
        } else {
            ip += 1;
        }
    }
    flush_literals(&mut out, &input[lit_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_stream() {
        // Literal "abc" (ctrl 2), then a match of length 6 at distance 3 (field 3: ctrl
        // (4 << 5) | 0, code 2), then literal "Z".
        let stream = [2u8, b'a', b'b', b'c', 4 << 5, 2, 0, b'Z'];
        let mut out = [0u8; 10];
        assert_eq!(decompress(&stream, &mut out), Some(10));
        assert_eq!(&out, b"abcabcabcZ");
        // A match must be followed by another token, as in C.
        let mut out = [0u8; 10];
        assert_eq!(decompress(&stream[..6], &mut out), None);
        // A match reaching before the output start is refused.
        let bad = [0u8, b'a', 1 << 5, 5, 0, b'z'];
        assert_eq!(decompress(&bad, &mut [0u8; 16]), None);
        // Output too small.
        assert_eq!(decompress(&stream, &mut [0u8; 9]), None);
    }

    #[test]
    fn far_match_and_long_length() {
        // 9000 literal bytes, then a match of length 300 at distance 9000 (far form).
        let lits: Vec<u8> = (0..9000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut stream = Vec::new();
        flush_literals(&mut stream, &lits);
        let f = 9000 - MAX_DISTANCE - 1;
        stream.extend_from_slice(&[(7 << 5) | 31, 255, (300 - 9 - 255) as u8, 255]);
        stream.extend_from_slice(&[(f >> 8) as u8, f as u8]);
        stream.extend_from_slice(&[0, 42]);
        let mut out = vec![0u8; 9301];
        assert_eq!(decompress(&stream, &mut out), Some(9301));
        assert_eq!(&out[..9000], &lits[..]);
        assert_eq!(&out[9000..9300], &lits[..300]);
        assert_eq!(out[9300], 42);
    }

    #[test]
    fn round_trip() {
        let mut inputs: Vec<Vec<u8>> = vec![
            vec![],
            vec![7],
            b"abcd".to_vec(),
            vec![0u8; 100_000],
            (0..70_000u32).map(|i| (i / 100) as u8).collect(),
        ];
        let mut s = 12345u32;
        inputs.push(
            (0..50_000)
                .map(|_| {
                    s = s.wrapping_mul(1103515245).wrapping_add(12345);
                    (s >> 24) as u8
                })
                .collect(),
        );
        for inp in inputs {
            let enc = compress(&inp);
            let mut out = vec![0u8; inp.len()];
            assert_eq!(decompress(&enc, &mut out), Some(inp.len()));
            assert_eq!(out, inp);
        }
        assert!(compress(&[0u8; 100_000]).len() < 1000);
    }

    #[test]
    fn garbage_and_truncation_never_panic() {
        let data: Vec<u8> = (0..20_000u32).map(|i| ((i / 5) ^ (i % 7)) as u8).collect();
        crate::blosc2::tests::check_stream_decoder(&compress(&data), decompress);
    }
}
