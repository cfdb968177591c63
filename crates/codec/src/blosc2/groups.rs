//! Decoding a chunk a group of consecutive blocks at a time, each group handed on while it is
//! still in the CPU's cache.
//!
//! [`decode_chunk`](super::decode_chunk) writes the whole decoded chunk, which the caller then
//! copies on (into a reader's result, out of wasm memory): with chunks of megabytes each byte
//! goes through memory once more than needed. [`GroupDecoder`] decodes up to
//! [`GROUP_BYTES`] of blocks, hands them to the caller, and goes on, so the group's streams,
//! its decoded bytes and the decoder's scratch stay in a core's cache (L2 is 1-4 MiB on
//! current CPUs).
//!
//! It decodes only what it can decode exactly as the whole-chunk decoder does, and stops
//! (returns `false`) on anything else: special-value and memcpyed chunks, blocks outside
//! [`BLOCK_MIN`]..=[`BLOCK_MAX`], a chunk shorter than its `cbytes`, a block whose span is
//! longer than a valid block's streams can be, a stream that does not decode. The caller then
//! decodes the chunk whole, which gives the error if there is one; groups it was handed before
//! are to be overwritten or dropped.

use std::cell::RefCell;
use std::ops::Range;

use super::decode::{block_spans, BlockDecoder};
use super::header::ChunkHeader;

/// Blocks are decoded in groups of up to this many decoded bytes (or one block, if larger).
pub const GROUP_BYTES: usize = 256 << 10;

/// Blocks of at least this many bytes (or a chunk of one block) are decoded by groups. Smaller
/// ones make many blocks per group, each decoded as the whole-chunk decoder does it, and the
/// bstarts table is sorted once more ([`block_spans`]); the bound keeps that cheap (at most
/// 1,024 blocks in 4 MiB).
pub const BLOCK_MIN: usize = 4 << 10;

/// Blocks of at most this many bytes are decoded by groups: the buffers a [`GroupDecoder`]
/// keeps grow to the largest group, so they stay under about 5 times this. C-Blosc2 makes
/// blocks of at most 2 MiB by itself.
pub const BLOCK_MAX: usize = 4 << 20;

/// Where the decoded groups go.
pub enum GroupTarget<'a> {
    /// The whole decoded chunk (exactly `nbytes` bytes), each block written in place.
    Whole(&'a mut [u8]),
    /// Called with each group: its offset in the decoded chunk (bytes; a multiple of the
    /// block size) and its decoded bytes, in order of offset, covering the chunk. Returning
    /// `false` stops the decoding.
    Each(&'a mut dyn FnMut(usize, &[u8]) -> bool),
}

/// The bytes of a chunk, as the group decoder reads them: a slice in memory, or a chunk held
/// elsewhere (wasm: a JS array) whose pieces are copied in.
pub trait ChunkBytes {
    /// Length of the chunk's bytes.
    fn len(&self) -> usize;
    /// Whether the chunk has no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes `range` of the chunk (within [`ChunkBytes::len`]): borrowed, or copied into
    /// `buf` (grown as needed) and borrowed from there. `None` when memory for the copy is
    /// not there.
    fn get<'a>(&'a self, range: Range<usize>, buf: &'a mut Vec<u8>) -> Option<&'a [u8]>;
}

impl ChunkBytes for &[u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn get<'a>(&'a self, range: Range<usize>, _: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        <[u8]>::get(self, range)
    }
}

/// A group decoder: one group's streams (when copied in), the group decoded (for
/// [`GroupTarget::Each`]), block 0 decoded (the DELTA filter's reference for later groups),
/// and the block decoder's scratch and codec state. Keep one across chunks: its buffers grow
/// to the largest group and are reused.
#[derive(Default)]
pub struct GroupDecoder {
    stream: Vec<u8>,
    group: Vec<u8>,
    first: Vec<u8>,
    decoder: BlockDecoder,
}

thread_local! {
    /// The decoder [`GroupDecoder::with_kept`] lends.
    static KEPT: RefCell<GroupDecoder> = RefCell::new(GroupDecoder::new());
}

/// `v` resized to `n` bytes (zeroed when it grows), or `None` when that memory is not there:
/// a kept decode buffer that grows to the largest chunk seen and is never allocated per call.
pub fn sized(v: &mut Vec<u8>, n: usize) -> Option<&mut [u8]> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len()).ok()?;
        v.resize(n, 0);
    }
    Some(&mut v[..n])
}

impl GroupDecoder {
    /// A decoder holding no buffer yet.
    pub fn new() -> GroupDecoder {
        GroupDecoder::default()
    }

    /// Runs `f` with the decoder this thread keeps, whose buffers stay allocated from one call
    /// to the next (a read's chunks, the next read's, `decodeChunk`'s calls): made per read,
    /// they were allocated and freed around each read's result buffer, and wasm memory, which
    /// never shrinks, grew by them from one read in windows to the next. With a new decoder
    /// when the kept one is in use (`f` calling this again).
    pub fn with_kept<R>(f: impl FnOnce(&mut GroupDecoder) -> R) -> R {
        KEPT.with(|kept| match kept.try_borrow_mut() {
            Ok(mut d) => f(&mut d),
            Err(_) => f(&mut GroupDecoder::new()),
        })
    }

    /// Decodes `chunk` (header `h`, `h.nbytes > 0`) a group of blocks at a time into
    /// `target`. Returns `false`, having handed on any prefix of the groups, when the chunk
    /// is not decoded this way (see the module's doc); the caller then decodes it whole.
    ///
    /// A block's streams are read from its span ([`block_spans`]: up to the next block's
    /// start, or `cbytes`), so a valid chunk decodes to the same bytes as whole. A group is
    /// consecutive blocks whose spans follow each other in the chunk (C-Blosc2 writes them so
    /// on one thread).
    pub fn decode(&mut self, h: &ChunkHeader, chunk: &dyn ChunkBytes, target: GroupTarget) -> bool {
        let blocks_fit = (h.blocksize >= BLOCK_MIN || h.nblocks() == 1) && h.blocksize <= BLOCK_MAX;
        if h.special.is_some() || h.memcpyed || !blocks_fit || chunk.len() < h.cbytes {
            return false;
        }
        let (mut whole, mut each) = match target {
            GroupTarget::Whole(dst) if dst.len() == h.nbytes => (Some(dst), None),
            GroupTarget::Whole(_) => return false,
            GroupTarget::Each(f) => (None, Some(f)),
        };
        let prefix_len = h.prefix_len();
        if prefix_len > chunk.len() {
            return false;
        }
        let spans = match chunk.get(0..prefix_len, &mut self.stream).map(block_spans) {
            Some(Ok(s)) => s,
            _ => return false,
        };
        // The most bytes a valid block's streams take: the block (streams stored raw), and
        // per stream its 4-byte size and a run's token byte (blosc2.c stores a stream raw
        // rather than let it grow). Longer spans are gaps or damage: left to the whole decoder.
        let most = |n: usize| n + 5 * h.typesize.max(1);
        let delta = h.has_delta();
        let (bs, n0) = (h.blocksize, h.block_nbytes(0));
        let GroupDecoder {
            stream,
            group,
            first,
            decoder,
        } = self;
        let mut i = 0;
        while i < spans.len() {
            // Blocks i..j: spans back to back, at most GROUP_BYTES decoded (or one block).
            let mut j = i + 1;
            let mut size = h.block_nbytes(i);
            while j < spans.len()
                && spans[j].start == spans[j - 1].end
                && size + h.block_nbytes(j) <= GROUP_BYTES
            {
                size += h.block_nbytes(j);
                j += 1;
            }
            if spans[i..j]
                .iter()
                .zip(i..j)
                .any(|(s, b)| s.len() > most(h.block_nbytes(b)))
            {
                return false;
            }
            let base = spans[i].start;
            // Spans end at or before `cbytes` <= the chunk's length (checked above).
            let Some(input) = chunk.get(base..spans[j - 1].end, stream) else {
                return false;
            };
            let streams = |b: usize| &input[spans[b].start - base..spans[b].end - base];
            // Block b of the group at b * bs - off of `out`: the target itself, or the group
            // buffer handed on after.
            let (out, off): (&mut [u8], usize) = match &mut whole {
                Some(dst) => (&mut dst[..i * bs + size], 0),
                None => match sized(group, size) {
                    Some(g) => (g, i * bs),
                    None => return false,
                },
            };
            for b in i..j {
                let (before, rest) = out.split_at_mut(b * bs - off);
                let dst = &mut rest[..h.block_nbytes(b)];
                // Under DELTA, blocks after 0 XOR with block 0: in `out` while this is the
                // first group (or the target holds the chunk), else kept in `first`.
                let reference = match (delta && b > 0, off) {
                    (false, _) => None,
                    (true, 0) => Some(&before[..n0]),
                    (true, _) => Some(&first[..n0]),
                };
                if decoder
                    .decode_block(h, b, streams(b), reference, dst)
                    .is_err()
                {
                    return false;
                }
            }
            if let Some(f) = &mut each {
                if i == 0 && delta && j < spans.len() {
                    match sized(first, n0) {
                        Some(keep) => keep.copy_from_slice(&out[..n0]),
                        None => return false,
                    }
                }
                if !f(i * bs, &out[..size]) {
                    return false;
                }
            }
            i = j;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decode_chunk, encode_chunk, Codec, EncodeOptions, Filter};
    use super::*;

    /// Float32-like bytes with structure (so codecs compress them) from a seed.
    fn data(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n / 4)
            .flat_map(|i| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                ((i as f32).sin() * 100.0 + (x >> 28) as f32).to_le_bytes()
            })
            .collect()
    }

    fn chunk(raw: &[u8], blocksize: usize, filter: Filter, delta: bool, codec: Codec) -> Vec<u8> {
        let opts = EncodeOptions {
            codec,
            filter,
            delta,
            blocksize: Some(blocksize),
            ..EncodeOptions::default()
        };
        encode_chunk(raw, 4, &opts).unwrap()
    }

    /// Runs the decoder into both targets; `None` when it stops.
    fn by_groups(c: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
        let h = ChunkHeader::parse(c).unwrap();
        let mut g = GroupDecoder::new();
        let mut whole = vec![0u8; h.nbytes];
        if !g.decode(&h, &c, GroupTarget::Whole(&mut whole)) {
            return None;
        }
        let mut each = vec![0u8; h.nbytes];
        let mut next = 0;
        let mut put = |off: usize, b: &[u8]| {
            assert_eq!(off, next, "groups in order, back to back");
            next = off + b.len();
            each[off..next].copy_from_slice(b);
            true
        };
        assert!(g.decode(&h, &c, GroupTarget::Each(&mut put)));
        assert_eq!(next, h.nbytes, "groups cover the chunk");
        Some((whole, each))
    }

    #[test]
    fn groups_decode_to_the_whole_decoders_bytes() {
        let raw = data(1 << 20, 7);
        // Blocks of 8 KiB to the whole chunk; DELTA with block 0 in an earlier group.
        for (bs, filter, delta, codec) in [
            (16 << 10, Filter::Shuffle, false, Codec::Lz4),
            (64 << 10, Filter::Shuffle, true, Codec::Lz4),
            (8 << 10, Filter::Shuffle, true, Codec::Zstd),
            (1 << 20, Filter::Shuffle, false, Codec::Zstd),
            (300 << 10, Filter::BitShuffle, false, Codec::BloscLz),
        ] {
            let c = chunk(&raw, bs, filter, delta, codec);
            let what = format!("blocks of {bs}, {filter:?}, delta {delta}, {codec:?}");
            let (whole, each) = by_groups(&c).unwrap_or_else(|| panic!("stopped: {what}"));
            assert!(whole == raw, "whole target, {what}");
            assert!(each == raw, "each group, {what}");
            assert_eq!(decode_chunk(&c).unwrap(), raw);
        }
    }

    #[test]
    fn stops_on_small_blocks_truncation_and_damage() {
        let raw = data(256 << 10, 3);
        // Blocks under BLOCK_MIN: left to the whole decoder.
        assert!(by_groups(&chunk(&raw, 2 << 10, Filter::Shuffle, false, Codec::Lz4)).is_none());
        let c = chunk(&raw, 16 << 10, Filter::Shuffle, false, Codec::Lz4);
        // Shorter than its cbytes.
        assert!(by_groups(&c[..c.len() - 1]).is_none());
        // A stream's bytes damaged: stops (never other bytes than the whole decoder's).
        let h = ChunkHeader::parse(&c).unwrap();
        // The first block's first stream claims more bytes than the chunk holds.
        let mut bad = c.clone();
        let first = block_spans(&c[..h.prefix_len()]).unwrap()[0].start;
        bad[first..first + 4].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
        assert!(decode_chunk(&bad).is_err());
        assert!(by_groups(&bad).is_none());
        // A stop asked by the target ends the decoding.
        let mut g = GroupDecoder::new();
        let mut calls = 0;
        let mut stop = |_: usize, _: &[u8]| {
            calls += 1;
            false
        };
        assert!(!g.decode(&h, &&c[..], GroupTarget::Each(&mut stop)));
        assert_eq!(calls, 1);
    }
}
