//! The crate's public error: one enum wrapping each layer's error, with a stable `code`.

use crate::formats::FormatError;
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
