//! Stand-alone loopback range server (the same server as `chunkwise serve`), used by
//! `scripts/test-wasm.sh`. Prints `serving DIR at http://127.0.0.1:PORT/` when ready and
//! serves until Ctrl-C or SIGTERM.

use clap::Parser;
use native_harness::serve::{run, ServeOptions};
use std::path::PathBuf;

/// Serve files under a directory over HTTP on 127.0.0.1 with Range, validators and CORS.
#[derive(Parser, Debug)]
#[command(name = "range-server")]
struct Args {
    /// Directory to serve.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Milliseconds added before answering each request.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Test fault: answer 503 to the first N GET requests.
    #[arg(long, default_value_t = 0)]
    fail_first: u64,
    /// Test fault: ignore Range headers (always 200 with the whole body).
    #[arg(long)]
    ignore_range: bool,
    /// No request log on stderr.
    #[arg(long)]
    quiet: bool,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let a = Args::parse();
    run(ServeOptions {
        root: a.root,
        port: a.port,
        latency_ms: a.latency_ms,
        fail_first: a.fail_first,
        ignore_range: a.ignore_range,
        quiet: a.quiet,
    })
    .await
}
