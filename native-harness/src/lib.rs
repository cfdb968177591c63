//! Library side of the chunkwise harness: parity helpers and benchmarks against the real C
//! libraries (native only).

pub mod bench_decode;
