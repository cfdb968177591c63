//! Remote Zarr stores described from their consolidated metadata over the real range server:
//! the arrays equal those read from the same store's directory, except stored sizes, which a
//! remote store cannot list (they fall back to the estimate).

use chunkwise::io::http::HttpSource;
use chunkwise::io::RangeSource;
use chunkwise::partition::remote::consolidated_metadata;
use chunkwise::partition::zarr::{read_arrays, DirStore, DEFAULT_EXCLUDE};
use native_harness::serve::{spawn, ServeOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/zarr_partition")
}

fn open(url: &str) -> Arc<dyn RangeSource> {
    Arc::new(HttpSource::new(url).expect("client"))
}

/// (path, shape, chunks, itemsize, shards, coordinate, key encoding) of each array.
fn shape_of(a: &chunkwise::partition::Array) -> String {
    format!(
        "{} {:?} {:?} {} {:?} {} {:?}",
        a.path, a.shape, a.chunks, a.itemsize, a.shards, a.is_coordinate, a.key_encoding
    )
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let p = entry.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_and_v3_consolidated_stores_match_their_directories() {
    // v3: the fixture is not consolidated; build a root zarr.json with inline consolidated
    // metadata from its nodes' zarr.json documents, as zarr.consolidate_metadata would.
    let tmp = tempfile::tempdir().unwrap();
    let v3 = fixtures().join("v3.zarr");
    let mut nodes = serde_json::Map::new();
    for entry in std::fs::read_dir(&v3).unwrap() {
        let p = entry.unwrap().path();
        if p.join("zarr.json").is_file() {
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(p.join("zarr.json")).unwrap()).unwrap();
            nodes.insert(p.file_name().unwrap().to_string_lossy().into_owned(), doc);
        }
    }
    assert!(nodes.len() >= 4, "fixture v3 store has its arrays");
    let mut root: serde_json::Value =
        serde_json::from_slice(&std::fs::read(v3.join("zarr.json")).unwrap()).unwrap();
    root["consolidated_metadata"] =
        serde_json::json!({"kind": "inline", "must_understand": false, "metadata": nodes});
    std::fs::create_dir_all(tmp.path().join("v3c.zarr")).unwrap();
    std::fs::write(
        tmp.path().join("v3c.zarr/zarr.json"),
        serde_json::to_vec(&root).unwrap(),
    )
    .unwrap();
    // a copy, not a symlink: the server serves nothing that resolves outside its root
    copy_dir(&fixtures().join("v2.zarr"), &tmp.path().join("v2.zarr"));
    std::fs::create_dir_all(tmp.path().join("plain.zarr")).unwrap();
    std::fs::copy(
        v3.join("zarr.json"),
        tmp.path().join("plain.zarr/zarr.json"),
    )
    .unwrap();

    let server = spawn(ServeOptions {
        root: tmp.path().to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    for (remote, local) in [
        ("v2.zarr", fixtures().join("v2.zarr")),
        ("v3c.zarr", v3.clone()),
    ] {
        let store = consolidated_metadata(&open, &server.url(remote))
            .await
            .unwrap();
        let got = read_arrays(&store, "", &DEFAULT_EXCLUDE).unwrap();
        let want = read_arrays(&DirStore::new(&local), "", &DEFAULT_EXCLUDE).unwrap();
        let got_shapes: Vec<String> = got.arrays.iter().map(shape_of).collect();
        let want_shapes: Vec<String> = want.arrays.iter().map(shape_of).collect();
        assert_eq!(got_shapes, want_shapes, "{remote}");
        assert!(
            got.arrays
                .iter()
                .all(|a| a.stored_bytes.is_none() && a.nobjects_seen.is_none()),
            "{remote}"
        );
        assert!(
            want.arrays.iter().any(|a| a.stored_bytes.is_some()),
            "the directory lists sizes"
        );
    }
    // A v3 group without consolidated metadata cannot be discovered over HTTP: a clear error.
    let e = consolidated_metadata(&open, &server.url("plain.zarr"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_A_ZARR_STORE");
    assert!(e.to_string().contains("consolidated"), "{e}");
    let e = consolidated_metadata(&open, &server.url("missing.zarr"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_A_ZARR_STORE");

    // The CLI path end to end: the diff of a fresh scope lists its blobs.
    let report = native_harness::partition_cli::partition_remote_command(
        &server.url("v2.zarr"),
        None,
        None,
        Some(&fixtures().join("policy.json")),
        true,
        None,
    )
    .await
    .unwrap();
    assert!(report.contains("estimated"), "{report}");
    assert!(report.lines().any(|l| l.starts_with("+ ")), "{report}");
    server.shutdown().await;
}
