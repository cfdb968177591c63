// The caller's AbortSignal, used only through this realm's own getters and methods
// (AbortSignal.prototype's `aborted` and `reason`, EventTarget.prototype's add/
// removeEventListener), each inside a `try` (the binding imports these without `catch`, as
// none throws): none of the signal's own properties runs, so an own `aborted` getter that
// throws, or an overridden `addEventListener`, cannot unwind through the module's frames
// (such a throw left an open's promise that never settled). They take a real signal of any
// realm (a frame's, a worker's), as `fetch` does.

function getter(name) {
  return Object.getOwnPropertyDescriptor(AbortSignal.prototype, name).get;
}

/** Whether `value` is an AbortSignal: the `aborted` getter checks its receiver and throws for
 *  anything else (a look-alike object, one that fakes `Symbol.toStringTag`, a Proxy in a
 *  browser). */
export function isAbortSignal(value) {
  if (value === null || typeof value !== "object") return false;
  try {
    Reflect.apply(getter("aborted"), value, []);
    return true;
  } catch {
    return false;
  }
}

/** `signal.aborted`, read by AbortSignal.prototype's getter; false if that throws. */
export function signalAborted(signal) {
  try {
    return Reflect.apply(getter("aborted"), signal, []) === true;
  } catch {
    return false;
  }
}

/** `signal.reason`, read by AbortSignal.prototype's getter; undefined if that throws. */
export function signalReason(signal) {
  try {
    return Reflect.apply(getter("reason"), signal, []);
  } catch {
    return undefined;
  }
}

/** Adds (`add` true) or removes `listener` for the signal's "abort" event, by
 *  EventTarget.prototype's methods; nothing if they throw. */
export function listenAbort(signal, listener, add) {
  try {
    const method = add ? EventTarget.prototype.addEventListener : EventTarget.prototype.removeEventListener;
    Reflect.apply(method, signal, ["abort", listener]);
  } catch {
    // ignored, as the comment at the top says
  }
}

/** The `name` of a DOMException of this realm or another (DOMException.prototype's getter,
 *  whose brand check takes any realm's), or undefined for anything else (a look-alike object
 *  included) and where there is no DOMException. */
export function domExceptionName(value) {
  try {
    if (typeof DOMException !== "function" || value === null || typeof value !== "object") return undefined;
    return Reflect.apply(Object.getOwnPropertyDescriptor(DOMException.prototype, "name").get, value, []);
  } catch {
    return undefined;
  }
}
