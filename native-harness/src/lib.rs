//! The native harness behind the `chunkwise` CLI: the loopback range server, source opening,
//! parity helpers and benchmarks against the real C libraries (native only), and the
//! partition and chunk-trace commands.

pub mod bench_decode;
pub mod bench_remote;
pub mod bench_zarr;
pub mod chunk_trace_cli;
pub mod partition_cli;
pub mod serve;
pub mod source;
