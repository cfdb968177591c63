//! The `chunkwise` command line: `serve`, `ls`, `read`, `preview`, `info`, `attrs`, `chunks`, `bench`,
//! `partition`, `resolve`, `chunk-trace`, `cache`. Output contracts: `read` prints one JSON line
//! `{"shape":[..],"dtype":"<f8","requests":N,"bytes":N,"missing_chunks":N}` (`missing_chunks`:
//! Zarr chunks absent from the store, read as the fill value; 0 for other formats); errors print
//! `{"error":{"code":"..","message":".."}}` on stderr and exit with status 1.

use chunkwise::array::{OpenOptions, Progress, ReadOptions};
use chunkwise::npy;
use chunkwise::selection::Selection;
use clap::{Parser, Subcommand};
use native_harness::source;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Examples of the whole command line (`chunkwise --help`).
const EXAMPLES: &str = "Examples:
  chunkwise ls data.h5
  chunkwise info http://127.0.0.1:8000/zarr/v3.zarr --path /temperature
  chunkwise read data.h5 --path /group/temperature --select \"0:5, ::2\" --print
  chunkwise read https://example.org/field.b2nd --select \"0:128\" --out slice.npy
  chunkwise attrs data.h5 --path /group/temperature
  chunkwise serve --root tests/fixtures --port 8000

SOURCE is an http(s):// URL or a local path (a file, or a Zarr store directory).";

const LS_EXAMPLES: &str = "Examples:
  chunkwise ls tests/fixtures/hdf5/groups.h5
  chunkwise ls http://127.0.0.1:8000/zarr/v3.zarr
  chunkwise ls tests/fixtures/zarr/v2.zarr --json
  chunkwise ls tests/fixtures/hdf5/groups.h5 --path /model";

const READ_EXAMPLES: &str = "Examples:
  chunkwise read tests/fixtures/hdf5/groups.h5 --path /model/weights --print
  chunkwise read http://127.0.0.1:8000/sample/field2d_f4.b2nd --select \"0:128, ::2\" --out slice.npy
  chunkwise read http://127.0.0.1:8000/zarr/v3.zarr --path /temperature --select \"-1\"
  chunkwise read data.h5 --path /data --select \"0:100\" --cache disk --cache-dir /tmp/cw
  chunkwise read https://example.org/a.b2nd --header \"Authorization: Bearer abc\" --timeout 30
  chunkwise read http://127.0.0.1:8000/tables.h5 --path /run/table --columns id,tag --select \"0:100\" --out rows.npy";

const PREVIEW_EXAMPLES: &str = "Examples:
  chunkwise preview http://127.0.0.1:8000/sample/field2d_f4.b2nd --select \"0:128, :\" --out field.png
  chunkwise preview data.h5 --path /group/temperature --select \"0, :, :\" --out t.png --cmap magma --vmin -5 --vmax 30

The image has one pixel per element, row 0 at the top; NaN and infinities are transparent.";

const INFO_EXAMPLES: &str = "Examples:
  chunkwise info http://127.0.0.1:8000/sample/field2d_f4.b2nd
  chunkwise info tests/fixtures/zarr/v3.zarr --path /temperature --json
  chunkwise info tests/fixtures/hdf5/groups.h5";

const ATTRS_EXAMPLES: &str = "Examples:
  chunkwise attrs tests/fixtures/hdf5/groups.h5 --path /model/weights
  chunkwise attrs tests/fixtures/zarr/v3.zarr
  chunkwise attrs http://127.0.0.1:8000/sample/field2d_f4.b2nd";

const REFERENCE_EXAMPLES: &str = "Examples:
  chunkwise reference http://127.0.0.1:8000/sample/sample.h5 --out ref.json
  chunkwise reference http://127.0.0.1:8000/zarr/v3.zarr --out zarr-ref.json

Then give the file as SOURCE of read, info, ls or attrs (read ref.json --path /surface/precip):
it reopens the store with no discovery request.";

const CHUNKS_EXAMPLES: &str = "Examples:
  chunkwise chunks tests/fixtures/hdf5/gzip_shuffle.h5 --path /ints
  chunkwise chunks tests/fixtures/hdf5/gzip_shuffle.h5 --path /ints --json";

const SERVE_EXAMPLES: &str = "Examples:
  chunkwise serve --root tests/fixtures --port 8000
  chunkwise serve --root tests/fixtures --port 0 --latency-ms 40 --quiet
  chunkwise serve --root tests/fixtures --fault status=.zarray:503 --fault after=3:never-answer";

const PARTITION_EXAMPLES: &str = "Examples:
  chunkwise partition tests/fixtures/zarr_partition/v3.zarr --policy tests/fixtures/zarr_partition/policy.json --out manifest.json
  chunkwise partition tests/fixtures/zarr_partition/v3.zarr --previous manifest.json --dry-run";

const RESOLVE_EXAMPLES: &str = "Examples:
  chunkwise resolve manifest.json tas/c/3/0/0";

const CHUNK_TRACE_EXAMPLES: &str = "Examples:
  chunkwise chunk-trace --experiment --real
  chunkwise chunk-trace --geometry G.json --trace T.json --nslots 17 --nbytes 16384 --w0 0
  chunkwise chunk-trace data.h5 --path /group/dataset --trace T.json";

const CACHE_EXAMPLES: &str = "Examples:
  chunkwise cache ls --cache-dir /tmp/cw
  chunkwise cache verify --cache-dir /tmp/cw
  chunkwise cache clear --cache-dir /tmp/cw";

const BENCH_EXAMPLES: &str = "Examples:
  chunkwise bench decode --quick
  chunkwise bench remote --latency-ms 40
  chunkwise bench b2z --runs 5 --latency-ms 40
  chunkwise bench caterva2 --runs 3 --latency-ms 40
  chunkwise bench partition";

#[derive(Parser)]
#[command(
    name = "chunkwise",
    version,
    about = "Read remote Blosc2, HDF5 and Zarr arrays by HTTP range requests",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The source arguments of `read`, `info` and `chunks`.
#[derive(clap::Args)]
struct SourceArgs {
    /// http(s) URL or local path (a file, or a Zarr store directory).
    source: String,
    /// Path inside a container, e.g. /group/data: the array to read (HDF5 dataset, Zarr
    /// array; default: the container's only root array); for attrs an array or a group, for
    /// ls the group whose subtree is listed.
    #[arg(long)]
    path: Option<String>,
    /// Cache policy: memory, disk (persists across runs in --cache-dir) or none.
    #[arg(long, default_value = "memory")]
    cache: String,
    /// Cache directory for --cache disk (discovery records, payload, small-source copies).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Extra request header "Name: value" (repeatable).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Name that identifies the source in the caches instead of its URL, for a URL that
    /// rotates (signed URLs); needed for --cache disk to persist a signed URL's entries.
    #[arg(long)]
    cache_key: Option<String>,
    /// Deadline in seconds for the whole command (open and read, retries included); past it
    /// the command fails with code TIMEOUT. Without it each request still has 60 s.
    #[arg(long)]
    timeout: Option<f64>,
    /// What SOURCE is: "auto" (default: a file, an object URL or a Zarr root, its format
    /// detected) or "caterva2" (a Caterva2 server's URL base; --path names a dataset such
    /// as @public/dir/ds.b2nd, and ls lists its roots and datasets).
    #[arg(long = "source", default_value = "auto", value_name = "KIND")]
    source_kind: String,
    /// Caterva2 user name for the login (with --password-env).
    #[arg(long)]
    username: Option<String>,
    /// Name of the environment variable holding the Caterva2 password (never the password
    /// itself on the command line).
    #[arg(long, value_name = "VAR")]
    password_env: Option<String>,
    /// Name of the environment variable holding a Caterva2 token (the c2subauth cookie).
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
}

impl SourceArgs {
    /// The cache coordinator of `--cache` and `--cache-dir` ([`source::coordinator`]).
    fn coordinator(&self) -> Result<chunkwise::cache::CacheCoordinator, chunkwise::Error> {
        source::coordinator_for(&self.source, &self.cache, self.cache_dir.as_deref())
    }

    /// The `--header` values as (name, value) pairs ([`parse_headers`]).
    fn request_headers(&self) -> Result<Vec<(String, String)>, chunkwise::Error> {
        parse_headers(&self.headers)
    }

    /// `--source`, `--username`, `--password-env` and `--token-env` as the open's source
    /// kind and credentials ([`source::caterva2_options`]).
    fn source_kind(
        &self,
    ) -> Result<
        (
            chunkwise::array::SourceKind,
            Option<chunkwise::formats::caterva2::Credentials>,
        ),
        chunkwise::Error,
    > {
        source::caterva2_options(
            &self.source_kind,
            self.username.as_deref(),
            self.password_env.as_deref(),
            self.token_env.as_deref(),
        )
    }

    /// The `--timeout` deadline.
    fn deadline(&self) -> Result<Option<std::time::Duration>, chunkwise::Error> {
        self.timeout
            .map(|t| {
                std::time::Duration::try_from_secs_f64(t)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        chunkwise::Error::InvalidArgument(format!(
                            "--timeout {t} is not a positive number of seconds"
                        ))
                    })
            })
            .transpose()
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve a directory over HTTP on 127.0.0.1 with range requests, CORS and optional latency.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve {
        /// Directory to serve.
        #[arg(long)]
        root: PathBuf,
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// Milliseconds added before each answer.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
        /// Simulated link bandwidth in bytes per second, shared by all answers (0: unlimited).
        #[arg(long, default_value_t = 0, value_name = "BYTES_PER_S")]
        bandwidth: u64,
        /// Answer 503 to the first N GET requests (fault testing).
        #[arg(long, default_value_t = 0)]
        fail_first: u64,
        /// Ignore Range headers and always send whole files (fault testing).
        #[arg(long)]
        ignore_range: bool,
        /// No log line per request.
        #[arg(long)]
        quiet: bool,
        /// Test fault (repeatable): never-answer (read requests, never answer);
        /// trickle-ms=N (body one byte every N ms); etag-per-request (a new ETag on every
        /// answer); redirect-loop (302 to the same URL); redirect-endless (302 to a new
        /// ?hop=N each time); status=SUFFIX:CODE (answer CODE to paths ending in SUFFIX);
        /// after=N:SPEC (SPEC only once N GET requests were received).
        #[arg(long = "fault", value_name = "SPEC")]
        faults: Vec<native_harness::serve::Fault>,
        /// Access-Control-Allow-Origin sent on every answer (default *, any origin).
        #[arg(long, default_value = "*")]
        cors_origin: String,
    },
    /// List the groups and arrays of a container (HDF5 file, Zarr store) as a tree: arrays
    /// with shape and dtype, links and nodes that cannot be read with the reason. A
    /// single-array source prints one line. With --path, the subtree of that group (or the
    /// one array) only.
    #[command(after_help = LS_EXAMPLES)]
    Ls {
        #[command(flatten)]
        src: SourceArgs,
        /// Print the node list as JSON: [{"path","kind","shape","dtype","error"}, ...].
        #[arg(long)]
        json: bool,
    },
    /// Read a selection; prints {"shape","dtype","requests","bytes","missing_chunks"} as one
    /// JSON line (missing_chunks: Zarr chunks absent from the store, read as the fill value).
    /// With --print the values go to stdout as numpy's print() shows them and that line to
    /// stderr. On a terminal a progress line (chunks, bytes, rate, time left) is drawn on
    /// stderr while the read runs.
    #[command(after_help = READ_EXAMPLES)]
    Read {
        #[command(flatten)]
        src: SourceArgs,
        /// numpy-like selection, e.g. "0, 10:20, ::2" or "-1" (default: everything).
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        select: String,
        /// Write the selection as .npy.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the values as numpy's print() does (summarised past 1000 items, 8 digits);
        /// the JSON line then goes to stderr.
        #[arg(long)]
        print: bool,
        /// The source may change at its URL (assume_immutable = false; standalone .b2nd and
        /// Caterva2 datasets only): a held discovery record is checked with one request
        /// before it is reused.
        #[arg(long)]
        mutable: bool,
        /// Read a table's columns (comma-separated names) instead of an array: --path is the
        /// table (a 1-D record dataset or a group of equal-length 1-D arrays; required for
        /// HDF5, default the root), --select one slice start:stop of live rows, --out a
        /// structured .npy.
        #[arg(long)]
        columns: Option<String>,
        /// Largest gap in bytes between two wanted byte ranges read through by one request
        /// (default 32768; 0 merges only touching ranges; at most 1 GiB). Array reads only.
        #[arg(long, value_name = "BYTES")]
        coalesce_gap: Option<u64>,
        /// Largest merged request in bytes (default: no bound); a single range longer than
        /// this is still read whole. Array reads only.
        #[arg(long, value_name = "BYTES")]
        max_merged_bytes: Option<u64>,
    },
    /// Render a 2-D selection (size-1 dimensions aside) as a PNG file through a colour map:
    /// one pixel per element, row 0 on top, vmin/vmax by default the finite minimum and
    /// maximum, NaN and infinities transparent. Source options as `read`. Prints
    /// {"shape","dtype","cmap","vmin","vmax","requests","bytes","png_bytes"} as one JSON line.
    #[command(after_help = PREVIEW_EXAMPLES)]
    Preview {
        #[command(flatten)]
        src: SourceArgs,
        /// numpy-like selection giving a 2-D result, e.g. "0, :, :" (default: everything).
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        select: String,
        /// The PNG file to write.
        #[arg(long)]
        out: PathBuf,
        /// Colour map: viridis, gray, magma, inferno, plasma or RdBu.
        #[arg(long, default_value = "viridis")]
        cmap: String,
        /// Value at the map's first entry (default: the smallest finite value).
        #[arg(long, allow_hyphen_values = true)]
        vmin: Option<f64>,
        /// Value at the map's last entry (default: the largest finite value).
        #[arg(long, allow_hyphen_values = true)]
        vmax: Option<f64>,
        /// Largest image in pixels (rows x columns); above it the command fails with
        /// INVALID_SELECTION before reading.
        #[arg(long, default_value_t = chunkwise::render::DEFAULT_MAX_PIXELS)]
        max_pixels: u64,
    },
    /// Show what discovery finds: shape, dtype, chunks, codecs (--json also "requests",
    /// "bytes", "cache_status": created, reused or invalidated, and "dims" when the source
    /// names dimensions). On a container without --path whose root does not hold exactly
    /// one dataset, prints the hierarchy instead: the tree of `ls`, or with --json one JSON
    /// list of {"path","kind","shape","dtype","error"} (kind "group", "array" or "link").
    #[command(after_help = INFO_EXAMPLES)]
    Info {
        #[command(flatten)]
        src: SourceArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The source may change at its URL (assume_immutable = false; standalone .b2nd and
        /// Caterva2 datasets only): a held discovery record is checked with one request
        /// before it is reused.
        #[arg(long)]
        mutable: bool,
    },
    /// Print the attributes of an array or a group as one JSON object (HDF5 attributes, Zarr
    /// .zattrs / v3 attributes, Blosc2 vlmeta): numeric arrays as nested lists, NaN and
    /// infinities as the strings "NaN", "Infinity", "-Infinity". Without --path: the root
    /// group of a container, or the array of a single-array source.
    #[command(after_help = ATTRS_EXAMPLES)]
    Attrs {
        #[command(flatten)]
        src: SourceArgs,
    },
    /// Export a portable reference of a container (HDF5 file, Zarr store): its public URL
    /// (no query, no user info; headers are never written), size and validators, and the
    /// discovery records of its listing and of every array (HDF5 chunk maps included), from
    /// which `read`, `info` and `ls` of the written file reopen it with no discovery request.
    /// Prints one JSON line: out, kind, records, payload_chunks, payload_bytes, sidecar,
    /// requests, bytes.
    #[command(after_help = REFERENCE_EXAMPLES)]
    Reference {
        #[command(flatten)]
        src: SourceArgs,
        /// Where the reference document is written (JSON).
        #[arg(long)]
        out: PathBuf,
        /// Also export the compressed payload the cache holds for the source (with --cache
        /// disk, chunks read by earlier commands): inline (base64) up to 1 MiB, beyond in a
        /// sidecar file OUT.payload next to the reference; a reopen puts it back in its cache.
        #[arg(long)]
        with_payload: bool,
        /// Mark the reference mutable: a reopen writes its records into the --cache of the
        /// reopening command (disk included) and may refresh; by default an immutable
        /// snapshot, reopened in memory only.
        #[arg(long)]
        mutable: bool,
    },
    /// Print the chunk map of an HDF5 dataset: each allocated chunk's element offset, byte
    /// address, stored size and filter mask (for .b2nd and Zarr arrays, `info` gives the
    /// chunk shape, count and codecs).
    #[command(after_help = CHUNKS_EXAMPLES)]
    Chunks {
        #[command(flatten)]
        src: SourceArgs,
        /// Print a JSON list of {"offset","address","size","filter_mask"}.
        #[arg(long)]
        json: bool,
    },
    /// Partition a Zarr store (directory, or http(s) URL with consolidated metadata) or an
    /// arrays JSON file into blobs for tape tiering; prints the diff against the previous
    /// manifest and writes the new one.
    #[command(after_help = PARTITION_EXAMPLES)]
    Partition {
        /// Zarr store directory or URL, or a JSON list of arrays.
        input: PathBuf,
        /// Scope (prefix) of the manifest.
        #[arg(long)]
        scope: Option<String>,
        /// The manifest currently in effect (its blobs are kept).
        #[arg(long)]
        previous: Option<PathBuf>,
        /// Policy JSON (thresholds).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Report only, write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Where to write the manifest.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Resolve an object key to its blob and tape instance in a manifest.
    #[command(after_help = RESOLVE_EXAMPLES)]
    Resolve {
        /// Manifest JSON (schema 3).
        manifest: PathBuf,
        /// Object key, e.g. tas/c/137/0/0.
        key: String,
    },
    /// Simulate HDF5's raw-data chunk cache on a selection trace (and measure real HDF5).
    #[command(after_help = CHUNK_TRACE_EXAMPLES)]
    ChunkTrace {
        /// HDF5 file (URL or path) whose dataset `--path` gives the chunk geometry.
        source: Option<String>,
        /// Dataset path inside SOURCE.
        #[arg(long)]
        path: Option<String>,
        /// Reproduce the chunk-cache experiment's table.
        #[arg(long)]
        experiment: bool,
        /// Chunk geometry JSON.
        #[arg(long)]
        geometry: Option<PathBuf>,
        /// Trace JSON.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// rdcc_nslots.
        #[arg(long)]
        nslots: Option<u64>,
        /// rdcc_nbytes.
        #[arg(long)]
        nbytes: Option<u64>,
        /// rdcc_w0.
        #[arg(long)]
        w0: Option<f64>,
        /// Use the slot hashing of HDF5 up to 1.10.4.
        #[arg(long)]
        pre_1_10_5: bool,
        /// Capacity (bytes) of the plain LRU the advisor compares with.
        #[arg(long)]
        max_cache_bytes: Option<u64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also measure on the real HDF5 builds (libhdf5 1.10.8, HDF5 2.0 in h5py).
        #[arg(long)]
        real: bool,
    },
    /// List, verify or clear a --cache disk directory.
    #[command(after_help = CACHE_EXAMPLES)]
    Cache {
        #[command(subcommand)]
        which: native_harness::cache_cli::CacheCommand,
    },
    /// Benchmarks that print a table (ratios side by side, not timed tests).
    #[command(after_help = BENCH_EXAMPLES)]
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Our Blosc2 decoder against C-Blosc2 (single thread) per codec and filter, MB/s; also the
    /// wasm build in Node (pkg/node) when it is built, in three passes with the native
    /// decoders timed again between them (each column the fastest).
    Decode {
        /// Less data per row.
        #[arg(long)]
        quick: bool,
        /// Also the web build (pkg/web) in headless Chromium (playwright-core of tests/e2e,
        /// $CHROMIUM or /usr/bin/chromium).
        #[arg(long)]
        chromium: bool,
    },
    /// Partition 100,000 synthetic arrays and resolve 1,000,000 keys.
    Partition,
    /// Simulator throughput on a 10-million-access trace.
    ChunkTrace,
    /// Coalescing gaps over a latency x bandwidth grid: requests, bytes and ms of sparse and
    /// band reads of the `bench remote` files (Zarr sharded, large .b2nd, large HDF5) per
    /// `--coalesce-gap` value, through `serve --latency-ms --bandwidth`.
    Coalesce {
        /// Milliseconds added per request (comma-separated).
        #[arg(long, default_value = "5,40,100", value_delimiter = ',')]
        latency_ms: Vec<u64>,
        /// Link bandwidths in bytes per second (comma-separated; 0 unlimited).
        #[arg(
            long,
            default_value = "2500000,12500000,125000000",
            value_delimiter = ','
        )]
        bandwidth: Vec<u64>,
        /// Gaps measured, bytes (comma-separated).
        #[arg(
            long,
            default_value = "0,32768,131072,524288,2097152",
            value_delimiter = ','
        )]
        gaps: Vec<u64>,
        /// Largest merged request, bytes (default: no bound).
        #[arg(long)]
        max_merged_bytes: Option<u64>,
        /// Print JSON cells instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Opening 10,000-chunk HDF5 indexes (B-tree v1, B-tree v2, extensible array) through
    /// six connections, per over-read fraction allowed when one index level is merged:
    /// requests, waves, bytes, ms.
    IndexMerge {
        /// Milliseconds added per request.
        #[arg(long, default_value_t = 40)]
        latency_ms: u64,
        /// Requests in flight at once (a browser's HTTP/1.1 connections per origin).
        #[arg(long, default_value_t = 6)]
        connections: usize,
        /// Link bandwidths in bytes per second (comma-separated; 0 unlimited).
        #[arg(
            long,
            default_value = "2500000,12500000,125000000",
            value_delimiter = ','
        )]
        bandwidth: Vec<u64>,
        /// Over-read fractions measured (comma-separated).
        #[arg(long, default_value = "0,0.25,1,4", value_delimiter = ',')]
        over_read: Vec<f64>,
        /// Print JSON cells instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Cold open + one-chunk preview of a small and a large .b2nd and HDF5 file over
    /// `serve --latency-ms`, h5wasm/jsfive on the same HDF5 files, then Zarr stores read by
    /// chunkwise and by zarrita.js.
    Remote {
        /// Milliseconds added per request.
        #[arg(long, default_value_t = 40)]
        latency_ms: u64,
        /// Print JSON rows instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// `.b2z`: open a 20-leaf TreeStore and read [0, 0] of each leaf, and read 3 columns x
    /// 10,000 rows of a CTable, cold and warm, by chunkwise and by python-blosc2's own remote
    /// reader (scripts/bench_b2z_python.py, the venv) through `serve --latency-ms`.
    B2z {
        /// Milliseconds added per request.
        #[arg(long, default_value_t = 40)]
        latency_ms: u64,
        /// Runs per cell (the median is shown).
        #[arg(long, default_value_t = 5)]
        runs: u32,
        /// Print one JSON line per run and phase instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Caterva2: open + one-chunk preview, a 10-chunk band and a small selection of a 4 MiB
    /// chunk, cold and warm (memory and disk caches), by chunkwise and by python-blosc2's
    /// C2Array (scripts/bench_caterva2_python.py, the venv), on one caterva2[server] on
    /// 127.0.0.1 behind a proxy adding the latency and counting requests and bytes.
    Caterva2 {
        /// Milliseconds added per request.
        #[arg(long, default_value_t = 40)]
        latency_ms: u64,
        /// Runs per cell (the median is shown).
        #[arg(long, default_value_t = 5)]
        runs: u32,
        /// Print one JSON line per run and phase instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The persistent cache in headless Chromium: open + preview of a .b2nd, an HDF5 dataset
    /// and a Zarr array, cold and warm, on IndexedDB, OPFS and memory, through
    /// `serve --latency-ms` (runs scripts/bench-cache.mjs; needs scripts/build-pkg.sh).
    Cache {
        /// Milliseconds added per request.
        #[arg(long, default_value_t = 40)]
        latency_ms: u64,
        /// Runs per cell (the median is shown).
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
    /// A full read of a 2000x3000 float32 Zarr array by chunkwise (wasm) and zarrita.js in
    /// Node and headless Chromium, cold and warm, at 0 and 40 ms latency (runs
    /// scripts/bench-zarr-js.mjs; needs scripts/build-pkg.sh and tests/e2e's npm packages).
    ZarrJs {
        /// Runs per cell (the median is shown).
        #[arg(long, default_value_t = 5)]
        runs: u32,
    },
}

fn repo_root() -> PathBuf {
    // The harness runs from a checkout: tests/fixtures is beside native-harness.
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// The `--header` arguments as (name, value) pairs, trimmed. A header must be
/// `Name: value` with a name of RFC 9110 token characters (section 5.6.2) and a value of
/// visible ASCII, spaces and tabs (what the HTTP client sends).
///
/// # Errors
/// [`chunkwise::Error::InvalidArgument`] naming the header by its position (1-based), never
/// by its text: a malformed header may be a credential typed without its colon.
fn parse_headers(raw: &[String]) -> Result<Vec<(String, String)>, chunkwise::Error> {
    raw.iter()
        .enumerate()
        .map(|(i, h)| {
            let bad = |what: &str| {
                chunkwise::Error::InvalidArgument(format!("--header {} {what}", i + 1))
            };
            let (k, v) = h
                .split_once(':')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| bad("is not \"Name: value\" (no colon)"))?;
            chunkwise::io::headers::check_header(k, v).map_err(bad)?;
            Ok((k.to_string(), v.to_string()))
        })
        .collect()
}

fn fail(e: &chunkwise::Error) -> ! {
    // `message()`: never a URL's query or user info.
    let j = serde_json::json!({"error": {"code": e.code(), "message": e.message()}});
    eprintln!("{j}");
    std::process::exit(1)
}

/// A count of `chunkwise info`'s text (chunks, bytes), or "2^64 or more" where
/// [`chunkwise::formats::ArrayInfo`] has none because it does not fit in 64 bits.
fn past_u64(n: Option<u64>) -> String {
    n.map_or_else(|| "2^64 or more".to_string(), |n| n.to_string())
}

/// Whether the root group holds exactly one member, a dataset (then an open without a path
/// picks it, and its failure is the error to report).
fn one_root_dataset(nodes: &[chunkwise::formats::Node]) -> bool {
    let root: Vec<&chunkwise::formats::Node> = nodes
        .iter()
        .filter(|n| n.path != "/" && n.path.matches('/').count() == 1)
        .collect();
    root.len() == 1 && root[0].kind == chunkwise::formats::NodeKind::Array
}

/// Whether the container's root node `/` is itself an array (a Zarr store whose root is an
/// array), not a group.
fn root_is_array(nodes: &[chunkwise::formats::Node]) -> bool {
    nodes
        .iter()
        .any(|n| n.path == "/" && n.kind == chunkwise::formats::NodeKind::Array)
}

fn no_path(path: &Option<String>) -> Result<(), chunkwise::Error> {
    match path {
        Some(p) if !p.is_empty() && p != "/" => Err(chunkwise::Error::InvalidArgument(format!(
            "--path {p:?} given, but the source is a single array"
        ))),
        _ => Ok(()),
    }
}

/// Runs a command within its `--timeout`, if it has one.
async fn run(cli: Cli) -> Result<(), chunkwise::Error> {
    let (limit, location) = match &cli.command {
        Command::Read { src, .. }
        | Command::Ls { src, .. }
        | Command::Info { src, .. }
        | Command::Chunks { src, .. }
        | Command::Attrs { src }
        | Command::Preview { src, .. }
        | Command::Reference { src, .. } => (src.deadline()?, src.source.clone()),
        _ => (None, String::new()),
    };
    chunkwise::io::deadline::operation(limit, &location, run_command(cli)).await
}

async fn run_command(cli: Cli) -> Result<(), chunkwise::Error> {
    match cli.command {
        Command::Serve {
            root,
            port,
            latency_ms,
            bandwidth,
            fail_first,
            ignore_range,
            quiet,
            faults,
            cors_origin,
        } => {
            // Named here: the server's own error would be the OS's "No such file or
            // directory" without the path.
            if !root.is_dir() {
                return Err(chunkwise::Error::InvalidArgument(format!(
                    "--root {}: no such directory",
                    root.display()
                )));
            }
            let opts = native_harness::serve::ServeOptions {
                root,
                port,
                latency_ms,
                bandwidth,
                fail_first,
                ignore_range,
                quiet,
                faults,
                cors_origin,
            };
            native_harness::serve::run(opts)
                .await
                .map_err(|e| chunkwise::Error::InvalidArgument(e.to_string()))
        }
        Command::Read {
            src,
            select,
            out,
            print,
            mutable,
            columns,
            coalesce_gap,
            max_merged_bytes,
        } => {
            let (kind, credentials) = src.source_kind()?;
            let SourceArgs {
                source,
                path,
                cache,
                cache_dir,
                headers,
                cache_key,
                ..
            } = src;
            if columns.is_some() && (coalesce_gap.is_some() || max_merged_bytes.is_some()) {
                return Err(chunkwise::Error::InvalidArgument(
                    "--coalesce-gap and --max-merged-bytes are for array reads, not --columns"
                        .into(),
                ));
            }
            let coalesce_gap = coalesce_gap.unwrap_or(chunkwise::io::coalesce::DEFAULT_MAX_GAP);
            chunkwise::io::coalesce::check_options(
                coalesce_gap,
                max_merged_bytes,
                ("--coalesce-gap", "--max-merged-bytes"),
            )
            .map_err(chunkwise::Error::InvalidArgument)?;
            let coordinator = source::coordinator_for(&source, &cache, cache_dir.as_deref())?;
            if let Some(columns) = columns {
                if mutable {
                    // As a store refuses assume_immutable = false: tables are read through one.
                    return Err(chunkwise::Error::InvalidArgument(
                        "--mutable is for a standalone .b2nd; --columns reads a table of a container, which is assumed immutable".into(),
                    ));
                }
                let read = native_harness::table_cli::TableRead {
                    source: &source,
                    path: path.as_deref(),
                    columns: &columns,
                    select: &select,
                    headers: parse_headers(&headers)?,
                    cache_key: cache_key.as_deref(),
                };
                let (rows, requests, bytes) = native_harness::table_cli::read_table(
                    read,
                    coordinator,
                    &ReadOptions::default(),
                )
                .await?;
                let element = rows.element();
                let descr = element.descr();
                if let Some(out) = out {
                    std::fs::write(&out, rows.to_npy()?).map_err(|e| {
                        chunkwise::Error::InvalidArgument(format!("{}: {e}", out.display()))
                    })?;
                }
                if print {
                    let text = native_harness::numpy_print::format_records(
                        &rows.records(),
                        &[rows.nrows],
                        &element,
                    )
                    .map_err(chunkwise::Error::InvalidArgument)?;
                    println!("{text}");
                }
                let line = format!(
                    "{{\"shape\":[{}],\"dtype\":{},\"requests\":{requests},\"bytes\":{bytes},\"missing_chunks\":{}}}",
                    rows.nrows,
                    serde_json::Value::from(descr),
                    rows.columns.iter().map(|(_, d)| d.missing_chunks).sum::<u64>(),
                );
                if print {
                    eprintln!("{line}");
                } else {
                    println!("{line}");
                }
                return Ok(());
            }
            let options = OpenOptions {
                cache: coordinator.policy(),
                path: path.clone(),
                cache_key,
                assume_immutable: !mutable,
                coalesce_gap,
                max_merged_bytes,
                source: kind,
                credentials,
                ..Default::default()
            };
            let sel = Selection::parse(&select).map_err(chunkwise::Error::Selection)?;
            let headers = parse_headers(&headers)?;
            let tty = std::io::stderr().is_terminal();
            // A source rewritten since its cached records were made fails the read with
            // SOURCE_CHANGED, and the cache forgets it: the open restarts once, afresh.
            let (mut requests, mut bytes) = (0, 0);
            let mut restarted = false;
            let (arr, data) = loop {
                let arr = source::open_array_cached(
                    &source,
                    headers.clone(),
                    options.clone(),
                    coordinator.clone(),
                )
                .await?;
                if !matches!(
                    arr.info().format,
                    "hdf5" | "zarr2" | "zarr3" | "b2z" | "caterva2"
                ) {
                    no_path(&path)?;
                }
                let progress = native_harness::progress::ProgressBar::new(tty);
                let bar = |p: Progress| progress.update(p.done, p.total, arr.traffic().bytes);
                let read = {
                    let read_options = ReadOptions {
                        progress: Some(&bar),
                        cancel: None,
                        ..Default::default()
                    };
                    let reading = arr.read(&sel, &read_options);
                    tokio::pin!(reading);
                    // Between chunks the line still moves with the bytes received (a large
                    // chunk takes a while), on a terminal only.
                    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
                    loop {
                        tokio::select! {
                            r = &mut reading => break r,
                            _ = tick.tick(), if tty => progress.tick(arr.traffic().bytes),
                        }
                    }
                };
                drop(progress);
                let t = arr.traffic();
                (requests, bytes) = (requests + t.requests, bytes + t.bytes);
                match read {
                    Err(chunkwise::Error::Io(chunkwise::io::IoError::SourceChanged { .. }))
                        if !restarted =>
                    {
                        restarted = true;
                    }
                    other => break (arr, other?),
                }
            };
            drop(arr);
            // numpy's dtype.str, or its descr list for records.
            let descr = match &data.element {
                Some(e) => e.descr(),
                None => data.dtype.to_string(),
            };
            if let Some(out) = out {
                let f = std::fs::File::create(&out).map_err(|e| {
                    chunkwise::Error::InvalidArgument(format!("{}: {e}", out.display()))
                })?;
                npy::write_npy(std::io::BufWriter::new(f), &descr, &data.shape, &data.data)
                    .map_err(|e| {
                        chunkwise::Error::InvalidArgument(format!("{}: {e}", out.display()))
                    })?;
            }
            if print {
                use chunkwise::element::Element;
                let text = match &data.element {
                    // Records (HDF5 compounds); strings and numbers print as flat dtypes.
                    Some(e @ (Element::Record { .. } | Element::SubArray { .. })) => {
                        native_harness::numpy_print::format_records(&data.data, &data.shape, e)
                    }
                    _ => native_harness::numpy_print::format_array(
                        &data.data,
                        &data.shape,
                        data.dtype,
                    ),
                }
                .map_err(chunkwise::Error::InvalidArgument)?;
                println!("{text}");
            }
            // Keys in the documented order: {"shape","dtype","requests","bytes",
            // "missing_chunks"}; the counts cover both attempts when the open restarted.
            // With --print the values hold stdout, so the line goes to stderr.
            let line = format!(
                "{{\"shape\":{},\"dtype\":{},\"requests\":{},\"bytes\":{},\"missing_chunks\":{}}}",
                serde_json::to_string(&data.shape).expect("shape serialises"),
                serde_json::Value::from(descr),
                requests,
                bytes,
                data.missing_chunks
            );
            if print {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
            Ok(())
        }
        Command::Info { src, json, mutable } => {
            let (kind, credentials) = src.source_kind()?;
            let SourceArgs {
                source,
                path,
                cache,
                cache_dir,
                headers,
                cache_key,
                ..
            } = src;
            let coordinator = source::coordinator_for(&source, &cache, cache_dir.as_deref())?;
            let options = OpenOptions {
                cache: coordinator.policy(),
                path: path.clone(),
                cache_key: cache_key.clone(),
                assume_immutable: !mutable,
                source: kind,
                credentials,
                ..Default::default()
            };
            let headers = parse_headers(&headers)?;
            let opened =
                source::open_array_cached(&source, headers.clone(), options, coordinator.clone())
                    .await;
            let arr = match opened {
                Ok(arr) => arr,
                // No --path and the root does not hold exactly one dataset (the reason the
                // open needed a path): list the hierarchy instead (not when --mutable was
                // refused: a listing would hide the refusal).
                Err(e)
                    if path.is_none()
                        && !mutable
                        && kind == chunkwise::array::SourceKind::Detected =>
                {
                    match source::open_store_cached(
                        &source,
                        headers,
                        coordinator,
                        cache_key.as_deref(),
                    )
                    .await
                    {
                        // A root that is itself an array (a Zarr root array) failed to open
                        // for a reason of its own: its listing would hide that error.
                        Ok(store)
                            if !one_root_dataset(store.nodes())
                                && !root_is_array(store.nodes()) =>
                        {
                            if json {
                                // The documented fields; attributes are `chunkwise attrs`'s.
                                println!(
                                    "{}",
                                    native_harness::tree::nodes_json(store.nodes(), false)
                                );
                            } else {
                                print!("{}", native_harness::tree::format_tree(store.nodes()));
                            }
                            return Ok(());
                        }
                        _ => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            };
            if !matches!(
                arr.info().format,
                "hdf5" | "zarr2" | "zarr3" | "b2z" | "caterva2"
            ) {
                no_path(&path)?;
            }
            let info = arr.info();
            let t = arr.traffic();
            let zarr = !info.stored_size_known();
            if json {
                let mut v = info.to_json();
                v["requests"] = t.requests.into();
                v["bytes"] = t.bytes.into();
                v["cache_status"] = arr.cache_status().as_str().into();
                if let Some(dims) = arr.dims() {
                    v["dims"] = serde_json::to_value(dims).expect("dims serialise");
                }
                println!("{v}");
            } else {
                println!(
                    "source:  {}",
                    chunkwise::cache::identity::redact_url(&source)
                );
                println!("format:  {}", info.format);
                println!("shape:   {:?}", info.shape);
                println!("dtype:   {}", info.dtype);
                println!(
                    "chunks:  {:?} ({} chunks)",
                    info.chunks,
                    past_u64(info.nchunks)
                );
                println!("blocks:  {:?}", info.blocks);
                println!("codecs:  {}", info.codecs);
                if zarr {
                    println!(
                        "bytes:   {} uncompressed, stored size unknown (Zarr chunk objects are \
                         not listed; a read counts the bytes it moves)",
                        past_u64(info.nbytes)
                    );
                } else {
                    println!(
                        "bytes:   {} uncompressed, {} stored, source {} bytes",
                        past_u64(info.nbytes),
                        info.cbytes,
                        info.source_bytes
                    );
                }
                if let Some(dims) = arr.dims() {
                    let names: Vec<&str> =
                        dims.iter().map(|d| d.as_deref().unwrap_or("-")).collect();
                    println!("dims:    {}", names.join(", "));
                }
                println!(
                    "traffic: {} request{}, {} bytes",
                    t.requests,
                    if t.requests == 1 { "" } else { "s" },
                    t.bytes
                );
                println!("cache:   {}", arr.cache_status());
            }
            Ok(())
        }
        Command::Ls { src, json } => {
            let (source, path) = (&src.source, src.path.as_deref());
            let mut nodes = match src.source_kind()? {
                (chunkwise::array::SourceKind::Detected, _) => {
                    source::nodes_command(
                        source,
                        src.request_headers()?,
                        src.coordinator()?,
                        src.cache_key.as_deref(),
                    )
                    .await?
                }
                (kind, credentials) => {
                    let options = OpenOptions {
                        source: kind,
                        credentials,
                        cache_key: src.cache_key.clone(),
                        ..Default::default()
                    };
                    chunkwise::open::open_store(
                        source,
                        src.request_headers()?,
                        options,
                        src.coordinator()?,
                    )
                    .await?
                    .nodes()
                    .to_vec()
                }
            };
            if let Some(p) = path {
                nodes = native_harness::tree::subtree(&nodes, p).ok_or_else(|| {
                    chunkwise::Error::Format(chunkwise::formats::FormatError::NoSuchNode {
                        location: chunkwise::cache::identity::redact_url(source),
                        detail: format!(
                            "no group or array at {}",
                            chunkwise::store::normalise_path(p)
                        ),
                    })
                })?;
            }
            if json {
                println!("{}", native_harness::tree::nodes_json(&nodes, true));
            } else if let [one] = nodes.as_slice() {
                if one.path == "/" && one.kind == chunkwise::formats::NodeKind::Array {
                    let name = chunkwise::cache::identity::redact_url(source);
                    println!("{}", native_harness::tree::node_line(&name, one));
                } else {
                    print!("{}", native_harness::tree::format_tree(&nodes));
                }
            } else {
                print!("{}", native_harness::tree::format_tree(&nodes));
            }
            Ok(())
        }
        Command::Preview {
            src,
            select,
            out,
            cmap,
            vmin,
            vmax,
            max_pixels,
        } => {
            let render = chunkwise::render::RenderOptions {
                cmap: chunkwise::render::colormap_named(&cmap)?,
                vmin,
                vmax,
                max_pixels,
            };
            let coordinator = src.coordinator()?;
            let req = native_harness::preview_cli::PreviewRequest {
                source: &src.source,
                headers: src.request_headers()?,
                options: OpenOptions {
                    cache: coordinator.policy(),
                    path: src.path.clone(),
                    cache_key: src.cache_key.clone(),
                    ..Default::default()
                },
                select: &select,
                render,
            };
            let done = native_harness::preview_cli::preview(req, coordinator).await?;
            std::fs::write(&out, &done.png).map_err(|e| {
                chunkwise::Error::InvalidArgument(format!("{}: {e}", out.display()))
            })?;
            println!("{}", done.line);
            Ok(())
        }
        Command::Attrs { src } => {
            let attrs = source::attrs_command(
                &src.source,
                src.path.as_deref(),
                src.request_headers()?,
                src.coordinator()?,
                src.cache_key.as_deref(),
            )
            .await?;
            println!(
                "{}",
                serde_json::to_string_pretty(&attrs.to_json()).expect("attributes serialise")
            );
            Ok(())
        }
        Command::Reference {
            src,
            out,
            with_payload,
            mutable,
        } => {
            let store = source::open_store_cached(
                &src.source,
                src.request_headers()?,
                src.coordinator()?,
                src.cache_key.as_deref(),
            )
            .await?;
            let mut r = chunkwise::reference::Reference::export(&store, with_payload).await?;
            r.mutable = mutable;
            let write = |path: &std::path::Path, bytes: &[u8]| {
                std::fs::write(path, bytes).map_err(|e| {
                    chunkwise::Error::InvalidArgument(format!("{}: {e}", path.display()))
                })
            };
            let name = out
                .file_name()
                .map(|n| format!("{}.payload", n.to_string_lossy()))
                .unwrap_or_else(|| "reference.payload".into());
            let (doc, sidecar) =
                r.to_json_with_sidecar(&name, chunkwise::reference::SIDECAR_THRESHOLD);
            if let Some(blob) = &sidecar {
                write(&out.with_file_name(&name), blob)?;
            }
            write(&out, &doc)?;
            let t = store.traffic();
            println!(
                "{}",
                serde_json::json!({
                    "out": out.display().to_string(),
                    "kind": r.kind,
                    "records": r.records.len(),
                    "payload_chunks": r.payload.len(),
                    "payload_bytes": r.payload.iter().map(|e| e.data.len()).sum::<usize>(),
                    "sidecar": sidecar.is_some(),
                    "requests": t.requests,
                    "bytes": t.bytes,
                })
            );
            Ok(())
        }
        Command::Chunks {
            src:
                SourceArgs {
                    source,
                    path,
                    cache,
                    cache_dir,
                    headers,
                    cache_key,
                    ..
                },
            json,
        } => {
            let coordinator = source::coordinator(&cache, cache_dir.as_deref())?;
            let out = source::chunks_command_cached(
                &source,
                path.as_deref(),
                parse_headers(&headers)?,
                json,
                coordinator,
                cache_key.as_deref(),
            )
            .await?;
            if json {
                println!("{out}");
            } else {
                print!("{out}");
            }
            Ok(())
        }
        Command::Partition {
            input,
            scope,
            previous,
            policy,
            dry_run,
            out,
        } => {
            let text = input.to_string_lossy();
            chunkwise::open::check_scheme(&text)?;
            let report = if source::is_url(&text) {
                native_harness::partition_cli::partition_remote_command(
                    &text,
                    scope.as_deref(),
                    previous.as_deref(),
                    policy.as_deref(),
                    dry_run,
                    out.as_deref(),
                )
                .await
            } else {
                native_harness::partition_cli::partition_command(
                    &input,
                    scope.as_deref(),
                    previous.as_deref(),
                    policy.as_deref(),
                    dry_run,
                    out.as_deref(),
                )
            }
            .map_err(chunkwise::Error::InvalidArgument)?;
            print!("{report}");
            if !report.ends_with('\n') && !report.is_empty() {
                println!();
            }
            Ok(())
        }
        Command::Cache { which } => {
            native_harness::cache_cli::run(&which, &mut std::io::stdout().lock())
        }
        Command::Resolve { manifest, key } => {
            let line = native_harness::partition_cli::resolve_command(&manifest, &key)
                .map_err(chunkwise::Error::InvalidArgument)?;
            println!("{}", line.trim_end());
            Ok(())
        }
        Command::ChunkTrace {
            source,
            path,
            experiment,
            geometry,
            trace,
            nslots,
            nbytes,
            w0,
            pre_1_10_5,
            max_cache_bytes,
            json,
            real,
        } => {
            let args = native_harness::chunk_trace_cli::ChunkTraceArgs {
                experiment,
                geometry,
                geometry_value: match &source {
                    Some(src) if !experiment => Some(
                        native_harness::source::chunk_geometry(src, path.as_deref(), vec![])
                            .await?,
                    ),
                    _ => None,
                },
                trace,
                nslots,
                nbytes,
                w0,
                hash_form: if pre_1_10_5 {
                    chunkwise::chunk_trace::HashForm::Pre1_10_5
                } else {
                    chunkwise::chunk_trace::HashForm::Current
                },
                max_cache_bytes,
                json,
                real,
            };
            let out = native_harness::chunk_trace_cli::run(&args)
                .map_err(chunkwise::Error::InvalidArgument)?;
            print!("{out}");
            if !out.ends_with('\n') {
                println!();
            }
            Ok(())
        }
        Command::Bench { which } => {
            let arg = |e: String| chunkwise::Error::InvalidArgument(e);
            match which {
                BenchCommand::Decode { quick, chromium } => {
                    let mut rows = native_harness::bench_decode::run(quick);
                    let wasm = native_harness::bench_decode::add_wasm(
                        &mut rows,
                        &repo_root(),
                        quick,
                        chromium,
                    );
                    print!("{}", native_harness::bench_decode::format_table(&rows));
                    if let Err(note) = wasm {
                        println!("\nno wasm columns: {note}");
                    }
                    print!("\n{}", native_harness::bench_decode::format_floors(&rows));
                }
                BenchCommand::Partition => print!("{}", native_harness::partition_cli::bench()),
                BenchCommand::ChunkTrace => print!("{}", native_harness::chunk_trace_cli::bench()),
                BenchCommand::Coalesce {
                    latency_ms,
                    bandwidth,
                    gaps,
                    max_merged_bytes,
                    json,
                } => print!(
                    "{}",
                    native_harness::bench_coalesce::coalesce_command(
                        &repo_root(),
                        &latency_ms,
                        &bandwidth,
                        &gaps,
                        max_merged_bytes,
                        json
                    )
                    .await
                    .map_err(arg)?
                ),
                BenchCommand::IndexMerge {
                    latency_ms,
                    connections,
                    bandwidth,
                    over_read,
                    json,
                } => print!(
                    "{}",
                    native_harness::bench_coalesce::index_merge_command(
                        &repo_root(),
                        latency_ms,
                        connections,
                        &bandwidth,
                        &over_read,
                        json
                    )
                    .await
                    .map_err(arg)?
                ),
                BenchCommand::Cache { latency_ms, runs } => {
                    let repo = repo_root();
                    let exe = std::env::current_exe().map_err(|e| arg(e.to_string()))?;
                    let status = std::process::Command::new("node")
                        .arg(repo.join("scripts/bench-cache.mjs"))
                        .env("CHUNKWISE_BIN", exe)
                        .env("CHUNKWISE_BENCH_LATENCY", latency_ms.to_string())
                        .env("CHUNKWISE_BENCH_RUNS", runs.to_string())
                        .status()
                        .map_err(|e| arg(format!("cannot run node: {e}")))?;
                    if !status.success() {
                        return Err(arg(format!("scripts/bench-cache.mjs failed ({status})")));
                    }
                }
                BenchCommand::ZarrJs { runs } => {
                    let exe = std::env::current_exe().map_err(|e| arg(e.to_string()))?;
                    let status = std::process::Command::new("node")
                        .arg(repo_root().join("scripts/bench-zarr-js.mjs"))
                        .env("CHUNKWISE_BIN", exe)
                        .env("CHUNKWISE_BENCH_RUNS", runs.to_string())
                        .status()
                        .map_err(|e| arg(format!("cannot run node: {e}")))?;
                    if !status.success() {
                        return Err(arg(format!("scripts/bench-zarr-js.mjs failed ({status})")));
                    }
                }
                BenchCommand::B2z {
                    latency_ms,
                    runs,
                    json,
                } => {
                    use native_harness::bench_b2z;
                    let repo = repo_root();
                    let exe = std::env::current_exe().map_err(|e| arg(e.to_string()))?;
                    let dir = bench_b2z::make_fixtures(&repo).map_err(arg)?;
                    let m = bench_b2z::run(&exe, &repo, &dir, latency_ms, runs.max(1))
                        .await
                        .map_err(arg)?;
                    if json {
                        for s in &m.samples {
                            println!("{}", serde_json::to_string(s).expect("sample serialises"));
                        }
                    } else {
                        let rows = bench_b2z::summarise(&m.samples);
                        print!(
                            "{}",
                            bench_b2z::format_table(latency_ms, runs.max(1), &rows, &m.notes)
                        );
                    }
                }
                BenchCommand::Caterva2 {
                    latency_ms,
                    runs,
                    json,
                } => {
                    use native_harness::bench_caterva2 as b;
                    let repo = repo_root();
                    let dir = b::make_fixtures(&repo).map_err(arg)?;
                    let runs = runs.max(1) as usize;
                    let samples = b::run(&repo, &dir, latency_ms, runs).await;
                    let _ = std::fs::remove_dir_all(&dir);
                    let samples = samples.map_err(arg)?;
                    if json {
                        for s in &samples {
                            println!("{}", serde_json::to_string(s).expect("sample serialises"));
                        }
                    } else {
                        print!(
                            "{}",
                            b::format_table(latency_ms, runs, &b::summarise(&samples))
                        );
                    }
                }
                BenchCommand::Remote { latency_ms, json } => {
                    let repo = repo_root();
                    let big = native_harness::bench_remote::make_big_fixture(&repo).map_err(arg)?;
                    let small = sample_2d(&repo).map_err(arg)?;
                    let rows = native_harness::bench_remote::run(latency_ms, &small, &big)
                        .await
                        .map_err(arg)?;
                    if json {
                        for r in &rows {
                            println!("{}", serde_json::to_string(r).expect("row serialises"));
                        }
                    } else {
                        print!(
                            "{}",
                            native_harness::bench_remote::format_table(latency_ms, &rows)
                        );
                    }
                    // HDF5 rows, then the JavaScript readers on the same files.
                    let h5dir =
                        native_harness::bench_remote::make_hdf5_fixtures(&repo).map_err(arg)?;
                    let h5rows = native_harness::bench_remote::run_hdf5(latency_ms, &h5dir)
                        .await
                        .map_err(arg)?;
                    if json {
                        for r in &h5rows {
                            println!("{}", serde_json::to_string(r).expect("row serialises"));
                        }
                    } else {
                        print!(
                            "\n{}",
                            native_harness::bench_remote::format_hdf5_table(latency_ms, &h5rows)
                        );
                        match native_harness::bench_remote::run_hdf5_js(&repo, latency_ms, &h5dir)
                            .await
                        {
                            Ok(table) => print!("\n{table}"),
                            Err(why) => println!("\nno JavaScript rows: {why}"),
                        }
                    }
                    // Zarr rows (and zarrita.js on the same stores).
                    let stores = native_harness::bench_zarr::make_stores(&repo).map_err(arg)?;
                    let zrows = native_harness::bench_zarr::run(latency_ms, &repo, &stores)
                        .await
                        .map_err(arg)?;
                    if json {
                        for r in &zrows {
                            println!("{}", serde_json::to_string(r).expect("row serialises"));
                        }
                    } else {
                        print!(
                            "\n{}",
                            native_harness::bench_zarr::format_table(latency_ms, &zrows)
                        );
                    }
                }
            }
            Ok(())
        }
    }
}

/// The bundled 2-D sample (tests/fixtures/sample, listed in its manifest).
fn sample_2d(repo: &std::path::Path) -> Result<PathBuf, String> {
    let dir = repo.join("tests/fixtures/sample");
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("manifest.json")).map_err(|e| format!("{}: {e}", dir.display()))?,
    )
    .map_err(|e| e.to_string())?;
    m["fixtures"]
        .as_array()
        .and_then(|l| {
            l.iter()
                .find(|f| f["shape"].as_array().is_some_and(|s| s.len() == 2))
        })
        .and_then(|f| f["file"].as_str())
        .map(|f| dir.join(f))
        .ok_or_else(|| "no 2-D sample in tests/fixtures/sample/manifest.json".into())
}

fn main() {
    let cli = Cli::parse();
    // Output piped into `head` and the like: end quietly when the reader goes away, as
    // command-line tools do, rather than panic on a failed write (Rust ignores SIGPIPE).
    // Not `serve`: a server outlives clients and log readers that go away (SIGPIPE stays
    // ignored, so such a write is an error for that write only).
    #[cfg(unix)]
    if !matches!(cli.command, Command::Serve { .. }) {
        // SAFETY: restoring the default disposition of one signal before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Err(e) = rt.block_on(run(cli)) {
        fail(&e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// A command line split as a POSIX shell splits it: on blanks, with double quotes
    /// grouping (the examples use no other quoting).
    fn words(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
        for c in line.chars() {
            match c {
                '"' => {
                    quoted = !quoted;
                    any = true;
                }
                ' ' if !quoted => {
                    if any || !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    any = false;
                }
                c => cur.push(c),
            }
        }
        if any || !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// Every example line (`  chunkwise ...`) of the top-level help and of each
    /// subcommand's help parses as a command line, and each subcommand has examples.
    #[test]
    fn every_help_example_parses() {
        let cmd = Cli::command();
        let mut helps = vec![(
            "chunkwise".to_string(),
            cmd.get_after_help().map(|h| h.to_string()),
        )];
        for sub in cmd.get_subcommands() {
            helps.push((
                sub.get_name().to_string(),
                sub.get_after_help().map(|h| h.to_string()),
            ));
        }
        let mut parsed = 0;
        for (name, help) in helps {
            let help = help.unwrap_or_else(|| panic!("{name} has no examples"));
            let examples: Vec<&str> = help
                .lines()
                .filter_map(|l| l.strip_prefix("  "))
                .filter(|l| l.starts_with("chunkwise "))
                .collect();
            assert!(!examples.is_empty(), "{name} has no examples");
            for line in examples {
                let argv = words(line);
                if name != "chunkwise" {
                    assert_eq!(
                        argv[1], name,
                        "{name}'s example runs another command: {line}"
                    );
                }
                if let Err(e) = Cli::try_parse_from(&argv) {
                    panic!("{line}: {e}");
                }
                parsed += 1;
            }
        }
        assert!(parsed >= 30, "{parsed} examples");
        assert_eq!(
            words(r#"a --select "0:5, ::2" "" b"#),
            ["a", "--select", "0:5, ::2", "", "b"]
        );
    }
}
