//! HDF5's own szip, nbit and scale-offset filters: the datasets of `filters.h5` (written by
//! `tests/fixtures/gen_hdf5_filters.py` with libhdf5 1.10.8 and libaec) read over the real
//! range server on loopback and compared with the arrays that were written, whole and through
//! selections; their chunk maps compared with the library's `get_chunk_info`; damaged chunks
//! decode to errors, never panics; datasets not read here give typed errors.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::Hdf5Array;
use chunkwise::formats::{ArrayFormat, ChunkPlace, FormatError};
use chunkwise::io::http::HttpSource;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;
use common::{check_selections, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> Vec<serde_json::Value> {
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("hdf5/filters_manifest.json")).expect("manifest"),
    )
    .expect("manifest json");
    m["datasets"].as_array().expect("datasets").clone()
}

async fn server() -> ServerHandle {
    spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts")
}

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_datasets_read_as_written() {
    let server = server().await;
    let url = server.url("hdf5/filters.h5");
    let mut checked = [0usize; 3];
    for ds in manifest() {
        let path = ds["path"].as_str().unwrap();
        if ds.get("refused").is_some() {
            continue;
        }
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: open: {e}"));
        let npy = read_npy(
            &std::fs::read(fixtures().join("hdf5").join(ds["npy"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{path}");
        assert_eq!(
            arr.dtype().to_string(),
            ds["dtype"].as_str().unwrap(),
            "{path}"
        );
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: read: {e}"));
        assert!(
            all.data == npy.data,
            "{path}: differs from the array written"
        );
        let itemsize = arr.dtype().itemsize;
        check_selections(&arr, &npy.data, &npy.shape, itemsize, SELECTIONS, &path).await;
        let codecs = arr.info().codecs;
        for (id, name, n) in [(4, "SZIP", 0), (5, "NBIT", 1), (6, "SCALEOFFSET", 2)] {
            if ds["filters"].as_array().unwrap().contains(&id.into()) {
                assert!(codecs.contains(name), "{path}: {codecs}");
                checked[n] += 1;
            }
        }
    }
    println!("szip, nbit, scale-offset datasets read as written: {checked:?}");
    assert_eq!(checked, [10, 7, 8]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_chunk_maps_match_the_hdf5_library() {
    let server = server().await;
    let src = HttpSource::new(server.url("hdf5/filters.h5")).unwrap();
    let mut compared = 0;
    for ds in manifest() {
        let path = ds["path"].as_str().unwrap();
        let Some(want) = ds["chunk_map"].as_array() else {
            continue;
        };
        let arr = Hdf5Array::open_source(&src, Some(path), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut got: Vec<serde_json::Value> = arr
            .chunk_map()
            .iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect();
        let mut want = want.clone();
        let key = |v: &serde_json::Value| v["offset"].to_string();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got, want, "{path}");
        compared += want.len();
    }
    assert_eq!(compared, 94);
    server.shutdown().await;
}

/// A reduced-precision float under nbit needs HDF5's custom floating-point conversion: a typed
/// `Unsupported` error naming the layout (a floating-point type that is not IEEE 754), not
/// wrong values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reduced_precision_floats_are_unsupported() {
    let server = server().await;
    let url = server.url("hdf5/filters.h5");
    let mut n = 0;
    for ds in manifest() {
        let Some(word) = ds["refused"].as_str() else {
            continue;
        };
        let path = ds["path"].as_str().unwrap();
        match open_array(&url, vec![], with_path(path)).await {
            Err(chunkwise::Error::Format(FormatError::Unsupported { detail, .. })) => {
                assert!(detail.contains(word), "{path}: {detail}")
            }
            Err(other) => panic!("{path}: expected Unsupported, got {other:?}"),
            Ok(_) => panic!("{path}: opened"),
        }
        n += 1;
    }
    assert_eq!(n, 1);
    server.shutdown().await;
}

/// Damaged chunks (cut short, bytes changed) of every filtered dataset decode to an error or
/// to exactly one chunk's bytes, never a panic; the undamaged chunks decode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_filtered_chunks_are_errors() {
    let server = server().await;
    let bytes = std::fs::read(fixtures().join("hdf5/filters.h5")).unwrap();
    let src = HttpSource::new(server.url("hdf5/filters.h5")).unwrap();
    let mut checked = 0;
    let mut rejected = 0;
    for ds in manifest() {
        if ds.get("refused").is_some() {
            continue;
        }
        let path = ds["path"].as_str().unwrap();
        let arr = Hdf5Array::open_source(&src, Some(path), 64 * 1024)
            .await
            .unwrap();
        let want = arr.grid().decoded_chunk_items().unwrap() as usize * arr.dtype().itemsize;
        for chunk in 0..arr.grid().nchunks().unwrap() {
            let ChunkPlace::Stored(r) = arr.locate(chunk).unwrap() else {
                continue;
            };
            let stored = &bytes[r.start as usize..r.end as usize];
            assert_eq!(arr.decode(chunk, stored).unwrap().len(), want, "{path}");
            let n = stored.len();
            let mut cases: Vec<Vec<u8>> = [0, 1, 3, 4, 5, 12, 20, 21, n / 2, n - 1]
                .iter()
                .filter(|&&k| k < n)
                .map(|&k| stored[..k].to_vec())
                .collect();
            for at in (0..n).step_by((n / 24).max(1)) {
                for v in [0x00, 0xff, 0x80] {
                    let mut d = stored.to_vec();
                    d[at] = v;
                    cases.push(d);
                }
            }
            // A size header claiming more than the chunk.
            let mut d = stored.to_vec();
            d[..4.min(n)].fill(0xff);
            cases.push(d);
            for case in cases {
                match arr.decode(chunk, &case) {
                    Ok(d) => assert_eq!(d.len(), want, "{path}"),
                    Err(_) => rejected += 1,
                }
            }
            checked += 1;
        }
    }
    println!("damaged chunks: {checked} chunks, {rejected} damaged copies rejected");
    assert!(checked > 60, "{checked}");
    assert!(rejected > 100, "{rejected}");
    server.shutdown().await;
}
