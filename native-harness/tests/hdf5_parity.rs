//! Parity with two real HDF5 builds: `tests/fixtures/gen_hdf5_matrix.py` writes a matrix of
//! files (every libver the build knows, superblocks 0 to 3, user blocks, every chunk index
//! type, the build's filters, fill values, big-endian data, compact and dense attributes and
//! links, contiguous, compact and scalar datasets, maximum shapes larger than the shape under
//! every index type, fletcher32/shuffle/deflate in every order) once with Debian's
//! python3-h5py (libhdf5 1.10.8) and once with the project venv's h5py 3.16 (HDF5 2.0).
//! Served by the real range server on
//! loopback, every dataset's chunk map from chunkwise's discovery must equal the one the
//! writing library reports (`H5Dget_chunk_info`, corrected from `H5Dread_chunk` where both
//! builds misreport an extensible array whose unlimited dimension is not the first), and reads
//! (whole and selections; shapes as numpy has them) must equal the arrays written.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::Hdf5Array;
use chunkwise::formats::FormatError;
use chunkwise::io::http::HttpSource;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{check_selections, SELECTIONS};

fn generator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_hdf5_matrix.py")
}

/// Writes the matrix with `python` into a temporary directory; `None` (with a printed reason)
/// when that python or its h5py is missing.
fn write_matrix(python: &str, what: &str) -> Option<tempfile::TempDir> {
    let has_h5py = Command::new(python)
        .args(["-c", "import h5py, numpy"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_h5py {
        println!("SKIPPED parity with {what}: {python} with h5py and numpy is missing (scripts/setup.sh installs it)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(python)
        .arg(generator())
        .arg(dir.path())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "gen_hdf5_matrix.py with {python} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{what}: {}", String::from_utf8_lossy(&out.stdout));
    Some(dir)
}

#[derive(Default, Debug)]
struct Counts {
    files: usize,
    datasets: usize,
    chunks: usize,
    refused: usize,
    /// Datasets compared per chunk index type (the library's `H5Dget_chunk_index_type`).
    by_index: std::collections::BTreeMap<String, usize>,
    /// Of those, datasets whose maximum shape exceeds the shape (`max_*`), per index type.
    max_by_index: std::collections::BTreeMap<String, usize>,
    /// Chunk maps the generator rebuilt from `H5Dread_chunk` because the library's
    /// `H5Dget_chunk_info` misreports them (see `gen_hdf5_matrix.py`, `chunk_map`).
    corrected: usize,
}

async fn check_matrix(dir: &Path, what: &str) -> Counts {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: dir.to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    // HDF5 before 1.14.4 reports chunk addresses relative to the base address, not counting
    // a user block (`H5Dget_chunk_info`; corrected in 1.14.4): ours are absolute file offsets.
    let v: Vec<u64> = m["hdf5_version"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let relative = v < vec![1, 14, 4];
    let userblock: std::collections::HashMap<&str, u64> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap(),
                f["userblock"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut counts = Counts {
        files: m["files"].as_array().unwrap().len(),
        ..Default::default()
    };
    for ds in m["datasets"].as_array().unwrap() {
        let file = ds["file"].as_str().unwrap();
        let path = ds["path"].as_str().unwrap();
        let at = format!("{what} {file}:{path}");
        let url = server.url(file);
        let options = OpenOptions {
            path: Some(path.to_string()),
            ..Default::default()
        };
        if let Some(word) = ds["refused"].as_str() {
            // Strings and compounds: a typed refusal until those datatypes are read.
            match open_array(&url, vec![], options).await {
                Err(chunkwise::Error::Format(FormatError::Unsupported { detail, .. })) => {
                    assert!(detail.contains(word), "{at}: {detail}")
                }
                Err(other) => panic!("{at}: expected Unsupported, got {other:?}"),
                Ok(_) => panic!("{at}: opened"),
            }
            counts.refused += 1;
            continue;
        }
        // The chunk map, as `chunkwise chunks --json` gets it.
        let src = HttpSource::new(url.clone()).unwrap();
        let arr = Hdf5Array::open_source(&src, Some(path), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(
            arr.meta().layout_name(),
            ds["layout"].as_str().unwrap(),
            "{at}"
        );
        match ds["chunk_map"].as_array() {
            None => assert!(arr.chunk_map().is_empty(), "{at}"),
            Some(want) => {
                let mut got: Vec<serde_json::Value> = arr
                    .chunk_map()
                    .iter()
                    .map(|c| serde_json::to_value(c).unwrap())
                    .collect();
                let mut want = want.clone();
                if relative {
                    for c in &mut want {
                        c["address"] = (c["address"].as_u64().unwrap() + userblock[file]).into();
                    }
                }
                let key = |v: &serde_json::Value| {
                    v["offset"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap())
                        .collect::<Vec<u64>>()
                };
                got.sort_by_key(key);
                want.sort_by_key(key);
                assert_eq!(got, want, "{at}: chunk map");
                counts.chunks += want.len();
                let index = ds["index"].as_str().unwrap().to_string();
                if path.starts_with("/max_") {
                    *counts.max_by_index.entry(index.clone()).or_default() += 1;
                }
                if ds["chunk_map_corrected"].as_bool() == Some(true) {
                    counts.corrected += 1;
                }
                *counts.by_index.entry(index).or_default() += 1;
            }
        }
        // Values: whole and a few selections, equal to the array written.
        let npy = read_npy(&std::fs::read(dir.join(ds["npy"].as_str().unwrap())).unwrap()).unwrap();
        let arr = open_array(&url, vec![], options)
            .await
            .unwrap_or_else(|e| panic!("{at}: open: {e}"));
        assert_eq!(arr.shape(), &npy.shape[..], "{at}");
        assert_eq!(
            arr.dtype().to_string(),
            ds["dtype"].as_str().unwrap(),
            "{at}"
        );
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{at}: read: {e}"));
        assert!(all.data == npy.data, "{at}: differs from the array written");
        // Shapes as numpy has them (a scalar: `[]`), in the read and in `info`.
        assert_eq!(all.shape, npy.shape, "{at}: read shape");
        assert_eq!(arr.info().shape, npy.shape, "{at}: info shape");
        let itemsize = arr.dtype().itemsize;
        check_selections(
            &arr,
            &npy.data,
            &npy.shape,
            itemsize,
            SELECTIONS.iter().take(6),
            &at,
        )
        .await;
        counts.datasets += 1;
    }
    server.shutdown().await;
    counts
}

/// How many datasets of the matrix in `dir` Debian's libhdf5 1.10.8 fails to open or read;
/// `None` when that python is missing.
fn unreadable_by_1_10(dir: &Path) -> Option<usize> {
    const COUNT: &str = r#"
import json, sys, h5py
m = json.load(open(sys.argv[1] + "/manifest.json"))
bad = 0
for d in m["datasets"]:
    try:
        with h5py.File(sys.argv[1] + "/" + d["file"], "r") as f:
            f[d["path"]][...]
    except Exception:
        bad += 1
print(bad)
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", COUNT])
        .arg(dir)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Maximum shapes larger than the shape were compared for every index type that allows them
/// (a single chunk index needs shape = maximum shape = chunk shape).
fn assert_max_shapes(c: &Counts) {
    let got: Vec<&str> = c.max_by_index.keys().map(String::as_str).collect();
    assert_eq!(
        got,
        [
            "btree_v1",
            "btree_v2",
            "extensible_array",
            "fixed_array",
            "implicit"
        ],
        "{c:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parity_with_libhdf5_1_10() {
    let Some(dir) = write_matrix("/usr/bin/python3", "libhdf5 1.10.8 (Debian python3-h5py)") else {
        return;
    };
    let c = check_matrix(dir.path(), "1.10.8").await;
    println!(
        "libhdf5 1.10.8: {} files, {} datasets read as written, {} chunks compared, {} refused as typed errors; chunked datasets per index type {:?}; with a larger maximum shape {:?}; {} chunk maps corrected",
        c.files, c.datasets, c.chunks, c.refused, c.by_index, c.max_by_index, c.corrected
    );
    assert_max_shapes(&c);
    assert_eq!(
        c.by_index.len(),
        6,
        "every chunk index type: {:?}",
        c.by_index
    );
    assert!(
        c.files >= 10 && c.datasets >= 400 && c.chunks > 2000,
        "{c:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parity_with_hdf5_2_0() {
    let venv = std::env::var("CHUNKWISE_VENV")
        .unwrap_or_else(|_| format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap()));
    let Some(dir) = write_matrix(&format!("{venv}/bin/python"), "HDF5 2.0 (h5py 3.16, venv)")
    else {
        return;
    };
    let c = check_matrix(dir.path(), "2.0").await;
    println!(
        "HDF5 2.0: {} files, {} datasets read as written, {} chunks compared, {} refused as typed errors; chunked datasets per index type {:?}; with a larger maximum shape {:?}; {} chunk maps corrected",
        c.files, c.datasets, c.chunks, c.refused, c.by_index, c.max_by_index, c.corrected
    );
    assert_max_shapes(&c);
    assert_eq!(
        c.by_index.len(),
        6,
        "every chunk index type: {:?}",
        c.by_index
    );
    // Datasets of 2.0's files that libhdf5 1.10.8 cannot open or read (layout message version
    // 5, newer datatype messages): chunkwise read them above.
    if let Some(n) = unreadable_by_1_10(dir.path()) {
        println!("of those, {n} datasets libhdf5 1.10.8 cannot open or read");
        assert!(n > 0);
    }
    assert!(
        c.files >= 13 && c.datasets >= 500 && c.chunks > 2000,
        "{c:?}"
    );
}
