//! Byte ranges as a type, `u64`-based so 32-bit wasm cannot overflow on large objects.

use super::IoError;
use std::ops::Range;

/// A range of bytes of a remote object, as sent in an HTTP `Range` header (RFC 9110 §14.1.2).
///
/// Positions are bytes from the start of the object; `Bounded` is half-open (`end` excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteRange {
    /// `start..end` (end exclusive); rendered `bytes=start-(end-1)`.
    Bounded { start: u64, end: u64 },
    /// From `start` to the end of the object; rendered `bytes=start-`.
    Offset(u64),
    /// The last `n` bytes; rendered `bytes=-n`.
    Suffix(u64),
}

impl ByteRange {
    /// A bounded range from a `std` range.
    pub fn bounded(r: Range<u64>) -> Self {
        ByteRange::Bounded {
            start: r.start,
            end: r.end,
        }
    }

    /// Checks that the range is not empty.
    ///
    /// # Errors
    /// [`IoError::InvalidRange`] when `end <= start` or a suffix of zero bytes is asked.
    pub fn validate(&self) -> Result<(), IoError> {
        match *self {
            ByteRange::Bounded { start, end } if end <= start => Err(IoError::InvalidRange {
                range: self.to_string(),
            }),
            ByteRange::Suffix(0) => Err(IoError::InvalidRange {
                range: self.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// The absolute range this denotes in an object of `len` bytes, clamped to the object
    /// (servers clamp the same way, RFC 9110 §14.1.2).
    ///
    /// # Errors
    /// [`IoError::RangeNotSatisfiable`] naming `location` when the range starts at or beyond
    /// `len`.
    pub fn resolve(&self, location: &str, len: u64) -> Result<Range<u64>, IoError> {
        let r = match *self {
            ByteRange::Bounded { start, end } => start..end.min(len),
            ByteRange::Offset(start) => start..len,
            ByteRange::Suffix(n) => len.saturating_sub(n)..len,
        };
        if r.start >= len && !(len == 0 && matches!(self, ByteRange::Suffix(_))) {
            return Err(IoError::RangeNotSatisfiable {
                location: location.to_string(),
                range: self.to_string(),
                len,
            });
        }
        Ok(r)
    }

    /// The value of the HTTP `Range` header for this range.
    pub fn to_header(&self) -> String {
        self.to_string()
    }
}

impl std::fmt::Display for ByteRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            ByteRange::Bounded { start, end } => {
                write!(f, "bytes={}-{}", start, end.saturating_sub(1))
            }
            ByteRange::Offset(start) => write!(f, "bytes={start}-"),
            ByteRange::Suffix(n) => write!(f, "bytes=-{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_forms() {
        assert_eq!(ByteRange::bounded(0..10).to_header(), "bytes=0-9");
        assert_eq!(ByteRange::Offset(5).to_header(), "bytes=5-");
        assert_eq!(ByteRange::Suffix(8192).to_header(), "bytes=-8192");
    }

    #[test]
    fn resolve_clamps_and_rejects() {
        assert_eq!(
            ByteRange::bounded(10..100).resolve("u", 50).unwrap(),
            10..50
        );
        assert_eq!(ByteRange::Suffix(100).resolve("u", 50).unwrap(), 0..50);
        assert_eq!(ByteRange::Offset(20).resolve("u", 50).unwrap(), 20..50);
        assert!(ByteRange::bounded(50..60).resolve("u", 50).is_err());
        assert!(ByteRange::bounded(5..5).validate().is_err());
    }
}
