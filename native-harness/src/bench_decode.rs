//! Decode speed of chunkwise's pure-Rust Blosc2 chunk decoder against C-Blosc2 2.15
//! (single thread), on the same chunks; also the thin C-Blosc2 wrapper the parity tests use.

use std::time::Instant;

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
        init();
        let mut dst = vec![0u8; src.len() + 32 + 64];
        // SAFETY: the context is created from a fully initialised cparams and freed below;
        // src/dst pointers and sizes describe live buffers.
        unsafe {
            let ctx = ffi::blosc2_create_cctx(cparams(p));
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
}

impl BenchRow {
    /// `ours_mbps / c_mbps`.
    pub fn ratio(&self) -> f64 {
        self.ours_mbps / self.c_mbps
    }
}

fn float32_data(n: usize) -> Vec<u8> {
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

fn int64_data(n: usize) -> Vec<u8> {
    (0..n as i64)
        .flat_map(|i| (1_000_000 + i * 3 + (i * 7919) % 13).to_le_bytes())
        .collect()
}

fn time_loop(total: usize, per: usize, mut f: impl FnMut()) -> f64 {
    let reps = total.div_ceil(per).max(2);
    f(); // warm-up
    let t = Instant::now();
    for _ in 0..reps {
        f();
    }
    (reps * per) as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// BYTEDELTA is absent: blosc2-sys builds C-Blosc2 without its filter plugins.
///
/// Measure each codec/filter pair on 4 MiB chunks of float32 and int64 data (C-Blosc2 picks the
/// block size). `quick`: ~16 MiB of decoded output per row and decoder; else ~128 MiB.
/// Panics if a decoder's output differs from the input (a benchmark of wrong output is void).
pub fn run(quick: bool) -> Vec<BenchRow> {
    use cblosc2::{compress, Dctx, Params};
    let total = if quick { 16 << 20 } else { 128 << 20 };
    let f32d = float32_data(1 << 20);
    let i64d = int64_data(1 << 19);
    // (codec name, codec id, clevel, filter name, filters, filter metas)
    type Case = (&'static str, u8, u8, &'static str, [u8; 6], [u8; 6]);
    let cases: [Case; 9] = [
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
            let mut out = vec![0u8; data.len()];
            let ours = time_loop(total, data.len(), || {
                decode_chunk_into(&chunk, &mut out).expect("our decoder failed");
            });
            assert!(
                out == *data,
                "our decoder output differs ({codec} {filter})"
            );
            out.fill(0);
            let c = time_loop(total, data.len(), || {
                dctx.decompress_into(&chunk, &mut out)
                    .expect("C-Blosc2 decompression failed");
            });
            assert!(out == *data, "C-Blosc2 output differs ({codec} {filter})");
            rows.push(BenchRow {
                codec,
                filter,
                data: data_name,
                chunk_nbytes: data.len(),
                cratio: data.len() as f64 / chunk.len() as f64,
                ours_mbps: ours,
                c_mbps: c,
            });
        }
    }
    rows
}

/// A Markdown table of the rows: codec, filter, data, ratio of compression, MB/s of each
/// decoder and ours / C.
pub fn format_table(rows: &[BenchRow]) -> String {
    let mut s = String::from(
        "| codec | filter | data | cratio | ours MB/s | C-Blosc2 MB/s | ours/C |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.0} | {:.0} | {:.2} |\n",
            r.codec,
            r.filter,
            r.data,
            r.cratio,
            r.ours_mbps,
            r.c_mbps,
            r.ratio()
        ));
    }
    s
}
