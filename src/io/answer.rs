//! The one state machine that judges an HTTP answer to a range `GET`, free of any HTTP library
//! (sans-I/O): both transports ([`super::http`] natively, `fetch` in wasm) only move the
//! status, headers and body chunks into it and act on what it decides, so every decision is
//! made here and tested natively.
//!
//! A transport drives one [`AnswerMachine`] per request:
//! 1. [`AnswerMachine::new`] with what it asked: the location, the range, the whole-read limit
//!    and the [`Validators`] the answer must agree with;
//! 2. [`AnswerMachine::head`] with the status and the headers that matter ([`Head`]). The
//!    machine either finishes at once ([`Next::Done`], an answer without a body to read),
//!    asks for the body ([`Next::ReadBody`]), or refuses the answer with an [`IoError`]
//!    before any body byte is read (the transport then cancels or drops the body);
//! 3. [`AnswerMachine::chunk`] (or [`AnswerMachine::room`], to copy into the buffer in place)
//!    per body chunk: a chunk that would take the body past the length the headers announce,
//!    or past the whole-read limit, is an error at once, so the body buffered never exceeds
//!    that length;
//! 4. [`AnswerMachine::end`] at the end of the body, which gives the [`Fetched`] value, or
//!    [`AnswerMachine::fail`] when the transport fails or is cancelled.
//!
//! After an error, every later call gives the same error back (a cancelled machine refuses
//! further chunks with [`IoError::Cancelled`]).
//!
//! The rules, from RFC 9110 (and `content_range`, which holds the header parsing):
//! - `206` must carry the `Content-Range` asked for (§14.4, §15.3.7) and a body of exactly
//!   that length;
//! - `200` means the server ignored `Range` (§14.2): its body is read only when it is at most
//!   the whole-read limit ([`IoError::RangeIgnored`] before any body byte when
//!   `Content-Length` announces more, at the chunk that passes the limit otherwise), unless
//!   the range asked covers the whole object anyway (`bytes=0-`), which a `200` answers
//!   fairly;
//! - `416` with `bytes */len` is [`IoError::RangeNotSatisfiable`], except a suffix of an empty
//!   object (`bytes */0`), which is an empty result (§15.5.17);
//! - `404` is [`IoError::NotFound`]; `410` and every other status [`IoError::HttpStatus`];
//! - a `Content-Encoding` other than `identity` on a body is [`IoError::BadContentRange`]
//!   (byte positions of a compressed body mean nothing);
//! - the object's length, `ETag` and `Last-Modified` must agree with the first answer (or the
//!   recorded identity): [`IoError::SourceChanged`] otherwise, before the body for a `206`,
//!   at the end for a `200` (whose length is the body's).

use super::content_range::{self, Answer, Validators};
use super::{ByteRange, Fetched, IoError, SourceInfo};
use bytes::BytesMut;
use std::ops::Range;

/// Largest up-front buffer reservation for a body (bytes); larger bodies grow as they arrive,
/// so a server announcing a huge length cannot make us allocate it before sending it.
pub(crate) const MAX_PREALLOC: u64 = 16 * 1024 * 1024;

/// The status and the headers of an answer that the machine reads, as the transport received
/// them (header values as text; a value that is not text is `None`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Head<'h> {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Range`.
    pub content_range: Option<&'h str>,
    /// `Content-Length` (a value that is not a decimal number counts as absent).
    pub content_length: Option<&'h str>,
    /// `Content-Encoding`.
    pub content_encoding: Option<&'h str>,
    /// `ETag`.
    pub etag: Option<&'h str>,
    /// `Last-Modified`.
    pub last_modified: Option<&'h str>,
}

/// What the transport does after the head.
#[derive(Debug)]
pub(crate) enum Next {
    /// Read the body: feed its chunks, then call [`AnswerMachine::end`].
    ReadBody,
    /// The answer is complete without its body (a `416` meaning an empty result): do not read
    /// the body.
    Done(Fetched),
}

/// What the body being read belongs to.
#[derive(Debug)]
enum Kind {
    /// A `206` for `served`, with the object's size and validators (already checked).
    Partial {
        served: Range<u64>,
        info: SourceInfo,
    },
    /// A `200` with the whole object; `announced` is its `Content-Length`.
    Whole { announced: Option<u64> },
}

#[derive(Debug)]
enum State {
    /// Waiting for the head.
    Head,
    /// Reading the body: at most `cap` bytes are accepted.
    Body { kind: Kind, buf: BytesMut, cap: u64 },
    /// [`AnswerMachine::end`] or [`Next::Done`] gave the result.
    Finished,
    /// Refused; every later call gives this error.
    Failed(IoError),
}

/// The judge of one answer to one range request (see the module documentation for the order
/// of calls and the rules).
#[derive(Debug)]
pub(crate) struct AnswerMachine<'v> {
    location: String,
    asked: ByteRange,
    limit: u64,
    validators: &'v Validators,
    etag: Option<String>,
    last_modified: Option<String>,
    range_ignored: bool,
    state: State,
}

impl<'v> AnswerMachine<'v> {
    /// A machine for the answer to `GET location` with `Range: asked`, reading a whole body
    /// (from a server ignoring `Range`) of at most `whole_read_limit` bytes, whose size and
    /// validators must agree with `validators`.
    pub(crate) fn new(
        location: &str,
        asked: ByteRange,
        whole_read_limit: u64,
        validators: &'v Validators,
    ) -> Self {
        Self {
            location: location.to_string(),
            asked,
            limit: whole_read_limit,
            validators,
            etag: None,
            last_modified: None,
            range_ignored: false,
            state: State::Head,
        }
    }

    /// Whether the head said the server ignored `Range` (a `200` to a range that does not
    /// cover the whole object, whether or not its body is then read).
    pub(crate) fn range_ignored(&self) -> bool {
        self.range_ignored
    }

    /// Judges the status and headers.
    ///
    /// # Errors
    /// Before any body byte: the errors of `content_range::classify` (404
    /// [`IoError::NotFound`], 416 [`IoError::RangeNotSatisfiable`], a bad `206`
    /// [`IoError::BadContentRange`], a `200` announcing more than the whole-read limit
    /// [`IoError::RangeIgnored`], other statuses [`IoError::HttpStatus`]); a body with a
    /// `Content-Encoding` [`IoError::BadContentRange`]; validators that disagree
    /// [`IoError::SourceChanged`].
    pub(crate) fn head(&mut self, head: &Head<'_>) -> Result<Next, IoError> {
        if !matches!(self.state, State::Head) {
            return Err(self.out_of_order("a second head"));
        }
        let result = self.judge_head(head);
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
        }
        result
    }

    fn judge_head(&mut self, head: &Head<'_>) -> Result<Next, IoError> {
        let content_length = head
            .content_length
            .and_then(|v| v.trim().parse::<u64>().ok());
        let answer = content_range::classify(
            &self.location,
            &self.asked,
            head.status,
            head.content_range,
            content_length,
            self.limit,
        );
        self.range_ignored = matches!(
            answer,
            Err(IoError::RangeIgnored { .. }) | Ok(Answer::Whole { ignored: true, .. })
        );
        let answer = answer?;
        if let Some(enc) = head.content_encoding {
            if !enc.eq_ignore_ascii_case("identity") && !matches!(answer, Answer::Empty) {
                return Err(IoError::BadContentRange {
                    location: self.location.clone(),
                    detail: format!(
                        "body sent with Content-Encoding {enc:?} despite Accept-Encoding: identity"
                    ),
                });
            }
        }
        self.etag = head.etag.map(str::to_string);
        self.last_modified = head.last_modified.map(str::to_string);
        // (kind, most bytes accepted, bytes announced)
        let (kind, cap, announced) = match answer {
            Answer::Empty => {
                let info = self.info(0);
                self.validators.check(&info)?;
                self.state = State::Finished;
                return Ok(Next::Done(Fetched {
                    range: 0..0,
                    bytes: Default::default(),
                    info,
                    whole: None,
                }));
            }
            Answer::Partial { served, len } => {
                let info = self.info(len);
                self.validators.check(&info)?;
                let span = served.end - served.start;
                (Kind::Partial { served, info }, span, span)
            }
            Answer::Whole {
                content_length,
                body_limit,
                ..
            } => (
                Kind::Whole {
                    announced: content_length,
                },
                // `classify` refused an announced length past the limit.
                content_length.unwrap_or(body_limit),
                content_length.unwrap_or(0),
            ),
        };
        // Only what is announced, and at most MAX_PREALLOC of it.
        let buf = BytesMut::with_capacity(announced.min(cap).min(MAX_PREALLOC) as usize);
        self.state = State::Body { kind, buf, cap };
        Ok(Next::ReadBody)
    }

    /// Makes room for a body chunk of `n` bytes and returns it, for the transport to copy the
    /// chunk into (as a JS `Uint8Array` is copied); [`AnswerMachine::chunk`] does both.
    ///
    /// # Errors
    /// A chunk taking the body past its length: [`IoError::BadContentRange`] for a `206`
    /// (past the `Content-Range`) or a `200` with `Content-Length`, [`IoError::RangeIgnored`]
    /// for a `200` without it (past the whole-read limit). Nothing of the chunk is kept. A
    /// chunk before the head or after the end or an error: that error again
    /// ([`IoError::Cancelled`] after a cancel).
    pub(crate) fn room(&mut self, n: usize) -> Result<&mut [u8], IoError> {
        let overflow = match &self.state {
            State::Body { kind, buf, cap } if buf.len() as u64 + n as u64 > *cap => {
                Some(self.overflow(kind, *cap))
            }
            State::Body { .. } => None,
            _ => return Err(self.out_of_order("a body chunk")),
        };
        if let Some(e) = overflow {
            self.state = State::Failed(e.clone());
            return Err(e);
        }
        let State::Body { buf, .. } = &mut self.state else {
            unreachable!("checked above")
        };
        let start = buf.len();
        buf.resize(start + n, 0);
        Ok(&mut buf[start..])
    }

    /// Takes one body chunk.
    ///
    /// # Errors
    /// As [`AnswerMachine::room`].
    // The wasm transport copies into `room` instead.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) fn chunk(&mut self, bytes: &[u8]) -> Result<(), IoError> {
        self.room(bytes.len())?.copy_from_slice(bytes);
        Ok(())
    }

    /// The body ended: the result.
    ///
    /// # Errors
    /// A body shorter than announced [`IoError::BadContentRange`]; for a `200`, validators
    /// that disagree [`IoError::SourceChanged`], and a range starting at or past the end of
    /// the whole body [`IoError::RangeNotSatisfiable`]; called before the head or after the
    /// end or an error: that error again.
    pub(crate) fn end(&mut self) -> Result<Fetched, IoError> {
        let (kind, buf) = match std::mem::replace(&mut self.state, State::Finished) {
            State::Body { kind, buf, .. } => (kind, buf),
            other => {
                self.state = other;
                return Err(self.out_of_order("the end of a body"));
            }
        };
        let result = self.finish(kind, buf);
        if let Err(e) = &result {
            self.state = State::Failed(e.clone());
        }
        result
    }

    fn finish(&self, kind: Kind, buf: BytesMut) -> Result<Fetched, IoError> {
        let got = buf.len() as u64;
        match kind {
            Kind::Partial { served, info } => {
                content_range::check_body_len(&self.location, served.end - served.start, got)?;
                Ok(Fetched {
                    range: served,
                    bytes: buf.freeze(),
                    info,
                    whole: None,
                })
            }
            Kind::Whole { announced } => {
                if let Some(n) = announced {
                    content_range::check_body_len(&self.location, n, got)?;
                }
                let info = self.info(got);
                self.validators.check(&info)?;
                let r = content_range::slice_of_whole(&self.location, &self.asked, got)?;
                let body = buf.freeze();
                Ok(Fetched {
                    bytes: body.slice(r.start as usize..r.end as usize),
                    range: r,
                    info,
                    whole: Some(body),
                })
            }
        }
    }

    /// The transport failed (network error, timeout) or was cancelled with `error`: the
    /// machine keeps it, refuses what follows with it, and gives it back.
    pub(crate) fn fail(&mut self, error: IoError) -> IoError {
        self.state = State::Failed(error.clone());
        error
    }

    /// The read was cancelled (an abort signal): [`IoError::Cancelled`], as
    /// [`AnswerMachine::fail`].
    // Native reads are cancelled by dropping them, with their machine.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn cancel(&mut self) -> IoError {
        self.fail(IoError::Cancelled)
    }

    /// Body bytes held so far.
    #[cfg(test)]
    fn buffered(&self) -> usize {
        match &self.state {
            State::Body { buf, .. } => buf.len(),
            _ => 0,
        }
    }

    /// Bytes reserved for the body so far.
    #[cfg(test)]
    fn reserved(&self) -> usize {
        match &self.state {
            State::Body { buf, .. } => buf.capacity(),
            _ => 0,
        }
    }

    fn info(&self, len: u64) -> SourceInfo {
        SourceInfo {
            location: self.location.clone(),
            len,
            etag: self.etag.clone(),
            last_modified: self.last_modified.clone(),
        }
    }

    fn overflow(&self, kind: &Kind, cap: u64) -> IoError {
        match kind {
            Kind::Partial { served, .. } => IoError::BadContentRange {
                location: self.location.clone(),
                detail: format!("body longer than the {cap} bytes of {served:?}"),
            },
            Kind::Whole { announced: Some(n) } => IoError::BadContentRange {
                location: self.location.clone(),
                detail: format!("body longer than the {n} bytes its Content-Length announced"),
            },
            Kind::Whole { announced: None } => IoError::RangeIgnored {
                location: self.location.clone(),
                len: None,
                limit: self.limit,
            },
        }
    }

    /// The error for a call out of order: the error the machine failed with, or a network
    /// error naming the call (a transport defect, never a panic).
    fn out_of_order(&self, what: &str) -> IoError {
        match &self.state {
            State::Failed(e) => e.clone(),
            _ => IoError::Network {
                location: self.location.clone(),
                message: format!("{what} out of order in the answer"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:1/o.bin";
    const LIMIT: u64 = 8 * 1024 * 1024;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (((i * 131 + 7) ^ (i >> 8)) & 0xff) as u8)
            .collect()
    }

    /// How the scripted answer ends after its chunks.
    enum End {
        Body,
        Cancel,
        Fail(IoError),
    }

    /// One scripted answer: status, headers (name, value), body chunks, then its end.
    struct Script {
        status: u16,
        headers: Vec<(&'static str, String)>,
        chunks: Vec<Vec<u8>>,
        end: End,
    }

    fn script(status: u16, headers: &[(&'static str, &str)], chunks: Vec<Vec<u8>>) -> Script {
        Script {
            status,
            headers: headers.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            chunks,
            end: End::Body,
        }
    }

    /// What the fake transport saw.
    struct Run {
        result: Result<Fetched, IoError>,
        /// Chunks handed to the machine (the one refused included).
        fed: usize,
        /// Most body bytes the machine held at any point.
        max_buffered: usize,
        range_ignored: bool,
        /// What a chunk offered after the run got.
        late_chunk: Result<(), IoError>,
    }

    /// A fake transport: feeds `s` to a machine as a real one would, stopping at the first
    /// error (where a real transport cancels or drops the body).
    fn run(asked: ByteRange, limit: u64, validators: &Validators, s: Script) -> Run {
        let mut m = AnswerMachine::new(URL, asked, limit, validators);
        let get = |name: &str| {
            s.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        };
        let head = Head {
            status: s.status,
            content_range: get("Content-Range"),
            content_length: get("Content-Length"),
            content_encoding: get("Content-Encoding"),
            etag: get("ETag"),
            last_modified: get("Last-Modified"),
        };
        let (mut fed, mut max_buffered) = (0, 0);
        let result = (|| {
            match m.head(&head)? {
                Next::Done(f) => return Ok(f),
                Next::ReadBody => {}
            }
            for c in &s.chunks {
                fed += 1;
                m.chunk(c)?;
                max_buffered = max_buffered.max(m.buffered());
            }
            match &s.end {
                End::Body => m.end(),
                End::Cancel => Err(m.cancel()),
                End::Fail(e) => Err(m.fail(e.clone())),
            }
        })();
        let range_ignored = m.range_ignored();
        let late_chunk = m.chunk(b"x");
        Run {
            result,
            fed,
            max_buffered,
            range_ignored,
            late_chunk,
        }
    }

    fn bad(detail: &str) -> IoError {
        IoError::BadContentRange {
            location: URL.into(),
            detail: detail.into(),
        }
    }

    fn info(len: u64, etag: Option<&str>) -> SourceInfo {
        SourceInfo {
            location: URL.into(),
            len,
            etag: etag.map(str::to_string),
            last_modified: None,
        }
    }

    fn split(bytes: &[u8], at: &[usize]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut start = 0;
        for &a in at.iter().chain([bytes.len()].iter()) {
            out.push(bytes[start..a].to_vec());
            start = a;
        }
        out
    }

    #[test]
    fn partial_exact() {
        let p = pattern(100);
        let v = Validators::default();
        let s = script(
            206,
            &[
                ("Content-Range", "bytes 10-19/100"),
                ("Content-Length", "10"),
                ("ETag", "\"a\""),
            ],
            split(&p[10..20], &[3]),
        );
        let r = run(ByteRange::bounded(10..20), LIMIT, &v, s);
        let f = r.result.unwrap();
        assert_eq!(f.range, 10..20);
        assert_eq!(f.bytes[..], p[10..20]);
        assert_eq!(f.info, info(100, Some("\"a\"")));
        assert_eq!(f.whole, None);
        assert!(!r.range_ignored);
        assert_eq!(v.get(), Some(info(100, Some("\"a\""))));
        // Finished: a late chunk is a transport defect, reported as such.
        assert!(matches!(r.late_chunk, Err(IoError::Network { .. })));
    }

    #[test]
    fn partial_with_the_wrong_content_range_is_refused_before_the_body() {
        let v = Validators::default();
        let s = script(
            206,
            &[("Content-Range", "bytes 10-18/100")],
            vec![vec![0; 9]],
        );
        let r = run(ByteRange::bounded(10..20), LIMIT, &v, s);
        let want = bad(
            "asked bytes=10-19 of 100 bytes (expected 10..20), server sent \
                        \"bytes 10-18/100\"",
        );
        assert_eq!(r.result.unwrap_err(), want);
        assert_eq!(r.fed, 0);
        assert_eq!(r.late_chunk, Err(want));
        assert_eq!(v.get(), None);
        // Without a Content-Range (in browsers: hidden by CORS).
        let r = run(
            ByteRange::bounded(10..20),
            LIMIT,
            &v,
            script(206, &[], vec![]),
        );
        assert_eq!(
            r.result.unwrap_err(),
            bad(
                "206 answer without a readable Content-Range (a cross-origin server must \
                 send Access-Control-Expose-Headers: Content-Range)"
            )
        );
    }

    #[test]
    fn partial_short_body_fails_at_the_end() {
        let p = pattern(100);
        let v = Validators::default();
        let s = script(
            206,
            &[("Content-Range", "bytes 10-19/100")],
            split(&p[10..15], &[2]),
        );
        let r = run(ByteRange::bounded(10..20), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            bad("body has 5 bytes, headers announced 10")
        );
        assert_eq!(r.fed, 2);
    }

    #[test]
    fn partial_longer_body_fails_at_the_chunk_that_overflows() {
        let p = pattern(100);
        let v = Validators::default();
        // 6 + 6 + 6 bytes for a span of 10: the second chunk overflows.
        let s = script(
            206,
            &[("Content-Range", "bytes 10-19/100")],
            split(&p[10..28], &[6, 12]),
        );
        let r = run(ByteRange::bounded(10..20), LIMIT, &v, s);
        let want = bad("body longer than the 10 bytes of 10..20");
        assert_eq!(r.result.unwrap_err(), want);
        assert_eq!(r.fed, 2);
        assert_eq!(r.max_buffered, 6);
        assert_eq!(r.late_chunk, Err(want));
    }

    #[test]
    fn whole_within_the_limit() {
        let p = pattern(5000);
        let v = Validators::default();
        for headers in [vec![("Content-Length", "5000")], vec![]] {
            let s = script(200, &headers, split(&p, &[1000, 4096]));
            let r = run(ByteRange::bounded(100..200), LIMIT, &v, s);
            let f = r.result.unwrap();
            assert_eq!(f.range, 100..200);
            assert_eq!(f.bytes[..], p[100..200]);
            assert_eq!(f.whole.as_deref(), Some(&p[..]));
            assert_eq!(f.info, info(5000, None));
            assert!(r.range_ignored);
        }
    }

    #[test]
    fn whole_over_the_limit() {
        let p = pattern(5000);
        let v = Validators::default();
        // Announced: refused before any body chunk is consumed.
        let s = script(200, &[("Content-Length", "5000")], split(&p, &[1000]));
        let r = run(ByteRange::bounded(0..10), 4999, &v, s);
        let want = IoError::RangeIgnored {
            location: URL.into(),
            len: Some(5000),
            limit: 4999,
        };
        assert_eq!(r.result.unwrap_err(), want);
        assert_eq!(r.fed, 0);
        assert!(r.range_ignored);
        assert_eq!(r.late_chunk, Err(want));
        // Not announced: refused at the chunk that passes the limit, never holding more.
        let s = script(200, &[], split(&p, &[1000, 2000, 3000, 4000]));
        let r = run(ByteRange::bounded(0..10), 4999, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            IoError::RangeIgnored {
                location: URL.into(),
                len: None,
                limit: 4999
            }
        );
        assert_eq!(r.fed, 5);
        assert_eq!(r.max_buffered, 4000);
        assert!(r.range_ignored);
        // Longer than its own Content-Length: refused at once, never held.
        let s = script(200, &[("Content-Length", "100")], split(&p[..150], &[60]));
        let r = run(ByteRange::bounded(0..10), 4999, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            bad("body longer than the 100 bytes its Content-Length announced")
        );
        assert_eq!((r.fed, r.max_buffered), (2, 60));
        assert_eq!(v.get(), None);
    }

    #[test]
    fn whole_answer_to_a_range_covering_the_object() {
        let p = pattern(5000);
        let v = Validators::default();
        let s = script(200, &[("Content-Length", "5000")], split(&p, &[2500]));
        let r = run(ByteRange::Offset(0), 1000, &v, s);
        let f = r.result.unwrap();
        assert_eq!(f.range, 0..5000);
        assert_eq!(f.bytes[..], p[..]);
        assert_eq!(f.whole.as_deref(), Some(&p[..]));
        assert!(!r.range_ignored);
    }

    #[test]
    fn unsatisfiable_ranges() {
        let v = Validators::default();
        let s = script(416, &[("Content-Range", "bytes */5000")], vec![]);
        let r = run(ByteRange::bounded(6000..6010), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            IoError::RangeNotSatisfiable {
                location: URL.into(),
                range: "bytes=6000-6009".into(),
                len: 5000
            }
        );
        assert_eq!(r.fed, 0);
        // A suffix of an empty object: an empty result, no body read.
        let s = script(
            416,
            &[("Content-Range", "bytes */0")],
            vec![b"junk".to_vec()],
        );
        let r = run(ByteRange::Suffix(8), LIMIT, &v, s);
        let f = r.result.unwrap();
        assert_eq!((f.range, f.bytes.len(), f.whole), (0..0, 0, None));
        assert_eq!(f.info, info(0, None));
        assert_eq!(r.fed, 0);
        // Any other range of an empty object.
        let v = Validators::default();
        let s = script(416, &[("Content-Range", "bytes */0")], vec![]);
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            IoError::RangeNotSatisfiable {
                location: URL.into(),
                range: "bytes=0-9".into(),
                len: 0
            }
        );
    }

    #[test]
    fn error_statuses() {
        let v = Validators::default();
        for (status, want) in [
            (
                404,
                IoError::NotFound {
                    location: URL.into(),
                },
            ),
            (
                410,
                IoError::HttpStatus {
                    location: URL.into(),
                    status: 410,
                },
            ),
            (
                503,
                IoError::HttpStatus {
                    location: URL.into(),
                    status: 503,
                },
            ),
        ] {
            let s = script(
                status,
                &[("Content-Length", "9")],
                vec![b"not found".to_vec()],
            );
            let r = run(ByteRange::bounded(0..1), LIMIT, &v, s);
            assert_eq!(r.result.unwrap_err(), want);
            assert_eq!(r.fed, 0);
        }
    }

    #[test]
    fn validators_mismatch_is_source_changed() {
        let p = pattern(100);
        let v = Validators::expecting(info(100, Some("\"a\"")));
        let want = IoError::SourceChanged {
            location: URL.into(),
            detail: r#"ETag was "\"a\"", now "\"b\"""#.into(),
        };
        // 206: known from the head, before the body.
        let s = script(
            206,
            &[("Content-Range", "bytes 0-9/100"), ("ETag", "\"b\"")],
            vec![p[..10].to_vec()],
        );
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(r.result.unwrap_err(), want);
        assert_eq!(r.fed, 0);
        // 200: the length is the body's, known at its end.
        let s = script(200, &[("ETag", "\"b\"")], vec![p.clone()]);
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(r.result.unwrap_err(), want);
        assert_eq!(r.fed, 1);
        // A different length.
        let s = script(200, &[("ETag", "\"a\"")], vec![p[..99].to_vec()]);
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            IoError::SourceChanged {
                location: URL.into(),
                detail: "length was 100, now 99".into()
            }
        );
    }

    #[test]
    fn cancel_mid_body_refuses_further_chunks() {
        let p = pattern(100);
        let v = Validators::default();
        let mut s = script(
            206,
            &[("Content-Range", "bytes 0-9/100")],
            vec![p[..4].to_vec()],
        );
        s.end = End::Cancel;
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(r.result.unwrap_err(), IoError::Cancelled);
        assert_eq!(r.late_chunk, Err(IoError::Cancelled));
        // Nor does it end with a result.
        let mut m = AnswerMachine::new(URL, ByteRange::bounded(0..10), LIMIT, &v);
        let head = Head {
            status: 206,
            content_range: Some("bytes 0-9/100"),
            ..Default::default()
        };
        assert!(matches!(m.head(&head), Ok(Next::ReadBody)));
        m.chunk(&p[..4]).unwrap();
        assert_eq!(m.cancel(), IoError::Cancelled);
        assert_eq!(m.end().unwrap_err(), IoError::Cancelled);
        assert_eq!(m.room(1).unwrap_err(), IoError::Cancelled);
    }

    #[test]
    fn a_transport_error_mid_body_is_kept() {
        let v = Validators::default();
        let e = IoError::Network {
            location: URL.into(),
            message: "connection reset".into(),
        };
        let mut s = script(206, &[("Content-Range", "bytes 0-9/100")], vec![vec![1; 3]]);
        s.end = End::Fail(e.clone());
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(r.result.unwrap_err(), e);
        assert_eq!(r.late_chunk, Err(e));
    }

    #[test]
    fn an_end_without_any_body() {
        let v = Validators::default();
        // 206: short.
        let s = script(206, &[("Content-Range", "bytes 0-9/100")], vec![]);
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            bad("body has 0 bytes, headers announced 10")
        );
        // 200 of an empty object: nothing at 0..10.
        let v = Validators::default();
        let s = script(200, &[("Content-Length", "0")], vec![]);
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            IoError::RangeNotSatisfiable {
                location: URL.into(),
                range: "bytes=0-9".into(),
                len: 0
            }
        );
        // 200 of an empty object to a suffix: an empty result.
        let s = script(200, &[], vec![]);
        let f = run(ByteRange::Suffix(4), LIMIT, &v, s).result.unwrap();
        assert_eq!((f.range, f.bytes.len()), (0..0, 0));
        assert_eq!(f.whole.as_deref(), Some(&b""[..]));
    }

    #[test]
    fn a_compressed_body_is_refused() {
        let v = Validators::default();
        let s = script(
            206,
            &[
                ("Content-Range", "bytes 0-9/100"),
                ("Content-Encoding", "gzip"),
            ],
            vec![vec![0; 10]],
        );
        let r = run(ByteRange::bounded(0..10), LIMIT, &v, s);
        assert_eq!(
            r.result.unwrap_err(),
            bad("body sent with Content-Encoding \"gzip\" despite Accept-Encoding: identity")
        );
        assert_eq!(r.fed, 0);
    }

    #[test]
    fn preallocation_is_bounded() {
        let v = Validators::default();
        let mut m = AnswerMachine::new(URL, ByteRange::Offset(0), LIMIT, &v);
        let head = Head {
            status: 206,
            content_range: Some("bytes 0-99999999999/100000000000"),
            ..Default::default()
        };
        assert!(matches!(m.head(&head), Ok(Next::ReadBody)));
        let reserved = m.reserved();
        assert!(
            reserved >= MAX_PREALLOC as usize && reserved < 2 * MAX_PREALLOC as usize,
            "{reserved}"
        );
        // A small announced body reserves what it announces.
        let mut m = AnswerMachine::new(URL, ByteRange::bounded(0..10), LIMIT, &v);
        let head = Head {
            status: 206,
            content_range: Some("bytes 0-9/100000000000"),
            ..Default::default()
        };
        m.head(&head).unwrap();
        assert!(
            m.reserved() >= 10 && m.reserved() < 4096,
            "{}",
            m.reserved()
        );
    }

    #[test]
    fn calls_out_of_order_are_errors() {
        let v = Validators::default();
        let mut m = AnswerMachine::new(URL, ByteRange::bounded(0..10), LIMIT, &v);
        assert!(matches!(m.chunk(b"x"), Err(IoError::Network { .. })));
        assert!(matches!(m.end(), Err(IoError::Network { .. })));
        let head = Head {
            status: 206,
            content_range: Some("bytes 0-9/100"),
            ..Default::default()
        };
        m.head(&head).unwrap();
        assert!(matches!(m.head(&head), Err(IoError::Network { .. })));
    }
}
