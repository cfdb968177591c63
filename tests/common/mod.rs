//! Helpers shared by integration tests: a small `.npy` reader, the fixture manifest, and the
//! assembly of a b2nd array from its decoded chunks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// An array read from a `.npy` file.
#[derive(Debug)]
pub struct Npy {
    /// numpy dtype string, e.g. `"<f8"`.
    pub dtype: String,
    /// Shape in elements.
    pub shape: Vec<u64>,
    /// Raw element bytes in C order, in the file's byte order.
    pub data: Vec<u8>,
}

/// Reads a `.npy` file with [`chunkwise::npy::read_npy`], panicking with the path on error.
pub fn read_npy(path: &Path) -> Npy {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = chunkwise::npy::read_npy(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Npy {
        dtype: n.descr,
        shape: n.shape,
        data: n.data,
    }
}

/// One entry of `manifest.json` (written by `tests/fixtures/gen_blosc2.py`).
#[derive(Debug, Deserialize)]
pub struct Fixture {
    pub name: String,
    pub file: String,
    pub npy: Option<String>,
    pub sha256: String,
    pub shape: Vec<u64>,
    pub dtype: String,
    pub chunks: Vec<u64>,
    pub blocks: Vec<u64>,
    pub codec: String,
    pub clevel: u8,
    pub filters: String,
    pub splitmode: String,
    pub vlmeta: serde_json::Map<String, serde_json::Value>,
    pub notes: String,
}

/// A plain super-chunk frame listed under `schunks` in `manifest.json`.
#[derive(Debug, Deserialize)]
pub struct SchunkFixture {
    pub name: String,
    pub file: String,
    /// The concatenated bytes that were appended, chunk after chunk.
    pub bin: String,
    /// Uncompressed size in bytes of each appended chunk.
    pub chunk_nbytes: Vec<usize>,
    pub sha256: String,
    pub notes: String,
}

#[derive(Debug, Deserialize)]
pub struct Manifest {
    pub blosc2: String,
    pub fixtures: Vec<Fixture>,
    #[serde(default)]
    pub schunks: Vec<SchunkFixture>,
}

/// The fixture directory `tests/fixtures/<sub>`.
pub fn fixture_dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(sub)
}

/// Reads `manifest.json` from `dir`.
pub fn read_manifest(dir: &Path) -> Manifest {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Copies decoded b2nd chunks into a C-order array of `shape`.
///
/// `chunk(i)` returns chunk `i` (C order over the chunk grid) decoded: `ext_chunk` elements of
/// `itemsize` bytes laid out as blocks of `blockshape` in C order over the chunk's block grid,
/// each block C-ordered (C-Blosc2 `b2nd.c`). Padding past the chunk shape or the array shape is
/// skipped.
pub fn assemble(
    shape: &[u64],
    chunkshape: &[u64],
    blockshape: &[u64],
    itemsize: usize,
    mut chunk: impl FnMut(usize) -> Vec<u8>,
) -> Vec<u8> {
    let nd = shape.len();
    let total: u64 = shape.iter().product();
    let mut out = vec![0u8; total as usize * itemsize];
    if total == 0 {
        return out;
    }
    let cgrid: Vec<u64> = (0..nd).map(|d| shape[d].div_ceil(chunkshape[d])).collect();
    let bgrid: Vec<u64> = (0..nd)
        .map(|d| chunkshape[d].div_ceil(blockshape[d]))
        .collect();
    let block_len: u64 = blockshape.iter().product();
    let nchunks: u64 = cgrid.iter().product();
    let nblocks: u64 = bgrid.iter().product();
    let unravel = |mut i: u64, dims: &[u64]| -> Vec<u64> {
        let mut idx = vec![0; dims.len()];
        for d in (0..dims.len()).rev() {
            idx[d] = i % dims[d];
            i /= dims[d];
        }
        idx
    };
    for ci in 0..nchunks {
        let buf = chunk(ci as usize);
        let cc = unravel(ci, &cgrid);
        for bi in 0..nblocks {
            let bc = unravel(bi, &bgrid);
            for ei in 0..block_len {
                let e = unravel(ei, blockshape);
                let mut flat = 0u64;
                let mut inside = true;
                for d in 0..nd {
                    let in_chunk = bc[d] * blockshape[d] + e[d];
                    let g = cc[d] * chunkshape[d] + in_chunk;
                    if in_chunk >= chunkshape[d] || g >= shape[d] {
                        inside = false;
                        break;
                    }
                    flat = flat * shape[d] + g;
                }
                if inside {
                    let src = ((bi * block_len + ei) as usize) * itemsize;
                    let dst = flat as usize * itemsize;
                    out[dst..dst + itemsize].copy_from_slice(&buf[src..src + itemsize]);
                }
            }
        }
    }
    out
}
