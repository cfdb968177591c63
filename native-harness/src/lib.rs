//! Library side of the `chunkwise` CLI: the loopback range server and the checks the binary runs.

pub mod serve;
