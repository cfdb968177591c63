//! chunkwise: read remote scientific arrays over HTTP range requests.
//!
//! The crate is one core that runs in three hosts: browsers and edge runtimes (compiled to
//! WebAssembly, see [`wasm`]) and natively (the `chunkwise` CLI in `native-harness`).
//! Everything that decides which bytes to fetch, what to cache and how to decode is plain Rust
//! with no host dependency; only the transport ([`io`]) and the JS bindings touch a host.
//!
//! Layers, bottom up:
//! - [`io`]: the [`io::RangeSource`] trait, byte ranges, coalescing, traffic counting, retries,
//!   and the transports (fetch in wasm, HTTP natively, local files, memory).
//! - [`codec::blosc2`]: Blosc2 chunk and frame decoding/encoding in pure Rust.
//! - [`cache`]: the cache coordinator: discovery records, the compressed-payload LRU, complete
//!   copies of small sources, policies MEMORY / DISK / NONE.
//! - [`selection`]: numpy-like selections and the one planner that maps them to chunks.
//! - [`formats`]: discovery and chunk location per format.
//! - [`pipeline`]: the one read, shared by every format: plan, fetch, decode, assemble.
//! - [`array`]: [`array::RemoteArray`], the format-agnostic handle users read from.
//! - [`store`]: [`store::RemoteStore`], a container opened once whose arrays share its caches.
//! - [`table`]: [`table::RemoteTable`], rows over column arrays (CTable, record dataset, group).
//! - [`render`]: 2-D selections as PNG previews through a colour map.
//! - [`partition`] and [`chunk_trace`]: pure logic for tape tiering and the HDF5 chunk cache
//!   (cargo features `partition` and `chunk-trace`, on by default).

pub mod array;
pub mod attrs;
pub mod cache;
pub mod chunk_export;
#[cfg(feature = "chunk-trace")]
pub mod chunk_trace;
pub mod codec;
pub mod dtype;
pub mod element;
pub mod error;
pub mod formats;
pub mod io;
pub mod npy;
pub mod open;
#[cfg(feature = "partition")]
pub mod partition;
pub mod pipeline;
pub mod reference;
#[cfg(feature = "png")]
pub mod render;
pub mod selection;
pub(crate) mod sort;
pub mod store;
pub mod table;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use error::{Error, Result};
