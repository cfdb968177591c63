//! The native harness behind the `chunkwise` CLI: the loopback range server, source opening,
//! parity helpers and benchmarks against the real C libraries (native only), and the
//! partition and chunk-trace commands.

pub mod bench_b2z;
pub mod bench_caterva2;
pub mod bench_coalesce;
pub mod bench_decode;
pub mod bench_remote;
pub mod bench_zarr;
pub mod cache_cli;
pub mod chunk_trace_cli;
pub mod numpy_print;
pub mod partition_cli;
pub mod preview_cli;
pub mod progress;
pub mod serve;
pub mod source;
pub mod table_cli;
pub mod tree;

/// The python of the project's venv (numpy, python-blosc2, h5py 3.16 with HDF5 2.0, zarr,
/// installed by `scripts/setup.sh`): `$CHUNKWISE_VENV/bin/python`, by default
/// `~/.cache/chunkwise/venv/bin/python`. It writes the fixtures benchmarks make at run time.
pub fn venv_python() -> std::path::PathBuf {
    let venv = std::env::var_os("CHUNKWISE_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(std::path::PathBuf::from)
                .unwrap_or_default()
                .join(".cache/chunkwise/venv")
        });
    venv.join("bin/python")
}
