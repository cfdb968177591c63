//! HDF5 values that depend on what the datatype and layout messages say beyond the parsed
//! type (`src/formats/hdf5/header.rs`): the datasets of `bits.h5` (written by
//! `tests/fixtures/gen_hdf5_bits.py` with libhdf5 1.10.8) read over the real range server on
//! loopback and compared with the arrays that were written, whole and through selections,
//! cold and from the cache: integers of reduced precision without the nbit filter, and
//! partial edge chunks stored unfiltered. bfloat16 and a compound member of reduced precision
//! are refused as UNSUPPORTED, naming what they are, and listed with that error.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::list;
use chunkwise::formats::FormatError;
use chunkwise::io::http::HttpSource;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;
use common::{check_selections, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5")
}

fn manifest() -> Vec<serde_json::Value> {
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("bits_manifest.json")).expect("manifest"),
    )
    .expect("manifest json");
    m["datasets"].as_array().expect("datasets").clone()
}

/// The range server on loopback over the HDF5 fixtures.
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
async fn reduced_precision_integers_and_unfiltered_edge_chunks_read_as_written() {
    let server = server().await;
    let (mut reduced, mut edges) = (0, 0);
    // bits.h5 (libhdf5 1.10.8: data layout message version 4), then the same edge datasets
    // written by HDF5 2.0 (version 5).
    let hdf5_2: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("bits_edges_hdf5_2.json")).unwrap())
            .unwrap();
    let files = manifest().into_iter().map(|ds| ("bits.h5", ds)).chain(
        hdf5_2["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|ds| ("bits_edges_hdf5_2.h5", ds.clone())),
    );
    for (file, ds) in files {
        let url = server.url(file);
        let path = ds["path"].as_str().unwrap();
        if ds.get("refused").is_some() {
            continue;
        }
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: open: {e}"));
        let npy = read_npy(&std::fs::read(fixtures().join(ds["npy"].as_str().unwrap())).unwrap())
            .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{path}");
        assert_eq!(
            arr.dtype().to_string(),
            ds["dtype"].as_str().unwrap(),
            "{path}"
        );
        for pass in ["cold", "warm"] {
            let all = arr
                .read(&Selection::all(), &ReadOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{path} ({pass}): read: {e}"));
            assert!(
                all.data == npy.data,
                "{path} ({pass}): differs from the array written"
            );
        }
        let itemsize = arr.dtype().itemsize;
        check_selections(&arr, &npy.data, &npy.shape, itemsize, SELECTIONS, &path).await;
        if path.starts_with("/edges_") {
            edges += 1;
        } else {
            reduced += 1;
        }
    }
    assert_eq!((reduced, edges), (7, 10));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bfloat16_and_reduced_compound_members_are_unsupported() {
    let server = server().await;
    let url = server.url("bits.h5");
    let mut n = 0;
    for ds in manifest() {
        let Some(words) = ds["refused"].as_array() else {
            continue;
        };
        let path = ds["path"].as_str().unwrap();
        match open_array(&url, vec![], with_path(path)).await {
            Err(chunkwise::Error::Format(FormatError::Unsupported { detail, .. })) => {
                for w in words {
                    let w = w.as_str().unwrap();
                    assert!(detail.contains(w), "{path}: {detail} (expected {w:?})");
                }
            }
            Err(other) => panic!("{path}: expected Unsupported, got {other:?}"),
            Ok(a) => panic!("{path}: opened as {}", a.dtype()),
        }
        n += 1;
    }
    assert_eq!(n, 2);
    // The listing says so too, and lists the datasets that read with their dtype.
    let bytes = std::fs::read(fixtures().join("bits.h5")).unwrap();
    let len = bytes.len() as u64;
    let src = HttpSource::new(url.clone()).unwrap();
    let nodes = list(&src, bytes.into(), len).await.unwrap();
    for ds in manifest() {
        let path = ds["path"].as_str().unwrap();
        let node = nodes.iter().find(|n| n.path == path).expect(path);
        match ds["refused"].as_array() {
            Some(words) => {
                let error = node
                    .error
                    .as_deref()
                    .unwrap_or_else(|| panic!("{path}: {node:?}"));
                for w in words {
                    assert!(error.contains(w.as_str().unwrap()), "{path}: {error}");
                }
            }
            None => {
                assert_eq!(node.error, None, "{path}");
                assert_eq!(node.dtype.as_deref(), ds["dtype"].as_str(), "{path}");
            }
        }
    }
    server.shutdown().await;
}

/// Attributes of reduced precision read as values, in compact storage (the object header)
/// and in dense storage (a fractal heap, past eight attributes); a bfloat16 attribute is
/// omitted naming its type, while the node's other attributes read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attributes_of_reduced_precision_read_as_values() {
    let server = server().await;
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("bits_manifest.json")).unwrap())
            .unwrap();
    let bytes = std::fs::read(fixtures().join("bits.h5")).unwrap();
    let len = bytes.len() as u64;
    let src = HttpSource::new(server.url("bits.h5")).unwrap();
    let nodes = list(&src, bytes.into(), len).await.unwrap();
    let attrs = |path: &str| {
        let node = nodes.iter().find(|n| n.path == path).expect(path);
        node.attrs.to_json()
    };
    let mut n = 0;
    for (path, want) in m["attrs"].as_object().unwrap() {
        let got = attrs(path);
        for (name, v) in want.as_object().unwrap() {
            assert_eq!(&got[name], v, "{path} {name}: {got}");
            n += 1;
        }
    }
    assert_eq!(n, 13);
    for (path, want) in m["omitted"].as_object().unwrap() {
        let got = attrs(path);
        for (name, word) in want.as_object().unwrap() {
            let why = got[name]["omitted"]
                .as_str()
                .unwrap_or_else(|| panic!("{path} {name}: {got}"));
            assert!(why.contains(word.as_str().unwrap()), "{path} {name}: {why}");
        }
    }
    server.shutdown().await;
}
