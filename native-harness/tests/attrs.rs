//! Attributes and dimension names of Zarr v2/v3 stores written by zarr-python and of a
//! Blosc2 frame's vlmeta written by python-blosc2 (tests/fixtures/gen_attrs.py), read over
//! the real range server on loopback through `RemoteStore` nodes, `RemoteArray` and
//! `chunkwise attrs`, compared with `expected.json` (the Python values written); request
//! counts with and without consolidated metadata, warm reopens (memory and disk) with no
//! request, and the bounds of the directory walk of a store without consolidated metadata.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::formats::zarr::walk::{MAX_WALK_DEPTH, MAX_WALK_REQUESTS, NO_LISTING};
use chunkwise::formats::NodeKind;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::source::{open_array, open_array_cached, open_store_cached};
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn expected() -> Value {
    let raw = std::fs::read(fixtures().join("attrs/expected.json")).expect("expected.json");
    serde_json::from_slice(&raw).expect("expected.json is JSON")
}

fn dims_of(v: &Value) -> Option<Vec<Option<String>>> {
    v.as_array()
        .map(|a| a.iter().map(|n| n.as_str().map(str::to_string)).collect())
}

/// A listing as comparable values (attributes as JSON: NaN is not equal to itself).
fn listing(nodes: &[chunkwise::formats::Node]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| {
            format!(
                "{} {:?} {:?} {:?} {:?} {} {:?}",
                n.path,
                n.kind,
                n.shape,
                n.dtype,
                n.error,
                n.attrs.to_json(),
                n.dims
            )
        })
        .collect()
}

/// `chunkwise attrs URL [--path P]` as JSON.
fn cli_attrs(url: &str, path: Option<&str>) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"));
    cmd.args(["attrs", url]);
    if let Some(p) = path {
        cmd.args(["--path", p]);
    }
    let out = cmd.output().expect("chunkwise runs");
    assert!(
        out.status.success(),
        "chunkwise attrs {url} {path:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("attrs print JSON")
}

/// Every node of every store: listed with the attributes and dimension names written, the
/// same from the opened array and from `chunkwise attrs`, and the array's values read equal
/// to the array written; the stores without consolidated metadata are listed completely by
/// walking the server's directory listings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attributes_and_dims_are_the_values_written() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let exp = expected();
    let mut checked = 0;
    for (store, nodes) in exp["stores"].as_object().unwrap() {
        let url = server.url(&format!("attrs/{store}"));
        if store.ends_with(".b2nd") {
            let want = &nodes["/"];
            let arr = open_array(&url, vec![], OpenOptions::default())
                .await
                .unwrap();
            assert_eq!(arr.attrs().to_json(), want["attrs"], "{store}");
            assert_eq!(arr.dims(), None, "{store}");
            assert_eq!(cli_attrs(&url, None), want["attrs"], "{store} (CLI)");
            checked += 1;
            continue;
        }
        let s = open_store_cached(&url, vec![], CacheCoordinator::memory(1 << 26), None)
            .await
            .unwrap_or_else(|e| panic!("{store}: {e}"));
        let listed: Vec<&str> = s.nodes().iter().map(|n| n.path.as_str()).collect();
        let mut want_paths: Vec<&str> = nodes
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        want_paths.sort();
        assert_eq!(listed, want_paths, "{store}: listing");
        for (path, want) in nodes.as_object().unwrap() {
            let what = format!("{store}:{path}");
            let node = s.nodes().iter().find(|n| n.path == *path).unwrap();
            assert_eq!(node.error, None, "{what}");
            assert_eq!(node.attrs.to_json(), want["attrs"], "{what}: listed attrs");
            assert_eq!(node.dims, dims_of(&want["dims"]), "{what}: listed dims");
            assert_eq!(cli_attrs(&url, Some(path)), want["attrs"], "{what} (CLI)");
            if want["kind"] == "array" {
                assert_eq!(node.kind, NodeKind::Array, "{what}");
                let arr = s.get(path).await.unwrap();
                assert_eq!(arr.attrs().to_json(), want["attrs"], "{what}: array attrs");
                assert_eq!(arr.dims(), dims_of(&want["dims"]), "{what}: array dims");
                let npy = read_npy(
                    &std::fs::read(fixtures().join("attrs").join(want["npy"].as_str().unwrap()))
                        .unwrap(),
                )
                .unwrap();
                let got = arr
                    .read(&Selection::all(), &ReadOptions::default())
                    .await
                    .unwrap();
                assert_eq!(got.data, npy.data, "{what}: values");
            } else {
                assert_eq!(node.kind, NodeKind::Group, "{what}");
            }
            checked += 1;
        }
        // An array opened on its own (no listing) has the same attributes.
        let want = &nodes["/temperature"];
        let arr = open_array(
            &url,
            vec![],
            OpenOptions {
                path: Some("/temperature".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(
            arr.attrs().to_json(),
            want["attrs"],
            "{store}: opened alone"
        );
        assert_eq!(arr.dims(), dims_of(&want["dims"]), "{store}: opened alone");
    }
    assert!(checked >= 27, "only {checked} nodes checked");
    server.shutdown().await;
}

/// Requests: consolidated metadata gives every node's attributes with the listing (no request
/// more); a v2 array opened alone reads `.zarray` and `.zattrs` in one round trip; the walk
/// costs one listing per group and one metadata read per child; a reopen from memory or
/// from a disk cache directory makes no request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_consolidated_walked_and_warm() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let url = |s: &str| server.url(&format!("attrs/{s}"));
    let exp = expected();

    // v3 consolidated: the root zarr.json (with .zmetadata, 404, asked at once: one round
    // trip), then every array opens from it.
    let s = open_store_cached(
        &url("v3_consolidated.zarr"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    assert_eq!(s.traffic().requests, 2);
    let a = s.get("/group/counts").await.unwrap();
    assert_eq!(
        s.traffic().requests,
        2,
        "array attributes came from the listing"
    );
    assert_eq!(
        a.attrs().to_json(),
        exp["stores"]["v3_consolidated.zarr"]["/group/counts"]["attrs"]
    );
    // v2 consolidated: zarr.json (404) and .zmetadata at once; arrays with attributes, no
    // request more.
    let before = server.requests().len();
    let s = open_store_cached(
        &url("v2_consolidated.zarr"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        s.traffic().requests,
        2,
        "{:?}",
        &server.requests()[before..]
    );
    s.get("/temperature").await.unwrap();
    assert_eq!(s.traffic().requests, 2);

    // A v2 array alone: zarr.json (404), .zarray and .zattrs together (on a server with
    // latency, so that requests sent together are in flight together).
    let slow = native_harness::serve::spawn(native_harness::serve::ServeOptions {
        root: fixtures(),
        quiet: true,
        latency_ms: 50,
        ..Default::default()
    })
    .await
    .unwrap();
    let a = open_array(
        &slow.url("attrs/v2_plain.zarr"),
        vec![],
        OpenOptions {
            path: Some("/group/counts".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let t = a.traffic();
    assert_eq!((t.requests, t.round_trips), (3, 1), "{t:?}");
    slow.shutdown().await;

    // The v3 walk: root zarr.json (and .zmetadata, 404, at once), root listing, 3
    // children, /group listing, its 3 children, /group/deeper listing, its child: 12
    // requests, no chunk.
    let before = server.requests().len();
    let coordinator = CacheCoordinator::memory(1 << 26);
    let cold = open_store_cached(&url("v3_plain.zarr"), vec![], coordinator.clone(), None)
        .await
        .unwrap();
    assert_eq!(
        cold.traffic().requests,
        12,
        "{:?}",
        &server.requests()[before..]
    );
    let paths: Vec<String> = server.requests()[before..]
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        paths.iter().all(|p| p.ends_with("/zarr.json")
            || p.ends_with('/')
            || p.ends_with("v3_plain.zarr/.zmetadata")),
        "{paths:?}"
    );
    let warm = open_store_cached(&url("v3_plain.zarr"), vec![], coordinator, None)
        .await
        .unwrap();
    assert_eq!(listing(warm.nodes()), listing(cold.nodes()));
    warm.get("/group/deeper/leaf").await.unwrap();
    assert_eq!(warm.traffic().requests, 0, "warm reopen made requests");

    // The v2 walk: .zarray, .zgroup and .zattrs of each child at once.
    let v2 = open_store_cached(
        &url("v2_plain.zarr"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    // zarr.json, .zmetadata, root (3), listing, 3 children (9), /group listing, 2 children
    // (6), /group/deeper listing, 1 child (3), and listings of nothing else.
    assert_eq!(v2.traffic().requests, 2 + 3 + 1 + 9 + 1 + 6 + 1 + 3);
    assert_eq!(v2.nodes().len(), 7);

    // Disk: a new coordinator on the same directory lists and opens with no request.
    let dir = tempfile::tempdir().unwrap();
    let disk = || CacheCoordinator::disk(dir.path(), Some(1 << 26)).unwrap();
    for store in ["v3_plain.zarr", "v2_plain.zarr", "v2_consolidated.zarr"] {
        let cold = open_store_cached(&url(store), vec![], disk(), None)
            .await
            .unwrap();
        cold.get("/temperature").await.unwrap();
        assert!(cold.traffic().requests > 0);
        let warm = open_store_cached(&url(store), vec![], disk(), None)
            .await
            .unwrap();
        let arr = warm.get("/temperature").await.unwrap();
        assert_eq!(warm.traffic().requests, 0, "{store}: warm from disk");
        assert_eq!(listing(warm.nodes()), listing(cold.nodes()), "{store}");
        assert_eq!(
            arr.attrs().to_json(),
            exp["stores"][store]["/temperature"]["attrs"],
            "{store}"
        );
    }
    // The vlmeta from a disk record: no request.
    let b2 = url("vlmeta.b2nd");
    let opts = || OpenOptions {
        cache: chunkwise::cache::CachePolicy::Disk,
        ..Default::default()
    };
    let cold = open_array_cached(&b2, vec![], opts(), disk())
        .await
        .unwrap();
    assert!(cold.traffic().requests > 0);
    let warm = open_array_cached(&b2, vec![], opts(), disk())
        .await
        .unwrap();
    assert_eq!(warm.traffic().requests, 0, "vlmeta.b2nd warm from disk");
    assert_eq!(
        warm.attrs().to_json(),
        exp["stores"]["vlmeta.b2nd"]["/"]["attrs"]
    );
    server.shutdown().await;
}

/// A server that offers no listing (every directory URL answers 404): the root says why its
/// children are not listed, and an array still opens by its path, attributes included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_listing_is_said_and_arrays_open_by_path() {
    let server = common::fault_server(&fixtures(), &["status=/:404"], false).await;
    let exp = expected();
    for store in ["v3_plain.zarr", "v2_plain.zarr"] {
        let url = server.url(&format!("attrs/{store}"));
        let s = open_store_cached(&url, vec![], CacheCoordinator::memory(1 << 26), None)
            .await
            .unwrap();
        assert_eq!(s.nodes().len(), 1, "{store}");
        assert_eq!(s.nodes()[0].error.as_deref(), Some(NO_LISTING), "{store}");
        assert_eq!(
            s.nodes()[0].attrs.to_json(),
            exp["stores"][store]["/"]["attrs"],
            "{store}"
        );
        let want = &exp["stores"][store]["/group/counts"]["attrs"];
        assert_eq!(
            &s.get("/group/counts").await.unwrap().attrs().to_json(),
            want
        );
        assert_eq!(
            &cli_attrs(&url, Some("/group/counts")),
            want,
            "{store} (CLI)"
        );
    }
    server.shutdown().await;
}

/// Writes a v3 group `zarr.json` (what zarr-python writes for a group without attributes).
fn group_at(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("zarr.json"),
        r#"{"attributes": {}, "zarr_format": 3, "consolidated_metadata": null, "node_type": "group"}"#,
    )
    .unwrap();
}

/// The walk is bounded: a group of more children than the request budget is cut there, and
/// groups nested deeper than the depth bound are not listed; each says so on its node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_walk_is_bounded() {
    let root = tempfile::tempdir().unwrap();
    let wide = root.path().join("wide.zarr");
    group_at(&wide);
    for i in 0..(MAX_WALK_REQUESTS + 50) {
        group_at(&wide.join(format!("g{i:04}")));
    }
    let mut deep = root.path().join("deep.zarr");
    group_at(&deep);
    for i in 0..(MAX_WALK_DEPTH + 3) {
        deep = deep.join(format!("d{i}"));
        group_at(&deep);
    }
    let server = common::fault_server(root.path(), &[], false).await;
    let t0 = std::time::Instant::now();
    let s = open_store_cached(
        &server.url("wide.zarr"),
        vec![],
        CacheCoordinator::none(),
        None,
    )
    .await
    .unwrap();
    let requests = s.traffic().requests;
    // The walk's requests and the root's zarr.json and .zmetadata (asked at once).
    assert!(
        requests <= MAX_WALK_REQUESTS as u64 + 2,
        "{requests} requests"
    );
    assert!(
        requests >= MAX_WALK_REQUESTS as u64 - 10,
        "{requests} requests"
    );
    let err = s.nodes()[0].error.as_deref().unwrap_or_default();
    assert!(err.contains("listing stopped after"), "{err}");
    assert!(s.nodes().len() < MAX_WALK_REQUESTS + 50);
    eprintln!(
        "wide walk: {requests} requests, {} nodes, {:?}",
        s.nodes().len(),
        t0.elapsed()
    );

    let s = open_store_cached(
        &server.url("deep.zarr"),
        vec![],
        CacheCoordinator::none(),
        None,
    )
    .await
    .unwrap();
    let cut: Vec<_> = s.nodes().iter().filter(|n| n.error.is_some()).collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert!(
        cut[0].error.as_deref().unwrap().contains("deeper than"),
        "{cut:?}"
    );
    assert_eq!(
        cut[0].path.matches('/').count(),
        MAX_WALK_DEPTH + 1,
        "{}",
        cut[0].path
    );
    server.shutdown().await;
}

/// A listing or a child's metadata that fails (after retries) does not fail the store's
/// listing: the group says what failed, the other nodes are listed, and no URL is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_listings_and_children_are_said_on_their_group() {
    let server = common::fault_server(
        &fixtures(),
        &["status=v3_plain.zarr/:503", "status=group/zarr.json:403"],
        false,
    )
    .await;
    let s = open_store_cached(
        &server.url("attrs/v3_plain.zarr?token=secret"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    let err = s.nodes()[0].error.clone().unwrap_or_default();
    assert!(err.contains("listing failed (HTTP 503)"), "{err}");
    assert!(!err.contains("secret") && !err.contains("http"), "{err}");
    let s = open_store_cached(
        &server.url("attrs/v2_plain.zarr"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    // v2: /group's own metadata is .zgroup (served), so only v3 children fail here.
    assert_eq!(s.nodes().len(), 7, "{:?}", s.nodes());
    let server2 = common::fault_server(&fixtures(), &["status=group/zarr.json:403"], false).await;
    let s = open_store_cached(
        &server2.url("attrs/v3_plain.zarr"),
        vec![],
        CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    let paths: Vec<&str> = s.nodes().iter().map(|n| n.path.as_str()).collect();
    assert_eq!(paths, ["/", "/plain", "/temperature"]);
    let err = s.nodes()[0].error.clone().unwrap_or_default();
    assert!(
        err.contains("a child's metadata failed (HTTP 403)"),
        "{err}"
    );
    server.shutdown().await;
    server2.shutdown().await;
}

/// A `.zattrs` that is not a JSON object is an `INVALID_DATA` error naming it when its array
/// opens, and the node's `error` in a listing, which lists the other nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_zattrs_is_an_error_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &Path| {
        let st = std::process::Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .unwrap();
        assert!(st.success());
    };
    copy(&fixtures().join("attrs/v2_plain.zarr"), root.path());
    std::fs::write(
        root.path().join("v2_plain.zarr/temperature/.zattrs"),
        "{not json",
    )
    .unwrap();
    std::fs::write(root.path().join("v2_plain.zarr/group/.zattrs"), "[1, 2]").unwrap();
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("v2_plain.zarr");
    let e = open_array(
        &url,
        vec![],
        OpenOptions {
            path: Some("/temperature".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(e.to_string().contains("temperature/.zattrs"), "{e}");
    let s = open_store_cached(&url, vec![], CacheCoordinator::memory(1 << 26), None)
        .await
        .unwrap();
    let err = |p: &str| {
        s.nodes()
            .iter()
            .find(|n| n.path == p)
            .and_then(|n| n.error.clone())
            .unwrap_or_default()
    };
    assert!(err("/temperature").contains("not JSON"), "{:?}", s.nodes());
    assert!(
        err("/group").contains("not a JSON object"),
        "{:?}",
        s.nodes()
    );
    assert_eq!(err("/group/counts"), "");
    assert_eq!(s.nodes().len(), 7);
    server.shutdown().await;
}
