//! The `b2nd` metalayer: shape, chunk shape, block shape and dtype of an n-dimensional Blosc2
//! array (C-Blosc2 `b2nd.c`, `b2nd_serialize_meta` / `b2nd_deserialize_meta`).
//!
//! Content: msgpack `[version, ndim, shape (int64 x ndim), chunkshape (int32 x ndim),
//! blockshape (int32 x ndim), dtype_format, dtype]`; `dtype_format` 0 means `dtype` is a numpy
//! dtype string such as `"<i8"`. Up to 16 dimensions (`B2ND_MAX_DIM`).

use super::frame::{FrameError, FrameHeader};
use super::msgpack::Cursor;

/// Maximum number of dimensions (`B2ND_MAX_DIM`).
pub const MAX_DIM: usize = 16;

/// Longest dtype string accepted, in bytes (numpy structured dtypes can be long; this bounds it).
const MAX_DTYPE_LEN: usize = 64 << 10;

/// The parsed `b2nd` metalayer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct B2ndMeta {
    /// Metalayer version (0 as written by C-Blosc2 3.x).
    pub version: u8,
    /// Array shape in elements, one entry per dimension.
    pub shape: Vec<u64>,
    /// Chunk shape in elements; every entry is positive.
    pub chunkshape: Vec<u64>,
    /// Block shape in elements; every entry is positive and at most the chunk's.
    pub blockshape: Vec<u64>,
    /// The dtype description (a numpy dtype string when `dtype_format` is 0).
    pub dtype: String,
    /// How `dtype` is written: 0 = numpy dtype string.
    pub dtype_format: u8,
}

fn range_err(field: &'static str, value: impl Into<i128>, rule: &'static str) -> FrameError {
    FrameError::OutOfRange {
        field,
        value: value.into(),
        rule,
    }
}

impl B2ndMeta {
    /// Parses the content of the `b2nd` metalayer.
    ///
    /// Errors: [`FrameError::Malformed`] (msgpack structure), [`FrameError::OutOfRange`] (ndim
    /// above 16, negative extents, a zero chunk or block extent, a block larger than the chunk,
    /// an element count that overflows `u64`), [`FrameError::Unsupported`] (a version other than
    /// 0).
    pub fn parse(metalayer: &[u8]) -> Result<B2ndMeta, FrameError> {
        let mut c = Cursor::new(metalayer, 0);
        if c.array_len("b2nd array")? != 7 {
            return Err(FrameError::Malformed {
                field: "b2nd array",
                offset: 0,
            });
        }
        let version = c.int("b2nd version")?;
        if version != 0 {
            return Err(FrameError::Unsupported {
                what: "b2nd metalayer version",
                value: version,
            });
        }
        let ndim = c.int("b2nd ndim")?;
        if !(0..=MAX_DIM as i64).contains(&ndim) {
            return Err(range_err("b2nd ndim", ndim, "0..=16"));
        }
        let ndim = ndim as usize;
        let dims = |c: &mut Cursor<'_>, field: &'static str, min: i64, max: i64| {
            if c.array_len(field)? as usize != ndim {
                return Err(FrameError::Malformed {
                    field,
                    offset: c.pos(),
                });
            }
            let mut v = Vec::with_capacity(ndim);
            for _ in 0..ndim {
                let x = c.int(field)?;
                if x < min || x > max {
                    return Err(range_err(field, x, "extent outside the format's range"));
                }
                v.push(x as u64);
            }
            Ok(v)
        };
        let shape = dims(&mut c, "b2nd shape", 0, i64::MAX)?;
        // python-blosc2 writes an empty array (a zero extent) with chunk and block shapes of
        // zeros; any other array has chunk and block extents of at least 1.
        let chunkshape = dims(&mut c, "b2nd chunkshape", 0, i32::MAX.into())?;
        let blockshape = dims(&mut c, "b2nd blockshape", 0, i32::MAX.into())?;
        let empty = shape.contains(&0);
        if !empty && chunkshape.iter().chain(&blockshape).any(|&x| x == 0) {
            return Err(range_err(
                "b2nd chunkshape",
                0,
                "a zero chunk or block extent in an array that is not empty",
            ));
        }
        let dtype_format = c.int("b2nd dtype format")?;
        if !(0..=255).contains(&dtype_format) {
            return Err(range_err("b2nd dtype format", dtype_format, "0..=255"));
        }
        let dtype = c.str("b2nd dtype")?;
        if dtype.len() > MAX_DTYPE_LEN {
            return Err(range_err(
                "b2nd dtype length",
                dtype.len() as u64,
                "at most 64 KiB",
            ));
        }
        for (b, ch) in blockshape.iter().zip(&chunkshape) {
            if b > ch {
                return Err(range_err("b2nd blockshape", *b, "at most the chunk extent"));
            }
        }
        let meta = B2ndMeta {
            version: version as u8,
            shape,
            chunkshape,
            blockshape,
            dtype: dtype.to_owned(),
            dtype_format: dtype_format as u8,
        };
        meta.checked_product(&meta.shape, "b2nd shape element count")?;
        meta.checked_product(&meta.ext_chunkshape(), "b2nd chunk element count")?;
        Ok(meta)
    }

    fn checked_product(&self, v: &[u64], field: &'static str) -> Result<u64, FrameError> {
        v.iter().try_fold(1u64, |acc, &x| {
            acc.checked_mul(x)
                .ok_or_else(|| range_err(field, x, "product overflows u64"))
        })
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements in the array (checked at parse time not to overflow).
    pub fn len(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of elements in one (full, padded) chunk.
    pub fn chunk_len(&self) -> u64 {
        self.chunkshape.iter().product()
    }

    /// Number of elements in one block.
    pub fn block_len(&self) -> u64 {
        self.blockshape.iter().product()
    }

    /// Number of chunks along each dimension: `ceil(shape / chunkshape)`.
    pub fn chunk_grid(&self) -> Vec<u64> {
        self.shape
            .iter()
            .zip(&self.chunkshape)
            // An empty array's zero chunk extent: no chunk.
            .map(|(s, c)| if *c == 0 { 0 } else { s.div_ceil(*c) })
            .collect()
    }

    /// The chunk shape rounded up to whole blocks (`extchunkshape` in `b2nd.c`). A stored chunk
    /// holds `block_grid` blocks in C order, each of `blockshape` elements in C order, so its
    /// uncompressed size is `ext_chunk_len() x itemsize` bytes; elements past `chunkshape` (and
    /// past `shape` in edge chunks) are padding.
    pub fn ext_chunkshape(&self) -> Vec<u64> {
        self.chunkshape
            .iter()
            .zip(&self.blockshape)
            // A zero block extent (an empty array's) pads nothing.
            .map(|(c, b)| if *b == 0 { *c } else { c.div_ceil(*b) * b })
            .collect()
    }

    /// Number of elements in one stored chunk, padding included (product of
    /// [`B2ndMeta::ext_chunkshape`]).
    pub fn ext_chunk_len(&self) -> u64 {
        self.ext_chunkshape().iter().product()
    }

    /// Number of blocks along each dimension of a chunk: `ceil(chunkshape / blockshape)`.
    pub fn block_grid(&self) -> Vec<u64> {
        self.chunkshape
            .iter()
            .zip(&self.blockshape)
            // An empty array's zero block extent: no block.
            .map(|(c, b)| if *b == 0 { 0 } else { c.div_ceil(*b) })
            .collect()
    }

    /// Total number of chunks (product of [`B2ndMeta::chunk_grid`]), `None` on overflow.
    pub fn nchunks(&self) -> Option<u64> {
        self.chunk_grid()
            .iter()
            .try_fold(1u64, |acc, &x| acc.checked_mul(x))
    }

    /// Checks the metalayer against its frame header: the chunk size in bytes must be
    /// `ext_chunk_len x typesize` and the header's chunk count the grid's (every b2nd chunk is
    /// stored padded to whole blocks of the full chunk shape, `b2nd.c`).
    pub fn check_frame(&self, header: &FrameHeader) -> Result<(), FrameError> {
        let chunk_bytes = self
            .ext_chunk_len()
            .checked_mul(header.typesize as u64)
            .ok_or_else(|| range_err("b2nd chunk bytes", self.ext_chunk_len(), "overflows u64"))?;
        if chunk_bytes != header.chunksize as u64 {
            return Err(range_err(
                "frame chunksize",
                header.chunksize as u64,
                "equal to padded chunk elements x typesize",
            ));
        }
        let n = self.nchunks().unwrap_or(u64::MAX);
        if n != header.nchunks() as u64 {
            return Err(range_err(
                "frame nchunks",
                header.nchunks() as u64,
                "equal to the b2nd chunk grid",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metalayer C-Blosc2 writes for shape (100, 70), chunks (40, 30), blocks (20, 10), "<i8".
    fn sample() -> Vec<u8> {
        let mut v = vec![0x97, 0x00, 0x02, 0x92];
        for s in [100i64, 70] {
            v.push(0xd3);
            v.extend_from_slice(&s.to_be_bytes());
        }
        for dims in [[40i32, 30], [20, 10]] {
            v.push(0x92);
            for d in dims {
                v.push(0xd2);
                v.extend_from_slice(&d.to_be_bytes());
            }
        }
        v.extend_from_slice(&[0x00, 0xdb, 0, 0, 0, 3, b'<', b'i', b'8']);
        v
    }

    #[test]
    fn parses_c_blosc2_layout() {
        let m = B2ndMeta::parse(&sample()).unwrap();
        assert_eq!(m.version, 0);
        assert_eq!(m.shape, vec![100, 70]);
        assert_eq!(m.chunkshape, vec![40, 30]);
        assert_eq!(m.blockshape, vec![20, 10]);
        assert_eq!(m.dtype, "<i8");
        assert_eq!(m.dtype_format, 0);
        assert_eq!(m.chunk_grid(), vec![3, 3]);
        assert_eq!(m.block_grid(), vec![2, 3]);
        assert_eq!(m.ext_chunkshape(), vec![40, 30]);
        let odd = B2ndMeta {
            blockshape: vec![15, 7],
            ..m.clone()
        };
        // 40 -> 3 blocks of 15 = 45; 30 -> 5 blocks of 7 = 35 (the layout python-blosc2 writes:
        // chunks (16, 12), blocks (5, 7) give a chunksize of 20 x 14 items).
        assert_eq!(odd.ext_chunkshape(), vec![45, 35]);
        assert_eq!(odd.ext_chunk_len(), 45 * 35);
        assert_eq!(m.nchunks(), Some(9));
        assert_eq!(m.len(), 7000);
    }

    #[test]
    fn an_empty_array_has_zero_extents_and_no_chunk_or_block() {
        let mut m = B2ndMeta::parse(&sample()).unwrap();
        m.shape = vec![0, 70];
        m.chunkshape = vec![0, 0];
        m.blockshape = vec![0, 0];
        assert_eq!(m.chunk_grid(), vec![0, 0]);
        assert_eq!(m.block_grid(), vec![0, 0]);
        assert_eq!(m.ext_chunkshape(), vec![0, 0]);
    }

    #[test]
    fn rejects_bad_values() {
        // chunk extent zero
        let mut v = sample();
        v[24..28].copy_from_slice(&0i32.to_be_bytes());
        assert!(matches!(
            B2ndMeta::parse(&v),
            Err(FrameError::OutOfRange {
                field: "b2nd chunkshape",
                ..
            })
        ));
        // ndim 17
        let mut v = sample();
        v[2] = 17;
        assert!(matches!(
            B2ndMeta::parse(&v),
            Err(FrameError::OutOfRange {
                field: "b2nd ndim",
                ..
            })
        ));
        // block larger than chunk
        let mut v = sample();
        v[35..39].copy_from_slice(&50i32.to_be_bytes());
        assert!(matches!(
            B2ndMeta::parse(&v),
            Err(FrameError::OutOfRange {
                field: "b2nd blockshape",
                ..
            })
        ));
        // element count overflow: shape (2^40, 2^40)
        let mut v = sample();
        v[5..13].copy_from_slice(&(1i64 << 40).to_be_bytes());
        v[14..22].copy_from_slice(&(1i64 << 40).to_be_bytes());
        assert!(matches!(
            B2ndMeta::parse(&v),
            Err(FrameError::OutOfRange {
                field: "b2nd shape element count",
                ..
            })
        ));
        // truncated at every length: error, never a panic
        let s = sample();
        for n in 0..s.len() {
            assert!(B2ndMeta::parse(&s[..n]).is_err(), "prefix {n}");
        }
    }
}
