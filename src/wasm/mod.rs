//! JavaScript bindings (wasm-bindgen). They only convert: parse options, call the core, map
//! errors to JS `Error`s carrying a `code`. Everything they call is tested natively.
//!
//! ```js
//! const arr = await RemoteArray.open(url, { cache: "memory", maxCacheBytes: 256 << 20, headers: {} });
//! arr.shape; arr.dtype; arr.chunks; arr.blocks;
//! const { data, shape, dtype } = await arr.read("0, 100:200, :", { signal, onProgress });
//! arr.traffic; // { requests, bytes }
//! arr.close();
//!
//! const store = await RemoteStore.open(url, { headers: {} });   // an HDF5 file
//! store.nodes;            // [{ path, kind, shape, dtype, error }, ...]
//! const ds = await store.get("/group/data");                     // a RemoteArray
//! const table = await store.table("/run/table");             // a RemoteTable
//! table.columns; table.nrows; const { id, x } = await table.readRows(0, 100, { columns: ["id", "x"] });
//! store.traffic; store.close();
//! ```

mod abort;
mod array;
mod attrs;
pub mod cache;
mod caterva2;
#[cfg(feature = "chunk-trace")]
mod chunk_trace;
mod decode;
mod options;
#[cfg(feature = "partition")]
pub mod partition;
#[cfg(feature = "png")]
mod render;
mod store;
mod table;
mod typed;
#[cfg(feature = "zarr")]
pub mod zarr;

pub use array::RemoteArray;
pub use cache::{cache_usage, clear_cache};
#[cfg(feature = "chunk-trace")]
pub use chunk_trace::{
    advise_chunk_cache, bench_chunk_trace, chunk_trace_experiment, random_chunk_trace,
    simulate_chunk_cache,
};
pub use decode::{decode_chunk, decode_chunk_into};
#[cfg(feature = "partition")]
pub use partition::{diff_js, partition_js, resolve_js, KeyResolver};
#[cfg(feature = "png")]
pub use render::render_png;
pub use store::RemoteStore;
pub use table::RemoteTable;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The `ErrorCode` union of every code and the `ChunkwiseError` interface, declared in the
/// core next to its list of codes ([`crate::error::ERROR_CODES_TS`]).
#[wasm_bindgen(typescript_custom_section)]
const TS_ERRORS: &'static str = crate::error::ERROR_CODES_TS;

#[wasm_bindgen(module = "/src/wasm/error.js")]
extern "C" {
    /// `new ChunkwiseError(message, code, field)` of `error.js`: the one class of every
    /// error the bindings throw or reject with, re-exported by the package's entry points.
    #[wasm_bindgen(js_name = chunkwiseError)]
    fn new_chunkwise_error(message: &str, code: &str, field: Option<&str>) -> JsValue;
}

/// A `ChunkwiseError` (a JS class extending `Error`, from `error.js`) with `message`, `code`
/// (one of the `.d.ts`'s `ErrorCode`) and, for partition errors, the input `field` at fault.
pub(crate) fn chunkwise_error(message: &str, code: &str, field: Option<&str>) -> JsValue {
    new_chunkwise_error(message, code, field)
}

/// The `ChunkwiseError` of a core error: its [`crate::Error::message`] and
/// [`crate::Error::code`].
pub(crate) fn js_error(e: &crate::Error) -> JsValue {
    // Never a URL's query or user info (signed URLs, passwords): see `Error::message`.
    chunkwise_error(&e.message(), e.code(), None)
}

/// A JS `Error` for invalid arguments.
pub(crate) fn arg_error(msg: impl Into<String>) -> JsValue {
    js_error(&crate::Error::InvalidArgument(msg.into()))
}

/// The string a JS caller passed as `what` (a URL, a path). Parameters are taken as `JsValue`
/// and checked here because wasm-bindgen's glue for a `String` parameter does not check the
/// type: `undefined` threw a `TypeError` before the promise existed, and a number trapped the
/// module ("memory access out of bounds"). Anything but a string is an `INVALID_ARGUMENT`
/// naming only its type (never the value, which may be a URL with a query).
pub(crate) fn string_arg(value: &JsValue, what: &str) -> Result<String, JsValue> {
    if let Some(s) = value.as_string() {
        return Ok(s);
    }
    let kind = if value.is_null() {
        "null".to_string()
    } else {
        value.js_typeof().as_string().unwrap_or_default()
    };
    let hint = if kind == "object" {
        " (for a URL object pass its href)"
    } else {
        ""
    };
    Err(arg_error(format!(
        "{what} must be a string, not {kind}{hint}"
    )))
}

/// `open` with [`crate::open::warm_up::beside`] for the format `url` names
/// ([`crate::open::warm_up::format_of`]): the instance's first open of that format compiles
/// its read path while the first request is in flight. Other opens run `open` alone.
///
/// `open` is moved to the heap at once, and what is returned is boxed: an open's future is
/// large, and every async layer holding it by value adds a copy of it to the poll stack of
/// an unoptimised build (wasm's stack is 1 MiB, and overflowing it corrupts memory).
pub(crate) fn with_warm_up<'a, T: 'a>(
    url: &str,
    open: impl std::future::Future<Output = T> + 'a,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>> {
    let open = Box::pin(open);
    #[cfg(any(feature = "zarr", feature = "hdf5", feature = "b2nd"))]
    return Box::pin(crate::open::warm_up::beside(
        crate::open::warm_up::format_of(url),
        open,
    ));
    #[cfg(not(any(feature = "zarr", feature = "hdf5", feature = "b2nd")))]
    {
        let _ = url;
        open
    }
}

/// The URL argument of an open: a string ([`string_arg`]) that is absolute, unless the
/// runtime has a page address to resolve a relative one against (`globalThis.location`:
/// windows and workers). Node and workerd have none, and their `fetch` would fail later
/// with a network error that names no cause.
///
/// # Errors
/// `INVALID_ARGUMENT`: not a string, or relative where nothing resolves it (the message
/// shows the URL redacted, as every message).
pub(crate) fn url_arg(value: &JsValue) -> Result<String, JsValue> {
    let url = string_arg(value, "url")?;
    if url.contains("://") || url.starts_with("data:") || url.starts_with("blob:") {
        return Ok(url);
    }
    let location = js_sys::Reflect::get(&js_sys::global(), &"location".into())
        .map(|l| !l.is_undefined() && !l.is_null())
        .unwrap_or(false);
    if location {
        return Ok(url);
    }
    Err(arg_error(format!(
        "url {:?} is relative, and this runtime (Node, workerd) has no page address to resolve it \
         against: pass an absolute http(s) URL",
        crate::io::url::redact_url(&url)
    )))
}

/// JSON text of a JS value (`JSON.stringify`), or why there is none (a `BigInt`, a cycle,
/// `undefined` or a function at top level).
///
/// Large inputs cross the boundary as one string: converting them field by field with
/// serde-wasm-bindgen makes a JS temporary per field, and on scopes of 100,000 arrays the garbage
/// collector then took most of the time, growing faster than the input.
pub(crate) fn stringify(v: &JsValue) -> std::result::Result<String, String> {
    match js_sys::JSON::stringify(v) {
        Ok(s) => s
            .as_string()
            .ok_or_else(|| "expected a JSON value".to_owned()),
        Err(e) => Err(js_sys::Error::from(e)
            .message()
            .as_string()
            .unwrap_or_else(|| "not JSON-serialisable".to_owned())),
    }
}

/// A JS value from JSON text (`JSON.parse`). Integers above 2^53 lose precision, as with any
/// `JSON.parse`.
pub(crate) fn parse_json(text: &str) -> std::result::Result<JsValue, String> {
    js_sys::JSON::parse(text).map_err(|e| {
        js_sys::Error::from(e)
            .message()
            .as_string()
            .unwrap_or_else(|| "invalid JSON".to_owned())
    })
}

/// Size in bytes of this module's linear memory (64 KiB pages; it grows and never shrinks), for
/// memory measurements.
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size::<0>() as f64) * 65536.0
}
