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

/// The store at `url` (no request headers, default options) under `coordinator`.
async fn open_b2z(url: &str, coordinator: CacheCoordinator) -> chunkwise::store::RemoteStore {
    open_store(url, vec![], OpenOptions::default(), coordinator)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

async fn check_store(name: &str) {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/{name}.b2z", server.base_url());
    let coordinator = CacheCoordinator::memory(64 << 20);
    let store = open_b2z(&url, coordinator.clone()).await;
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
    let again = open_b2z(&url, coordinator).await;
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
    let store = open_b2z(&url, CacheCoordinator::memory(1 << 20)).await;
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
    let store = open_b2z(&url, CacheCoordinator::memory(8 << 20)).await;
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
    for want in ["id", "f32", "f64", "i8", "u16", "flag", "raw", "name"] {
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

/// The archives made at test time (`gen_b2z.py --big`): `big.b2z` (over 8 MiB, 20 leaves),
/// `zip64.b2z` (tree.b2z's members with ZIP64 records), `bench_table.b2z`.
fn big() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::process_dir("chunkwise-b2z-big-");
        let status = std::process::Command::new(native_harness::venv_python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_b2z.py"))
            .arg("--big")
            .arg(&dir)
            .status()
            .expect("the Python venv (scripts/setup.sh python) runs gen_b2z.py");
        assert!(status.success(), "gen_b2z.py --big failed");
        dir
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_over_8_mib_lists_by_ranges_and_reads_one_value_of_each_leaf() {
    let server = common::serve_dir(big().to_path_buf()).await;
    let url = format!("{}/big.b2z", server.base_url());
    let len = std::fs::metadata(big().join("big.b2z")).unwrap().len();
    assert!(len > 8 << 20, "the fixture is over 8 MiB: {len}");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(big().join("big.json")).unwrap()).unwrap();
    let leaves = m["leaves"].as_object().unwrap();
    let coordinator = CacheCoordinator::memory(64 << 20);
    let store = open_b2z(&url, coordinator.clone()).await;
    let listed = store.traffic();
    // One suffix request, then each member's prefix with the previous member's suffix (its
    // frame offsets) in one request: one round of at most 6 requests in flight.
    assert!(
        listed.requests <= 2 + leaves.len() as u64,
        "listing requests: {listed:?}"
    );
    assert!(
        listed.round_trips <= 1 + (leaves.len() as u64).div_ceil(6) + 1,
        "listing round trips: {listed:?}"
    );
    assert!(
        listed.bytes < len / 4,
        "the listing reads a fraction of the archive: {listed:?} of {len}"
    );
    // Two chunks per leaf (the first and the last) at most, plus the listing.
    let mut budget = listed.bytes;
    for (path, w) in leaves {
        let arr = store.get(path).await.unwrap();
        let info = arr.info();
        budget += 2 * (info.cbytes / info.nchunks.unwrap()) * 5 / 4;
        let shape = arr.info().shape.clone();
        let last: Vec<String> = shape.iter().map(|d| (d - 1).to_string()).collect();
        let first = arr
            .read(&Selection::parse("0, 0").unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        let end = arr
            .read(
                &Selection::parse(&last.join(",")).unwrap(),
                &ReadOptions::default(),
            )
            .await
            .unwrap();
        let f = f64::from_le_bytes(first.data[..8].try_into().unwrap());
        let l = f64::from_le_bytes(end.data[..8].try_into().unwrap());
        assert_eq!(f, w["first"].as_f64().unwrap(), "{path}[0, 0]");
        assert_eq!(l, w["last"].as_f64().unwrap(), "{path}[-1, -1]");
    }
    let read = store.traffic();
    assert!(
        read.bytes <= budget,
        "two values per leaf read their two chunks: {read:?}, budget {budget}"
    );
    // A warm reopen lists with no request.
    let again = open_b2z(&url, coordinator).await;
    assert_eq!(again.traffic().requests, 0);
    let arr = again.get(leaves.keys().next().unwrap()).await.unwrap();
    assert_eq!(
        again.traffic().requests,
        0,
        "a leaf opens from the listing's seed"
    );
    drop(arr);
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zip64_archive_reads_as_the_plain_one() {
    let server = common::serve_dir(big().to_path_buf()).await;
    let url = format!("{}/zip64.b2z", server.base_url());
    let store = open_b2z(&url, CacheCoordinator::memory(8 << 20)).await;
    for path in ["/temp", "/g/h/cube", "/counts", "/g/small"] {
        let got = store
            .get(path)
            .await
            .unwrap()
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        let e = expected("tree", path).unwrap();
        assert_eq!(got.data, e.data, "{path}");
    }
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_ignoring_range_on_a_large_archive_gets_the_range_error_not_a_download() {
    let server = common::fault_server(big(), &[], true).await;
    let url = format!("{}/big.b2z", server.base_url());
    let e = open_store(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "RANGE_IGNORED", "{e}");
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_and_damaged_archives_are_typed_errors() {
    let tree = std::fs::read(dir().join("tree.b2z")).unwrap();
    let scratch = common::process_dir("chunkwise-b2z-bad-");
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.b2z", tree[..tree.len() - 10].to_vec()),
        ("head_only.b2z", tree[..4096].to_vec()),
        ("empty.b2z", Vec::new()),
    ];
    // The end record's central-directory offset pointed past the end of the file.
    let mut outside = tree.clone();
    let eocd = outside.len() - 22;
    assert_eq!(&outside[eocd..eocd + 4], b"PK\x05\x06");
    outside[eocd + 16..eocd + 20].copy_from_slice(&(u32::MAX - 1).to_le_bytes());
    cases.push(("outside.b2z", outside));
    for (name, bytes) in &cases {
        std::fs::write(scratch.join(name), bytes).unwrap();
    }
    let server = common::serve_dir(scratch.clone()).await;
    for (name, _) in &cases {
        let url = format!("{}/{name}", server.base_url());
        let e = open_store(
            &url,
            vec![],
            OpenOptions::default(),
            CacheCoordinator::memory(1 << 20),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(e.code(), "INVALID_DATA" | "UNRECOGNISED_FORMAT"),
            "{name}: {} {e}",
            e.code()
        );
    }
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_disk_cache_reopens_small_and_large_archives_with_no_request() {
    for (root, name, leaf) in [
        (dir(), "tree.b2z", "/g/h/cube"),
        (big().to_path_buf(), "big.b2z", "/leaves/l03"),
    ] {
        let server = common::serve_dir(root.clone()).await;
        let url = format!("{}/{name}", server.base_url());
        let cache = common::process_dir(&format!("chunkwise-b2z-disk-{}-", name.len()));
        let _ = std::fs::remove_dir_all(&cache);
        let disk = || CacheCoordinator::disk(&cache, Some(64 << 20)).unwrap();
        let cold = open_b2z(&url, disk()).await;
        let arr = cold.get(leaf).await.unwrap();
        let want = arr
            .read(&Selection::parse("0").unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        drop(arr);
        drop(cold);
        // Another process (a new coordinator over the same directory): the manifest, and for
        // the small archive its copy, come from disk.
        let warm = open_b2z(&url, disk()).await;
        assert_eq!(warm.traffic().requests, 0, "{name}: warm open");
        let arr = warm.get(leaf).await.unwrap();
        let got = arr
            .read(&Selection::parse("0").unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.data, want.data, "{name}");
        assert_eq!(
            warm.traffic().requests,
            0,
            "{name}: the chunk read before comes from the payload cache (or the copy)"
        );
        // Dependent handles keep the owner alive: the array reads after its store is gone.
        drop(warm);
        let again = arr
            .read(&Selection::parse("1").unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(!again.data.is_empty());
        drop(server);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_query_never_reaches_a_listing_its_manifest_or_a_reference() {
    // tree.b2z with the frame magic of one member damaged: that node's reason names the
    // archive by its URL.
    let mut bytes = std::fs::read(dir().join("tree.b2z")).unwrap();
    let name = b"counts.b2nd";
    let at = bytes
        .windows(4 + 26 + name.len())
        .position(|w| w.starts_with(b"PK\x03\x04") && w.ends_with(name))
        .expect("the local header of counts.b2nd");
    let data = at + 30 + name.len();
    bytes[data + 2..data + 9].copy_from_slice(b"XXXXXXX");
    let scratch = common::process_dir("chunkwise-b2z-query-");
    std::fs::write(scratch.join("damaged.b2z"), &bytes).unwrap();
    let server = common::serve_dir(scratch).await;
    let url = format!("{}/damaged.b2z?token=SECRET123", server.base_url());
    let coordinator = CacheCoordinator::memory(8 << 20);
    let store = open_b2z(&url, coordinator.clone()).await;
    let counts = store.nodes().iter().find(|n| n.path == "/counts").unwrap();
    let why = counts
        .error
        .as_deref()
        .expect("the damaged member is listed with its reason");
    assert!(why.contains("counts.b2nd"), "{why}");
    let listing = serde_json::to_string(store.nodes()).unwrap();
    assert!(!listing.contains("SECRET123"), "{listing}");
    let reference = chunkwise::reference::Reference::export(&store, false)
        .await
        .unwrap();
    let doc = String::from_utf8(reference.to_json()).unwrap();
    assert!(!doc.contains("SECRET123"), "{doc}");
    // The manifest the cache keeps.
    let key = store.source_key().scoped("#b2z");
    let record = coordinator
        .record(&key)
        .await
        .expect("the manifest is recorded");
    assert!(!String::from_utf8_lossy(&record).contains("SECRET123"));
    // Opening the damaged member gives its own typed error, not a generic refusal.
    let e = store.get("/counts").await.unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(!e.message().contains("SECRET123"), "{}", e.message());
    assert!(e.message().contains("counts.b2nd"), "{}", e.message());
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_arrays_python_blosc2_wrote_read_as_empty() {
    // python-blosc2 writes an empty array with chunk and block shapes of zeros, no chunk.
    let server = common::serve_dir(dir()).await;
    for name in ["empty_f4", "empty_5x0_i8"] {
        let url = format!("{}/{name}.b2nd", server.base_url());
        let arr = open_array(
            &url,
            vec![],
            OpenOptions::default(),
            CacheCoordinator::memory(1 << 20),
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = read_npy(&std::fs::read(dir().join(format!("{name}.npy"))).unwrap()).unwrap();
        assert_eq!(arr.info().shape, want.shape, "{name}");
        assert_eq!(arr.info().nchunks, Some(0), "{name}");
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.shape, want.shape, "{name}");
        assert!(got.data.is_empty() && want.data.is_empty(), "{name}");
    }
    drop(server);
}

/// The little-endian bytes of the JSON numbers `v` as `dtype` (`<i4`, `<i8` given as strings,
/// `<f8`).
fn le_bytes(v: &serde_json::Value, dtype: &str) -> Vec<u8> {
    let items = v.as_array().unwrap();
    let mut out = Vec::new();
    for x in items {
        match dtype {
            "<i4" => out.extend_from_slice(&(x.as_i64().unwrap() as i32).to_le_bytes()),
            "<i8" => out.extend_from_slice(
                &x.as_i64()
                    .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
                    .unwrap()
                    .to_le_bytes(),
            ),
            "<f8" => out.extend_from_slice(&x.as_f64().unwrap().to_le_bytes()),
            d => panic!("dtype {d}"),
        }
    }
    out
}

/// python-blosc2's CTable column kinds and names (`gen_b2z_kinds.py`): a column is read from
/// the path python-blosc2 stores it at (a nested `a.b`, a slash or an escaped dot in the
/// name), a nullable column without nulls reads, and a column whose array is not its values
/// (nulls in a validity sidecar, dictionary codes, utf8 offsets) is listed with an error and
/// refused as UNSUPPORTED, while the others still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctable_columns_read_from_their_paths_and_other_kinds_are_refused() {
    let server = common::serve_dir(dir()).await;
    let url = format!("{}/kinds.b2z", server.base_url());
    let store = open_b2z(&url, CacheCoordinator::memory(8 << 20)).await;
    let m = manifest("kinds");
    let table = store.table("/").await.unwrap();
    let nrows = table.nrows().await.unwrap();
    assert_eq!(nrows, m["nrows"].as_u64().unwrap());
    for (name, want) in m["read"].as_object().unwrap() {
        let dtype = m["dtypes"][name].as_str().unwrap();
        let col = table.columns().iter().find(|c| &c.name == name).unwrap();
        assert_eq!(col.error, None, "{name}");
        let rows = table
            .read_rows(0, nrows, Some(&[name.clone()]), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rows.columns[0].1.data, le_bytes(want, dtype), "{name}");
    }
    for (name, words) in m["refused"].as_object().unwrap() {
        let col = table.columns().iter().find(|c| &c.name == name).unwrap();
        let error = col
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: readable"));
        for w in words.as_array().unwrap() {
            assert!(error.contains(w.as_str().unwrap()), "{name}: {error}");
        }
        let e = table
            .read_rows(0, nrows, Some(&[name.clone()]), &ReadOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED", "{name}: {e}");
    }
    drop(server);
}

/// A user's NDim array named `_meta` (embedded, TreeStore) or `__vlmeta__` (an external
/// member, DictStore) is listed and read as the array it is (`gen_b2z_kinds.py`), not taken
/// as its group's attributes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_named_meta_or_vlmeta_are_arrays() {
    let server = common::serve_dir(dir()).await;
    let m = manifest("names");
    for name in ["names.b2z", "names_dict.b2z"] {
        let url = format!("{}/{name}", server.base_url());
        let store = open_b2z(&url, CacheCoordinator::memory(8 << 20)).await;
        for (path, want) in m[name].as_object().unwrap() {
            let node = store
                .nodes()
                .iter()
                .find(|n| &n.path == path)
                .unwrap_or_else(|| panic!("{name}:{path} not listed: {:?}", store.nodes()));
            assert_eq!(node.kind, NodeKind::Array, "{name}:{path}");
            let arr = open_array(
                &url,
                vec![],
                OpenOptions {
                    path: Some(path.clone()),
                    ..Default::default()
                },
                CacheCoordinator::memory(8 << 20),
            )
            .await
            .unwrap_or_else(|e| panic!("{name}:{path}: {e}"));
            let got = arr
                .read(&Selection::all(), &ReadOptions::default())
                .await
                .unwrap();
            assert_eq!(got.data, le_bytes(want, "<i4"), "{name}:{path}");
        }
    }
    let url = format!("{}/names.b2z", server.base_url());
    let store = open_b2z(&url, CacheCoordinator::memory(8 << 20)).await;
    for path in m["no_attrs"].as_array().unwrap() {
        let g = store
            .nodes()
            .iter()
            .find(|n| n.path == path.as_str().unwrap())
            .unwrap();
        assert!(g.attrs.0.is_empty(), "{path}: {:?}", g.attrs);
    }
    drop(server);
}
