//! The core's one opener (`chunkwise::open`), whose decisions the CLI and the JS bindings only
//! call: format detection from the heads of real fixtures (python-blosc2, h5py, zarr-python),
//! the Zarr fallback (`.zarr`, a local directory, a 404, bytes of no known format), the cache
//! key with a `cacheKey` name, and local paths. Values are compared with the arrays the
//! generators wrote (their `.npy`); request counts with the loopback range server's.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::{CacheCoordinator, CachePolicy};
use chunkwise::npy::read_npy;
use chunkwise::open::{self, Detected};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn memory() -> CacheCoordinator {
    CacheCoordinator::new(CachePolicy::Memory, 1 << 24).unwrap()
}

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

/// Reads the whole array and checks it against the `.npy` the generator wrote beside it.
async fn assert_reads(arr: &chunkwise::array::RemoteArray, npy: &str) {
    let want = read_npy(&std::fs::read(fixtures().join(npy)).unwrap()).unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.shape, want.shape, "{npy}");
    assert_eq!(got.dtype.to_string(), want.descr, "{npy}");
    assert_eq!(got.data, want.data, "{npy}");
}

#[test]
fn detection_from_real_heads() {
    let head = |rel: &str| {
        let bytes = std::fs::read(fixtures().join(rel)).unwrap();
        bytes[..bytes.len().min(64 * 1024)].to_vec()
    };
    for b2nd in ["blosc2/be_i4.b2nd", "blosc2/cf_lz4_shuffle.b2nd"] {
        assert_eq!(open::detect(&head(b2nd)), Detected::B2nd, "{b2nd}");
    }
    for h5 in ["hdf5/contiguous.h5", "hdf5/groups.h5", "hdf5/btree_v1.h5"] {
        assert_eq!(open::detect(&head(h5)), Detected::Hdf5, "{h5}");
    }
    // An HDF5 superblock after a 512-byte user block is found there.
    let mut user_block = vec![0u8; 512];
    user_block.extend_from_slice(&head("hdf5/contiguous.h5"));
    assert_eq!(open::detect(&user_block), Detected::Hdf5);
    // Zarr metadata, a .npy and nothing at all are no format of their own.
    for other in [
        "zarr/v2.zarr/raw/.zarray",
        "zarr/v2_raw.npy",
        "zarr/manifest.json",
    ] {
        assert_eq!(open::detect(&head(other)), Detected::Unknown, "{other}");
    }
    assert_eq!(open::detect(&[]), Detected::Unknown);
    // A frame cut before its magic is not a frame.
    assert_eq!(
        open::detect(&head("blosc2/be_i4.b2nd")[..8]),
        Detected::Unknown
    );
}

#[test]
fn zarr_roots_known_without_a_probe() {
    let dir = fixtures().join("zarr/v2.zarr/raw");
    for yes in [
        "http://h/a.zarr",
        "https://h/a.zarr/",
        "HTTP://h/x/b.zarr",
        dir.to_str().unwrap(),
    ] {
        assert!(open::is_zarr_root(yes), "{yes}");
    }
    let file = fixtures().join("blosc2/be_i4.b2nd");
    for no in [
        "http://h/a.zarr.json",
        "http://h/v2.zarr/raw",
        file.to_str().unwrap(),
    ] {
        assert!(!open::is_zarr_root(no), "{no}");
    }
    assert!(open::is_url("HTTPS://h/x") && !open::is_url("h/x") && !open::is_url("ftp://h"));
}

#[tokio::test]
async fn local_files_and_directories() {
    let f = fixtures();
    let arr = open::open_array(
        f.join("blosc2/be_i4.b2nd").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap();
    assert_eq!(arr.info().format, "b2nd");
    assert_reads(&arr, "blosc2/be_i4.npy").await;
    // A directory is a Zarr root: an array at the root, or one under a path.
    let lone = open::open_array(
        f.join("zarr/lone_v2.zarr").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap();
    assert_eq!(lone.info().format, "zarr2");
    assert_reads(&lone, "zarr/lone_v2_.npy").await;
    let raw = open::open_array(
        f.join("zarr/v2.zarr").to_str().unwrap(),
        vec![],
        with_path("/raw"),
        memory(),
    )
    .await
    .unwrap();
    assert_reads(&raw, "zarr/v2_raw.npy").await;
    // HDF5 by path.
    let h5 = open::open_array(
        f.join("hdf5/groups.h5").to_str().unwrap(),
        vec![],
        with_path("/time"),
        memory(),
    )
    .await
    .unwrap();
    assert_eq!(h5.info().format, "hdf5");
    assert_reads(&h5, "hdf5/groups_time.npy").await;
    // A file of no known format that is no Zarr root keeps its own error.
    let e = open::open_array(
        f.join("zarr/manifest.json").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "UNRECOGNISED_FORMAT", "{e}");
    let e = open::open_array(
        f.join("no/such.b2nd").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    // A container: an HDF5 file lists; a frame is refused as a store.
    let store = open::open_store(
        f.join("hdf5/groups.h5").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap();
    assert!(store.nodes().iter().any(|n| n.path == "/time"));
    let e = open::open_store(
        f.join("blosc2/be_i4.b2nd").to_str().unwrap(),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("a Blosc2 frame"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_fallback_over_http() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    // `.zarr`: opened as Zarr with no probe of the root as an object.
    let arr = open::open_array(
        &server.url("zarr/v2.zarr"),
        vec![],
        with_path("/raw"),
        memory(),
    )
    .await
    .unwrap();
    assert_eq!(arr.info().format, "zarr2");
    assert_reads(&arr, "zarr/v2_raw.npy").await;
    let probed: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.path.clone())
        .filter(|p| p.trim_end_matches('/').ends_with("v2.zarr"))
        .collect();
    assert!(probed.is_empty(), "the .zarr root was probed: {probed:?}");
    // The same with a query (a signed store URL): still no probe, and a missing array is
    // NOT_FOUND, not the directory listing's UNRECOGNISED_FORMAT.
    let mark = server.requests().len();
    let signed = format!("{}?token=t", server.url("zarr/v2.zarr"));
    let arr = open::open_array(&signed, vec![], with_path("/raw"), memory())
        .await
        .unwrap();
    assert_reads(&arr, "zarr/v2_raw.npy").await;
    let probed: Vec<String> = server.requests()[mark..]
        .iter()
        .map(|r| r.path.clone())
        .filter(|p| p.trim_end_matches('/').ends_with("v2.zarr"))
        .collect();
    assert!(
        probed.is_empty(),
        "the signed .zarr root was probed: {probed:?}"
    );
    let e = open::open_array(&signed, vec![], with_path("/nothere"), memory())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    // An array directory without `.zarr` (served as an HTML listing: bytes of no known
    // format) falls back to Zarr.
    let raw = open::open_array(
        &server.url("zarr/v2.zarr/raw"),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap();
    assert_reads(&raw, "zarr/v2_raw.npy").await;
    // A 404 with no Zarr metadata there either: NOT_FOUND stands.
    let e = open::open_array(
        &server.url("zarr/nothing"),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    // A store URL of a frame: refused as a container, and no Zarr there.
    let e = open::open_store(
        &server.url("blosc2/be_i4.b2nd"),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    // A Zarr store URL lists as a store.
    let store = open::open_store(
        &server.url("zarr/v2.zarr"),
        vec![],
        OpenOptions::default(),
        memory(),
    )
    .await
    .unwrap();
    assert!(store.nodes().iter().any(|n| n.path == "/raw"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_key_names_a_rotating_url() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let c = memory();
    let url = |sig: u32| server.url(&format!("blosc2/be_i4.b2nd?sig={sig}"));
    let named = |name: &str| OpenOptions {
        cache_key: Some(name.to_string()),
        ..Default::default()
    };
    // The key: the name alone, whatever the URL or headers; else the URL's fingerprint.
    let h = vec![("Authorization".to_string(), "Bearer x".to_string())];
    assert_eq!(
        open::source_key(&url(1), &[], &c, Some("k")),
        open::source_key(&url(2), &h, &c, Some("k"))
    );
    assert_ne!(
        open::source_key(&url(1), &[], &c, None),
        open::source_key(&url(2), &[], &c, None)
    );
    // A local path is keyed by its canonical form.
    let f = fixtures();
    let odd = f.join("blosc2/../blosc2/be_i4.b2nd");
    assert_eq!(
        open::source_key(odd.to_str().unwrap(), &[], &c, None),
        open::source_key(
            std::fs::canonicalize(&odd).unwrap().to_str().unwrap(),
            &[],
            &c,
            None
        )
    );
    // Cold: the head read, which fetches the 1,872-byte frame whole, and the frame's tail
    // asked with it.
    let cold = open::open_array(&url(1), vec![], named("be"), c.clone())
        .await
        .unwrap();
    assert_eq!(cold.traffic().requests, 2);
    // Same name, new signature: warm, no request.
    let warm = open::open_array(&url(2), vec![], named("be"), c.clone())
        .await
        .unwrap();
    assert_eq!(warm.traffic().requests, 0);
    assert_reads(&warm, "blosc2/be_i4.npy").await;
    assert_eq!(warm.traffic().requests, 0);
    // No name: the new signature is a new source (head and tail read again).
    let other = open::open_array(&url(3), vec![], OpenOptions::default(), c)
        .await
        .unwrap();
    assert_eq!(other.traffic().requests, 2);
}

/// Lines of Rust code (comments left out) under `dir` that name `needle`.
fn code_naming(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for (i, line) in text.lines().enumerate() {
                    if !line.trim_start().starts_with("//") && line.contains(needle) {
                        hits.push(format!("{}:{}: {line}", p.display(), i + 1));
                    }
                }
            }
        }
    }
    hits
}

#[test]
fn cache_and_formats_do_not_import_each_other() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    let up = code_naming(&src.join("cache"), "formats::");
    assert!(up.is_empty(), "cache imports formats: {up:#?}");
    let down = code_naming(&src.join("formats"), "cache::");
    assert!(down.is_empty(), "formats import cache: {down:#?}");
}

/// A discovery record the cache cannot use is a miss: the open discovers afresh (one
/// request for this small frame), reads the right values, and stores a record that the next
/// open uses (no request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_another_shape_tag_or_version_are_misses() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let url = server.url("blosc2/be_i4.b2nd");
    let len = std::fs::metadata(fixtures().join("blosc2/be_i4.b2nd"))
        .unwrap()
        .len();
    let source = format!(r#"{{"location":"{url}","len":{len},"etag":null,"last_modified":null}}"#);
    // The header and index of this very frame, as a version-2 record held them.
    let seed = {
        let c = memory();
        let arr = open::open_array(&url, vec![], OpenOptions::default(), c.clone())
            .await
            .unwrap();
        let s = arr.seed().expect("a b2nd seed");
        assert_eq!((s.format.as_str(), s.version), ("b2nd", 1));
        s.value
    };
    let v2 = format!(
        r#"{{"version":2,"source":{source},"seed":{{"format":"b2nd","header":{},"index":{}}}}}"#,
        seed["header"], seed["index"]
    );
    let v3 = |format: &str, version: u32, seed: &str| {
        format!(
            r#"{{"version":3,"source":{source},"format":"{format}","seed_version":{version},"seed":{seed}}}"#
        )
    };
    let good = seed.to_string();
    let cases = [
        ("a version-2 record", v2),
        ("an unknown format tag", v3("b2z", 1, &good)),
        ("another seed version", v3("b2nd", 2, &good)),
        (
            "a seed of another shape",
            v3("b2nd", 1, r#"{"header":"zz"}"#),
        ),
        ("a seed of another format's type", v3("hdf5", 1, &good)),
    ];
    for (what, json) in cases {
        let c = memory();
        let key = open::source_key(&url, &[], &c, None);
        c.put_record(&key.scoped(""), json.into_bytes()).await;
        let arr = open::open_array(&url, vec![], OpenOptions::default(), c.clone())
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        // The head, and the frame's tail asked with it.
        assert_eq!(arr.traffic().requests, 2, "{what}: not discovered afresh");
        assert_reads(&arr, "blosc2/be_i4.npy").await;
        let hits = c.stats().discovery_hits;
        let again = open::open_array(&url, vec![], OpenOptions::default(), c.clone())
            .await
            .unwrap();
        assert_eq!(again.traffic().requests, 0, "{what}");
        assert_eq!(
            c.stats().discovery_hits,
            hits + 1,
            "{what}: the new record is not used"
        );
    }
}

/// A Zarr store's remembered metadata is a discovery record like any other (tag `zarr`): a
/// record of the former shape (the bare metadata JSON) is a miss, never trusted nor an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_metadata_is_a_discovery_record() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let url = server.url("zarr/v2.zarr");
    let c = memory();
    let key = open::source_key(&url, &[], &c, None);
    let record_key = format!("{}\n#zarr-metadata", key.source_id());
    // The former shape, naming this store, with a root group document that is not JSON:
    // trusted, it would fail the open.
    let former = format!(
        r#"{{"version":1,"base":"{url}","objects":{{".zgroup":"not json","raw/.zarray":"nor this"}}}}"#
    );
    c.put_record(&record_key, former.into_bytes()).await;
    let arr = open::open_array(&url, vec![], with_path("/raw"), c.clone())
        .await
        .unwrap();
    assert!(arr.traffic().requests > 0);
    assert_reads(&arr, "zarr/v2_raw.npy").await;
    let rec = c.discovery(&record_key).await.expect("a discovery record");
    assert_eq!((rec.format.as_str(), rec.seed_version), ("zarr", 1));
    assert_eq!(rec.source.location, url);
    assert!(
        rec.seed["objects"]["raw/.zarray"].is_string(),
        "{}",
        rec.seed
    );
    // Warm: the record serves the metadata.
    let again = open::open_array(&url, vec![], with_path("/raw"), c)
        .await
        .unwrap();
    assert_eq!(again.traffic().requests, 0);
}
