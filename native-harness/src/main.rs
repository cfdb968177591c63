//! The `chunkwise` command line: serve, read, info, and later parity checks and benchmarks.

fn main() {
    println!("chunkwise");
}
