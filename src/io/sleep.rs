//! A timer that works on every host: tokio natively, `setTimeout` in wasm.
//!
//! In wasm, `setTimeout` is looked up on the global object (`globalThis`), not on `window`, so
//! the same code runs on a browser's main thread, in a dedicated worker, in Node and in
//! workerd.

use std::time::Duration;

/// Waits for `duration`.
///
/// Natively this is `tokio::time::sleep`, so it must run inside a tokio runtime with the time
/// driver enabled (as every native caller here does). In wasm, if the host has no
/// `setTimeout`, it returns at once rather than failing: a missed backoff only makes a retry
/// come sooner.
#[cfg(not(target_arch = "wasm32"))]
pub async fn sleep(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// Waits for `duration` (see the native variant for the contract). The timer is cleared
/// (`clearTimeout`) when the future is dropped unfinished, as a deadline that lost its race
/// is: a pending timer would otherwise keep a Node process alive until it fires.
#[cfg(target_arch = "wasm32")]
pub fn sleep(duration: Duration) -> Sleep {
    use wasm_bindgen::JsCast;
    let global = js_sys::global();
    let function = |name: &str| {
        js_sys::Reflect::get(&global, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
    };
    let (Some(set_timeout), clear_timeout) = (function("setTimeout"), function("clearTimeout"))
    else {
        return Sleep {
            wait: None,
            timer: None,
        };
    };
    // setTimeout takes a 32-bit signed delay in ms; longer delays fire at once, so clamp.
    let ms = duration.as_millis().min(i32::MAX as u128) as f64;
    let mut id = wasm_bindgen::JsValue::UNDEFINED;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Ok(v) = set_timeout.call2(&global, &resolve, &ms.into()) {
            id = v;
        }
    });
    Sleep {
        wait: Some(wasm_bindgen_futures::JsFuture::from(promise)),
        timer: clear_timeout.map(|clear| (clear, id)),
    }
}

/// The future of [`sleep`] in wasm: the `setTimeout` promise, and the timer to clear if the
/// future is dropped before it fires.
#[cfg(target_arch = "wasm32")]
pub struct Sleep {
    wait: Option<wasm_bindgen_futures::JsFuture>,
    /// `clearTimeout` and the timer's id, until the timer fired.
    timer: Option<(js_sys::Function, wasm_bindgen::JsValue)>,
}

#[cfg(target_arch = "wasm32")]
impl std::future::Future for Sleep {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let Some(wait) = self.wait.as_mut() else {
            return std::task::Poll::Ready(());
        };
        match std::pin::Pin::new(wait).poll(cx) {
            std::task::Poll::Ready(_) => {
                self.wait = None;
                self.timer = None;
                std::task::Poll::Ready(())
            }
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

#[cfg(target_arch = "wasm32")]
impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some((clear, id)) = self.timer.take() {
            let _ = clear.call1(&js_sys::global(), &id);
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
