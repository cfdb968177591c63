//! The Blosc2 block strategy: the touched blocks of large, sparsely touched Blosc2 chunks
//! are read instead of whole chunks (c-blosc2's `blosc2_getitem_ctx` does the same within a
//! chunk held in memory).
//!
//! Two stages, each one coalesced batch: first each chunk's header and block offsets (its
//! first `32 + 4 * nblocks` bytes), then the streams of the touched blocks plus the blocks
//! they depend on (DELTA refers to block 0). Prefixes and streams enter the payload cache as
//! [`Item::Block`] entries, so a later read of other blocks of the same chunk reuses them.

use super::assemble::Assembler;
use super::Reader;
use crate::cache::{CacheKey, Item};
use crate::codec::blosc2::{block_dependencies, block_spans, BlockDecoder, ChunkHeader};
use crate::error::{Error, Result};
use crate::formats::{ChunkDecodeError, FormatError};
use crate::io::read_coalesced;
use bytes::Bytes;
use std::collections::HashMap;
use std::ops::Range;

/// Reads the touched blocks of `chunks` (linear index, stored range, touched blocks) and
/// assembles each chunk as soon as its blocks are decoded: a full-size chunk buffer whose
/// untouched blocks stay zero (the planner copies only touched elements), dropped after.
/// Returns the chunks that cannot be split (special-value chunks, or a header that does not
/// describe the grid's blocks), to be fetched whole.
///
/// # Errors
/// I/O errors; [`FormatError::Chunk`] for a block outside its chunk, a chunk whose decoded
/// size is not the layout's, or a block that does not decode.
pub(crate) async fn read(
    r: &Reader<'_>,
    chunks: &[(u64, Range<u64>, Vec<u64>)],
    asm: &mut Assembler<'_>,
) -> Result<Vec<(u64, Range<u64>)>> {
    let grid = r.format.grid();
    let nblocks: u64 = grid.block_counts().iter().product();
    let prefix_len = (32 + 4 * nblocks).min(u32::MAX as u64);
    let prefix_key = |lin: u64| CacheKey {
        source: r.identity.clone(),
        item: Item::Block(lin, u64::MAX),
    };
    let block_key = |lin: u64, b: u64| CacheKey {
        source: r.identity.clone(),
        item: Item::Block(lin, b),
    };
    let coalesce = r.coalesce_options();

    let stored: HashMap<u64, Range<u64>> = chunks
        .iter()
        .map(|(lin, range, _)| (*lin, range.clone()))
        .collect();
    let chunk_error = |lin: u64, source| r.chunk_error(lin, stored.get(&lin), source);

    // 1. Chunk headers and block offsets.
    let mut prefixes: HashMap<u64, Bytes> = HashMap::new();
    let mut missing: Vec<(u64, Range<u64>)> = Vec::new();
    for (lin, range, _) in chunks {
        match r.coordinator.get_payload(&prefix_key(*lin)).await {
            Some(b) => {
                prefixes.insert(*lin, b);
            }
            None => missing.push((*lin, range.start..(range.start + prefix_len).min(range.end))),
        }
    }
    if !missing.is_empty() {
        let ranges: Vec<Range<u64>> = missing.iter().map(|(_, r)| r.clone()).collect();
        let got = read_coalesced(r.source, &ranges, &coalesce).await?;
        for ((lin, _), b) in missing.iter().zip(got) {
            r.coordinator.put_payload(prefix_key(*lin), b.clone()).await;
            prefixes.insert(*lin, b);
        }
    }

    // 2. Streams of the needed blocks.
    let mut whole = Vec::new();
    let mut jobs = Vec::new(); // (chunk, header, needed blocks)
    let mut wanted: Vec<(u64, u64, Range<u64>)> = Vec::new();
    let mut streams: HashMap<(u64, u64), Bytes> = HashMap::new();
    for (lin, range, touched) in chunks {
        let prefix = &prefixes[lin];
        let (header, spans) = match (ChunkHeader::parse(prefix), block_spans(prefix)) {
            (Ok(h), Ok(s)) if s.len() as u64 == nblocks => (h, s),
            _ => {
                whole.push((*lin, range.clone()));
                continue;
            }
        };
        let mut needed: Vec<u64> = touched.clone();
        for &b in touched {
            needed.extend(
                block_dependencies(&header, b as usize)
                    .iter()
                    .map(|&d| d as u64),
            );
        }
        needed.sort_unstable();
        needed.dedup();
        for &b in &needed {
            let span = &spans[b as usize];
            let abs = range.start + span.start as u64..range.start + span.end as u64;
            if abs.end > range.end || abs.start >= abs.end {
                return Err(chunk_error(
                    *lin,
                    ChunkDecodeError::Layout(format!(
                        "block {b} spans {span:?}, outside the stored chunk"
                    )),
                ));
            }
            match r.coordinator.get_payload(&block_key(*lin, b)).await {
                Some(s) => {
                    streams.insert((*lin, b), s);
                }
                None => wanted.push((*lin, b, abs)),
            }
        }
        jobs.push((*lin, header, needed));
    }
    if !wanted.is_empty() {
        let ranges: Vec<Range<u64>> = wanted.iter().map(|(_, _, r)| r.clone()).collect();
        let got = read_coalesced(r.source, &ranges, &coalesce).await?;
        for ((lin, b, _), s) in wanted.iter().zip(got) {
            r.coordinator
                .put_payload(block_key(*lin, *b), s.clone())
                .await;
            streams.insert((*lin, *b), s);
        }
    }

    // 3. Decode, block 0 first so DELTA blocks find their reference; assemble; drop.
    let chunk_bytes = grid.decoded_chunk_items()? as usize * r.format.dtype().itemsize;
    // One decoder for every block: its scratch block and zstd context are made once.
    let mut decoder = BlockDecoder::new();
    for (lin, header, needed) in jobs {
        if header.nbytes != chunk_bytes {
            return Err(chunk_error(
                lin,
                ChunkDecodeError::Layout(format!(
                    "chunk holds {} bytes, layout needs {chunk_bytes}",
                    header.nbytes
                )),
            ));
        }
        let mut buf = vec![0u8; chunk_bytes];
        let bs = header.blocksize;
        let mut have_block0 = false;
        for b in needed {
            let b = b as usize;
            let start = b * bs;
            let n = header.block_nbytes(b);
            // Taken out of the map: each stream is decoded once, then dropped.
            let stream = streams.remove(&(lin, b as u64)).ok_or_else(|| {
                chunk_error(
                    lin,
                    ChunkDecodeError::Layout(format!("block {b} was not read")),
                )
            })?;
            let (head, tail) = buf.split_at_mut(start);
            let reference = if b > 0 && have_block0 {
                Some(&head[..header.block_nbytes(0)])
            } else {
                None
            };
            decoder
                .decode_block(&header, b, &stream, reference, &mut tail[..n])
                .map_err(|e| -> Error { chunk_error(lin, e.into()) })?;
            have_block0 |= b == 0;
        }
        asm.chunk(lin, &buf)?;
    }
    Ok(whole)
}

impl Reader<'_> {
    /// A [`FormatError::Chunk`] for `chunk` of this source, stored at `range`.
    pub(crate) fn chunk_error(
        &self,
        chunk: u64,
        range: Option<&Range<u64>>,
        source: ChunkDecodeError,
    ) -> Error {
        FormatError::Chunk {
            location: self.location.to_string(),
            chunk,
            range: range.cloned(),
            source,
        }
        .into()
    }
}
