//! Streaming assembly: each chunk is copied into the C-ordered result as soon as it is
//! decoded, and its buffer dropped, so a read holds the result plus the chunks in flight,
//! never every decoded chunk at once.

use super::{check_cancel, Progress, ReadOptions};
use crate::codec::blosc2::{ChunkHeader, GroupDecoder, GroupTarget};
use crate::error::Result;
use crate::selection::{ChunkRef, Plan, Run};
use std::collections::HashMap;

/// Fewest elements per run, on average, for which [`Assembler::chunk_by_groups`] copies a
/// chunk a group of blocks at a time: its runs are listed and ordered by block first, which
/// for runs of a few elements would cost more than the copy it saves.
const MIN_RUN: usize = 16;

/// The result buffer of one read and the chunks still to come.
pub(crate) struct Assembler<'a> {
    plan: &'a Plan,
    refs: Vec<ChunkRef>,
    /// Linear chunk index → position in `refs` (found in constant time per chunk).
    at: HashMap<u64, usize>,
    out: Vec<u8>,
    /// Per touched chunk, whether it is in `out`: a chunk that no step served is an error at
    /// [`Assembler::finish`], never a silent stretch of zeros.
    filled: Vec<bool>,
    done: u64,
    opts: &'a ReadOptions<'a>,
}

impl<'a> Assembler<'a> {
    /// A zeroed result of [`Plan::result_bytes`] bytes for the touched chunks of `plan`.
    pub(crate) fn new(plan: &'a Plan, opts: &'a ReadOptions<'a>) -> Assembler<'a> {
        // The result first, before the small bookkeeping below: a read in windows frees a
        // result and allocates one of the same size next, and small allocations made first
        // could take the start of the freed block (the allocator splits it), so that the new
        // result no longer fits there and wasm memory, which never shrinks, grows by a whole
        // window (tests/e2e/window.test.mjs).
        let n = plan.result_bytes();
        let given = opts.result_buffer.lock().ok().and_then(|mut b| b.take());
        let out = match given {
            Some(mut v) if v.capacity() >= n && v.capacity() / 2 <= n => {
                v.clear();
                v.resize(n, 0);
                v
            }
            _ => vec![0u8; n],
        };
        let refs = plan.chunks();
        let at = refs
            .iter()
            .enumerate()
            .map(|(i, c)| (plan.grid.chunk_linear(&c.coords), i))
            .collect();
        Assembler {
            plan,
            filled: vec![false; refs.len()],
            refs,
            at,
            out,
            done: 0,
            opts,
        }
    }

    /// The touched chunks' linear indexes, in C order of their coordinates.
    pub(crate) fn chunks(&self) -> Vec<u64> {
        self.refs
            .iter()
            .map(|c| self.plan.grid.chunk_linear(&c.coords))
            .collect()
    }

    /// The blocks (block-linear indexes) the selection touches in `chunk`.
    pub(crate) fn touched_blocks(&self, chunk: u64) -> Vec<u64> {
        match self.at.get(&chunk) {
            Some(&i) => self
                .plan
                .blocks_of(&self.refs[i])
                .iter()
                .map(|b| self.plan.grid.block_linear(b))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Copies decoded chunk `chunk` (laid out as the grid says) into the result.
    ///
    /// # Errors
    /// `CANCELLED` when the read was cancelled; a chunk shorter than the layout.
    pub(crate) fn chunk(&mut self, chunk: u64, decoded: &[u8]) -> Result<()> {
        check_cancel(&self.opts.cancel)?;
        if let Some(&i) = self.at.get(&chunk) {
            self.plan
                .copy_chunk(&self.refs[i], decoded, &mut self.out)?;
            self.advance(i);
        }
        Ok(())
    }

    /// Decodes the Blosc2 chunk `stored` (chunk `chunk`, header `h`, `chunk_bytes` decoded) a
    /// group of blocks at a time ([`GroupDecoder`]) and copies each group's selected elements
    /// into the result while the group is in the CPU's cache, instead of decoding the whole
    /// chunk into a buffer of its own and copying from there: a 4 MiB chunk no longer goes
    /// through memory twice more, nor is a buffer of its size zeroed per chunk (a whole read
    /// of a 1-D LZ4HC uint16 array, chunks of 2 MB: 1.29x in Node, 1.12x in Chromium; 2-D
    /// reads with shorter runs within 3%: `scripts/bench-wasm-read.mjs`). Returns `false`
    /// when the chunk is not read this way (the decoder stops: see its doc; runs shorter than
    /// [`MIN_RUN`] on average, or strided; a chunk outside the plan); the caller then decodes
    /// it whole and copies it ([`Assembler::chunk`]), which writes every element this may
    /// have written, and gives the error if there is one.
    ///
    /// # Errors
    /// `CANCELLED` when the read was cancelled.
    pub(crate) fn chunk_by_groups(
        &mut self,
        chunk: u64,
        h: &ChunkHeader,
        stored: &[u8],
        chunk_bytes: usize,
        decoder: &mut GroupDecoder,
    ) -> Result<bool> {
        check_cancel(&self.opts.cancel)?;
        let isz = self.plan.itemsize();
        let Some(&i) = self.at.get(&chunk) else {
            return Ok(false);
        };
        if h.nbytes != chunk_bytes || h.nbytes == 0 || isz == 0 || !h.blocksize.is_multiple_of(isz)
        {
            return Ok(false);
        }
        let max_runs = chunk_bytes / isz / MIN_RUN;
        let block = h.blocksize / isz; // groups are whole blocks
        let Some(runs) = self.plan.runs_by_piece(&self.refs[i], block, max_runs) else {
            return Ok(false);
        };
        let fits = |r: &Run| {
            (r.src + r.len) * isz <= chunk_bytes && (r.dst + r.len) * isz <= self.out.len()
        };
        if !runs.iter().all(fits) {
            return Ok(false);
        }
        let out = &mut self.out;
        // The first run not yet begun, and a run that goes on past the group: at most one
        // (runs do not overlap in the chunk).
        let mut next = 0;
        let mut pending: Option<Run> = None;
        let mut scatter = |off: usize, group: &[u8]| {
            // Elements e0..e1 of the chunk.
            let (e0, e1) = (off / isz, (off + group.len()) / isz);
            // Runs begun in an earlier group first, then those starting in this one (every
            // run starting before e1 is listed before those starting after: by piece).
            let begun = pending.take();
            let starting = runs[next..].iter().take_while(|r| r.src < e1);
            let mut taken = 0;
            for r in begun.iter().chain(starting.inspect(|_| taken += 1)) {
                let (lo, hi) = (r.src.max(e0), (r.src + r.len).min(e1));
                if lo < hi {
                    let to = r.dst + (lo - r.src);
                    out[to * isz..(to + hi - lo) * isz]
                        .copy_from_slice(&group[(lo - e0) * isz..(hi - e0) * isz]);
                }
                if r.src + r.len > e1 {
                    pending = Some(*r);
                }
            }
            next += taken;
            true
        };
        if !decoder.decode(h, &stored, GroupTarget::Each(&mut scatter))
            || next != runs.len()
            || pending.is_some()
        {
            return Ok(false);
        }
        self.advance(i);
        Ok(true)
    }

    /// Writes `value` (one element's bytes) into the result elements of `chunk`.
    ///
    /// # Errors
    /// As [`Assembler::chunk`].
    pub(crate) fn fill(&mut self, chunk: u64, value: &[u8]) -> Result<()> {
        check_cancel(&self.opts.cancel)?;
        if let Some(&i) = self.at.get(&chunk) {
            self.plan.fill_chunk(&self.refs[i], value, &mut self.out)?;
            self.advance(i);
        }
        Ok(())
    }

    /// Marks chunk `i` of `refs` as written; progress counts each chunk once.
    fn advance(&mut self, i: usize) {
        if std::mem::replace(&mut self.filled[i], true) {
            return;
        }
        self.done += 1;
        if let Some(p) = self.opts.progress {
            p(Progress {
                done: self.done,
                total: self.refs.len() as u64,
            });
        }
    }

    /// The assembled result.
    ///
    /// # Errors
    /// `DECODE` ([`crate::formats::FormatError::Chunk`]) naming the first touched chunk that
    /// no step wrote (a loader that skipped a chunk), instead of returning zeros for it.
    pub(crate) fn finish(self, location: &str) -> Result<Vec<u8>> {
        if let Some(i) = self.filled.iter().position(|f| !f) {
            return Err(crate::formats::FormatError::Chunk {
                location: location.to_string(),
                chunk: self.plan.grid.chunk_linear(&self.refs[i].coords),
                range: None,
                source: crate::formats::ChunkDecodeError::Layout(
                    "planned for this read but never read".into(),
                ),
            }
            .into());
        }
        Ok(self.out)
    }
}
