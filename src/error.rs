//! The crate's public error: one enum wrapping each layer's error, with a stable `code`.

#[cfg(feature = "zarr")]
use crate::formats::zarr::ZarrError;
use crate::formats::{ChunkDecodeError, FormatError};
use crate::io::IoError;
use crate::selection::SelectionError;

/// Any error chunkwise returns. Layers keep their own enums and convert with `From`, all
/// written in this module. I/O failures of every layer arrive as [`Error::Io`] (the layers'
/// own I/O variants, `ZarrError::Io` and `Hdf5Error::Io`, are wrappers flattened here).
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
    /// A blob partition input or manifest is invalid (cargo feature `partition`).
    #[cfg(feature = "partition")]
    #[error(transparent)]
    Partition(crate::partition::PartitionError),
    /// A chunk-trace geometry, selection or cache setting is invalid (cargo feature
    /// `chunk-trace`).
    #[cfg(feature = "chunk-trace")]
    #[error(transparent)]
    ChunkTrace(crate::chunk_trace::ChunkTraceError),
    /// An array handle obtained from a store before the store was refreshed
    /// ([`crate::store::RemoteStore::refresh`]): its reads fail, as the spec's "existing
    /// child handles of a refreshed store become stale and must be reacquired".
    #[error("{location}: this array handle is from before a refresh of its store ({detail}) and reads no more; get it again with store.get")]
    Stale {
        /// The array's location.
        location: String,
        /// The generations (the handle's and the store's).
        detail: String,
    },
    /// A cache's storage failed where the caller asked for it directly (`clearCache`,
    /// `cacheUsage`, `chunkwise cache`); reads never fail for it (a failing store is a miss).
    #[error("{0}")]
    Cache(crate::cache::backend::BackendError),
    /// A preview that cannot be rendered ([`crate::render::RenderError`]).
    #[cfg(feature = "png")]
    #[error(transparent)]
    Render(#[from] crate::render::RenderError),
}

impl Error {
    /// The message to show a person: [`Error`]'s `Display` with the user info and query of
    /// every URL in it redacted ([`crate::cache::identity::redact_text`]), so a signed URL's
    /// token or a `user:password@` never reaches a terminal, a log or a JS error. The CLI and
    /// the JS bindings print only this.
    pub fn message(&self) -> String {
        crate::cache::identity::redact_text(&self.to_string())
    }

    /// A stable, machine-readable code (`error.code` in JS, `"code"` in CLI JSON errors),
    /// one of [`ERROR_CODES`].
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
            // A chunk of a C-Blosc2 plugin codec or filter (ZFP, NDLZ, NDCELL, ...) is well
            // formed: UNSUPPORTED, as a format feature is.
            Error::Format(FormatError::Chunk {
                source: ChunkDecodeError::Blosc2(e) | ChunkDecodeError::ZarrBlosc(e),
                ..
            }) if e.is_plugin() => "UNSUPPORTED",
            Error::Format(FormatError::Chunk { .. }) => "DECODE",
            Error::Format(FormatError::NoSuchNode { .. }) => "NOT_FOUND",
            Error::Format(FormatError::PathNeeded { .. }) => "INVALID_ARGUMENT",
            Error::Format(_) => "INVALID_DATA",
            Error::Selection(_) => "INVALID_SELECTION",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            #[cfg(feature = "partition")]
            Error::Partition(e) => e.code(),
            #[cfg(feature = "chunk-trace")]
            Error::ChunkTrace(_) => "CHUNK_TRACE",
            Error::Stale { .. } => "STALE",
            Error::Cache(_) => "CACHE",
            #[cfg(feature = "png")]
            Error::Render(e) => e.code(),
        }
    }
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The first 64 characters (Unicode scalar values) of a caller's string, then "..." if it was
/// longer: for a message that repeats a value it refuses (a `cache`, `cacheBackend` or `source`
/// that names nothing known), so that a megabyte string is not echoed whole.
pub fn excerpt(s: &str) -> String {
    const SHOWN: usize = 64;
    let mut cut: String = s.chars().take(SHOWN).collect();
    if cut.len() < s.len() {
        cut.push_str("...");
    }
    cut
}

/// Writes [`ERROR_CODES`] and [`ERROR_CODES_TS`] from one list, so the two cannot drift.
macro_rules! error_codes {
    ($first:literal $(, $rest:literal)* $(,)?) => {
        /// Every code [`Error::code`] returns (JS `error.code`, CLI JSON `"code"`), the
        /// partition codes (`partition::PartitionError::code`) included. One list for every
        /// build: a build without the features `partition` or `chunk-trace` lists their codes
        /// too (its `.d.ts` types `ErrorCode` as the full package's does) but never returns
        /// them. A native test checks that each is returned for some error and that nothing
        /// else is.
        pub const ERROR_CODES: &[&str] = &[$first $(, $rest)*];

        /// TypeScript declarations of the codes ([`ERROR_CODES`] as the union `ErrorCode`)
        /// and of the `ChunkwiseError` the JS bindings throw; `src/wasm/mod.rs` emits them
        /// into the module's `.d.ts`.
        pub const ERROR_CODES_TS: &str = concat!(
            "\n/** Every `code` a chunkwise error carries (`Error::code` in src/error.rs). */\n",
            "export type ErrorCode = \"", $first, "\"", $(" | \"", $rest, "\"",)* ";\n",
            "/** What chunkwise's functions throw and its promises reject with: an `Error`\n",
            " *  of this class (`err instanceof ChunkwiseError`), named \"ChunkwiseError\",\n",
            " *  whose `code` says what failed (src/wasm/error.js). One exception, as the\n",
            " *  platform's own APIs do: an aborted operation rejects with `signal.reason`\n",
            " *  (an \"AbortError\" DOMException by default) and a `timeoutMs` deadline with a\n",
            " *  \"TimeoutError\" DOMException; chunkwise gives those DOMExceptions a `code`\n",
            " *  (\"CANCELLED\", \"TIMEOUT\") too. */\n",
            "export class ChunkwiseError extends Error {\n",
            "  constructor(message: string, code: ErrorCode, field?: string);\n",
            "  name: \"ChunkwiseError\";\n",
            "  code: ErrorCode;\n",
            "  /** The partition functions' errors: the path of the input field at fault. */\n",
            "  field?: string;\n",
            "}\n",
        );
    };
}

error_codes![
    "NOT_FOUND",
    "CANCELLED",
    "RANGE_IGNORED",
    "RANGE_NOT_SATISFIABLE",
    "HTTP_STATUS",
    "NETWORK",
    "SOURCE_CHANGED",
    "TIMEOUT",
    "REDIRECT",
    "IO",
    "UNRECOGNISED_FORMAT",
    "UNSUPPORTED",
    "DECODE",
    "INVALID_ARGUMENT",
    "INVALID_DATA",
    "INVALID_SELECTION",
    "CHUNK_TRACE",
    "MANIFEST_SCHEMA",
    "PARTITION_INVALID",
    "JSON",
    "NOT_A_ZARR_STORE",
    "STORE",
    "STALE",
    "CACHE",
];

// Every conversion between the layers' errors lives here.

impl From<SelectionError> for Error {
    fn from(e: SelectionError) -> Self {
        Error::Selection(e)
    }
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Self {
        Error::Format(e)
    }
}

#[cfg(feature = "partition")]
impl From<crate::partition::PartitionError> for Error {
    fn from(e: crate::partition::PartitionError) -> Self {
        Error::Partition(e)
    }
}

#[cfg(feature = "chunk-trace")]
impl From<crate::chunk_trace::ChunkTraceError> for Error {
    fn from(e: crate::chunk_trace::ChunkTraceError) -> Self {
        Error::ChunkTrace(e)
    }
}

/// A Zarr error by its variant: I/O into [`Error::Io`] (a missing array as
/// `IoError::NotFound`, code `NOT_FOUND`), a group where an array was asked for as
/// [`Error::InvalidArgument`], the rest as the [`FormatError`] of format `zarr` naming the key.
#[cfg(feature = "zarr")]
impl From<ZarrError> for Error {
    fn from(e: ZarrError) -> Self {
        match e {
            ZarrError::Io(io) => Error::Io(io),
            ZarrError::NotFound { location, .. } => Error::Io(IoError::NotFound { location }),
            e @ ZarrError::NotAnArray { .. } => Error::InvalidArgument(e.to_string()),
            ZarrError::Invalid { key, detail } => Error::Format(FormatError::Invalid {
                location: key,
                format: "zarr",
                detail,
            }),
            ZarrError::Unsupported { key, detail } => Error::Format(FormatError::Unsupported {
                location: key,
                format: "zarr",
                detail,
            }),
            ZarrError::Chunk { key, chunk, source } => Error::Format(FormatError::Chunk {
                location: key,
                chunk,
                range: None,
                source,
            }),
        }
    }
}

impl From<crate::codec::blosc2::CodecError> for ChunkDecodeError {
    fn from(e: crate::codec::blosc2::CodecError) -> Self {
        ChunkDecodeError::Blosc2(e)
    }
}

#[cfg(feature = "hdf5")]
impl From<crate::formats::hdf5::filters::FilterError> for ChunkDecodeError {
    fn from(e: crate::formats::hdf5::filters::FilterError) -> Self {
        ChunkDecodeError::Hdf5Filter(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::{OpenOptions, ReadOptions, RemoteArray};
    use crate::codec::blosc2::CodecError;
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
    /// `RemoteArray` fails with `DECODE` naming the chunk's stored bytes, and the codec's own
    /// variant (`CodecError::InvalidHeader`) is reachable through `source()`.
    #[cfg(feature = "b2nd")]
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
        let want = format!(
            "chunk 0 (bytes {}..{}): invalid chunk header: typesize = 0: zero",
            range.start, range.end
        );
        assert!(err.message().ends_with(&want), "{err}");
        assert!(
            matches!(&err, Error::Format(FormatError::Chunk { chunk: 0, range: Some(r), .. })
                if *r == range),
            "{err:?}"
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

    /// An h5py file whose Blosc-filtered (32001, hdf5plugin) chunk at the address h5py
    /// reported (tests/fixtures/hdf5/manifest.json: `/blosc_lz4_i4` chunk 0 at 2048, 391
    /// bytes) says typesize 0: `DECODE` naming the bytes, with the filter's and the codec's
    /// variants behind `source()`.
    #[cfg(feature = "hdf5")]
    #[tokio::test(flavor = "current_thread")]
    async fn corrupt_hdf5_blosc_chunk_keeps_the_filter_and_codec_variants() {
        use crate::formats::hdf5::filters::FilterError;
        let mut bytes = fixture("hdf5/plugins.h5");
        bytes[2048 + 3] = 0;
        let source = Arc::new(MemorySource::new("mem://plugins.h5", bytes));
        let options = OpenOptions {
            path: Some("/blosc_lz4_i4".into()),
            ..OpenOptions::default()
        };
        let array = RemoteArray::open_source(source, Traffic::new(), options)
            .await
            .unwrap();
        let err = array
            .read(
                &Selection::parse("0:16, 0:10").unwrap(),
                &ReadOptions::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), "DECODE", "{err}");
        assert!(
            err.message().ends_with(
                "chunk 0 (bytes 2048..2439): blosc: invalid chunk header: typesize = 0: zero"
            ),
            "{err}"
        );
        let chain = chain(&err);
        assert!(
            chain
                .iter()
                .any(|e| matches!(e.downcast_ref::<FilterError>(), Some(FilterError::Blosc(_)))),
            "{err:?}"
        );
        assert!(
            chain.iter().any(|e| matches!(
                e.downcast_ref::<CodecError>(),
                Some(CodecError::InvalidHeader {
                    field: "typesize",
                    ..
                })
            )),
            "{err:?}"
        );
    }

    /// A source whose reads fail with `error` (the head given at open is all it serves).
    #[cfg(feature = "hdf5")]
    struct Failing {
        error: IoError,
    }

    #[cfg(feature = "hdf5")]
    #[async_trait::async_trait]
    impl crate::io::RangeSource for Failing {
        fn location(&self) -> &str {
            "mem://failing.h5"
        }
        async fn read(
            &self,
            _range: crate::io::ByteRange,
        ) -> std::result::Result<crate::io::Fetched, IoError> {
            Err(self.error.clone())
        }
    }

    #[cfg(feature = "hdf5")]
    fn io_cases() -> Vec<(IoError, &'static str)> {
        use crate::io::TimeoutScope;
        let location = "mem://failing.h5".to_string();
        vec![
            (
                IoError::NotFound {
                    location: location.clone(),
                },
                "NOT_FOUND",
            ),
            (
                IoError::Timeout {
                    location: location.clone(),
                    millis: 5,
                    scope: TimeoutScope::Request,
                },
                "TIMEOUT",
            ),
            (IoError::Cancelled, "CANCELLED"),
            (
                IoError::HttpStatus {
                    location: location.clone(),
                    status: 503,
                },
                "HTTP_STATUS",
            ),
            (
                IoError::File {
                    location,
                    message: "denied".into(),
                },
                "IO",
            ),
        ]
    }

    /// I/O failures of every layer arrive as `Error::Io` holding the transport's error,
    /// with its code: from the transport, from a Zarr read (`ZarrError::Io`), from HDF5
    /// discovery (`Hdf5Error::Io`).
    #[cfg(all(feature = "hdf5", feature = "zarr"))]
    #[test]
    fn io_errors_of_every_layer_are_error_io() {
        use crate::formats::hdf5::Hdf5Error;
        for (io, code) in io_cases() {
            for err in [
                Error::from(io.clone()),
                Error::from(ZarrError::Io(io.clone())),
                Hdf5Error::Io(io.clone()).into_error("mem://failing.h5"),
            ] {
                assert!(matches!(&err, Error::Io(e) if *e == io), "{err:?}");
                assert_eq!(err.code(), code, "{err}");
            }
        }
        let missing = Error::from(ZarrError::NotFound {
            location: "mem://s/a".into(),
            detail: "no zarr.json".into(),
        });
        assert!(
            matches!(missing, Error::Io(IoError::NotFound { .. })),
            "{missing:?}"
        );
        assert_eq!(missing.code(), "NOT_FOUND");
    }

    /// HDF5 discovery of a real h5py file (tests/fixtures/gen_hdf5.py) whose later reads
    /// fail: the open returns `Error::Io` with the read's code, for each kind of failure.
    #[cfg(feature = "hdf5")]
    #[tokio::test(flavor = "current_thread")]
    async fn hdf5_discovery_io_failures_keep_their_code() {
        let bytes = fixture("hdf5/gzip_shuffle.h5");
        let len = bytes.len() as u64;
        let head = bytes::Bytes::from(bytes[..512].to_vec());
        for (io, code) in io_cases() {
            let source = Failing { error: io.clone() };
            let err =
                crate::formats::hdf5::Hdf5Array::open(&source, head.clone(), len, Some("/ints"))
                    .await
                    .unwrap_err();
            assert!(matches!(&err, Error::Io(e) if *e == io), "{err:?}");
            assert_eq!(err.code(), code, "{err}");
        }
    }

    /// One error of every variant of every layer (each I/O and format variant, a
    /// selection, an argument, each partition variant, a chunk trace).
    fn representatives() -> Vec<Error> {
        use crate::io::TimeoutScope;
        let l = || "https://example.org/a.b2nd".to_string();
        let io = vec![
            IoError::InvalidRange {
                range: "bytes=5-4".into(),
            },
            IoError::RangeNotSatisfiable {
                location: l(),
                range: "bytes=9-9".into(),
                len: 3,
            },
            IoError::NotFound { location: l() },
            IoError::HttpStatus {
                location: l(),
                status: 500,
            },
            IoError::RangeIgnored {
                location: l(),
                len: None,
                limit: 1,
            },
            IoError::BadContentRange {
                location: l(),
                detail: "x".into(),
            },
            IoError::SourceChanged {
                location: l(),
                detail: "x".into(),
            },
            IoError::Network {
                location: l(),
                message: "x".into(),
            },
            IoError::File {
                location: l(),
                message: "x".into(),
            },
            IoError::Cancelled,
            IoError::Timeout {
                location: l(),
                millis: 1,
                scope: TimeoutScope::Operation,
            },
            IoError::Redirect {
                location: l(),
                message: "x".into(),
            },
        ];
        let format = vec![
            FormatError::Unrecognised {
                location: l(),
                magic: "00".into(),
            },
            FormatError::Invalid {
                location: l(),
                format: "b2nd",
                detail: "x".into(),
            },
            FormatError::Unsupported {
                location: l(),
                format: "b2nd",
                detail: "x".into(),
            },
            FormatError::NoSuchNode {
                location: l(),
                detail: "x".into(),
            },
            FormatError::PathNeeded {
                location: l(),
                detail: "x".into(),
            },
            FormatError::Chunk {
                location: l(),
                chunk: 0,
                range: None,
                source: ChunkDecodeError::Layout("x".into()),
            },
        ];
        #[cfg(feature = "partition")]
        use crate::partition::PartitionError;
        #[cfg(feature = "partition")]
        let partition = vec![
            PartitionError::Schema {
                field: "f".into(),
                message: "x".into(),
            },
            PartitionError::Invalid {
                field: "f".into(),
                message: "x".into(),
            },
            PartitionError::Json {
                message: "x".into(),
            },
            PartitionError::NotAZarrStore { scope: "s".into() },
            PartitionError::Store {
                key: "k".into(),
                message: "x".into(),
            },
        ];
        let mut all: Vec<Error> = io.into_iter().map(Error::Io).collect();
        all.extend(format.into_iter().map(Error::Format));
        all.push(Error::Selection(SelectionError::ZeroStep));
        all.push(Error::InvalidArgument("x".into()));
        #[cfg(feature = "partition")]
        all.extend(partition.into_iter().map(Error::Partition));
        #[cfg(feature = "chunk-trace")]
        all.push(Error::ChunkTrace(
            crate::chunk_trace::ChunkTraceError::InvalidGeometry("x".into()),
        ));
        all.push(Error::Stale {
            location: "x".into(),
            detail: "x".into(),
        });
        all.push(Error::Cache(crate::cache::backend::BackendError::Storage {
            backend: "x",
            detail: "x".into(),
        }));
        all
    }

    /// `ERROR_CODES` holds exactly the codes errors return: each representative's code is
    /// listed, each listed code is returned by some representative, none twice. A build
    /// without `partition` or `chunk-trace` still lists their codes (one list for every
    /// build), so those count as returned there.
    #[test]
    fn error_codes_list_every_code_and_only_those() {
        let mut returned: std::collections::BTreeSet<&str> =
            representatives().iter().map(Error::code).collect();
        if !cfg!(feature = "partition") {
            returned.extend([
                "MANIFEST_SCHEMA",
                "PARTITION_INVALID",
                "JSON",
                "NOT_A_ZARR_STORE",
                "STORE",
            ]);
        }
        if !cfg!(feature = "chunk-trace") {
            returned.insert("CHUNK_TRACE");
        }
        let listed: std::collections::BTreeSet<&str> = ERROR_CODES.iter().copied().collect();
        assert_eq!(listed.len(), ERROR_CODES.len(), "a code listed twice");
        assert_eq!(returned, listed);
    }

    /// The TypeScript union names exactly `ERROR_CODES`, in order, and types
    /// `ChunkwiseError.code` with it.
    #[test]
    fn typescript_union_matches_the_list() {
        let line = ERROR_CODES_TS
            .lines()
            .find_map(|l| l.strip_prefix("export type ErrorCode = "))
            .expect("an ErrorCode type");
        let union: Vec<&str> = line
            .strip_suffix(';')
            .expect("ends with ;")
            .split(" | ")
            .map(|c| c.trim_matches('"'))
            .collect();
        assert_eq!(union, ERROR_CODES);
        assert!(ERROR_CODES_TS.contains("export class ChunkwiseError extends Error {"));
        assert!(ERROR_CODES_TS.contains("  code: ErrorCode;\n"));
    }
}
