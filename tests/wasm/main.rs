//! The wasm-bindgen tests, one test binary for every host `scripts/test-wasm.sh` runs them in
//! (Node, headless Chromium, a dedicated worker): one build, one `wasm-bindgen` pass and one
//! browser start per host, rather than one per file. Each module is one subject; those that
//! need the `conformance` feature say so in their own `cfg`.
#![cfg(target_arch = "wasm32")]

mod array;
mod array_checks;
mod cache;
#[cfg(feature = "chunk-trace")]
mod chunk_trace;
mod filters;
mod hdf5_filters;
mod hdf5_types;
mod io;
#[cfg(feature = "partition")]
mod partition;
mod server;
mod store;
mod zarr;
