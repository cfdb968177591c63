//! The decoders compared, behind one `decode(which, src, dst)`; built natively (src/main.rs)
//! and as a bare wasm32 module (`cc_alloc` / `cc_decode`, run by bench.mjs in Node).

/// Decoder names, indexed by `which`.
pub const NAMES: &[&str] = &[
    "zstd: ruzstd 0.8.3",
    "zstd: ruzstd 0.9.1",
    "zstd: C zstd 1.5.7 (zstd-sys)",
    "inflate: miniz_oxide 0.8",
    "inflate: zlib-rs 0.6.8",
    "inflate: C zlib (libz-sys)",
];

struct State {
    ruzstd08: ruzstd08::decoding::FrameDecoder,
    ruzstd09: ruzstd09::decoding::FrameDecoder,
    czstd: zstd_safe::DCtx<'static>,
    miniz: Box<miniz_oxide::inflate::core::DecompressorOxide>,
}

thread_local! {
    static STATE: std::cell::RefCell<State> = std::cell::RefCell::new(State {
        ruzstd08: ruzstd08::decoding::FrameDecoder::new(),
        ruzstd09: ruzstd09::decoding::FrameDecoder::new(),
        czstd: zstd_safe::DCtx::create(),
        miniz: Box::default(),
    });
}

/// Decode `src` into `dst` with decoder `which`; bytes written, or `None` on failure or a
/// decoder absent from this target.
pub fn decode(which: usize, src: &[u8], dst: &mut [u8]) -> Option<usize> {
    STATE.with(|s| {
        let s = &mut *s.borrow_mut();
        match which {
            0 => s.ruzstd08.decode_all(src, dst).ok(),
            1 => s.ruzstd09.decode_all(src, dst).ok(),
            2 => s.czstd.decompress(dst, src).ok(),
            3 => {
                use miniz_oxide::inflate::core::{decompress, inflate_flags};
                s.miniz.init();
                let flags = inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER
                    | inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
                let (st, _, n) = decompress(&mut s.miniz, src, dst, 0, flags);
                (st == miniz_oxide::inflate::TINFLStatus::Done).then_some(n)
            }
            4 => {
                let (o, rc) =
                    zlib_rs::decompress_slice(dst, src, zlib_rs::InflateConfig::default());
                (rc == zlib_rs::ReturnCode::Ok).then_some(o.len())
            }
            #[cfg(not(target_arch = "wasm32"))]
            5 => {
                let mut n = dst.len() as libz_sys::uLongf;
                // SAFETY: pointers and sizes describe live buffers.
                let rc = unsafe {
                    libz_sys::uncompress(dst.as_mut_ptr(), &mut n, src.as_ptr(), src.len() as _)
                };
                (rc == libz_sys::Z_OK).then_some(n as usize)
            }
            _ => None,
        }
    })
}

/// wasm: allocate `n` bytes (never freed; the benchmark keeps its buffers).
#[no_mangle]
pub extern "C" fn cc_alloc(n: usize) -> *mut u8 {
    Box::leak(vec![0u8; n].into_boxed_slice()).as_mut_ptr()
}

/// wasm: [`decode`] over raw pointers; bytes written or -1.
///
/// # Safety
/// The pointers and lengths describe live, non-overlapping buffers.
#[no_mangle]
pub unsafe extern "C" fn cc_decode(
    which: usize,
    sp: *const u8,
    sl: usize,
    dp: *mut u8,
    dl: usize,
) -> isize {
    let src = std::slice::from_raw_parts(sp, sl);
    let dst = std::slice::from_raw_parts_mut(dp, dl);
    decode(which, src, dst).map_or(-1, |n| n as isize)
}
