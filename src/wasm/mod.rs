//! JavaScript bindings (wasm-bindgen): conversion only, the logic lives in the core.

mod partition;
