//! Decode speed of chunkwise's pure-Rust Blosc2 chunk decoder against C-Blosc2 2.15
//! (single thread), on the same chunks; optionally the same decoder compiled to wasm (pkg/node,
//! run by `scripts/bench-wasm-decode.mjs` in Node); also the thin C-Blosc2 wrapper the parity
//! tests use.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chunkwise::codec::blosc2::decode_chunk_into;

/// Thin safe wrappers over C-Blosc2's context API (blosc2-sys), for parity tests and benches.
pub mod cblosc2 {
    use blosc2_sys as ffi;
    use std::ptr::null_mut;

    /// Compression parameters for [`compress`]. Codec ids as in blosc2.h (0 BloscLZ, 1 LZ4,
    /// 2 LZ4HC, 4 Zlib, 5 Zstd); split mode 1 always, 2 never, 3 auto, 4 forward-compat.
    #[derive(Debug, Clone, Copy)]
    pub struct Params {
        /// Codec id.
        pub codec: u8,
        /// Compression level 0-9.
        pub clevel: u8,
        /// Bytes per element.
        pub typesize: usize,
        /// Block size in bytes (0: C-Blosc2 chooses).
        pub blocksize: usize,
        /// Split mode (`BLOSC_*_SPLIT`).
        pub splitmode: i32,
        /// Filter pipeline.
        pub filters: [u8; 6],
        /// Filter metas.
        pub filters_meta: [u8; 6],
        /// Compression threads.
        pub nthreads: i16,
    }

    /// The C struct for `p` (the fields of `BLOSC2_CPARAMS_DEFAULTS` otherwise).
    pub fn cparams(p: &Params) -> ffi::blosc2_cparams {
        ffi::blosc2_cparams {
            compcode: p.codec,
            compcode_meta: 0,
            clevel: p.clevel,
            use_dict: 0,
            typesize: p.typesize as i32,
            nthreads: p.nthreads,
            blocksize: p.blocksize as i32,
            splitmode: p.splitmode,
            schunk: null_mut(),
            filters: p.filters,
            filters_meta: p.filters_meta,
            prefilter: None,
            preparams: null_mut(),
            tuner_params: null_mut(),
            tuner_id: 0,
            instr_codec: false,
            codec_params: null_mut(),
            filter_params: [null_mut(); 6],
        }
    }

    fn init() {
        static INIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: blosc2_init has no preconditions; Once runs it a single time.
        INIT.call_once(|| unsafe { ffi::blosc2_init() });
    }

    /// Compress `src` into one chunk with C-Blosc2 (`blosc2_compress_ctx`).
    pub fn compress(p: &Params, src: &[u8]) -> Result<Vec<u8>, i32> {
        // Room for the header and bstarts: C-Blosc2 stores a chunk memcpyed when its streams
        // would not fit the destination, so more room here would make fewer memcpyed chunks.
        compress_cparams(cparams(p), src, src.len() + 32 + 64)
    }

    /// [`compress`] with `use_dict` set: C-Blosc2 trains a dictionary on the chunk's blocks
    /// and stores it after the bstarts table (when the chunk is large enough to train one).
    pub fn compress_with_dict(p: &Params, src: &[u8]) -> Result<Vec<u8>, i32> {
        let mut c = cparams(p);
        c.use_dict = 1;
        // Room for the dictionary too (at most BLOSC2_MAXDICTSIZE bytes and its size).
        compress_cparams(c, src, src.len() + 32 + 64 + (32 << 10) + 4)
    }

    fn compress_cparams(
        cparams: ffi::blosc2_cparams,
        src: &[u8],
        room: usize,
    ) -> Result<Vec<u8>, i32> {
        init();
        let mut dst = vec![0u8; room];
        // SAFETY: the context is created from a fully initialised cparams and freed below;
        // src/dst pointers and sizes describe live buffers.
        unsafe {
            let ctx = ffi::blosc2_create_cctx(cparams);
            if ctx.is_null() {
                return Err(-1);
            }
            let n = ffi::blosc2_compress_ctx(
                ctx,
                src.as_ptr().cast(),
                src.len() as i32,
                dst.as_mut_ptr().cast(),
                dst.len() as i32,
            );
            ffi::blosc2_free_ctx(ctx);
            if n <= 0 {
                return Err(n);
            }
            dst.truncate(n as usize);
        }
        Ok(dst)
    }

    /// A reusable single-threaded C-Blosc2 decompression context.
    pub struct Dctx(*mut ffi::blosc2_context);

    impl Dctx {
        /// A context with `nthreads` threads.
        pub fn new(nthreads: i16) -> Dctx {
            init();
            let dp = ffi::blosc2_dparams {
                nthreads,
                schunk: null_mut(),
                postfilter: None,
                postparams: null_mut(),
            };
            // SAFETY: dparams is fully initialised.
            Dctx(unsafe { ffi::blosc2_create_dctx(dp) })
        }

        /// Decompress `chunk` into `dst` (`blosc2_decompress_ctx`); returns bytes or the C error.
        pub fn decompress_into(&mut self, chunk: &[u8], dst: &mut [u8]) -> Result<usize, i32> {
            // SAFETY: pointers and sizes describe live buffers; the context is valid.
            let n = unsafe {
                ffi::blosc2_decompress_ctx(
                    self.0,
                    chunk.as_ptr().cast(),
                    chunk.len() as i32,
                    dst.as_mut_ptr().cast(),
                    dst.len() as i32,
                )
            };
            if n < 0 {
                Err(n)
            } else {
                Ok(n as usize)
            }
        }
    }

    impl Drop for Dctx {
        fn drop(&mut self) {
            // SAFETY: created by blosc2_create_dctx, freed once.
            unsafe { ffi::blosc2_free_ctx(self.0) }
        }
    }

    /// Special-value chunk kinds made by C-Blosc2.
    #[derive(Debug, Clone, Copy)]
    pub enum Special<'a> {
        /// `blosc2_chunk_zeros`.
        Zeros,
        /// `blosc2_chunk_nans`.
        Nans,
        /// `blosc2_chunk_repeatval` with this value (typesize bytes).
        Value(&'a [u8]),
        /// `blosc2_chunk_uninit`.
        Uninit,
    }

    /// A special-value chunk of `nbytes` bytes made by C-Blosc2.
    pub fn special_chunk(p: &Params, nbytes: usize, kind: Special) -> Result<Vec<u8>, i32> {
        init();
        let mut dst = vec![0u8; 32 + p.typesize];
        let cp = cparams(p);
        let (d, n) = (dst.as_mut_ptr().cast(), dst.len() as i32);
        // SAFETY: dst holds header + typesize bytes as the functions require; value holds
        // typesize bytes.
        let r = unsafe {
            match kind {
                Special::Zeros => ffi::blosc2_chunk_zeros(cp, nbytes as i32, d, n),
                Special::Nans => ffi::blosc2_chunk_nans(cp, nbytes as i32, d, n),
                Special::Value(v) => {
                    assert_eq!(v.len(), p.typesize);
                    ffi::blosc2_chunk_repeatval(cp, nbytes as i32, d, n, v.as_ptr().cast())
                }
                Special::Uninit => ffi::blosc2_chunk_uninit(cp, nbytes as i32, d, n),
            }
        };
        if r < 0 {
            return Err(r);
        }
        dst.truncate(r as usize);
        Ok(dst)
    }
}

/// One benchmark row: decode speed of one codec/filter pair.
#[derive(Debug, Clone)]
pub struct BenchRow {
    /// Codec name.
    pub codec: &'static str,
    /// Filter pipeline name.
    pub filter: &'static str,
    /// Data kind (float32 / int64).
    pub data: &'static str,
    /// Uncompressed bytes per chunk.
    pub chunk_nbytes: usize,
    /// Compression ratio of the chunk.
    pub cratio: f64,
    /// Our decoder, MB/s (10^6 bytes of decoded output per second).
    pub ours_mbps: f64,
    /// C-Blosc2, one thread, MB/s.
    pub c_mbps: f64,
    /// The wasm build's `decodeChunk` in Node, MB/s (see [`add_wasm`]): a new JS buffer per
    /// chunk.
    pub wasm_mbps: Option<f64>,
    /// The wasm build's `decodeChunkInto` in Node into one reused JS buffer, MB/s (`None` for
    /// a package without it).
    pub wasm_into_mbps: Option<f64>,
    /// The web build's `decodeChunk` in headless Chromium, MB/s (`add_wasm` with `chromium`).
    pub chromium_mbps: Option<f64>,
    /// The web build's `decodeChunkInto` in headless Chromium, MB/s.
    pub chromium_into_mbps: Option<f64>,
    /// `chunk_nbytes` copied into a new JS buffer, no decoding, in Node, MB/s: what
    /// `decodeChunk` adds to a decode (its result copied out of wasm memory), so the
    /// ceiling of [`Self::wasm_mbps`].
    pub wasm_buffer_mbps: Option<f64>,
    /// The same in headless Chromium, MB/s: the ceiling of [`Self::chromium_mbps`].
    pub chromium_buffer_mbps: Option<f64>,
    /// The chunk decoded (compressed by C-Blosc2).
    pub chunk: Vec<u8>,
}

impl BenchRow {
    /// `ours_mbps / c_mbps`.
    pub fn ratio(&self) -> f64 {
        self.ours_mbps / self.c_mbps
    }

    /// `wasm_mbps / c_mbps`.
    pub fn wasm_ratio(&self) -> Option<f64> {
        self.wasm_mbps.map(|w| w / self.c_mbps)
    }

    /// `wasm_into_mbps / c_mbps`.
    pub fn wasm_into_ratio(&self) -> Option<f64> {
        self.wasm_into_mbps.map(|w| w / self.c_mbps)
    }

    /// `chromium_mbps / c_mbps`.
    pub fn chromium_ratio(&self) -> Option<f64> {
        self.chromium_mbps.map(|w| w / self.c_mbps)
    }

    /// `chromium_into_mbps / c_mbps`.
    pub fn chromium_into_ratio(&self) -> Option<f64> {
        self.chromium_into_mbps.map(|w| w / self.c_mbps)
    }
}

/// `n` float32 values (a sine with a little xorshift noise), little-endian: the `float32`
/// rows' data.
pub fn float32_data(n: usize) -> Vec<u8> {
    let mut s = 1u32;
    (0..n)
        .flat_map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let noise = (s % 1000) as f32 * 1e-4;
            ((i as f32 * 0.001).sin() * 50.0 + noise).to_le_bytes()
        })
        .collect()
}

/// `n` slowly rising int64 values, little-endian: the `int64` rows' data.
pub fn int64_data(n: usize) -> Vec<u8> {
    (0..n as i64)
        .flat_map(|i| (1_000_000 + i * 3 + (i * 7919) % 13).to_le_bytes())
        .collect()
}

/// The uncompressed data of a row's `data` kind (what every chunk of that kind decodes to).
fn bench_data(kind: &str) -> Vec<u8> {
    match kind {
        "float32" => float32_data(1 << 20),
        "int64" => int64_data(1 << 19),
        other => panic!("unknown bench data {other}"),
    }
}

/// Rounds a measurement is split into; the fastest round counts, so that a machine shared with
/// other work still gives comparable columns (scripts/bench-wasm-decode.mjs does the same).
const ROUNDS: usize = 5;

/// The shortest round: a round repeats its decoder until this much time has passed. Without it
/// a quick round was one 4 MiB decode of 2-5 ms, and one descheduling or page-fault burst
/// moved a row's ratio by 10% from run to run.
const MIN_ROUND: Duration = Duration::from_millis(40);

/// MB/s of `ours` and of `c`, each decoding `per` bytes per call: `ROUNDS` rounds of each,
/// alternating (ours, C, C, ours, ours, ...) so that a change in the machine's load between
/// rounds slows both alike; a round makes at least `total / per / ROUNDS` calls and lasts at
/// least [`MIN_ROUND`]; the fastest round of each counts.
fn time_pair(total: usize, per: usize, mut ours: impl FnMut(), mut c: impl FnMut()) -> (f64, f64) {
    let min_calls = total.div_ceil(per).max(ROUNDS).div_ceil(ROUNDS);
    let round = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        let mut calls = 0usize;
        while calls < min_calls || t.elapsed() < MIN_ROUND {
            f();
            calls += 1;
        }
        (calls * per) as f64 / t.elapsed().as_secs_f64() / 1e6
    };
    ours(); // warm-up
    c();
    let (mut best_ours, mut best_c) = (0.0f64, 0.0f64);
    for r in 0..ROUNDS {
        if r % 2 == 0 {
            best_ours = best_ours.max(round(&mut ours));
            best_c = best_c.max(round(&mut c));
        } else {
            best_c = best_c.max(round(&mut c));
            best_ours = best_ours.max(round(&mut ours));
        }
    }
    (best_ours, best_c)
}

/// BYTEDELTA is absent: blosc2-sys builds C-Blosc2 without its filter plugins.
///
/// Measure each codec/filter pair on 4 MiB chunks of float32 and int64 data (C-Blosc2 picks the
/// block size). `quick`: at least 16 MiB of decoded output per row and decoder; else 128 MiB;
/// MB/s of the fastest of 5 rounds of each (rounds of at least 40 ms, ours and C alternating:
/// see [`time_pair`]).
/// Panics if a decoder's output differs from the input (a benchmark of wrong output is void).
pub fn run(quick: bool) -> Vec<BenchRow> {
    use cblosc2::{compress, Dctx, Params};
    let total = if quick { 16 << 20 } else { 128 << 20 };
    let f32d = bench_data("float32");
    let i64d = bench_data("int64");
    // (codec, codec id, level, filter name, filters, filter meta)
    #[allow(clippy::type_complexity)]
    let cases: [(&str, u8, u8, &str, [u8; 6], [u8; 6]); 9] = [
        ("lz4", 1, 5, "shuffle", [0, 0, 0, 0, 0, 1], [0; 6]),
        ("lz4", 1, 5, "bitshuffle", [0, 0, 0, 0, 0, 2], [0; 6]),
        ("lz4", 1, 5, "delta+shuffle", [0, 0, 0, 0, 3, 1], [0; 6]),
        ("lz4", 1, 5, "none", [0; 6], [0; 6]),
        ("lz4hc", 2, 5, "shuffle", [0, 0, 0, 0, 0, 1], [0; 6]),
        ("blosclz", 0, 5, "shuffle", [0, 0, 0, 0, 0, 1], [0; 6]),
        ("zlib", 4, 5, "shuffle", [0, 0, 0, 0, 0, 1], [0; 6]),
        ("zstd", 5, 3, "shuffle", [0, 0, 0, 0, 0, 1], [0; 6]),
        ("zstd", 5, 3, "bitshuffle", [0, 0, 0, 0, 0, 2], [0; 6]),
    ];
    let mut rows = Vec::new();
    let mut dctx = Dctx::new(1);
    for (data_name, data, ts) in [("float32", &f32d, 4usize), ("int64", &i64d, 8)] {
        for &(codec, id, clevel, filter, filters, meta) in &cases {
            let p = Params {
                codec: id,
                clevel,
                typesize: ts,
                blocksize: 0,
                splitmode: 4,
                filters,
                filters_meta: meta,
                nthreads: 1,
            };
            let chunk = compress(&p, data).unwrap_or_else(|e| {
                panic!("C-Blosc2 compression failed ({codec} {filter} {data_name}): {e}")
            });
            let (ours, c) = time_decoders(&chunk, data, total, &mut dctx, codec, filter);
            rows.push(BenchRow {
                codec,
                filter,
                data: data_name,
                chunk_nbytes: data.len(),
                cratio: data.len() as f64 / chunk.len() as f64,
                ours_mbps: ours,
                c_mbps: c,
                wasm_mbps: None,
                wasm_into_mbps: None,
                chromium_mbps: None,
                chromium_into_mbps: None,
                wasm_buffer_mbps: None,
                chromium_buffer_mbps: None,
                chunk,
            });
        }
    }
    rows
}

/// MB/s of our decoder and of C-Blosc2 (`dctx`) decoding `chunk`, which holds `data`
/// compressed, `total` decoded bytes each ([`time_pair`]). Panics if either output differs
/// from `data` (a benchmark of wrong output is void); `codec` and `filter` name the row.
fn time_decoders(
    chunk: &[u8],
    data: &[u8],
    total: usize,
    dctx: &mut cblosc2::Dctx,
    codec: &str,
    filter: &str,
) -> (f64, f64) {
    let mut out = vec![0u8; data.len()];
    let mut out_c = vec![0u8; data.len()];
    let pair = time_pair(
        total,
        data.len(),
        || {
            decode_chunk_into(chunk, &mut out).expect("our decoder failed");
        },
        || {
            dctx.decompress_into(chunk, &mut out_c)
                .expect("C-Blosc2 decompression failed");
        },
    );
    assert!(out == data, "our decoder output differs ({codec} {filter})");
    assert!(out_c == data, "C-Blosc2 output differs ({codec} {filter})");
    pair
}

/// Times our decoder and C-Blosc2 on every row's chunk again (as [`run`], `total` decoded
/// bytes per row and decoder) and keeps the faster measurement of each: the native columns of
/// a row are then the best over the same span of time as the wasm passes of [`add_wasm`].
/// Panics if a decoder's output differs from the data compressed.
fn retime(rows: &mut [BenchRow], total: usize) {
    let mut dctx = cblosc2::Dctx::new(1);
    for r in rows.iter_mut() {
        let data = bench_data(r.data);
        let (ours, c) = time_decoders(&r.chunk, &data, total, &mut dctx, r.codec, r.filter);
        r.ours_mbps = r.ours_mbps.max(ours);
        r.c_mbps = r.c_mbps.max(c);
    }
}

/// Passes of the wasm measurement in [`add_wasm`], each followed (but the last) by a native
/// one ([`retime`]). The wasm build runs in another process, so its rounds cannot alternate
/// with C-Blosc2's as [`time_pair`]'s do; timed in one stretch after the native columns, a
/// wasm / C ratio compared two moments of a machine whose speed drifts (on a shared 2-core
/// machine, LZ4 + SHUFFLE float32 wasm / C read 0.33 in one run and 0.72 in the next). Passes
/// spread both over the same minutes, and every column keeps its fastest measurement.
const WASM_PASSES: usize = 3;

/// Times the wasm build on the rows' chunks: writes each chunk and its expected output to a
/// temporary directory and runs `scripts/bench-wasm-decode.mjs` (Node, `repo/pkg/node`) on
/// them in [`WASM_PASSES`] passes, between which the native decoders are timed again
/// ([`retime`]); each pass decodes a third of what [`run`] decodes per row (at least 16 MiB),
/// and every column keeps the fastest pass. Fills `wasm_mbps` and `wasm_into_mbps`, and with
/// `chromium` also `chromium_mbps` and `chromium_into_mbps` (the web build in headless
/// Chromium: the script's `--chromium`). Errors (a note for the reader) when pkg/node or node
/// is missing, or the script fails; the script fails when a decoded chunk differs from the
/// data compressed.
pub fn add_wasm(
    rows: &mut [BenchRow],
    repo: &Path,
    quick: bool,
    chromium: bool,
) -> Result<(), String> {
    let glue = repo.join("pkg/node/chunkwise.js");
    if !glue.exists() {
        return Err(format!(
            "{} is missing: build it with scripts/build-pkg.sh to add the wasm columns",
            glue.display()
        ));
    }
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Err("node is not on PATH: the wasm columns need Node >= 20".into()),
    }
    let dir = std::env::temp_dir().join(format!("chunkwise-bench-wasm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = (|| {
        let mut names = Vec::new();
        let mut expected: Vec<(&str, Vec<u8>)> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let name = format!(
                "{i:02}_{}_{}_{}",
                r.codec,
                r.filter.replace('+', "-"),
                r.data
            );
            if !expected.iter().any(|(k, _)| *k == r.data) {
                expected.push((r.data, bench_data(r.data)));
            }
            let raw = &expected
                .iter()
                .find(|(k, _)| *k == r.data)
                .expect("just added")
                .1;
            let write = |ext: &str, bytes: &[u8]| {
                let p = dir.join(format!("{name}.{ext}"));
                std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
            };
            write("chunk", &r.chunk)?;
            write("raw", raw)?;
            names.push(format!("{name}.chunk"));
        }
        let total_mib: usize = if quick { 16 } else { 128 };
        let pass_mib = (total_mib / WASM_PASSES).max(16);
        for pass in 0..WASM_PASSES {
            if pass > 0 {
                retime(rows, total_mib << 20);
            }
            let out = Command::new("node")
                .arg(repo.join("scripts/bench-wasm-decode.mjs"))
                .args(["--json", "--total-mib", &pass_mib.to_string(), "--pkg"])
                .arg(repo.join("pkg/node"))
                .args(chromium.then_some("--chromium"))
                .arg(&dir)
                .output()
                .map_err(|e| format!("running node: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "bench-wasm-decode.mjs failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            let stdout = String::from_utf8_lossy(&out.stdout);
            for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
                let v: serde_json::Value = serde_json::from_str(line)
                    .map_err(|e| format!("bench-wasm-decode.mjs printed {line:?}: {e}"))?;
                let file = v["file"].as_str().unwrap_or_default();
                let i = names.iter().position(|n| n == file).ok_or_else(|| {
                    format!("bench-wasm-decode.mjs reported an unknown file {file:?}")
                })?;
                if v["nbytes"].as_u64() != Some(rows[i].chunk_nbytes as u64) {
                    return Err(format!("{file}: wasm decoded {} bytes", v["nbytes"]));
                }
                let r = &mut rows[i];
                let best = |kept: Option<f64>, key: &str| match (kept, v[key].as_f64()) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                r.wasm_mbps = best(r.wasm_mbps, "mbps");
                r.wasm_into_mbps = best(r.wasm_into_mbps, "mbps_into");
                r.chromium_mbps = best(r.chromium_mbps, "chromium_mbps");
                r.chromium_into_mbps = best(r.chromium_into_mbps, "chromium_into_mbps");
                r.wasm_buffer_mbps = best(r.wasm_buffer_mbps, "buffer_mbps");
                r.chromium_buffer_mbps = best(r.chromium_buffer_mbps, "chromium_buffer_mbps");
            }
        }
        match rows.iter().position(|r| r.wasm_mbps.is_none()) {
            Some(i) => Err(format!("bench-wasm-decode.mjs did not report {}", names[i])),
            None => Ok(()),
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A Markdown table of the rows: codec, filter, data, ratio of compression, MB/s of each
/// decoder and ours / C; with wasm MB/s and wasm / C when any row has a wasm measurement
/// (`decodeChunk`, a new JS buffer per chunk), and wasm into MB/s and into / C when any has
/// one of `decodeChunkInto` (one reused JS buffer, as the native columns reuse theirs); the
/// same two for headless Chromium when any row has them.
pub fn format_table(rows: &[BenchRow]) -> String {
    let wasm = rows.iter().any(|r| r.wasm_mbps.is_some());
    let into = rows.iter().any(|r| r.wasm_into_mbps.is_some());
    let chromium = rows.iter().any(|r| r.chromium_mbps.is_some());
    let mut s =
        String::from("| codec | filter | data | cratio | ours MB/s | C-Blosc2 MB/s | ours/C |");
    if wasm {
        s.push_str(" wasm MB/s | wasm/C |");
    }
    if into {
        s.push_str(" wasm into MB/s | into/C |");
    }
    if chromium {
        s.push_str(" Chromium MB/s | Chromium/C | Chromium into MB/s | Chromium into/C |");
    }
    s.push_str("\n|---|---|---|---:|---:|---:|---:|");
    if wasm {
        s.push_str("---:|---:|");
    }
    if into {
        s.push_str("---:|---:|");
    }
    if chromium {
        s.push_str("---:|---:|---:|---:|");
    }
    s.push('\n');
    let cell = |mbps: Option<f64>, ratio: Option<f64>| match (mbps, ratio) {
        (Some(w), Some(q)) => format!(" {w:.0} | {q:.2} |"),
        _ => " - | - |".to_string(),
    };
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.0} | {:.0} | {:.2} |",
            r.codec,
            r.filter,
            r.data,
            r.cratio,
            r.ours_mbps,
            r.c_mbps,
            r.ratio()
        ));
        if wasm {
            s.push_str(&cell(r.wasm_mbps, r.wasm_ratio()));
        }
        if into {
            s.push_str(&cell(r.wasm_into_mbps, r.wasm_into_ratio()));
        }
        if chromium {
            s.push_str(&cell(r.chromium_mbps, r.chromium_ratio()));
            s.push_str(&cell(r.chromium_into_mbps, r.chromium_into_ratio()));
        }
        s.push('\n');
    }
    s
}

/// The decode speed floors chunkwise holds itself to, as ratios to C-Blosc2 (one thread):
/// (codec, filter, data, column, floor). Columns: "ours/C" (native Rust), "wasm/C" (the wasm
/// build's `decodeChunk` in Node), "Chromium/C" (the web build's in headless Chromium), and
/// "wasm into/C" and "Chromium into/C", the same decode by `decodeChunkInto` into a buffer the
/// caller keeps: the decoder's speed with the one copy out of wasm memory and no allocation,
/// which `decodeChunk`'s new buffer per call bounds (see [`format_floors`]).
pub const FLOORS: [(&str, &str, &str, &str, f64); 9] = [
    ("lz4", "shuffle", "float32", "ours/C", 0.9),
    ("lz4", "shuffle", "float32", "wasm/C", 0.5),
    ("zstd", "shuffle", "float32", "wasm/C", 0.5),
    ("lz4", "shuffle", "float32", "Chromium/C", 0.5),
    ("zstd", "shuffle", "float32", "Chromium/C", 0.5),
    ("lz4", "shuffle", "float32", "wasm into/C", 0.5),
    ("zstd", "shuffle", "float32", "wasm into/C", 0.5),
    ("lz4", "shuffle", "float32", "Chromium into/C", 0.5),
    ("zstd", "shuffle", "float32", "Chromium into/C", 0.5),
];

/// One line per [`FLOORS`] entry: the row's measured ratio against its floor, "met" or
/// "BELOW", or "not measured" when the column is absent (no wasm build, or no `--chromium`).
/// A wasm or Chromium line also gives the ratio of a copy into a new buffer alone, no
/// decoding (`decodeChunk` copies its result into a new one per call, so it can be no
/// faster): a floor above that ceiling is out of reach of `decodeChunk`, whatever the decoder;
/// with the decode itself at ratio `d` (the "into" line), `decodeChunk` is near
/// `1 / (1 / d + 1 / buffer)`. A ratio is printed with
/// two decimals, or three where two would round it up to the floor ("0.498 BELOW", never
/// "0.50 BELOW"). A report, not a test: timings on a shared machine move by tens of percent
/// between runs.
pub fn format_floors(rows: &[BenchRow]) -> String {
    let mut s = String::from("floors (ratio to C-Blosc2, one thread):\n");
    for (codec, filter, data, column, floor) in FLOORS {
        let row = rows
            .iter()
            .find(|r| r.codec == codec && r.filter == filter && r.data == data);
        let ratio = row.and_then(|r| match column {
            "ours/C" => Some(r.ratio()),
            "Chromium/C" => r.chromium_ratio(),
            "wasm into/C" => r.wasm_into_ratio(),
            "Chromium into/C" => r.chromium_into_ratio(),
            _ => r.wasm_ratio(),
        });
        let digits = |q: f64| {
            if q < floor && format!("{q:.2}").parse::<f64>().is_ok_and(|r| r >= floor) {
                format!("{q:.3}")
            } else {
                format!("{q:.2}")
            }
        };
        let mut verdict = match ratio {
            Some(q) if q >= floor => format!("{} met", digits(q)),
            Some(q) => format!("{} BELOW", digits(q)),
            None => "not measured".to_string(),
        };
        let buffer = row.and_then(|r| match column {
            "wasm/C" => r.wasm_buffer_mbps,
            "Chromium/C" => r.chromium_buffer_mbps,
            _ => None,
        });
        if let (Some(b), Some(r), true) = (buffer, row, ratio.is_some()) {
            verdict.push_str(&format!(
                " (a copy into a new buffer alone, no decoding: {:.2})",
                b / r.c_mbps
            ));
        }
        s.push_str(&format!(
            "  {codec} {filter} {data} {column} >= {floor}: {verdict}\n"
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(codec: &'static str, ours: f64, wasm: Option<f64>, buffer: Option<f64>) -> BenchRow {
        BenchRow {
            codec,
            filter: "shuffle",
            data: "float32",
            chunk_nbytes: 4 << 20,
            cratio: 3.0,
            ours_mbps: ours,
            c_mbps: 1000.0,
            wasm_mbps: wasm,
            wasm_into_mbps: None,
            chromium_mbps: wasm.map(|w| w / 2.0),
            chromium_into_mbps: None,
            wasm_buffer_mbps: buffer,
            chromium_buffer_mbps: buffer.map(|b| b / 4.0),
            chunk: Vec::new(),
        }
    }

    #[test]
    fn a_native_pass_keeps_the_faster_measurement_of_each_decoder() {
        // One LZ4 + SHUFFLE float32 row compressed by C-Blosc2: a kept measurement above any
        // this machine reaches stays, a zero one is replaced by what the pass measured.
        let data = bench_data("float32");
        let p = cblosc2::Params {
            codec: 1,
            clevel: 5,
            typesize: 4,
            blocksize: 0,
            splitmode: 4,
            filters: [0, 0, 0, 0, 0, 1],
            filters_meta: [0; 6],
            nthreads: 1,
        };
        let mut r = row("lz4", 1e12, None, None);
        r.c_mbps = 0.0;
        r.chunk = cblosc2::compress(&p, &data).expect("C-Blosc2 compresses");
        let mut rows = [r];
        retime(&mut rows, 4 << 20);
        assert_eq!(rows[0].ours_mbps, 1e12);
        assert!(
            rows[0].c_mbps > 10.0,
            "C-Blosc2 measured {} MB/s",
            rows[0].c_mbps
        );
    }

    #[test]
    fn floors_name_the_verdict_and_the_new_buffer_ceiling() {
        let mut lz4 = row("lz4", 949.0, Some(498.0), Some(1800.0));
        lz4.wasm_into_mbps = Some(640.0);
        lz4.chromium_into_mbps = Some(470.0);
        let rows = [lz4, row("zstd", 900.0, Some(620.0), None)];
        let text = format_floors(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "  lz4 shuffle float32 ours/C >= 0.9: 0.95 met");
        // 0.498 would print as "0.50 BELOW" with two decimals: three are given.
        assert_eq!(
            lines[2],
            "  lz4 shuffle float32 wasm/C >= 0.5: 0.498 BELOW (a copy into a new buffer alone, no decoding: 1.80)"
        );
        assert_eq!(lines[3], "  zstd shuffle float32 wasm/C >= 0.5: 0.62 met");
        assert_eq!(
            lines[4],
            "  lz4 shuffle float32 Chromium/C >= 0.5: 0.25 BELOW (a copy into a new buffer alone, no decoding: 0.45)"
        );
        assert_eq!(
            lines[5],
            "  zstd shuffle float32 Chromium/C >= 0.5: 0.31 BELOW"
        );
        // The into lines: measured where the row has the column, else "not measured".
        assert_eq!(
            lines[6],
            "  lz4 shuffle float32 wasm into/C >= 0.5: 0.64 met"
        );
        assert_eq!(
            lines[7],
            "  zstd shuffle float32 wasm into/C >= 0.5: not measured"
        );
        assert_eq!(
            lines[8],
            "  lz4 shuffle float32 Chromium into/C >= 0.5: 0.47 BELOW"
        );
        let unmeasured = format_floors(&[row("lz4", 949.0, None, None)]);
        assert!(
            unmeasured.contains("wasm/C >= 0.5: not measured\n"),
            "{unmeasured}"
        );
    }
}
