//! The caller's `AbortSignal` in wasm, used only through this realm's intrinsic getters and
//! methods (`signal.js`): none of the signal's own properties runs, so nothing the caller
//! defined on it (an own `aborted` getter that throws) can throw through the module's frames.
//! Used by the bindings (`crate::wasm`) and by the fetch transport ([`super::fetch`]).

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

#[wasm_bindgen(module = "/src/io/signal.js")]
extern "C" {
    #[wasm_bindgen(js_name = isAbortSignal)]
    fn is_abort_signal_js(value: &JsValue) -> bool;
    #[wasm_bindgen(js_name = signalAborted)]
    fn signal_aborted(signal: &AbortSignal) -> bool;
    #[wasm_bindgen(js_name = signalReason)]
    fn signal_reason(signal: &AbortSignal) -> JsValue;
    #[wasm_bindgen(js_name = listenAbort)]
    fn listen_abort(signal: &AbortSignal, listener: &js_sys::Function, add: bool);
}

/// `value` as an `AbortSignal` when it is one (of this realm or another: the brand check of
/// `AbortSignal.prototype`'s `aborted` getter), else `None` (a look-alike object, also one
/// that fakes `Symbol.toStringTag`).
pub fn abort_signal(value: &JsValue) -> Option<AbortSignal> {
    is_abort_signal_js(value).then(|| value.clone().unchecked_into())
}

/// Whether `signal` has aborted (`AbortSignal.prototype`'s `aborted` getter; false if it
/// throws).
pub fn aborted(signal: &AbortSignal) -> bool {
    signal_aborted(signal)
}

/// `signal.reason` (`AbortSignal.prototype`'s `reason` getter; `undefined` if it throws).
pub fn reason(signal: &AbortSignal) -> JsValue {
    signal_reason(signal)
}

/// Adds `listener` for `signal`'s `abort` event (`EventTarget.prototype.addEventListener`).
pub fn add_abort_listener(signal: &AbortSignal, listener: &js_sys::Function) {
    listen_abort(signal, listener, true);
}

/// Removes a listener [`add_abort_listener`] added.
pub fn remove_abort_listener(signal: &AbortSignal, listener: &js_sys::Function) {
    listen_abort(signal, listener, false);
}
