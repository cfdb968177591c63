//! numpy-like selections and the one planner that maps them to chunks and blocks.
//!
//! A [`Selection`] is what a user writes (`"0, 10:20, ::2, ..."`); [`Selection::resolve`] turns
//! it into one [`DimSelection`] per dimension with numpy's slice rules (Python's
//! `slice.indices`); [`Plan::new`] maps that onto a [`Grid`] (array shape, chunk shape, block
//! shape) and lists, per dimension, which chunks are touched and where each selected element
//! lies inside the decoded chunk; [`Plan::copy_chunk`] copies a decoded chunk's selected
//! elements into the result. Every format reads through this planner.

use std::fmt;

/// An error in a selection: syntax, or an index outside the array.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// The text could not be parsed.
    #[error("cannot parse selection {text:?}: {reason}")]
    Syntax { text: String, reason: String },
    /// More indices than dimensions.
    #[error("too many indices: {given} given for an array of {ndim} dimensions")]
    TooManyIndices { given: usize, ndim: usize },
    /// An integer index outside `-len..len`.
    #[error("index {index} is out of bounds for axis {axis} with size {len}")]
    OutOfBounds { index: i64, axis: usize, len: u64 },
    /// A slice step of zero.
    #[error("slice step cannot be zero")]
    ZeroStep,
    /// The result would exceed the allowed size (`elements` and `bytes` saturate at
    /// `u128::MAX`).
    #[error("selection of {elements} elements ({bytes} bytes) exceeds the limit of {limit} bytes")]
    TooLarge {
        elements: u128,
        bytes: u128,
        limit: u64,
    },
    /// Chunk geometry that cannot describe the array (zero chunk size, rank mismatch).
    #[error("invalid chunk grid: {0}")]
    InvalidGrid(String),
    /// A decoded chunk shorter than its layout says.
    #[error("decoded chunk has {got} bytes, layout needs {needed}")]
    ShortChunk { got: usize, needed: usize },
}

/// One item of a selection, as numpy indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// An integer: selects one position and drops the dimension (negative counts from the end).
    Int(i64),
    /// `start:stop:step`, each optional, numpy semantics (negative values count from the end).
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    /// `...`: as many full slices as needed.
    Ellipsis,
}

/// A numpy-like selection: a list of [`Index`] items.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// The items in order; fewer than the rank means trailing full slices.
    pub items: Vec<Index>,
}

/// The resolved selection along one dimension: `count` positions `start + k*step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DimSelection {
    /// First selected position (element index).
    pub start: u64,
    /// Distance between selected positions (elements; negative walks backwards).
    pub step: i64,
    /// Number of selected positions.
    pub count: u64,
    /// False for an integer index: the dimension is dropped from the result shape.
    pub keep: bool,
}

impl DimSelection {
    /// The whole dimension of length `len`.
    pub fn full(len: u64) -> Self {
        DimSelection {
            start: 0,
            step: 1,
            count: len,
            keep: true,
        }
    }
    /// The `k`-th selected position.
    pub fn position(&self, k: u64) -> u64 {
        (self.start as i128 + k as i128 * self.step as i128) as u64
    }
}

impl Selection {
    /// Everything (`...`).
    pub fn all() -> Self {
        Selection { items: vec![] }
    }

    /// Parses numpy-like text: comma-separated integers, `start:stop:step` slices (parts
    /// optional) and `...`, optionally inside `[` `]`. Empty text and `()` (numpy's empty
    /// tuple) select everything.
    ///
    /// # Errors
    /// [`SelectionError::Syntax`] naming the offending text.
    pub fn parse(text: &str) -> Result<Selection, SelectionError> {
        let syntax = |reason: &str| SelectionError::Syntax {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let mut t = text.trim();
        if let Some(inner) = t.strip_prefix('[') {
            t = inner
                .strip_suffix(']')
                .ok_or_else(|| syntax("unbalanced '['"))?
                .trim();
        }
        // numpy's empty tuple `a[()]` (how a scalar is read) selects everything.
        if t.is_empty() || t == "()" {
            return Ok(Selection::all());
        }
        let mut items = Vec::new();
        let parts: Vec<&str> = t.split(',').collect();
        for (i, part) in parts.iter().enumerate() {
            let p = part.trim();
            if p.is_empty() {
                // Python allows one trailing comma ("0,"); an empty item anywhere else is a
                // syntax error there, and skipping it would silently select other data.
                if i + 1 == parts.len() && i > 0 {
                    continue;
                }
                return Err(syntax("empty item (use ':' for a whole axis)"));
            }
            if p == "..." || p == "Ellipsis" {
                if items.contains(&Index::Ellipsis) {
                    return Err(syntax("only one '...' allowed"));
                }
                items.push(Index::Ellipsis);
                continue;
            }
            let fields: Vec<&str> = p.split(':').map(str::trim).collect();
            let num = |s: &str| -> Result<Option<i64>, SelectionError> {
                if s.is_empty() || s == "None" {
                    Ok(None)
                } else {
                    s.parse::<i64>()
                        .map(Some)
                        .map_err(|_| syntax(&format!("not an integer: {s:?}")))
                }
            };
            match fields.len() {
                1 => items.push(Index::Int(
                    num(fields[0])?.ok_or_else(|| syntax("empty index"))?,
                )),
                2 | 3 => items.push(Index::Slice {
                    start: num(fields[0])?,
                    stop: num(fields[1])?,
                    step: if fields.len() == 3 {
                        num(fields[2])?
                    } else {
                        None
                    },
                }),
                _ => return Err(syntax(&format!("too many ':' in {p:?}"))),
            }
        }
        Ok(Selection { items })
    }

    /// Resolves against an array shape (elements per dimension) with numpy rules.
    ///
    /// # Errors
    /// Too many indices, integer index out of bounds, zero step.
    pub fn resolve(&self, shape: &[u64]) -> Result<Vec<DimSelection>, SelectionError> {
        let ndim = shape.len();
        let explicit = self.items.iter().filter(|i| **i != Index::Ellipsis).count();
        if explicit > ndim {
            return Err(SelectionError::TooManyIndices {
                given: explicit,
                ndim,
            });
        }
        let mut expanded: Vec<Index> = Vec::with_capacity(ndim);
        for item in &self.items {
            if *item == Index::Ellipsis {
                for _ in 0..(ndim - explicit) {
                    expanded.push(Index::Slice {
                        start: None,
                        stop: None,
                        step: None,
                    });
                }
            } else {
                expanded.push(*item);
            }
        }
        while expanded.len() < ndim {
            expanded.push(Index::Slice {
                start: None,
                stop: None,
                step: None,
            });
        }
        expanded
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(axis, (item, &len))| resolve_one(*item, axis, len))
            .collect()
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .items
            .iter()
            .map(|i| match i {
                Index::Int(v) => v.to_string(),
                Index::Ellipsis => "...".to_string(),
                Index::Slice { start, stop, step } => {
                    let s = |v: &Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
                    match step {
                        Some(st) => format!("{}:{}:{}", s(start), s(stop), st),
                        None => format!("{}:{}", s(start), s(stop)),
                    }
                }
            })
            .collect();
        write!(
            f,
            "{}",
            if parts.is_empty() {
                "...".to_string()
            } else {
                parts.join(", ")
            }
        )
    }
}

fn resolve_one(item: Index, axis: usize, len: u64) -> Result<DimSelection, SelectionError> {
    let ilen = len as i128;
    match item {
        Index::Int(i) => {
            let pos = if i < 0 { i as i128 + ilen } else { i as i128 };
            if pos < 0 || pos >= ilen {
                return Err(SelectionError::OutOfBounds {
                    index: i,
                    axis,
                    len,
                });
            }
            Ok(DimSelection {
                start: pos as u64,
                step: 1,
                count: 1,
                keep: false,
            })
        }
        Index::Slice { start, stop, step } => {
            // Python's PySlice_AdjustIndices.
            let step = step.unwrap_or(1) as i128;
            if step == 0 {
                return Err(SelectionError::ZeroStep);
            }
            let (lower, upper) = if step > 0 { (0, ilen) } else { (-1, ilen - 1) };
            let adjust = |v: Option<i64>, default: i128| -> i128 {
                match v {
                    None => default,
                    Some(v) => {
                        let mut v = v as i128;
                        if v < 0 {
                            v += ilen;
                            if v < lower {
                                v = lower;
                            }
                        } else if v > upper {
                            v = upper;
                        }
                        v
                    }
                }
            };
            let s = adjust(start, if step < 0 { upper } else { lower });
            let e = adjust(stop, if step < 0 { lower } else { upper });
            let count = if step > 0 {
                if s < e {
                    (e - s - 1) / step + 1
                } else {
                    0
                }
            } else if e < s {
                (s - e - 1) / (-step) + 1
            } else {
                0
            };
            Ok(DimSelection {
                start: if count > 0 { s as u64 } else { 0 },
                step: step as i64,
                count: count as u64,
                keep: true,
            })
        }
        Index::Ellipsis => Ok(DimSelection::full(len)),
    }
}

/// Chunk geometry: array shape, chunk shape, and the block shape that tiles a decoded chunk.
///
/// A decoded chunk holds `ceil(chunks[d] / blocks[d])` blocks per dimension in C order, each
/// block C-ordered, edge blocks and edge chunks padded (the Blosc2 `b2nd` layout, C-Blosc2
/// `b2nd.c`). Formats whose decoded chunks are plain C order use `blocks == chunks`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Array shape (elements).
    pub shape: Vec<u64>,
    /// Chunk shape (elements), every entry >= 1.
    pub chunks: Vec<u64>,
    /// Block shape (elements), every entry >= 1 and <= the chunk's.
    pub blocks: Vec<u64>,
}

/// `unit` times the product of `factors` (a count of chunks, elements or bytes), or `None`
/// when it is 2^64 or more. A zero factor makes it 0 whatever the others are: the product of
/// the others alone may pass 2^64 (an array of shape (2^40, 2^40, 0) holds no element).
pub fn count_product<I>(unit: u64, factors: I) -> Option<u64>
where
    I: IntoIterator<Item = u64>,
    I::IntoIter: Clone,
{
    let mut factors = factors.into_iter();
    if factors.clone().any(|f| f == 0) {
        return Some(0);
    }
    factors.try_fold(unit, |n, f| n.checked_mul(f))
}

impl Grid {
    /// Checks ranks agree and sizes are non-zero.
    ///
    /// # Errors
    /// [`SelectionError::InvalidGrid`].
    pub fn new(
        shape: Vec<u64>,
        chunks: Vec<u64>,
        blocks: Vec<u64>,
    ) -> Result<Grid, SelectionError> {
        if shape.len() != chunks.len() || shape.len() != blocks.len() {
            return Err(SelectionError::InvalidGrid(format!(
                "ranks differ: shape {shape:?}, chunks {chunks:?}, blocks {blocks:?}"
            )));
        }
        if chunks.iter().chain(&blocks).any(|&c| c == 0) {
            return Err(SelectionError::InvalidGrid(format!(
                "zero in chunks {chunks:?} or blocks {blocks:?}"
            )));
        }
        if blocks.iter().zip(&chunks).any(|(b, c)| b > c) {
            return Err(SelectionError::InvalidGrid(format!(
                "blocks {blocks:?} larger than chunks {chunks:?}"
            )));
        }
        let g = Grid {
            shape,
            chunks,
            blocks,
        };
        g.decoded_chunk_items()?;
        Ok(g)
    }

    /// Chunks per dimension (`ceil(shape / chunks)`).
    pub fn chunk_counts(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.chunks)
            .map(|(s, c)| s.div_ceil(*c))
            .collect()
    }

    /// Total number of chunks, or None on overflow (2^64 or more). A grid with a dimension of
    /// no chunks has none, whatever the other dimensions hold ([`count_product`]).
    pub fn nchunks(&self) -> Option<u64> {
        count_product(1, self.chunk_counts())
    }

    /// Blocks per dimension inside one chunk.
    pub fn block_counts(&self) -> Vec<u64> {
        self.chunks
            .iter()
            .zip(&self.blocks)
            .map(|(c, b)| c.div_ceil(*b))
            .collect()
    }

    /// Elements of one decoded chunk, padding included.
    ///
    /// # Errors
    /// [`SelectionError::InvalidGrid`] on overflow.
    pub fn decoded_chunk_items(&self) -> Result<u64, SelectionError> {
        let blocks: Option<u64> = self
            .block_counts()
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n));
        let per_block: Option<u64> = self.blocks.iter().try_fold(1u64, |a, &n| a.checked_mul(n));
        blocks
            .zip(per_block)
            .and_then(|(a, b)| a.checked_mul(b))
            .ok_or_else(|| SelectionError::InvalidGrid("chunk size overflows".into()))
    }

    /// Elements of one block.
    pub fn block_items(&self) -> u64 {
        self.blocks.iter().product()
    }

    /// Linear (C-order) index of a chunk from its coordinates in the chunk grid.
    pub fn chunk_linear(&self, coords: &[u64]) -> u64 {
        let counts = self.chunk_counts();
        coords
            .iter()
            .zip(&counts)
            .fold(0u64, |acc, (&c, &n)| acc * n + c)
    }

    /// Linear (C-order) index of a block inside a chunk from its block coordinates.
    pub fn block_linear(&self, coords: &[u64]) -> u64 {
        let counts = self.block_counts();
        coords
            .iter()
            .zip(&counts)
            .fold(0u64, |acc, (&c, &n)| acc * n + c)
    }
}

/// Along one dimension, the part of the selection that falls in one chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimPart {
    /// Chunk index along this dimension.
    pub chunk: u64,
    /// First output position (along this dimension) filled from this chunk.
    pub out_start: u64,
    /// Block indices along this dimension touched by the selection (sorted, distinct).
    pub blocks: Vec<u64>,
    /// The selected positions in this chunk as runs `(k, len, offset, step)`: `len`
    /// positions from the part's `k`-th, whose contributions (elements) to the offset inside
    /// the decoded chunk are `offset`, `offset + step`, ...: one run per block the selection
    /// crosses at most (runs that go on are joined), never one entry per position.
    runs: Vec<(usize, usize, u64, i64)>,
    /// The largest contribution of a selected position.
    max_src: u64,
}

/// A planned read: the chunks a selection touches and where each element goes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The geometry planned against.
    pub grid: Grid,
    /// The resolved selection.
    pub dims: Vec<DimSelection>,
    /// Shape of the result (dimensions selected by an integer are dropped).
    pub result_shape: Vec<u64>,
    /// Per dimension, the touched chunks in selection order.
    pub parts: Vec<Vec<DimPart>>,
    out_strides: Vec<u64>,
    itemsize: usize,
}

/// A run of consecutive elements that one chunk gives the result: `len` elements from
/// element `src` of the decoded chunk go to element `dst` of the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// First element in the decoded chunk.
    pub src: usize,
    /// First element in the result.
    pub dst: usize,
    /// Elements.
    pub len: usize,
}

/// One touched chunk: its grid coordinates and, per dimension, an index into [`Plan::parts`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRef {
    /// Chunk coordinates in the chunk grid.
    pub coords: Vec<u64>,
    /// Per dimension, which entry of `plan.parts[d]` applies.
    pub part: Vec<usize>,
}

impl Plan {
    /// Plans reading `dims` (from [`Selection::resolve`]) of an array with geometry `grid` and
    /// `itemsize`-byte elements. The result may hold at most `max_result_bytes`.
    ///
    /// # Errors
    /// [`SelectionError::TooLarge`] or [`SelectionError::InvalidGrid`].
    pub fn new(
        grid: &Grid,
        dims: &[DimSelection],
        itemsize: usize,
        max_result_bytes: u64,
    ) -> Result<Plan, SelectionError> {
        if dims.len() != grid.shape.len() {
            return Err(SelectionError::InvalidGrid(format!(
                "selection has {} dimensions, array {}",
                dims.len(),
                grid.shape.len()
            )));
        }
        // Saturating: a selection of 2^128 elements or more is too large all the same, and one
        // with an axis of none selects nothing whatever the other axes select (their product
        // alone may pass 2^128: (2^40, 2^40, 2^40, 2^40, 0)).
        let elements: u128 = if dims.iter().any(|d| d.count == 0) {
            0
        } else {
            dims.iter()
                .fold(1u128, |n, d| n.saturating_mul(d.count as u128))
        };
        let bytes = elements.saturating_mul(itemsize as u128);
        if bytes > max_result_bytes as u128 {
            return Err(SelectionError::TooLarge {
                elements,
                bytes,
                limit: max_result_bytes,
            });
        }
        let ndim = dims.len();
        // C-order strides of each dimension inside a block and of the block grid inside a chunk.
        let mut in_block = vec![1u64; ndim];
        let mut of_block = vec![1u64; ndim];
        let bcounts = grid.block_counts();
        for d in (0..ndim.saturating_sub(1)).rev() {
            in_block[d] = in_block[d + 1] * grid.blocks[d + 1];
            of_block[d] = of_block[d + 1] * bcounts[d + 1];
        }
        let block_items = grid.block_items();
        let mut parts = Vec::with_capacity(ndim);
        for (d, sel) in dims.iter().enumerate() {
            let mut list: Vec<DimPart> = Vec::new();
            // An empty selection touches no chunk, so no axis is walked: beside an empty axis a
            // long one would be, position by position (the result-size bound above sees 0
            // bytes): 2^40 positions for `0:0, :` of a (2, 2^40) array.
            let walked = if elements == 0 { 0 } else { sel.count };
            // Walked a segment at a time: the positions that fall in one block are `n`
            // positions `step` apart, whose offsets follow by arithmetic, kept as one run. A
            // read of N elements along an axis plans in O(blocks), not O(N) steps and bytes.
            let (chunk_len, block_len) = (grid.chunks[d], grid.blocks[d]);
            let mut k = 0u64;
            while k < walked {
                let pos = sel.position(k);
                let chunk = pos / chunk_len;
                let within = pos % chunk_len;
                let (b, w) = (within / block_len, within % block_len);
                // Positions left in this block, in the direction of the step (the chunk's
                // last block may be cut short by the chunk's end).
                let room = if sel.step > 0 {
                    ((b + 1) * block_len).min(chunk_len) - 1 - within
                } else {
                    w
                };
                let n = (room / sel.step.unsigned_abs() + 1).min(walked - k);
                let off = b * of_block[d] * block_items + w * in_block[d];
                if !matches!(list.last(), Some(p) if p.chunk == chunk) {
                    list.push(DimPart {
                        chunk,
                        out_start: k,
                        blocks: vec![],
                        runs: vec![],
                        max_src: 0,
                    });
                }
                let Some(p) = list.last_mut() else {
                    unreachable!("a part was pushed above")
                };
                let at = (k - p.out_start) as usize;
                if p.blocks.last() != Some(&b) {
                    p.blocks.push(b);
                }
                // Offsets of the segment's positions: off, off + delta, ...
                // (Wrapping: a step past the block leaves one position, whose delta is unused.)
                let delta = sel.step.wrapping_mul(in_block[d] as i64);
                let last_off = (off as i64 + (n as i64 - 1) * delta) as u64;
                p.max_src = p.max_src.max(off).max(last_off);
                // Joined to the previous run when the offsets go on with the same step (a
                // block that follows its neighbour in the decoded chunk, forwards or back).
                match p.runs.last_mut() {
                    Some(r)
                        if r.3 == delta
                            && r.0 + r.1 == at
                            && r.2 as i64 + r.1 as i64 * delta == off as i64 =>
                    {
                        r.1 += n as usize
                    }
                    _ => p.runs.push((at, n as usize, off, delta)),
                }
                k += n;
            }
            for p in &mut list {
                p.blocks.sort_unstable();
                p.blocks.dedup();
            }
            parts.push(list);
        }
        let mut out_strides = vec![1u64; ndim];
        for d in (0..ndim.saturating_sub(1)).rev() {
            out_strides[d] = out_strides[d + 1] * dims[d + 1].count;
        }
        Ok(Plan {
            grid: grid.clone(),
            dims: dims.to_vec(),
            result_shape: dims.iter().filter(|d| d.keep).map(|d| d.count).collect(),
            parts,
            out_strides,
            itemsize,
        })
    }

    /// Number of result elements: 0 when an axis selects none, whatever the others select
    /// (their product alone may pass 2^64); otherwise at most the result bytes
    /// [`Plan::new`] allowed.
    pub fn result_elements(&self) -> u64 {
        // Within u64 by Plan::new's bound on the result bytes.
        count_product(1, self.dims.iter().map(|d| d.count)).unwrap_or(u64::MAX)
    }

    /// Bytes per element.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }

    /// Number of result bytes.
    pub fn result_bytes(&self) -> usize {
        self.result_elements() as usize * self.itemsize
    }

    /// The touched chunks, in C order of their coordinates. Empty for an empty selection.
    pub fn chunks(&self) -> Vec<ChunkRef> {
        let ndim = self.parts.len();
        if self.parts.iter().any(|p| p.is_empty()) {
            return vec![];
        }
        if ndim == 0 {
            return vec![ChunkRef {
                coords: vec![],
                part: vec![],
            }];
        }
        let mut out = Vec::new();
        let mut idx = vec![0usize; ndim];
        loop {
            out.push(ChunkRef {
                coords: idx
                    .iter()
                    .enumerate()
                    .map(|(d, &i)| self.parts[d][i].chunk)
                    .collect(),
                part: idx.clone(),
            });
            let mut d = ndim;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.parts[d].len() {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    /// The blocks of a chunk that the selection touches, as block-grid coordinates in C order.
    pub fn blocks_of(&self, chunk: &ChunkRef) -> Vec<Vec<u64>> {
        let lists: Vec<&Vec<u64>> = chunk
            .part
            .iter()
            .enumerate()
            .map(|(d, &i)| &self.parts[d][i].blocks)
            .collect();
        let mut out = vec![vec![]];
        for l in lists {
            let mut next = Vec::with_capacity(out.len() * l.len());
            for prefix in &out {
                for &b in l {
                    let mut v = prefix.clone();
                    v.push(b);
                    next.push(v);
                }
            }
            out = next;
        }
        out
    }

    /// Copies the selected elements of one decoded chunk (`src`, laid out as [`Grid`] says)
    /// into `dst`, the C-ordered result buffer of [`Plan::result_bytes`] bytes.
    ///
    /// # Errors
    /// [`SelectionError::ShortChunk`] when `src` is shorter than the layout needs.
    pub fn copy_chunk(
        &self,
        chunk: &ChunkRef,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), SelectionError> {
        let isz = self.itemsize;
        let needed = (self.max_src(chunk) as usize + 1) * isz;
        if src.len() < needed {
            return Err(SelectionError::ShortChunk {
                got: src.len(),
                needed,
            });
        }
        self.for_each_run(chunk, dst, |dst, s, t, len, step| {
            if step == 1 || len == 1 {
                dst[t * isz..(t + len) * isz].copy_from_slice(&src[s * isz..(s + len) * isz]);
            } else {
                // Within the chunk: the run's offsets are at most max_src (checked above).
                for (j, e) in dst[t * isz..(t + len) * isz]
                    .chunks_exact_mut(isz)
                    .enumerate()
                {
                    let at = (s as i64 + j as i64 * step) as usize * isz;
                    e.copy_from_slice(&src[at..at + isz]);
                }
            }
        })
    }

    /// Writes `value` (the bytes of one element) into every result element that falls in
    /// `chunk`: a chunk that is not stored (a fill value) without a decoded-chunk buffer.
    ///
    /// # Errors
    /// [`SelectionError::ShortChunk`] when `value` is not one element or `dst` is shorter
    /// than [`Plan::result_bytes`].
    pub fn fill_chunk(
        &self,
        chunk: &ChunkRef,
        value: &[u8],
        dst: &mut [u8],
    ) -> Result<(), SelectionError> {
        let isz = self.itemsize;
        if value.len() != isz {
            return Err(SelectionError::ShortChunk {
                got: value.len(),
                needed: isz,
            });
        }
        // A value of one repeated byte (zero, most often) is a memset per run.
        let byte = value.iter().all(|&b| b == value[0]).then_some(value[0]);
        self.for_each_run(chunk, dst, |dst, _, t, len, _| {
            let run = &mut dst[t * isz..(t + len) * isz];
            match byte {
                Some(b) => run.fill(b),
                None => {
                    for e in run.chunks_exact_mut(isz) {
                        e.copy_from_slice(value);
                    }
                }
            }
        })
    }

    /// The largest element offset inside the decoded chunk that `chunk`'s selection reads.
    fn max_src(&self, chunk: &ChunkRef) -> u64 {
        chunk
            .part
            .iter()
            .enumerate()
            .map(|(d, &i)| self.parts[d][i].max_src)
            .sum()
    }

    /// The runs `chunk` contributes to the result, ordered by the piece of `piece` elements of
    /// the decoded chunk that each starts in (in result order within a piece), so that a
    /// chunk decoded a piece at a time can be copied piece by piece: a counting sort, linear
    /// in the runs. `None` when there are more than `max` runs, a run's offsets are not
    /// consecutive (a strided or reversed last axis), or `piece` is 0.
    pub fn runs_by_piece(&self, chunk: &ChunkRef, piece: usize, max: usize) -> Option<Vec<Run>> {
        if piece == 0 {
            return None;
        }
        let mut runs = Vec::new();
        let all = self.walk_runs(chunk, |src, dst, len, step| {
            runs.push(Run { src, dst, len });
            (step == 1 || len == 1) && runs.len() <= max
        });
        if !all {
            return None;
        }
        let pieces = runs.iter().map(|r| r.src / piece + 1).max().unwrap_or(0);
        // starts[p]: where the runs starting in piece p go in the sorted list.
        let mut starts = vec![0usize; pieces + 1];
        for r in &runs {
            starts[r.src / piece + 1] += 1;
        }
        for p in 1..starts.len() {
            starts[p] += starts[p - 1];
        }
        let mut sorted = vec![
            Run {
                src: 0,
                dst: 0,
                len: 0
            };
            runs.len()
        ];
        for r in runs {
            let at = &mut starts[r.src / piece];
            sorted[*at] = r;
            *at += 1;
        }
        Some(sorted)
    }

    /// Calls `f(dst, src_element, dst_element, len, step)` for each run of `len` consecutive
    /// result elements that `chunk` contributes: from element offsets `src_element`,
    /// `src_element + step`, ... of the decoded chunk to element offset `dst_element` on of
    /// `dst`. Checks `dst`'s length once, so `f` may index without bounds failures.
    fn for_each_run(
        &self,
        chunk: &ChunkRef,
        dst: &mut [u8],
        mut f: impl FnMut(&mut [u8], usize, usize, usize, i64),
    ) -> Result<(), SelectionError> {
        if dst.len() < self.result_bytes() {
            return Err(SelectionError::ShortChunk {
                got: dst.len(),
                needed: self.result_bytes(),
            });
        }
        self.walk_runs(chunk, |s, t, len, step| {
            f(dst, s, t, len, step);
            true
        });
        Ok(())
    }

    /// Calls `f(src_element, dst_element, len, step)` for each run of [`Plan::for_each_run`],
    /// in result order, until `f` returns `false`. Returns whether every run was visited.
    fn walk_runs(
        &self,
        chunk: &ChunkRef,
        mut f: impl FnMut(usize, usize, usize, i64) -> bool,
    ) -> bool {
        let parts: Vec<&DimPart> = chunk
            .part
            .iter()
            .enumerate()
            .map(|(d, &i)| &self.parts[d][i])
            .collect();
        let ndim = parts.len();
        if ndim == 0 {
            return f(0, 0, 1, 1);
        }
        let last = parts[ndim - 1];
        // Per outer dimension, where the walk is: a run and a position within it.
        let mut at = vec![(0usize, 0usize); ndim - 1];
        // A run of consecutive offsets waiting for the next, which it joins when both its
        // source and destination go on (full rows of a block, of the result): one copy.
        let mut held: Option<(usize, usize, usize)> = None;
        loop {
            let mut s_off = 0u64;
            let mut d_off = 0u64;
            for d in 0..ndim - 1 {
                let (r, j) = at[d];
                let (k, _, off, step) = parts[d].runs[r];
                s_off = s_off.wrapping_add((off as i64 + j as i64 * step) as u64);
                d_off += (parts[d].out_start + (k + j) as u64) * self.out_strides[d];
            }
            d_off += last.out_start;
            for &(k, len, off, step) in &last.runs {
                let (s, t) = ((s_off + off) as usize, (d_off + k as u64) as usize);
                if step != 1 && len > 1 {
                    if let Some((hs, ht, hl)) = held.take() {
                        if !f(hs, ht, hl, 1) {
                            return false;
                        }
                    }
                    if !f(s, t, len, step) {
                        return false;
                    }
                    continue;
                }
                match &mut held {
                    Some((hs, ht, hl)) if *hs + *hl == s && *ht + *hl == t => *hl += len,
                    _ => {
                        if let Some((hs, ht, hl)) = held.replace((s, t, len)) {
                            if !f(hs, ht, hl, 1) {
                                return false;
                            }
                        }
                    }
                }
            }
            let mut d = ndim - 1;
            loop {
                if d == 0 {
                    return match held {
                        Some((hs, ht, hl)) => f(hs, ht, hl, 1),
                        None => true,
                    };
                }
                d -= 1;
                let (r, j) = &mut at[d];
                *j += 1;
                if *j == parts[d].runs[*r].1 {
                    *j = 0;
                    *r += 1;
                }
                if *r < parts[d].runs.len() {
                    break;
                }
                at[d] = (0, 0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(d: &DimSelection) -> Vec<u64> {
        (0..d.count).map(|k| d.position(k)).collect()
    }

    #[test]
    fn fill_chunk_writes_what_a_full_fill_chunk_copies() {
        // 10x7 array in 4x3 chunks with 2x2 blocks; a strided, reversed selection.
        let grid = Grid::new(vec![10, 7], vec![4, 3], vec![2, 2]).unwrap();
        let sel = Selection::parse("8:0:-3, 1:7:2").unwrap();
        let dims = sel.resolve(&grid.shape).unwrap();
        let plan = Plan::new(&grid, &dims, 2, 1 << 20).unwrap();
        let items = grid.decoded_chunk_items().unwrap() as usize;
        // Two bytes, and one byte repeated (written by runs), over a result not zeroed.
        for value in [[0xAB, 0xCD], [0x5A, 0x5A]] {
            let full: Vec<u8> = value.repeat(items);
            for c in plan.chunks() {
                let mut want = vec![0x11u8; plan.result_bytes()];
                let mut got = vec![0x11u8; plan.result_bytes()];
                plan.copy_chunk(&c, &full, &mut want).unwrap();
                plan.fill_chunk(&c, &value, &mut got).unwrap();
                assert_eq!(got, want, "chunk {:?}, value {value:?}", c.coords);
            }
        }
        let c = &plan.chunks()[0];
        let mut out = vec![0u8; plan.result_bytes()];
        assert!(plan.fill_chunk(c, &[1], &mut out).is_err());
    }

    #[test]
    fn runs_by_piece_copy_what_copy_chunk_copies() {
        // 3-D, edge chunks, blocks not dividing chunks along the last axis; selections with
        // steps, reversal and an integer axis.
        let grid = Grid::new(vec![9, 10, 23], vec![4, 6, 10], vec![2, 3, 4]).unwrap();
        let items = grid.decoded_chunk_items().unwrap() as usize;
        let src: Vec<u8> = (0..items as u32 * 2).map(|v| (v * 7 % 251) as u8).collect();
        for text in [
            "...",
            "1:8, ::-1, 3:21",
            "::2, 4, ::3",
            "8:0:-3, 1:10, 22:2:-1",
            "::-3, 3:9, 2:19",
        ] {
            let dims = Selection::parse(text)
                .unwrap()
                .resolve(&grid.shape)
                .unwrap();
            let plan = Plan::new(&grid, &dims, 2, 1 << 20).unwrap();
            for c in plan.chunks() {
                let mut want = vec![0u8; plan.result_bytes()];
                plan.copy_chunk(&c, &src, &mut want).unwrap();
                // A strided or reversed last axis has runs of offsets that are not
                // consecutive (unless each holds one element): refused.
                let Some(runs) = plan.runs_by_piece(&c, 5, usize::MAX) else {
                    assert_ne!(dims[2].step, 1, "{text}");
                    continue;
                };
                assert!(
                    runs.windows(2).all(|w| w[0].src / 5 <= w[1].src / 5),
                    "{text}"
                );
                let mut got = vec![0u8; plan.result_bytes()];
                for r in &runs {
                    got[r.dst * 2..(r.dst + r.len) * 2]
                        .copy_from_slice(&src[r.src * 2..(r.src + r.len) * 2]);
                }
                assert_eq!(got, want, "{text}, chunk {:?}", c.coords);
                if runs.len() > 1 {
                    assert!(plan.runs_by_piece(&c, 5, runs.len() - 1).is_none());
                }
            }
        }
    }

    #[test]
    fn parse_forms() {
        let s = Selection::parse("[0, 1:10:2, ..., -1, ::-1, :]").unwrap();
        assert_eq!(
            s.items,
            vec![
                Index::Int(0),
                Index::Slice {
                    start: Some(1),
                    stop: Some(10),
                    step: Some(2)
                },
                Index::Ellipsis,
                Index::Int(-1),
                Index::Slice {
                    start: None,
                    stop: None,
                    step: Some(-1)
                },
                Index::Slice {
                    start: None,
                    stop: None,
                    step: None
                },
            ]
        );
        assert_eq!(Selection::parse("").unwrap(), Selection::all());
        assert_eq!(Selection::parse(" () ").unwrap(), Selection::all());
        // A 0-d array: everything is its one element, an integer index is one too many.
        assert_eq!(Selection::all().resolve(&[]).unwrap(), vec![]);
        assert!(Selection::parse("0").unwrap().resolve(&[]).is_err());
        assert!(Selection::parse("1:2:3:4").is_err());
        assert!(Selection::parse("a").is_err());
        assert!(Selection::parse("...,...").is_err());
        assert_eq!(Selection::parse("5,").unwrap().items, vec![Index::Int(5)]);
        for bad in ["0:10,,3", ",5", "5,,", ","] {
            assert!(Selection::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slices_follow_python() {
        // Expected values are Python's list(range(10))[slice] results.
        let cases: &[(&str, Vec<u64>)] = &[
            (":", (0..10).collect()),
            ("2:5", vec![2, 3, 4]),
            ("::3", vec![0, 3, 6, 9]),
            ("::-1", (0..10).rev().collect()),
            ("-3:", vec![7, 8, 9]),
            ("8:2:-2", vec![8, 6, 4]),
            ("20:", vec![]),
            (":-20", vec![]),
            ("-20:3", vec![0, 1, 2]),
            ("5:5", vec![]),
            ("9:-11:-4", vec![9, 5, 1]),
        ];
        for (text, want) in cases {
            let d = Selection::parse(text).unwrap().resolve(&[10]).unwrap();
            assert_eq!(positions(&d[0]), *want, "{text}");
        }
        assert!(Selection::parse("10").unwrap().resolve(&[10]).is_err());
        assert_eq!(
            Selection::parse("-10").unwrap().resolve(&[10]).unwrap()[0].start,
            0
        );
        assert!(Selection::parse("::0").unwrap().resolve(&[10]).is_err());
        assert!(Selection::parse("0,0").unwrap().resolve(&[10]).is_err());
    }

    #[test]
    fn ellipsis_expands() {
        let d = Selection::parse("..., 3")
            .unwrap()
            .resolve(&[4, 5, 6])
            .unwrap();
        assert_eq!(d[0].count, 4);
        assert_eq!(d[1].count, 5);
        assert_eq!((d[2].start, d[2].keep), (3, false));
    }

    /// Reference: the element at global position `p` of a `shape` array whose value is its
    /// C-order linear index, laid into chunks and blocks per the grid.
    fn decoded_chunk(grid: &Grid, coords: &[u64]) -> Vec<u8> {
        let n = grid.decoded_chunk_items().unwrap() as usize;
        let mut out = vec![0u32; n];
        let nd = grid.shape.len();
        let bc = grid.block_counts();
        for (lin, slot) in out.iter_mut().enumerate() {
            // invert the layout: block index then within-block index
            let bi = lin as u64 / grid.block_items();
            let wi = lin as u64 % grid.block_items();
            let mut bcoord = vec![0u64; nd];
            let mut wcoord = vec![0u64; nd];
            let (mut b, mut w) = (bi, wi);
            for d in (0..nd).rev() {
                bcoord[d] = b % bc[d];
                b /= bc[d];
                wcoord[d] = w % grid.blocks[d];
                w /= grid.blocks[d];
            }
            let mut g = 0u64;
            let mut inside = true;
            for d in 0..nd {
                let within = bcoord[d] * grid.blocks[d] + wcoord[d];
                let p = coords[d] * grid.chunks[d] + within;
                if within >= grid.chunks[d] || p >= grid.shape[d] {
                    inside = false;
                }
                g = g * grid.shape[d] + p.min(grid.shape[d] - 1);
            }
            *slot = if inside { g as u32 } else { u32::MAX };
        }
        out.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn read(grid: &Grid, sel: &str) -> (Vec<u64>, Vec<u32>) {
        let dims = Selection::parse(sel).unwrap().resolve(&grid.shape).unwrap();
        let plan = Plan::new(grid, &dims, 4, u64::MAX).unwrap();
        let mut dst = vec![0u8; plan.result_bytes()];
        for c in plan.chunks() {
            let src = decoded_chunk(grid, &c.coords);
            plan.copy_chunk(&c, &src, &mut dst).unwrap();
        }
        let vals = dst
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        (plan.result_shape.clone(), vals)
    }

    /// Expected values computed directly from the selection: value = C-linear global index.
    fn expected(shape: &[u64], sel: &str) -> Vec<u32> {
        let dims = Selection::parse(sel).unwrap().resolve(shape).unwrap();
        let total: u64 = dims.iter().map(|d| d.count).product();
        let mut out = Vec::new();
        for mut lin in 0..total {
            let mut g = 0u64;
            let mut ks = vec![0u64; dims.len()];
            for d in (0..dims.len()).rev() {
                ks[d] = lin % dims[d].count;
                lin /= dims[d].count;
            }
            for d in 0..dims.len() {
                g = g * shape[d] + dims[d].position(ks[d]);
            }
            out.push(g as u32);
        }
        out
    }

    #[test]
    fn copies_match_direct_indexing() {
        let grids = [
            Grid::new(vec![10, 13], vec![4, 5], vec![4, 5]).unwrap(),
            Grid::new(vec![10, 13], vec![4, 5], vec![2, 3]).unwrap(),
            Grid::new(vec![7, 9, 11], vec![3, 4, 5], vec![2, 2, 3]).unwrap(),
            Grid::new(vec![17], vec![5], vec![2]).unwrap(),
            Grid::new(vec![3, 4, 5, 6], vec![2, 3, 2, 4], vec![1, 2, 2, 3]).unwrap(),
            // Blocks not dividing chunks (each chunk's last block cut short), 1-D and 2-D.
            Grid::new(vec![23], vec![7], vec![3]).unwrap(),
            Grid::new(vec![11, 23], vec![5, 7], vec![2, 3]).unwrap(),
            // Blocks spanning the chunk's trailing axis: runs join across blocks.
            Grid::new(vec![9, 8], vec![6, 4], vec![2, 4]).unwrap(),
        ];
        let sels = [
            "...",
            "1",
            "::2",
            "::-1",
            "-1, 2:9:3",
            "..., 3:",
            "1:, ::-3",
            "0, 0",
            "5:2",
            "..., 3:20:4",
            "..., ::-5",
            "..., 20:2:-1",
            "..., ::7",
            "..., ::100",
            "::-2, 1:12:5",
            "..., 2:21",
        ];
        for g in &grids {
            for s in sels {
                let Ok(dims) = Selection::parse(s).unwrap().resolve(&g.shape) else {
                    continue;
                };
                let _ = dims;
                let (shape, got) = read(g, s);
                assert_eq!(got, expected(&g.shape, s), "grid {g:?} sel {s}");
                assert_eq!(shape.iter().product::<u64>() as usize, got.len());
            }
        }
    }

    #[test]
    fn blocks_and_largest_offsets_as_walked_position_by_position() {
        let g = Grid::new(vec![11, 23], vec![5, 7], vec![2, 3]).unwrap();
        for text in ["...", "1:10:3, ::-2", "::-4, 5:6", "3, 20:0:-7"] {
            let dims = Selection::parse(text).unwrap().resolve(&g.shape).unwrap();
            let plan = Plan::new(&g, &dims, 4, u64::MAX).unwrap();
            for (d, sel) in dims.iter().enumerate() {
                for p in &plan.parts[d] {
                    let (mut blocks, mut max) = (vec![], 0);
                    let of_block = if d == 0 { g.block_counts()[1] } else { 1 };
                    let in_block = if d == 0 { g.blocks[1] } else { 1 };
                    for k in 0..sel.count {
                        let pos = sel.position(k);
                        if pos / g.chunks[d] == p.chunk {
                            let within = pos % g.chunks[d];
                            let (b, w) = (within / g.blocks[d], within % g.blocks[d]);
                            blocks.push(b);
                            max = max.max(b * of_block * g.block_items() + w * in_block);
                        }
                    }
                    blocks.sort_unstable();
                    blocks.dedup();
                    assert_eq!(p.blocks, blocks, "{text}, axis {d}, chunk {}", p.chunk);
                    assert_eq!(p.max_src, max, "{text}, axis {d}, chunk {}", p.chunk);
                }
            }
        }
    }

    #[test]
    fn a_tall_thin_array_plans_and_copies_by_chunk_not_by_row() {
        // 2^26 rows of 3 float32 in chunks of 2^20 rows, blocks of 2^14: one run per chunk
        // along the rows (8 bytes per row listed before), and one copy per chunk: the rows of
        // a block, and the blocks, follow each other in the decoded chunk and in the result.
        let g = Grid::new(vec![1 << 26, 3], vec![1 << 20, 3], vec![1 << 14, 3]).unwrap();
        let dims = Selection::parse("...").unwrap().resolve(&g.shape).unwrap();
        let plan = Plan::new(&g, &dims, 4, u64::MAX).unwrap();
        assert_eq!(plan.parts[0].len(), 64);
        assert!(plan.parts[0]
            .iter()
            .all(|p| p.runs == vec![(0, 1 << 20, 0, 3)]));
        for c in plan.chunks().iter().take(3) {
            let mut copies = vec![];
            plan.walk_runs(c, |s, t, len, step| {
                copies.push((s, t, len, step));
                true
            });
            let t0 = c.coords[0] as usize * (3 << 20);
            assert_eq!(copies, vec![(0, t0, 3 << 20, 1)]);
        }
        // Every other column: a strided run of two per row.
        let dims = Selection::parse("0:4, ::2")
            .unwrap()
            .resolve(&g.shape)
            .unwrap();
        let plan = Plan::new(&g, &dims, 4, u64::MAX).unwrap();
        let mut copies = vec![];
        plan.walk_runs(&plan.chunks()[0], |s, t, len, step| {
            copies.push((s, t, len, step));
            true
        });
        let rows: Vec<_> = (0..4).map(|r| (3 * r, 2 * r, 2, 2)).collect();
        assert_eq!(copies, rows);
    }

    #[test]
    fn a_long_last_axis_plans_by_block_not_by_position() {
        // 2^30 one-byte elements in chunks of 2^24 and blocks of 2^16: one run per chunk and
        // no offset listed per position (8 GiB of them before), for a whole or a reversed
        // read of a part of it.
        let g = Grid::new(vec![1 << 30], vec![1 << 24], vec![1 << 16]).unwrap();
        let dims = Selection::parse("...").unwrap().resolve(&g.shape).unwrap();
        let plan = Plan::new(&g, &dims, 1, u64::MAX).unwrap();
        assert_eq!(plan.parts[0].len(), 64);
        for p in &plan.parts[0] {
            assert_eq!(p.runs, vec![(0, 1 << 24, 0, 1)]);
            assert_eq!(p.blocks.len(), 256);
        }
        // Reversed or strided: the blocks' runs join too (steps of -1 or 3), one per chunk.
        for (text, step) in [("::-1", -1), ("5::3", 3)] {
            let dims = Selection::parse(text).unwrap().resolve(&g.shape).unwrap();
            let plan = Plan::new(&g, &dims, 1, u64::MAX).unwrap();
            assert_eq!(plan.parts[0].len(), 64, "{text}");
            for p in &plan.parts[0] {
                assert_eq!(
                    p.runs.len(),
                    1,
                    "{text}: {:?}",
                    &p.runs[..2.min(p.runs.len())]
                );
                assert_eq!(p.runs[0].3, step, "{text}");
            }
        }
        // A 2-D array of long rows: rows listed, columns by runs (one per chunk: blocks of one
        // row follow each other in the decoded chunk, so their runs join).
        let g = Grid::new(vec![4, 1 << 28], vec![2, 1 << 24], vec![1, 1 << 20]).unwrap();
        let dims = Selection::parse("1:3, 5:")
            .unwrap()
            .resolve(&g.shape)
            .unwrap();
        let plan = Plan::new(&g, &dims, 1, u64::MAX).unwrap();
        assert_eq!(plan.parts[0].iter().map(|p| p.runs[0].1).sum::<usize>(), 2);
        assert_eq!(
            plan.parts[1].iter().map(|p| p.runs.len()).sum::<usize>(),
            16
        );
    }

    #[test]
    fn blocks_touched() {
        let g = Grid::new(vec![8, 8], vec![8, 8], vec![2, 4]).unwrap();
        let dims = Selection::parse("3, 5:")
            .unwrap()
            .resolve(&g.shape)
            .unwrap();
        let plan = Plan::new(&g, &dims, 4, u64::MAX).unwrap();
        let c = &plan.chunks()[0];
        assert_eq!(plan.blocks_of(c), vec![vec![1, 1]]);
    }

    #[test]
    fn too_large_and_short_chunk() {
        let g = Grid::new(vec![1 << 40, 1 << 20], vec![1024, 1024], vec![1024, 1024]).unwrap();
        let dims = Selection::all().resolve(&g.shape).unwrap();
        assert!(matches!(
            Plan::new(&g, &dims, 8, 1 << 30),
            Err(SelectionError::TooLarge { .. })
        ));
        let g = Grid::new(vec![4], vec![4], vec![4]).unwrap();
        let dims = Selection::all().resolve(&g.shape).unwrap();
        let plan = Plan::new(&g, &dims, 4, 1 << 30).unwrap();
        let mut dst = vec![0u8; 16];
        let c = &plan.chunks()[0];
        assert!(plan.copy_chunk(c, &[0u8; 8], &mut dst).is_err());
        assert!(Grid::new(vec![4], vec![0], vec![1]).is_err());
    }

    /// Counts whose product passes 2^128 (it overflowed: a panic in debug builds, and in
    /// release builds a wrapped count of 0 that passed the size limit), and an axis of none
    /// beside axes whose product passes 2^64 (0 elements; `result_elements` overflowed).
    #[test]
    fn products_past_2_pow_128_and_empty_axes() {
        let big = 1u64 << 40;
        let g = Grid::new(vec![big; 4], vec![1 << 10; 4], vec![1 << 10; 4]).unwrap();
        let dims = Selection::all().resolve(&g.shape).unwrap();
        match Plan::new(&g, &dims, 2, u64::MAX) {
            Err(SelectionError::TooLarge {
                elements, bytes, ..
            }) => assert_eq!((elements, bytes), (u128::MAX, u128::MAX)),
            other => panic!("{other:?}"),
        }
        let g = Grid::new(vec![big, big, big, big, 0], vec![1; 5], vec![1; 5]).unwrap();
        let dims = Selection::all().resolve(&g.shape).unwrap();
        let plan = Plan::new(&g, &dims, 2, 0).unwrap();
        assert_eq!((plan.result_elements(), plan.result_bytes()), (0, 0));
        assert!(plan.chunks().is_empty());
        assert_eq!(g.nchunks(), Some(0));
    }
}
