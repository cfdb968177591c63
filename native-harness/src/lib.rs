//! The native harness behind the `chunkwise` CLI: the range server, source opening, `.npy`
//! output, parity checks against real C-Blosc2 and libhdf5, benchmarks.

pub mod npy;
pub mod source;
