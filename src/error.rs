//! The crate's public error: one enum wrapping each layer's error, with a stable `code`.

use crate::formats::{ChunkDecodeError, FormatError};
use crate::io::IoError;
use crate::selection::SelectionError;

/// Any error chunkwise returns. Layers keep their own enums and convert with `From`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Transport failure (HTTP, file, network), or cancellation.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The source is malformed or uses an unsupported feature.
    #[error(transparent)]
    Format(FormatError),
    /// The selection is malformed or out of bounds.
    #[error(transparent)]
    Selection(SelectionError),
    /// Invalid options or arguments.
    #[error("{0}")]
    InvalidArgument(String),
    /// A blob partition input or manifest is invalid.
    #[error(transparent)]
    Partition(crate::partition::PartitionError),
    /// A chunk-trace geometry, selection or cache setting is invalid.
    #[error(transparent)]
    ChunkTrace(crate::chunk_trace::ChunkTraceError),
}

impl Error {
    /// The message to show a person: [`Error`]'s `Display` with the user info and query of
    /// every URL in it redacted ([`crate::cache::identity::redact_text`]), so a signed URL's
    /// token or a `user:password@` never reaches a terminal, a log or a JS error. The CLI and
    /// the JS bindings print only this.
    pub fn message(&self) -> String {
        crate::cache::identity::redact_text(&self.to_string())
    }

    /// A stable, machine-readable code (`error.code` in JS, `"code"` in CLI JSON errors).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io(IoError::NotFound { .. }) => "NOT_FOUND",
            Error::Io(IoError::Cancelled) => "CANCELLED",
            Error::Io(IoError::RangeIgnored { .. }) => "RANGE_IGNORED",
            Error::Io(IoError::RangeNotSatisfiable { .. }) => "RANGE_NOT_SATISFIABLE",
            Error::Io(IoError::HttpStatus { .. }) => "HTTP_STATUS",
            Error::Io(IoError::Network { .. }) => "NETWORK",
            Error::Io(IoError::SourceChanged { .. }) => "SOURCE_CHANGED",
            Error::Io(IoError::Timeout { .. }) => "TIMEOUT",
            Error::Io(IoError::Redirect { .. }) => "REDIRECT",
            Error::Io(_) => "IO",
            Error::Format(FormatError::Unrecognised { .. }) => "UNRECOGNISED_FORMAT",
            Error::Format(FormatError::Unsupported { .. }) => "UNSUPPORTED",
            Error::Format(FormatError::Chunk { .. }) => "DECODE",
            Error::Format(FormatError::NoSuchNode { .. }) => "NOT_FOUND",
            Error::Format(FormatError::PathNeeded { .. }) => "INVALID_ARGUMENT",
            Error::Format(_) => "INVALID_DATA",
            Error::Selection(_) => "INVALID_SELECTION",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::Partition(e) => e.code(),
            Error::ChunkTrace(_) => "CHUNK_TRACE",
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<crate::codec::blosc2::CodecError> for ChunkDecodeError {
    fn from(source: crate::codec::blosc2::CodecError) -> Self {
        ChunkDecodeError::Blosc2 {
            codec: None,
            source,
        }
    }
}

impl From<crate::formats::hdf5::filters::FilterError> for ChunkDecodeError {
    fn from(e: crate::formats::hdf5::filters::FilterError) -> Self {
        ChunkDecodeError::Hdf5Filter(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{OpenOptions, ReadOptions, RemoteArray};
    use crate::formats::{ArrayFormat, ChunkPlace};
    use crate::io::memory::MemorySource;
    use crate::io::Traffic;
    use crate::selection::Selection;
    use std::sync::Arc;

    fn fixture(rel: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel);
        std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
    }

    /// The errors behind `e`, by `std::error::Error::source`.
    fn chain<'a>(
        e: &'a (dyn std::error::Error + 'static),
    ) -> Vec<&'a (dyn std::error::Error + 'static)> {
        let mut out = vec![e];
        while let Some(s) = out.last().and_then(|e| e.source()) {
            out.push(s);
        }
        out
    }

    /// A python-blosc2-written frame (tests/fixtures/gen_blosc2.py) whose first chunk's
    /// header says typesize 0 (byte 3, README_CHUNK_FORMAT.rst): reading it through a
    /// `RemoteArray` fails with `DECODE`, and the codec's own variant
    /// (`CodecError::InvalidHeader`) is reachable through `source()`.
    #[tokio::test(flavor = "current_thread")]
    async fn corrupt_blosc2_chunk_keeps_the_codec_variant() {
        let mut bytes = fixture("blosc2/cf_lz4_nofilter.b2nd");
        let len = bytes.len() as u64;
        let pristine = MemorySource::new("mem://cf_lz4_nofilter.b2nd", bytes.clone());
        let head = bytes::Bytes::from(bytes.clone());
        let b2nd = crate::formats::b2nd::B2ndArray::open(&pristine, head, len)
            .await
            .unwrap();
        let ChunkPlace::Stored(range) = b2nd.locate(0).unwrap() else {
            panic!("chunk 0 of the fixture is stored")
        };
        bytes[range.start as usize + 3] = 0;
        let source = Arc::new(MemorySource::new("mem://cf_lz4_nofilter.b2nd", bytes));
        let array = RemoteArray::open_source(source, Traffic::new(), OpenOptions::default())
            .await
            .unwrap();
        let err = array
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), "DECODE", "{err}");
        assert!(
            err.message()
                .ends_with("chunk 0: invalid chunk header: typesize = 0: zero"),
            "{err}"
        );
        let codec = chain(&err)
            .into_iter()
            .find_map(|e| e.downcast_ref::<crate::codec::blosc2::CodecError>())
            .unwrap_or_else(|| panic!("no CodecError behind {err:?}"));
        assert!(
            matches!(
                codec,
                crate::codec::blosc2::CodecError::InvalidHeader {
                    field: "typesize",
                    value: 0,
                    ..
                }
            ),
            "{codec:?}"
        );
    }
}
