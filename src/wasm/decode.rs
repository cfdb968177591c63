//! `decodeChunk` and `decodeChunkInto`: one Blosc2 (or Blosc1) chunk held by JS, decoded.
//!
//! The chunk's bytes live in JS memory and the result goes back there, so each call copies
//! the chunk into wasm memory and the decoded bytes out of it. A chunk of blocks is decoded a
//! group of blocks at a time ([`decode_by_block`], with the codec's [`GroupDecoder`]): the
//! group's streams are copied in, its blocks decoded, and the group copied out while all
//! three are still in the CPU's cache.
//! Copying the whole chunk in, decoding it whole and copying the whole result out
//! ([`with_decoded`]) moved every byte through memory twice more: wasm in Node, `chunkwise
//! bench decode`'s 4 MiB LZ4 + SHUFFLE float32 chunk (blocks of 256 KiB) went from 2,821 MB/s
//! to 3,495 (C-Blosc2 on one thread: 4,888). Groups rather than single blocks because each
//! copy is a call into JS with views made for it, a few microseconds: one per block made a
//! chunk of 16 KiB blocks 1.8x slower than whole, one of 16-byte blocks 100x. The whole-chunk
//! way stays for chunks without blocks (special values), memcpyed chunks (one copy either
//! way), blocks outside [`BLOCK_MIN`](crate::codec::blosc2::BLOCK_MIN)..=
//! [`BLOCK_MAX`](crate::codec::blosc2::BLOCK_MAX), and every chunk the block path stops on,
//! so that an error is the one [`crate::codec::blosc2::decode_chunk`] gives.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::{arg_error, chunkwise_error, options};
use crate::codec::blosc2::header::BLOSC2_HEADER_LEN;
use crate::codec::blosc2::{sized, ChunkBytes, ChunkHeader, CodecError, GroupDecoder, GroupTarget};

/// Chunks that decode to at most this many bytes are decoded by [`decode_chunk`] and
/// [`decode_chunk_into`] into one buffer of wasm memory kept between calls ([`DECODE_BUFFER`]);
/// larger ones into a buffer of their own, freed after the call. 16 MiB: a chunk of C-Blosc2's
/// default sizes fits, and the buffer kept stays a small part of the memory a reader uses.
/// [`decode_chunk`] decodes block by block only chunks up to this size.
const DECODE_BUFFER_MAX: usize = 16 << 20;

thread_local! {
    /// The reused decode buffer: allocated and zeroed when it grows, never per call. A new
    /// 4 MiB `Vec` per call (allocation, zero fill, free) cost about a quarter of the time of
    /// decoding an LZ4 + SHUFFLE float32 chunk in wasm (`chunkwise bench decode`).
    static DECODE_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The header of the chunk in `chunk`, parsed from a copy of its first bytes (a header is at
/// most [`BLOSC2_HEADER_LEN`] bytes).
fn header(chunk: &js_sys::Uint8Array) -> Result<ChunkHeader, CodecError> {
    let n = chunk.length().min(BLOSC2_HEADER_LEN as u32);
    ChunkHeader::parse(&chunk.subarray(0, n).to_vec())
}

/// A chunk held by JS, whose pieces the group decoder copies into wasm memory.
struct JsChunk<'a>(&'a js_sys::Uint8Array);

impl ChunkBytes for JsChunk<'_> {
    fn len(&self) -> usize {
        self.0.length() as usize
    }
    fn get<'a>(&'a self, range: std::ops::Range<usize>, buf: &'a mut Vec<u8>) -> Option<&'a [u8]> {
        let out = sized(buf, range.len())?;
        // Within the array's length: the decoder asks only for bytes below `len()`.
        self.0
            .subarray(range.start as u32, range.end as u32)
            .copy_to(out);
        Some(out)
    }
}

/// Where [`decode_by_block`] puts the decoded chunk (exactly `nbytes` bytes).
enum Target<'a> {
    /// The caller's buffer (`decodeChunkInto`): each group of blocks is decoded in wasm
    /// memory, then copied there.
    Js(&'a js_sys::Uint8Array),
    /// Wasm memory (`decodeChunk`, whose result is then copied out once into a new array:
    /// a new array written group by group had to be zeroed first, and was slower).
    Wasm(&'a mut [u8]),
}

/// Decodes the chunk in `chunk` (header `h`, `h.nbytes > 0`) a group of blocks at a time
/// ([`GroupDecoder`], the one this thread keeps: the group's streams copied in from JS,
/// decoded, and copied out to the caller's array or left in wasm memory) into `target`.
/// Returns `false`, having written any prefix of the blocks, when the chunk is not decoded
/// this way (see [`GroupDecoder::decode`]). The caller then decodes it whole, which gives the
/// error if there is one.
fn decode_by_block(chunk: &js_sys::Uint8Array, h: &ChunkHeader, target: Target) -> bool {
    let chunk = JsChunk(chunk);
    GroupDecoder::with_kept(|decoder| match target {
        Target::Wasm(dst) => decoder.decode(h, &chunk, GroupTarget::Whole(dst)),
        Target::Js(dst) => {
            let mut copy_out = |off: usize, group: &[u8]| {
                dst.subarray(off as u32, (off + group.len()) as u32)
                    .copy_from(group);
                true
            };
            decoder.decode(h, &chunk, GroupTarget::Each(&mut copy_out))
        }
    })
}

/// Decodes `chunk` (its header already parsed as `h`) and hands the decoded bytes to `f`.
///
/// `f` runs JS (the copy out of wasm memory). The bindings copy only into views of their own
/// (`options::view`), which run no caller code; should JS ever throw past this frame (leaving
/// the buffer's borrow held for good) or call back into this module while the buffer is held,
/// a call that finds the buffer borrowed decodes into a buffer
/// of its own instead (`try_borrow_mut`): results stay right, and nothing leaks beyond the one
/// kept buffer. `decodeChunkInto` refuses the common mistakes (not a `Uint8Array`) beforehand.
fn with_decoded<R>(
    chunk: &[u8],
    h: &ChunkHeader,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, CodecError> {
    use crate::codec::blosc2::{decode_chunk, decode_chunk_into};
    if h.nbytes > DECODE_BUFFER_MAX {
        return decode_chunk(chunk).map(|out| f(&out));
    }
    DECODE_BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Err(_) => decode_chunk(chunk).map(|out| f(&out)),
        Ok(mut buffer) => {
            let out =
                sized(&mut buffer, h.nbytes).ok_or(CodecError::Allocation { bytes: h.nbytes })?;
            decode_chunk_into(chunk, out)?;
            Ok(f(out))
        }
    })
}

/// The `ChunkwiseError` with code `DECODE` of a codec error.
fn decode_error(e: CodecError) -> JsValue {
    chunkwise_error(&e.to_string(), "DECODE", None)
}

/// Decodes one Blosc2 (or Blosc1) chunk: the bytes of the chunk in, the decompressed bytes out
/// (a new `Uint8Array` of the header's `nbytes`).
/// Throws a `ChunkwiseError` with code `INVALID_ARGUMENT` when `chunk` is not a `Uint8Array`
/// (see [`options::view`]) and `DECODE` on malformed input.
#[wasm_bindgen(js_name = decodeChunk)]
pub fn decode_chunk(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] chunk: JsValue,
) -> Result<js_sys::Uint8Array, JsValue> {
    let chunk = options::view(&chunk, "decodeChunk's chunk")?;
    let h = header(&chunk).map_err(decode_error)?;
    if h.nbytes > 0 && h.nbytes <= DECODE_BUFFER_MAX {
        let decoded = DECODE_BUFFER.with(|buffer| {
            let mut buffer = buffer.try_borrow_mut().ok()?;
            let out = sized(&mut buffer, h.nbytes)?;
            decode_by_block(&chunk, &h, Target::Wasm(&mut *out))
                .then(|| js_sys::Uint8Array::from(&*out))
        });
        if let Some(out) = decoded {
            return Ok(out);
        }
    }
    with_decoded(&chunk.to_vec(), &h, |out| js_sys::Uint8Array::from(out)).map_err(decode_error)
}

/// Decodes one Blosc2 (or Blosc1) chunk into `target`, a `Uint8Array` of exactly the chunk's
/// decoded size (its header's `nbytes`), and returns that size: one copy out of wasm memory
/// and no new JS buffer per chunk, for callers that decode many chunks into buffers they own.
/// Both are taken as [`options::view`] takes them (a `Uint8Array` of any realm, or another typed
/// array of one byte per element): the target's memory is written through a view of this
/// module's, so none of its own getters or methods runs.
/// Throws a `ChunkwiseError` with code `INVALID_ARGUMENT` when `chunk` or `target` is not a
/// `Uint8Array` (a detached target included) or `target`'s length is not the decoded size
/// (checked before decoding; `target` is then untouched) and `DECODE` on malformed input
/// (the blocks before the damaged one may then have been written into `target`).
#[wasm_bindgen(js_name = decodeChunkInto)]
pub fn decode_chunk_into(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] chunk: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Uint8Array")] target: JsValue,
) -> Result<u32, JsValue> {
    let target = options::view(&target, "decodeChunkInto's target")?;
    let chunk = options::view(&chunk, "decodeChunkInto's chunk")?;
    let h = header(&chunk).map_err(decode_error)?;
    if target.length() as usize != h.nbytes {
        return Err(arg_error(format!(
            "decodeChunkInto: the chunk decodes to {} bytes; the target holds {}",
            h.nbytes,
            target.length()
        )));
    }
    if h.nbytes > 0 && !decode_by_block(&chunk, &h, Target::Js(&target)) {
        with_decoded(&chunk.to_vec(), &h, |out| target.copy_from(out)).map_err(decode_error)?;
    }
    Ok(h.nbytes as u32)
}
