//! Library side of the `chunkwise` CLI: plain functions the command handlers call, reusable from
//! the harness's integration tests.

pub mod chunk_trace_cli;
