//! Errors of the Blosc2 chunk codec.

/// Why a Blosc2 or Blosc1 chunk could not be decoded or encoded.
///
/// Every size read from the input is checked before use; a damaged or lying chunk yields one of
/// these variants, never a panic, a hang or an allocation larger than the chunk claims within the
/// format's own limits (2^31 - 1 bytes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input ends before a structure it must contain.
    #[error("chunk truncated: {what} needs {needed} bytes, only {available} available")]
    Truncated {
        /// Which structure (header, bstarts table, stream of block N, ...).
        what: &'static str,
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// A header field holds a value the format does not allow.
    #[error("invalid chunk header: {field} = {value}: {reason}")]
    InvalidHeader {
        /// Header field name, as in README_CHUNK_FORMAT.rst.
        field: &'static str,
        /// The value found.
        value: i64,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// A feature this decoder does not implement (user-defined codec, dictionary, lazy chunk,
    /// unknown filter).
    #[error("unsupported {what}: {value}")]
    Unsupported {
        /// What is unsupported.
        what: &'static str,
        /// Its code or value.
        value: i64,
    },
    /// A block's start offset (bstarts entry) points outside the chunk.
    #[error("block {block}: start offset {start} outside the chunk ({cbytes} bytes)")]
    BadBlockStart {
        /// Block index.
        block: usize,
        /// The offset found.
        start: i64,
        /// Compressed size of the chunk.
        cbytes: usize,
    },
    /// A compressed stream failed to decode, or decoded to the wrong length.
    #[error("block {block}, stream {stream}: {reason}")]
    BadStream {
        /// Block index.
        block: usize,
        /// Stream index within the block (0 when the block is not split).
        stream: usize,
        /// What went wrong.
        reason: String,
    },
    /// The destination buffer does not have the size the operation needs.
    #[error("destination holds {actual} bytes, {expected} needed")]
    DestinationSize {
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// The chunk cannot be decoded block by block (special-value chunk, dictionary, ...).
    #[error("chunk cannot be decoded per block: {reason}")]
    NotSplittable {
        /// Why.
        reason: &'static str,
    },
    /// `decode_block` needs a decoded reference block (DELTA filter) that was not given, or
    /// that is too short.
    #[error("block {block} needs decoded block {reference} as DELTA reference ({needed} bytes)")]
    MissingReference {
        /// The block being decoded.
        block: usize,
        /// The block it refers to.
        reference: usize,
        /// Bytes of the reference block needed.
        needed: usize,
    },
    /// A caller-supplied argument is out of range (block index, encode option).
    #[error("invalid argument {name} = {value}: {reason}")]
    InvalidArgument {
        /// Argument name.
        name: &'static str,
        /// Its value.
        value: i64,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// The output buffer could not be allocated.
    #[error("cannot allocate {bytes} bytes for the decoded chunk")]
    Allocation {
        /// Bytes requested.
        bytes: usize,
    },
}

impl CodecError {
    /// True for a chunk using a codec or filter of C-Blosc2's plugin range (ids 32 and up,
    /// blosc2.h `BLOSC2_GLOBAL_REGISTERED_CODECS_START` / `..._FILTERS_START`: ZFP, NDLZ,
    /// NDCELL, NDMEAN, INT_TRUNC, user-defined ones) that this decoder does not have: data
    /// written as its writer meant, not damage. Other refusals (an unknown chunk format
    /// version, a codec id no writer assigns) are what a damaged chunk looks like.
    pub fn is_plugin(&self) -> bool {
        matches!(
            self,
            CodecError::Unsupported {
                what: "user-defined codec" | "filter",
                value: 32..,
            }
        )
    }
}
