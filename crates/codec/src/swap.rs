//! Byte order: elements reversed in place, byte by byte within each unit (numpy's
//! `byteswap`), the conversion of big-endian arrays to the little-endian order JS typed arrays
//! and the host use. Here rather than in chunkwise because it runs over every byte of a
//! big-endian result, as the decoders do: built at opt-level 3 (2, 4 and 8-byte units are
//! vectorised there), it kept a 32 MB float64 read in wasm32 from slowing by two thirds when
//! chunkwise went to opt-level "z".

/// Reverses the bytes of each `unit`-byte group of `data` in place (`unit` in bytes: an item
/// size, half of it for complex, 4 for UTF-32 code units). A trailing part shorter than
/// `unit` is left as is; `unit` 0 or 1 changes nothing.
pub fn swap_units(unit: usize, data: &mut [u8]) {
    match unit {
        0 | 1 => {}
        2 => {
            for e in data.chunks_exact_mut(2) {
                let v = u16::from_ne_bytes([e[0], e[1]]).swap_bytes();
                e.copy_from_slice(&v.to_ne_bytes());
            }
        }
        4 => {
            for e in data.chunks_exact_mut(4) {
                let v = u32::from_ne_bytes([e[0], e[1], e[2], e[3]]).swap_bytes();
                e.copy_from_slice(&v.to_ne_bytes());
            }
        }
        8 => {
            for e in data.chunks_exact_mut(8) {
                let mut a = [0u8; 8];
                a.copy_from_slice(e);
                e.copy_from_slice(&u64::from_ne_bytes(a).swap_bytes().to_ne_bytes());
            }
        }
        _ => {
            for e in data.chunks_exact_mut(unit) {
                e.reverse();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_matches_reversing_each_group() {
        let src: Vec<u8> = (0..203u32).map(|i| (i * 37 + 11) as u8).collect();
        for unit in 0..=17 {
            let mut want = src.clone();
            if unit > 1 {
                for e in want.chunks_exact_mut(unit) {
                    e.reverse();
                }
            }
            let mut got = src.clone();
            swap_units(unit, &mut got);
            assert_eq!(got, want, "unit {unit}");
        }
    }
}
