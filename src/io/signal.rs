//! The caller's `AbortSignal` in wasm, used only through this realm's intrinsic getters and
//! methods (`signal.js`): none of the signal's own properties runs, so nothing the caller
//! defined on it (an own `aborted` getter that throws) can throw through the module's frames.
//! Used by the bindings (`crate::wasm`) and by the fetch transport ([`super::fetch`]).

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

#[wasm_bindgen(module = "/src/io/signal.js")]
extern "C" {
    #[wasm_bindgen(js_name = isAbortSignal)]
    fn is_abort_signal(value: &JsValue) -> bool;
    /// Whether `signal` has aborted (`AbortSignal.prototype`'s `aborted` getter; false if it
    /// throws).
    #[wasm_bindgen(js_name = signalAborted)]
    pub fn aborted(signal: &AbortSignal) -> bool;
    /// `signal.reason` (`AbortSignal.prototype`'s `reason` getter; `undefined` if it throws).
    #[wasm_bindgen(js_name = signalReason)]
    pub fn reason(signal: &AbortSignal) -> JsValue;
    /// Adds (`add` true) or removes `listener` for `signal`'s `abort` event
    /// (`EventTarget.prototype`'s methods; nothing if they throw).
    #[wasm_bindgen(js_name = listenAbort)]
    pub fn listen_abort(signal: &AbortSignal, listener: &js_sys::Function, add: bool);
    /// The `name` of a `DOMException` of this realm or another (`DOMException.prototype`'s
    /// getter), `None` for any other value.
    #[wasm_bindgen(js_name = domExceptionName)]
    pub fn dom_exception_name(value: &JsValue) -> Option<String>;
}

/// `value` as an `AbortSignal` when it is one (of this realm or another: the brand check of
/// `AbortSignal.prototype`'s `aborted` getter), else `None` (a look-alike object, also one
/// that fakes `Symbol.toStringTag`).
pub fn abort_signal(value: &JsValue) -> Option<AbortSignal> {
    is_abort_signal(value).then(|| value.clone().unchecked_into())
}
