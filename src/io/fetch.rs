//! HTTP range reads through `fetch` in wasm (browser main thread, worker, Node, workerd).
