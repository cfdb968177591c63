//! The options object of a JS call, read once through one catching JS function
//! (`options.js`) into a plain copy the bindings then read. A getter that throws, a Proxy
//! whose trap throws, or a cyclic `headers` object then fails the call with
//! `INVALID_ARGUMENT`; read from Rust directly, the exception would unwind through the
//! module's frames (imports without `catch` cannot stop it) and an open's promise would
//! never settle.

use super::arg_error;
use crate::open::options::{struct_fields, OpenOptionsInput, ReadOptionsInput, JS_OBJECT_FIELDS};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/wasm/options.js")]
extern "C" {
    #[wasm_bindgen(js_name = reportProgress)]
    fn report_progress(f: &js_sys::Function, done: f64, total: f64);
    #[wasm_bindgen(js_name = byteView, catch)]
    fn byte_view(value: &JsValue) -> Result<js_sys::Uint8Array, JsValue>;
    #[wasm_bindgen(js_name = snapshotList, catch)]
    fn snapshot_list(value: &JsValue, what: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = snapshotOptions, catch)]
    fn snapshot_options(
        options: &JsValue,
        fields: Vec<JsValue>,
        references: Vec<JsValue>,
    ) -> Result<JsValue, JsValue>;
}

/// The longest part of a thrown message repeated in the error (bytes).
const MAX_MESSAGE: usize = 200;

/// A plain copy of `options` with the names of `fields` copied as data and those of
/// `references` kept as the caller's objects; `undefined`, `null` and values that are no
/// object come back as they are (see `snapshotOptions` in `options.js`).
///
/// # Errors
/// `INVALID_ARGUMENT` "options could not be read: ..." with the thrown message (cut to
/// 200 bytes) when reading them threw.
pub(crate) fn snapshot(
    options: &JsValue,
    fields: &[&str],
    references: &[&str],
) -> Result<JsValue, JsValue> {
    if options.is_undefined() || options.is_null() || !options.is_object() {
        return Ok(options.clone());
    }
    let names = |list: &[&str]| list.iter().map(|&n| JsValue::from_str(n)).collect();
    snapshot_options(options, names(fields), names(references))
        .map_err(|thrown| unreadable("options", &thrown))
}

/// A plain copy of `value` when it is an array (a selection, chunk coordinates, a shape;
/// `what` names it), else `value` itself: its items are then read without running a
/// getter or a trap (see `snapshotList` in `options.js`).
///
/// # Errors
/// `INVALID_ARGUMENT` "{what} could not be read: ..." when reading it threw (a Proxy's trap,
/// more than 65536 items).
pub(crate) fn list(value: &JsValue, what: &str) -> Result<JsValue, JsValue> {
    if !js_sys::Array::is_array(value) {
        return Ok(value.clone());
    }
    snapshot_list(value, what).map_err(|thrown| unreadable(what, &thrown))
}

/// The read progress callback of an `onProgress` option: calls `f({ done, total })` (chunks)
/// as the read advances; nothing when no function was given. What `f` throws is ignored and
/// so is the rejection of a promise it returns (an `async` callback), inside
/// `reportProgress` of `options.js`: a failing callback does not fail the read, nor leave an
/// unhandled rejection (which ends a Node process), nor throw through the module's frames (a
/// `Promise` subclass whose `then` throws did, from `catch` called here).
pub(crate) fn progress_callback(
    on_progress: Option<js_sys::Function>,
) -> impl Fn(crate::pipeline::Progress) {
    move |p: crate::pipeline::Progress| {
        if let Some(f) = &on_progress {
            report_progress(f, p.done as f64, p.total as f64);
        }
    }
}

/// A `Uint8Array` of this realm over the memory of `value`, a `Uint8Array` or another typed
/// array of one byte per element (see `byteView` in `options.js`): its real length, and no
/// getter or method of the caller's object (an overridden `length` or `set`) runs when it is
/// read or written; `what` names the argument.
///
/// # Errors
/// `INVALID_ARGUMENT` "{what} could not be read: ..." for any other value (`null`, a string,
/// a plain array): wasm-bindgen's `&[u8]` glue threw a bare `TypeError` for `null`.
pub(crate) fn view(value: &JsValue, what: &str) -> Result<js_sys::Uint8Array, JsValue> {
    byte_view(value).map_err(|thrown| unreadable(what, &thrown))
}

/// The `INVALID_ARGUMENT` error of a value whose reading threw `thrown`: "{what} could not be
/// read: " and the thrown message, cut to [`MAX_MESSAGE`] bytes.
fn unreadable(what: &str, thrown: &JsValue) -> JsValue {
    // `options.js` throws an `Error` of its own with the message as a string.
    let message = match thrown.dyn_ref::<js_sys::Error>() {
        Some(e) => String::from(e.message()),
        None => String::from("a value that gives no message"),
    };
    let mut end = message.len().min(MAX_MESSAGE);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < message.len() { "..." } else { "" };
    arg_error(format!(
        "{what} could not be read: {}{cut}",
        &message[..end]
    ))
}

/// [`snapshot`] of the options of `RemoteArray.open`, `RemoteStore.open` and the table
/// opens: the fields of [`OpenOptionsInput`] and the JS objects `signal` and `cacheStore`.
pub(crate) fn open(options: &JsValue) -> Result<JsValue, JsValue> {
    snapshot(
        options,
        struct_fields::<OpenOptionsInput>(),
        JS_OBJECT_FIELDS,
    )
}

/// [`snapshot`] of the options of a read: the fields of [`ReadOptionsInput`] and `extra`
/// (e.g. `readRows`' `columns`) as data, `signal` and `onProgress` as the caller's objects.
pub(crate) fn read(options: &JsValue, extra: &[&str]) -> Result<JsValue, JsValue> {
    let fields: Vec<&str> = struct_fields::<ReadOptionsInput>()
        .iter()
        .chain(extra)
        .copied()
        .collect();
    snapshot(options, &fields, JS_OBJECT_FIELDS)
}

/// The `signal` of a copy from [`snapshot`]: an `AbortSignal` of this realm or another
/// ([`crate::io::signal::abort_signal`], as `fetch` takes it), which the module then uses only
/// through the realm's own getters and methods; none for `undefined`/`null`.
///
/// # Errors
/// `INVALID_ARGUMENT` "signal must be an AbortSignal" for any other value, a look-alike
/// included (also one that fakes `Symbol.toStringTag`: its members ran outside any `catch`).
pub(crate) fn signal(options: &JsValue) -> Result<Option<web_sys::AbortSignal>, JsValue> {
    let Some(v) = super::array::get_opt(options, "signal") else {
        return Ok(None);
    };
    crate::io::signal::abort_signal(&v)
        .map(Some)
        .ok_or_else(|| arg_error("signal must be an AbortSignal"))
}

/// The `onProgress` of a copy from [`snapshot`]: a function, or none for `undefined`/`null`.
///
/// # Errors
/// `INVALID_ARGUMENT` "onProgress must be a function" for any other value.
pub(crate) fn on_progress(options: &JsValue) -> Result<Option<js_sys::Function>, JsValue> {
    match super::array::get_opt(options, "onProgress") {
        None => Ok(None),
        Some(f) => f
            .dyn_into()
            .map(Some)
            .map_err(|_| arg_error("onProgress must be a function")),
    }
}
