//! A timer that works on every host: tokio natively, `setTimeout` in wasm.
//!
//! In wasm, `setTimeout` is looked up on the global object (`globalThis`), not on `window`, so
//! the same code runs on a browser's main thread, in a dedicated worker, in Node and in
//! workerd.

use std::time::Duration;

/// The longest delay [`sleep`] waits in wasm, in ms: 2^31 - 1 (about 24.8 days), the largest
/// delay `setTimeout` takes (a longer one fires at once). Deadlines are capped to it
/// (`open::options`, `timeoutMs`), so they mean the same natively and in wasm.
pub const MAX_DELAY_MS: u64 = i32::MAX as u64;

/// Waits for `duration`.
///
/// Natively this is `tokio::time::sleep`, so it must run inside a tokio runtime with the time
/// driver enabled (as every native caller here does). In wasm, if the host has no
/// `setTimeout`, it returns at once rather than failing: a missed backoff only makes a retry
/// come sooner. Dropped before its end, it clears its timer (`clearTimeout`).
#[cfg(not(target_arch = "wasm32"))]
pub async fn sleep(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// Waits for `duration` (see the native variant for the contract).
#[cfg(target_arch = "wasm32")]
pub async fn sleep(duration: Duration) {
    use wasm_bindgen::JsCast;
    let global = js_sys::global();
    let Ok(set_timeout) = js_sys::Reflect::get(&global, &"setTimeout".into()) else {
        return;
    };
    let Ok(set_timeout) = set_timeout.dyn_into::<js_sys::Function>() else {
        return;
    };
    // setTimeout takes a 32-bit signed delay in ms; longer delays fire at once, so clamp.
    let ms = duration.as_millis().min(MAX_DELAY_MS as u128) as f64;
    let mut id = wasm_bindgen::JsValue::UNDEFINED;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        id = set_timeout
            .call2(&global, &resolve, &ms.into())
            .unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
    });
    let _clear = ClearTimer { global, id };
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Clears a `setTimeout` timer when dropped: a sleep dropped before its end (the deadline of
/// work that finished first) must not leave its timer pending, which would keep a Node
/// process alive until it fires (60 s for a request deadline) and hold its callback.
/// Clearing a timer that already fired does nothing.
#[cfg(target_arch = "wasm32")]
struct ClearTimer {
    global: js_sys::Object,
    id: wasm_bindgen::JsValue,
}

#[cfg(target_arch = "wasm32")]
impl Drop for ClearTimer {
    fn drop(&mut self) {
        use wasm_bindgen::JsCast;
        if let Some(clear) = js_sys::Reflect::get(&self.global, &"clearTimeout".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        {
            let _ = clear.call1(&self.global, &self.id);
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    #[tokio::test]
    async fn sleeps_at_least_the_duration() {
        let t = std::time::Instant::now();
        super::sleep(std::time::Duration::from_millis(30)).await;
        assert!(t.elapsed() >= std::time::Duration::from_millis(30));
    }
}
