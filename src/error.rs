//! The crate's public error: one enum wrapping each layer's error, with a stable `code`.

use crate::io::IoError;

/// Any error chunkwise returns. Layers keep their own enums and convert with `From`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Transport failure (HTTP, file, network).
    #[error(transparent)]
    Io(#[from] IoError),
    /// Any other failure, with a stable code and a message. Layers are added as variants.
    #[error("{message}")]
    Other { code: &'static str, message: String },
}

impl Error {
    /// A stable, machine-readable code (used as `error.code` in JS and in CLI JSON).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io(IoError::NotFound { .. }) => "NOT_FOUND",
            Error::Io(IoError::Cancelled) => "CANCELLED",
            Error::Io(IoError::RangeIgnored { .. }) => "RANGE_IGNORED",
            Error::Io(_) => "IO",
            Error::Other { code, .. } => code,
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
