//! The native harness behind the `chunkwise` CLI: the loopback range server, source opening,
//! `.npy` files, parity checks against real C-Blosc2 and libhdf5, benchmarks.

pub mod bench_remote;
pub mod serve;
pub mod source;
