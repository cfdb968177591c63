//! Arbitrary bytes as one LZ4 block: chunkwise's decoder (whose common sequence moves bytes
//! through raw pointers) returns a length or `None`, never a panic or an access outside its
//! buffers (run under AddressSanitizer: `scripts/fuzz.sh --asan`), and agrees with lz4_flex
//! on every block both accept.
//!
//! Input: two bytes giving the output buffer's size (little-endian, at most 65,535 bytes),
//! then the block.
#![no_main]

use chunkwise::codec::blosc2::lz4::decompress;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let olen = u16::from_le_bytes([data[0], data[1]]) as usize;
    let block = &data[2..];
    let mut ours = vec![0u8; olen];
    let got = decompress(block, &mut ours);
    let mut theirs = vec![0u8; olen];
    if let Ok(n) = lz4_flex::block::decompress_into(block, &mut theirs) {
        // A block lz4_flex decodes whole is decoded to the same bytes.
        if let Some(m) = got {
            assert_eq!(m, n, "decoded lengths differ");
            assert_eq!(ours[..m], theirs[..n], "decoded bytes differ");
        }
    }
    if let Some(m) = got {
        assert!(m <= olen);
    }
});
