//! `.b2z` containers over the real range server on loopback: python-blosc2 4.14.1 TreeStore
//! and DictStore archives (tests/fixtures/gen_b2z.py) list as the generator recorded them,
//! every leaf (external `.b2nd` members and frames embedded in `embed.b2e`) reads the values
//! written, a small archive costs at most two requests for every read of every member, a
//! warm reopen none, and a deflated member is refused naming it and its method.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::formats::NodeKind;
use chunkwise::npy::read_npy;
use chunkwise::open::{open_array, open_store};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};

mod common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/b2z")
}

fn manifest(name: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir().join(format!("{name}.json"))).unwrap()).unwrap()
}

/// The manifest's nodes (`path`, or a DictStore's `key`).
fn nodes_of(m: &serde_json::Value) -> Vec<serde_json::Value> {
    m["nodes"].as_array().unwrap().clone()
}

fn node_path(n: &serde_json::Value) -> String {
    n["path"]
        .as_str()
        .or(n["key"].as_str())
        .unwrap()
        .to_string()
}

/// The expected values of the array at `path` in the fixture `name` (`tree/g/h/cube.npy`).
fn expected(name: &str, path: &str) -> Option<chunkwise::npy::Npy> {
    let p = dir()
        .join(name)
        .join(format!("{}.npy", path.trim_start_matches('/')));
    std::fs::read(&p).ok().map(|b| read_npy(&b).unwrap())
}

async fn check_store(name: &str) {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/{name}.b2z", server.base_url());
    let coordinator = CacheCoordinator::memory(64 << 20);
    let store = open_store(&url, vec![], OpenOptions::default(), coordinator.clone())
        .await
        .unwrap();
    let m = manifest(name);
    let want = nodes_of(&m);
    // Every array and group of the manifest is listed with its shape, dtype and attributes.
    for w in &want {
        let path = node_path(w);
        let n = store
            .nodes()
            .iter()
            .find(|n| n.path == path)
            .unwrap_or_else(|| panic!("{path} not listed: {:#?}", store.nodes()));
        let kind = if w["kind"] == "group" {
            NodeKind::Group
        } else {
            NodeKind::Array
        };
        assert_eq!(n.kind, kind, "{path}");
        if kind == NodeKind::Array {
            let shape: Vec<u64> = w["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(n.shape.as_deref(), Some(&shape[..]), "{path}");
            assert_eq!(n.dtype.as_deref(), w["dtype"].as_str(), "{path}");
        }
        if let Some(attrs) = w["attrs"].as_object() {
            let got = n.attrs.to_json();
            for (k, v) in attrs {
                assert_eq!(&got[k], v, "{path} attribute {k}: {got}");
            }
        }
    }
    // Values of every array: all from the bytes of the first open (a small archive).
    let opened = store.traffic().requests;
    assert!(
        opened <= 2,
        "a small archive opens in at most two requests: {opened}"
    );
    for w in &want {
        if w["kind"] == "group" {
            continue;
        }
        let path = node_path(w);
        let arr = store.get(&path).await.unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        if let Some(e) = expected(name, &path) {
            assert_eq!(got.shape, e.shape, "{path}");
            assert_eq!(got.data, e.data, "{path}");
        } else if let Some(first) = w["first"].as_array() {
            let vals: Vec<f64> = got
                .data
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            for (i, f) in first.iter().enumerate() {
                assert_eq!(vals[i], f.as_f64().unwrap(), "{path}[{i}]");
            }
            assert_eq!(
                *vals.last().unwrap(),
                w["last"].as_f64().unwrap(),
                "{path} last"
            );
        } else {
            panic!("{path}: no expected values in the fixture");
        }
    }
    assert_eq!(
        store.traffic().requests,
        opened,
        "reads of a small archive's members make no request"
    );
    // A warm reopen under the same coordinator: no request.
    let again = open_store(&url, vec![], OpenOptions::default(), coordinator)
        .await
        .unwrap();
    assert_eq!(again.traffic().requests, 0);
    assert_eq!(again.nodes(), store.nodes());
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_store_lists_and_reads_every_leaf_as_written() {
    check_store("tree").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dict_store_lists_and_reads_every_leaf_as_written() {
    check_store("dict").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_array_opens_by_path_and_without_a_path_the_arrays_are_named() {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/tree.b2z", server.base_url());
    let options = OpenOptions {
        path: Some("/g/h/cube".into()),
        ..Default::default()
    };
    let arr = open_array(&url, vec![], options, CacheCoordinator::memory(1 << 20))
        .await
        .unwrap();
    assert_eq!(arr.info().format, "b2z");
    let got = arr
        .read(
            &Selection::parse("1:3, :, 5").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    let e = expected("tree", "/g/h/cube").unwrap();
    let want = common::reference(
        &e.data,
        &e.shape,
        2,
        &Selection::parse("1:3, :, 5")
            .unwrap()
            .resolve(&e.shape)
            .unwrap(),
    );
    assert_eq!(got.data, want);
    let e = open_array(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(e.to_string().contains("/g/h/cube"), "{e}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deflated_member_is_refused_naming_it_and_its_method() {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/deflated.b2z", server.base_url());
    let m = manifest("deflated");
    let member = m["deflated"][0].as_str().unwrap().to_string();
    let path = format!("/{}", member.trim_end_matches(".b2nd"));
    let store = open_store(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap();
    let e = store.get(&path).await.unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&member) && msg.contains("deflate") && msg.contains('8'),
        "{msg}"
    );
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ctable_reads_its_live_rows_as_written_and_refuses_a_vlstring_column() {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/table.b2z", server.base_url());
    let store = open_store(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(8 << 20),
    )
    .await
    .unwrap();
    let m = manifest("table");
    let root = store.nodes().iter().find(|n| n.path == "/").unwrap();
    assert_eq!(root.kind, NodeKind::Table);
    assert_eq!(
        root.shape.as_deref(),
        Some(&[m["nrows"].as_u64().unwrap()][..])
    );
    let table = store.table("/").await.unwrap();
    let nrows = table.nrows().await.unwrap();
    assert_eq!(nrows, m["nrows"].as_u64().unwrap());
    // Every numeric, bool and fixed-width column the listing can read, all live rows.
    let readable: Vec<String> = table
        .columns()
        .iter()
        .filter(|c| c.error.is_none())
        .map(|c| c.name.clone())
        .collect();
    for want in ["id", "f32", "f64", "i8", "u16", "flag", "raw"] {
        assert!(
            readable.iter().any(|c| c == want),
            "{want} readable: {readable:?}"
        );
    }
    let rows = table
        .read_rows(0, nrows, Some(&readable), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(rows.nrows, nrows);
    for (name, data) in &rows.columns {
        let e = expected("table", name).unwrap_or_else(|| panic!("{name}.npy"));
        assert_eq!(data.shape, e.shape, "{name}");
        assert_eq!(data.data, e.data, "{name}");
    }
    // A slice of live rows in the middle: the same values as the slice of the expected.
    let rows = table
        .read_rows(100, 110, Some(&["id".to_string()]), &ReadOptions::default())
        .await
        .unwrap();
    let e = expected("table", "id").unwrap();
    assert_eq!(rows.columns[0].1.data, e.data[100 * 8..110 * 8]);
    let err = table
        .read_rows(0, 5, Some(&["note".to_string()]), &ReadOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    assert!(err.to_string().contains(".b2b"), "{err}");
    drop(server);
}
