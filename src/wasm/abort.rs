//! How a cancelled or timed-out operation rejects in JavaScript: as the platform's own
//! abortable APIs do (DOM Standard, "AbortSignal": an aborted `fetch` rejects with
//! `signal.reason`).
//!
//! - An operation whose `signal` aborted rejects with `signal.reason` itself: the
//!   `AbortError` `DOMException` that `controller.abort()` makes, the `TimeoutError` one of
//!   `AbortSignal.timeout(ms)`, or any reason the caller passed to `abort(reason)`, as is.
//! - An operation whose `timeoutMs` ran out rejects with a new `TimeoutError` `DOMException`.
//!
//! For callers that test `e.code`, a `DOMException` named `AbortError` or `TimeoutError`
//! (ours, or the platform's default reasons) also gets an own `code` property, `"CANCELLED"`
//! or `"TIMEOUT"` (the [`crate::Error::code`] of the same condition), which shadows
//! `DOMException`'s legacy numeric `code`. Other reasons are not touched.

use super::js_error;
use crate::io::{IoError, TimeoutScope};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// The rejection value of an operation that failed with `e`, run under `signal` (see the
/// module documentation); every other error is [`js_error`]'s `ChunkwiseError`.
pub(crate) fn operation_error(e: &crate::Error, signal: Option<&web_sys::AbortSignal>) -> JsValue {
    match e {
        crate::Error::Io(IoError::Timeout {
            scope: TimeoutScope::Operation,
            ..
        }) => dom_exception(&e.message(), "TimeoutError").unwrap_or_else(|| js_error(e)),
        _ if e.code() == "CANCELLED" => match signal.filter(|s| crate::io::signal::aborted(s)) {
            Some(s) => abort_reason(s).unwrap_or_else(|| js_error(e)),
            None => js_error(e),
        },
        _ => js_error(e),
    }
}

/// `signal.reason`, with a `code` added when it is an `AbortError`/`TimeoutError`
/// `DOMException`; an `AbortError` of ours when the runtime gives no reason (`undefined`).
fn abort_reason(signal: &web_sys::AbortSignal) -> Option<JsValue> {
    let reason = crate::io::signal::reason(signal);
    if reason.is_undefined() {
        return dom_exception("the operation was aborted", "AbortError");
    }
    // A DOMException of any realm (an iframe's controller makes the iframe's): its brand, not
    // `instanceof`, which holds only for this realm's.
    if let Some(name) = crate::io::signal::dom_exception_name(&reason) {
        add_code(reason.unchecked_ref(), &name);
    }
    Some(reason)
}

/// Whether the global `DOMException` exists.
fn has_dom_exception() -> bool {
    js_sys::Reflect::get(&js_sys::global(), &"DOMException".into()).is_ok_and(|c| c.is_function())
}

/// A new `DOMException(message, name)` with its `code` (see [`add_code`]); `None` where the
/// runtime has no `DOMException`.
fn dom_exception(message: &str, name: &str) -> Option<JsValue> {
    if !has_dom_exception() {
        return None;
    }
    let e = web_sys::DomException::new_with_message_and_name(message, name).ok()?;
    add_code(&e, name);
    Some(e.into())
}

/// Sets an own, non-enumerable `code` on `e`: `"CANCELLED"` for an `AbortError`,
/// `"TIMEOUT"` for a `TimeoutError`, nothing for other names or when `e` already has one.
fn add_code(e: &web_sys::DomException, name: &str) {
    let code = match name {
        "AbortError" => "CANCELLED",
        "TimeoutError" => "TIMEOUT",
        _ => return,
    };
    let obj: &js_sys::Object = e.unchecked_ref();
    if js_sys::Object::has_own(obj, &"code".into()) {
        return;
    }
    let desc = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&desc, &"value".into(), &code.into());
    let _ = js_sys::Reflect::set(&desc, &"configurable".into(), &JsValue::TRUE);
    let _ = js_sys::Reflect::set(&desc, &"writable".into(), &JsValue::TRUE);
    let _ = js_sys::Reflect::define_property(obj, &"code".into(), &desc);
}
