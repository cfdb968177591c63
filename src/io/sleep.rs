//! A timer that works on every host (tokio natively, `setTimeout` in wasm).
