//! One chunk of any format handed out as a C-Blosc2 chunk (the chunk format of C-Blosc2's
//! `README_CHUNK_FORMAT.rst`: a 32-byte header, then blocks; what `blosc2_decompress`
//! decodes), for clients that decode chunks themselves (JS `getChunkBlosc2`, the edge
//! service's `/v1/chunk?format=blosc2`).

use crate::array::{ReadOptions, RemoteArray};
use crate::Result;

impl RemoteArray {
    /// Chunk `coords` (chunk-grid coordinates, as for [`RemoteArray::read_chunk`]) as one
    /// C-Blosc2 chunk that decodes to the whole chunk, the full chunk shape
    /// ([`RemoteArray::chunks`]) even for an edge chunk, as the formats store them (Blosc2
    /// and HDF5 pad edge chunks; a Zarr edge chunk holds what zarr-python wrote past the
    /// edge, the fill value):
    ///
    /// - a `.b2nd` array (standalone or in a `.b2z`): the stored chunk as it is, not
    ///   re-encoded (one request for its bytes, never cached, as
    ///   [`RemoteArray::chunk_bytes`]). Its elements are laid out as Blosc2 NDim lays a
    ///   chunk (C-Blosc2 `b2nd.c`): blocks of [`RemoteArray::blocks`] one after another in
    ///   C order over the chunk, each block in C order (the chunk's C order only when the
    ///   block shape spans the chunk's trailing dimensions), in the frame's byte order;
    /// - any other format, and a `.b2nd` chunk that is not stored (a special-value chunk):
    ///   the decoded chunk ([`RemoteArray::read_chunk`], through the caches; a chunk not
    ///   stored reads as the fill value) encoded as the payload cache encodes converted
    ///   chunks ([`crate::cache::convert::encode`]: LZ4 with byte SHUFFLE), its elements
    ///   in C order of the chunk, little-endian.
    ///
    /// # Errors
    /// As [`RemoteArray::read_chunk`]: `INVALID_ARGUMENT` for coordinates outside the
    /// chunk grid or of another rank, I/O and decode errors, `SOURCE_CHANGED`, `STALE`;
    /// `INVALID_ARGUMENT` when the encoder refuses the chunk (larger than the Blosc2 chunk
    /// format's 2 GiB).
    pub async fn chunk_blosc2(&self, coords: &[u64], opts: &ReadOptions<'_>) -> Result<Vec<u8>> {
        if matches!(self.info().format, "b2nd" | "b2z") {
            if let Some(stored) = self.chunk_bytes(coords).await? {
                return Ok(stored.to_vec());
            }
        }
        let mut chunk = self.read_chunk(coords, opts).await?;
        chunk.dtype.make_little_endian(&mut chunk.data);
        let itemsize = chunk.dtype.itemsize;
        crate::cache::convert::encode(&chunk.data, itemsize, true)
            .map(|b| b.to_vec())
            .ok_or_else(|| {
                crate::Error::InvalidArgument(format!(
                    "chunk {coords:?} of {} bytes cannot be encoded as one Blosc2 chunk",
                    chunk.data.len()
                ))
            })
    }
}
