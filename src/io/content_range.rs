//! The rules the answer state machine ([`super::answer`], which both HTTP transports drive)
//! applies to an answer to a range `GET`, kept free of any HTTP library so they are tested
//! natively.
//!
//! Sources: RFC 9110 §14.4 (`Content-Range`), §15.3.7 (206), §15.5.17 (416), §14.2 (a server
//! may ignore `Range` and answer 200 with the whole representation).

use super::{ByteRange, IoError, SourceInfo};
use std::ops::Range;
use std::sync::Mutex;

/// Default bound (bytes) on a whole body read when a server ignores `Range`: 8 MiB, as
/// python-blosc2's remote reader uses for whole-archive reads.
pub const DEFAULT_WHOLE_READ_LIMIT: u64 = 8 * 1024 * 1024;

/// A parsed `Content-Range` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContentRange {
    /// `bytes a-b/len` (`range` is `a..b+1`; `len` is `None` for `*`).
    Satisfied { range: Range<u64>, len: Option<u64> },
    /// `bytes */len` (sent with 416).
    Unsatisfied { len: u64 },
}

/// Parses a `Content-Range` header value; `None` if malformed (including `b < a`).
pub(crate) fn parse_content_range(value: &str) -> Option<ContentRange> {
    let rest = value.trim().strip_prefix("bytes")?;
    let rest = rest.strip_prefix(' ')?.trim_start();
    let (span, len) = rest.split_once('/')?;
    let num = |s: &str| -> Option<u64> {
        let s = s.trim();
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    if span.trim() == "*" {
        return Some(ContentRange::Unsatisfied { len: num(len)? });
    }
    let (a, b) = span.split_once('-')?;
    let (a, b) = (num(a)?, num(b)?);
    if b < a {
        return None;
    }
    let len = if len.trim() == "*" {
        None
    } else {
        Some(num(len)?)
    };
    if let Some(l) = len {
        if b >= l {
            return None;
        }
    }
    Some(ContentRange::Satisfied {
        range: a..b + 1,
        len,
    })
}

/// What the status and headers of an answer to one range request mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// 206: the body must be exactly `served` (`served.end - served.start` bytes) of an object
    /// of `len` bytes.
    Partial { served: Range<u64>, len: u64 },
    /// 200: the body is the whole object. Read at most `body_limit` bytes of it (checked
    /// here against `Content-Length` when announced, by the reader otherwise).
    Whole {
        content_length: Option<u64>,
        body_limit: u64,
        /// `true` when the server ignored `Range`; `false` when the range asked covers the
        /// whole object anyway (`bytes=0-` and the like), where a 200 is a fair answer and
        /// the whole-read limit does not apply.
        ignored: bool,
    },
    /// A suffix of an empty object (416 with `bytes */0` to `bytes=-n`): an empty result, as
    /// [`ByteRange::resolve`] gives for an empty object.
    Empty,
}

/// Interprets the status and headers of the answer to a `GET` with `Range: asked`.
///
/// # Errors
/// 404 [`IoError::NotFound`] (410 Gone is not "absent": a Zarr reader reads an absent
/// chunk as fill values, so only 404 may mean that; 410 is [`IoError::HttpStatus`]); 416 [`IoError::RangeNotSatisfiable`] (with the length from
/// `Content-Range: bytes */len`, or [`IoError::BadContentRange`] without it); a 206 whose
/// `Content-Range` is missing, malformed or not the range asked [`IoError::BadContentRange`];
/// a 200 announcing more than `limit` bytes [`IoError::RangeIgnored`]; any other status
/// [`IoError::HttpStatus`].
pub(crate) fn classify(
    location: &str,
    asked: &ByteRange,
    status: u16,
    content_range: Option<&str>,
    content_length: Option<u64>,
    limit: u64,
) -> Result<Answer, IoError> {
    let bad = |detail: String| IoError::BadContentRange {
        location: location.to_string(),
        detail,
    };
    match status {
        206 => {
            let Some(value) = content_range else {
                // In browsers the usual cause is CORS: the header arrived but is hidden.
                return Err(bad("206 answer without a readable Content-Range (a cross-origin \
                                server must send Access-Control-Expose-Headers: Content-Range)"
                    .into()));
            };
            let Some(ContentRange::Satisfied { range, len }) = parse_content_range(value) else {
                return Err(bad(format!("cannot parse {value:?}")));
            };
            let Some(len) = len else {
                return Err(bad(format!("{value:?} does not give the object's length")));
            };
            let expected = asked.resolve(location, len)?;
            if expected != range {
                return Err(bad(format!(
                    "asked {asked} of {len} bytes (expected {expected:?}), server sent {value:?}"
                )));
            }
            if let Some(n) = content_length {
                if n != range.end - range.start {
                    return Err(bad(format!("{value:?} but Content-Length {n}")));
                }
            }
            Ok(Answer::Partial { served: range, len })
        }
        200 => match content_length {
            Some(n) if n > 0 && asked.resolve(location, n).is_ok_and(|r| r == (0..n)) => {
                Ok(Answer::Whole { content_length, body_limit: n, ignored: false })
            }
            Some(n) if n > limit => Err(IoError::RangeIgnored {
                location: location.to_string(),
                len: Some(n),
                limit,
            }),
            _ => Ok(Answer::Whole { content_length, body_limit: limit, ignored: true }),
        },
        416 => match content_range.and_then(parse_content_range) {
            Some(ContentRange::Unsatisfied { len: 0 }) if matches!(asked, ByteRange::Suffix(_)) => {
                Ok(Answer::Empty)
            }
            Some(ContentRange::Unsatisfied { len }) => {
                Err(IoError::RangeNotSatisfiable {
                    location: location.to_string(),
                    range: asked.to_string(),
                    len,
                })
            }
            _ => Err(bad(format!(
                "416 answer to {asked} without Content-Range: bytes */<length> (got {content_range:?})"
            ))),
        },
        404 => Err(IoError::NotFound { location: location.to_string() }),
        s => Err(IoError::HttpStatus { location: location.to_string(), status: s }),
    }
}

/// The part of a whole body (sent by a server that ignored `Range`) that `asked` denotes, as
/// an absolute range of the object.
///
/// # Errors
/// [`IoError::RangeNotSatisfiable`] naming `location` when `asked` starts at or past the
/// body's end.
pub(crate) fn slice_of_whole(
    location: &str,
    asked: &ByteRange,
    body_len: u64,
) -> Result<Range<u64>, IoError> {
    asked.resolve(location, body_len)
}

/// Checks that a body has the length its headers announced.
///
/// # Errors
/// [`IoError::BadContentRange`] on a mismatch.
pub(crate) fn check_body_len(location: &str, expected: u64, got: u64) -> Result<(), IoError> {
    if expected != got {
        return Err(IoError::BadContentRange {
            location: location.to_string(),
            detail: format!("body has {got} bytes, headers announced {expected}"),
        });
    }
    Ok(())
}

/// The size and validators first seen for a source; later answers must agree.
#[derive(Debug, Default)]
pub(crate) struct Validators {
    first: Mutex<Option<SourceInfo>>,
}

impl Validators {
    /// Validators that already hold `info` as the first answer (a recorded identity every
    /// later answer must match).
    pub(crate) fn expecting(info: SourceInfo) -> Validators {
        Validators {
            first: Mutex::new(Some(info)),
        }
    }

    /// Records `info` if it is the first, else compares it with the first: a different length,
    /// or an `ETag` or `Last-Modified` that both answers carry and that differs, means the
    /// object changed between reads.
    ///
    /// # Errors
    /// [`IoError::SourceChanged`] naming what differs.
    pub(crate) fn check(&self, info: &SourceInfo) -> Result<(), IoError> {
        let mut guard = self.first.lock().unwrap_or_else(|p| p.into_inner());
        let Some(first) = guard.as_ref() else {
            *guard = Some(info.clone());
            return Ok(());
        };
        let changed = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
            Err(IoError::SourceChanged {
                location: info.location.clone(),
                detail: format!("{what} was {a:?}, now {b:?}"),
            })
        };
        if first.len != info.len {
            return changed("length", &first.len, &info.len);
        }
        if let (Some(a), Some(b)) = (&first.etag, &info.etag) {
            if a != b {
                return changed("ETag", a, b);
            }
        }
        if let (Some(a), Some(b)) = (&first.last_modified, &info.last_modified) {
            if a != b {
                return changed("Last-Modified", a, b);
            }
        }
        Ok(())
    }

    /// The first size and validators seen, if any read succeeded.
    pub(crate) fn get(&self) -> Option<SourceInfo> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_content_range() {
        assert_eq!(
            parse_content_range("bytes 0-9/100"),
            Some(ContentRange::Satisfied {
                range: 0..10,
                len: Some(100)
            })
        );
        assert_eq!(
            parse_content_range("bytes 5-5/*"),
            Some(ContentRange::Satisfied {
                range: 5..6,
                len: None
            })
        );
        assert_eq!(
            parse_content_range("bytes */42"),
            Some(ContentRange::Unsatisfied { len: 42 })
        );
        for bad in [
            "bytes 9-0/100",
            "bytes 0-100/100",
            "bytes 0-9",
            "items 0-9/10",
            "bytes=0-9/10",
            "bytes -1-9/10",
            "",
        ] {
            assert_eq!(parse_content_range(bad), None, "{bad}");
        }
    }

    #[test]
    fn classifies_answers() {
        let asked = ByteRange::bounded(10..20);
        let c = |status, cr, cl| classify("u", &asked, status, cr, cl, 1000);
        assert_eq!(
            c(206, Some("bytes 10-19/100"), Some(10)).unwrap(),
            Answer::Partial {
                served: 10..20,
                len: 100
            }
        );
        // Clamped at the end of the object.
        assert_eq!(
            c(206, Some("bytes 10-14/15"), None).unwrap(),
            Answer::Partial {
                served: 10..15,
                len: 15
            }
        );
        assert!(matches!(
            c(206, Some("bytes 10-18/100"), None),
            Err(IoError::BadContentRange { .. })
        ));
        assert!(matches!(
            c(206, None, None),
            Err(IoError::BadContentRange { .. })
        ));
        assert!(matches!(
            c(206, Some("bytes 10-19/*"), None),
            Err(IoError::BadContentRange { .. })
        ));
        assert!(matches!(
            c(206, Some("bytes 10-19/100"), Some(9)),
            Err(IoError::BadContentRange { .. })
        ));
        assert_eq!(
            c(200, None, Some(1000)).unwrap(),
            Answer::Whole {
                content_length: Some(1000),
                body_limit: 1000,
                ignored: true
            }
        );
        assert_eq!(
            c(200, None, None).unwrap(),
            Answer::Whole {
                content_length: None,
                body_limit: 1000,
                ignored: true
            }
        );
        // A range covering the whole object may be answered 200 whatever its size.
        for whole in [
            ByteRange::Offset(0),
            ByteRange::Suffix(5000),
            ByteRange::bounded(0..5000),
        ] {
            assert_eq!(
                classify("u", &whole, 200, None, Some(5000), 1000).unwrap(),
                Answer::Whole {
                    content_length: Some(5000),
                    body_limit: 5000,
                    ignored: false
                }
            );
        }
        assert!(matches!(
            classify("u", &ByteRange::Offset(1), 200, None, Some(5000), 1000),
            Err(IoError::RangeIgnored { .. })
        ));
        assert_eq!(
            c(200, None, Some(1001)),
            Err(IoError::RangeIgnored {
                location: "u".into(),
                len: Some(1001),
                limit: 1000
            })
        );
        assert_eq!(
            c(416, Some("bytes */5"), None),
            Err(IoError::RangeNotSatisfiable {
                location: "u".into(),
                range: "bytes=10-19".into(),
                len: 5
            })
        );
        assert!(matches!(
            c(416, None, None),
            Err(IoError::BadContentRange { .. })
        ));
        assert_eq!(
            c(404, None, None),
            Err(IoError::NotFound {
                location: "u".into()
            })
        );
        assert_eq!(
            c(410, None, None),
            Err(IoError::HttpStatus {
                location: "u".into(),
                status: 410
            })
        );
        assert_eq!(
            c(503, None, None),
            Err(IoError::HttpStatus {
                location: "u".into(),
                status: 503
            })
        );
        let suffix = ByteRange::Suffix(8);
        assert_eq!(
            classify("u", &suffix, 416, Some("bytes */0"), None, 10).unwrap(),
            Answer::Empty
        );
        assert_eq!(
            classify("u", &suffix, 206, Some("bytes 92-99/100"), None, 10).unwrap(),
            Answer::Partial {
                served: 92..100,
                len: 100
            }
        );
    }

    #[test]
    fn validators_detect_changes() {
        let info = |len, etag: Option<&str>, lm: Option<&str>| SourceInfo {
            location: "u".into(),
            len,
            etag: etag.map(str::to_string),
            last_modified: lm.map(str::to_string),
        };
        let v = Validators::default();
        v.check(&info(10, Some("\"a\""), Some("x"))).unwrap();
        v.check(&info(10, Some("\"a\""), Some("x"))).unwrap();
        v.check(&info(10, None, None)).unwrap();
        assert!(matches!(
            v.check(&info(11, Some("\"a\""), None)),
            Err(IoError::SourceChanged { .. })
        ));
        assert!(matches!(
            v.check(&info(10, Some("\"b\""), None)),
            Err(IoError::SourceChanged { .. })
        ));
        assert!(matches!(
            v.check(&info(10, None, Some("y"))),
            Err(IoError::SourceChanged { .. })
        ));
        assert_eq!(v.get().unwrap().etag.as_deref(), Some("\"a\""));
    }

    #[test]
    fn checks_body_length() {
        assert!(check_body_len("u", 5, 5).is_ok());
        assert!(matches!(
            check_body_len("u", 5, 4),
            Err(IoError::BadContentRange { .. })
        ));
        assert_eq!(
            slice_of_whole("u", &ByteRange::Suffix(3), 10).unwrap(),
            7..10
        );
    }
}
