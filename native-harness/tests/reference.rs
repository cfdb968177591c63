//! Portable references over the loopback range server: an HDF5 file (h5py's
//! `tests/fixtures/sample/sample.h5`) and a Zarr v3 store (zarr-python's
//! `tests/fixtures/zarr/v3.zarr`) exported, then reopened from the document with a fresh
//! coordinator (another "machine") with no request for open, listing and every array's open;
//! values compared with the arrays the generators wrote (`.npy`, or the written formula).
//! Also: refused documents, no secret in the document, immutable and mutable reopens over
//! a DISK cache, a source rewritten since the export, and the CLI contract.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::formats::NodeKind;
use chunkwise::npy::read_npy;
use chunkwise::reference::{open_reference, Reference};
use chunkwise::selection::Selection;
use chunkwise::store::RemoteStore;
use std::path::{Path, PathBuf};

mod common;
use common::serve_dir;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn memory() -> CacheCoordinator {
    CacheCoordinator::memory(256 << 20)
}

fn npy(path: PathBuf) -> chunkwise::npy::Npy {
    read_npy(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .expect("npy")
}

async fn store_at(url: &str, headers: Vec<(String, String)>) -> RemoteStore {
    chunkwise::open::open_store(url, headers, OpenOptions::default(), memory())
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// The document of `store`'s export, through its JSON bytes.
async fn exported(store: &RemoteStore) -> Reference {
    let r = Reference::export(store, false).await.expect("export");
    Reference::from_json(&r.to_json()).expect("the document reads back")
}

/// The expected values of sample.h5's datasets that its generator wrote: `.npy` files for
/// two of them, the formula `r * 32 + k` for `/gradient` (float32).
fn sample_h5_expected() -> Vec<(String, Vec<u64>, Vec<u8>)> {
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("sample/sample_stores.json")).unwrap(),
    )
    .unwrap();
    let mut out = Vec::new();
    for n in doc["hdf5"]["nodes"].as_array().unwrap() {
        if let Some(file) = n["npy"].as_str() {
            let a = npy(fixtures().join("sample").join(file));
            out.push((n["path"].as_str().unwrap().to_string(), a.shape, a.data));
        }
    }
    assert_eq!(out.len(), 2, "two .npy files");
    let g = &doc["gradient"];
    assert_eq!(g["formula"], "r * 32 + k");
    let shape: Vec<u64> = serde_json::from_value(g["shape"].clone()).unwrap();
    let mut data = Vec::new();
    for r in 0..shape[0] {
        for k in 0..shape[1] {
            data.extend_from_slice(&((r * 32 + k) as f32).to_le_bytes());
        }
    }
    out.push((g["path"].as_str().unwrap().to_string(), shape, data));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdf5_reference_reopens_with_no_discovery_request() {
    let server = serve_dir(fixtures()).await;
    let url = server.url("sample/sample.h5");
    let store = store_at(&url, vec![]).await;
    let r = exported(&store).await;
    assert_eq!(
        (r.kind.as_str(), r.url.as_str(), r.mutable),
        ("hdf5", url.as_str(), false)
    );
    let len = std::fs::metadata(fixtures().join("sample/sample.h5"))
        .unwrap()
        .len();
    assert_eq!(r.identity.len, len);
    assert!(r.identity.etag.is_some() || r.identity.last_modified.is_some());
    let arrays: Vec<String> = store
        .nodes()
        .iter()
        .filter(|n| n.kind == NodeKind::Array && n.error.is_none())
        .map(|n| n.path.clone())
        .collect();
    assert!(arrays.len() >= 8, "{arrays:?}");
    assert!(r.records.contains_key("#nodes"));
    for a in &arrays {
        let rec = &r.records[a];
        assert_eq!(rec["format"], "hdf5", "{a}");
    }
    drop(store);

    let before = server.requests().len();
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), memory())
        .await
        .expect("reopen");
    assert_eq!(reopened.kind(), "hdf5");
    let listed: Vec<&str> = reopened.nodes().iter().map(|n| n.path.as_str()).collect();
    assert!(listed.contains(&"/surface/precip") && listed.contains(&"/external"));
    let mut opened = Vec::new();
    for a in &arrays {
        opened.push(reopened.get(a).await.unwrap_or_else(|e| panic!("{a}: {e}")));
    }
    assert_eq!(reopened.traffic().requests, 0, "open, nodes and every get");
    assert_eq!(server.requests().len(), before, "the server saw no request");

    // Reads fetch chunks only: every range requested starts at a recorded chunk's address
    // (or a contiguous dataset's data) and ends at one's end (neighbouring chunks coalesced
    // into one request, gaps included).
    for (path, shape, data) in sample_h5_expected() {
        let arr = reopened.get(&path).await.unwrap();
        let seed = arr.seed().expect("an HDF5 seed");
        use chunkwise::formats::FormatSeed;
        let ds = chunkwise::formats::hdf5::Hdf5Seed::from_seed(&seed)
            .expect("hdf5 seed")
            .dataset;
        let starts: Vec<(u64, u64)> = match &ds.layout {
            chunkwise::formats::hdf5::discover::Layout::Chunked { entries, .. } => {
                entries.iter().map(|c| (c.address, c.size)).collect()
            }
            chunkwise::formats::hdf5::discover::Layout::Contiguous {
                address: Some(a),
                size,
            } => vec![(*a, *size)],
            other => panic!("{path}: {other:?} is neither chunked nor contiguous"),
        };
        let seen = server.requests().len();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(
            (got.shape.clone(), got.data.clone()),
            (shape, data),
            "{path}"
        );
        let t = arr.traffic();
        assert!(t.requests >= 1, "{path}: the chunks were fetched");
        let log = server.requests();
        for req in &log[seen..] {
            assert!(req.path.ends_with("sample.h5"), "{req:?}");
            let range = req.range.as_deref().expect("a range request");
            let (first, last) = range.trim_start_matches("bytes=").split_once('-').unwrap();
            let (first, end): (u64, u64) =
                (first.parse().unwrap(), last.parse::<u64>().unwrap() + 1);
            assert!(
                starts.iter().any(|s| s.0 == first) && starts.iter().any(|s| s.0 + s.1 == end),
                "{path}: {range} is not a run of chunks of {starts:?}"
            );
        }
    }
    drop(opened);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_reference_reopens_with_no_discovery_request() {
    let server = serve_dir(fixtures()).await;
    let url = server.url("zarr/v3.zarr");
    let store = store_at(&url, vec![]).await;
    let r = exported(&store).await;
    assert_eq!(r.kind, "zarr");
    assert_eq!(r.records.keys().collect::<Vec<_>>(), ["#zarr-metadata"]);
    drop(store);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("zarr/manifest.json")).unwrap())
            .unwrap();
    let wanted: Vec<(String, String)> = manifest["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["store"] == "v3.zarr" && !a["unreadable"].is_string())
        .map(|a| {
            (
                a["path"].as_str().unwrap().to_string(),
                a["npy"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(wanted.len() >= 10, "{wanted:?}");

    let before = server.requests().len();
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), memory())
        .await
        .expect("reopen");
    let mut arrays = Vec::new();
    for (path, _) in &wanted {
        arrays.push(
            reopened
                .get(path)
                .await
                .unwrap_or_else(|e| panic!("{path}: {e}")),
        );
    }
    assert_eq!(reopened.traffic().requests, 0, "open, nodes and every get");
    assert_eq!(server.requests().len(), before);
    assert!(reopened.nodes().iter().any(|n| n.path == "/group/nested"));

    for ((path, file), arr) in wanted.iter().zip(&arrays) {
        let seen = server.requests().len();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let want = npy(fixtures().join("zarr").join(file));
        assert_eq!(got.shape, want.shape, "{path}");
        // In the stored dtype and byte order, as the generator wrote them.
        assert_eq!(got.data, want.data, "{path}");
        for req in &server.requests()[seen..] {
            assert!(
                !chunkwise::formats::zarr::store::is_metadata_key(&req.path),
                "{path}: a read asked for metadata {req:?}"
            );
        }
    }
}

/// `doc` with `edit` applied to its JSON value, keeping its `sha256`.
fn edited(doc: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(doc).unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_documents_are_refused_with_a_typed_error() {
    let server = serve_dir(fixtures()).await;
    let store = store_at(&server.url("sample/sample.h5"), vec![]).await;
    let doc = Reference::export(&store, false).await.unwrap().to_json();
    assert!(Reference::from_json(&doc).is_ok());
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "another version",
            edited(&doc, |v| v["chunkwise_reference"] = 2.into()),
            "version 2",
        ),
        (
            "identity edited",
            edited(&doc, |v| v["identity"]["len"] = 1.into()),
            "sha256",
        ),
        (
            "record edited",
            edited(&doc, |v| {
                v["records"]["/surface/precip"]["source"]["etag"] = "\"other\"".into()
            }),
            "sha256",
        ),
        (
            "a record removed",
            edited(&doc, |v| {
                v["records"].as_object_mut().unwrap().remove("#nodes");
            }),
            "sha256",
        ),
        ("truncated", doc[..doc.len() / 2].to_vec(), "not JSON"),
        (
            "no sha256",
            edited(&doc, |v| {
                v.as_object_mut().unwrap().remove("sha256");
            }),
            "sha256",
        ),
        (
            "no version",
            edited(&doc, |v| {
                v.as_object_mut().unwrap().remove("chunkwise_reference");
            }),
            "not a reference",
        ),
        ("not an object", b"[1, 2]".to_vec(), "not a JSON object"),
        ("empty", Vec::new(), "not JSON"),
    ];
    for (what, bytes, says) in cases {
        let e = Reference::from_json(&bytes).expect_err(what);
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{what}: {e}");
        assert!(e.to_string().contains(says), "{what}: {e}");
    }
    // A document re-signed after a field went missing is refused for the field.
    let mut v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("sha256");
    obj.remove("identity");
    let sum = chunkwise::cache::identity::sha256_hex(&serde_json::to_vec(&v).unwrap());
    v["sha256"] = sum.into();
    let e = Reference::from_json(&serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(e.to_string().contains("identity"), "{e}");
}

/// `v` as a JavaScript object round trip leaves it: every float without a fraction an
/// integer; returns how many were changed.
fn as_javascript_writes(v: &mut serde_json::Value) -> usize {
    match v {
        serde_json::Value::Object(m) => m.values_mut().map(as_javascript_writes).sum(),
        serde_json::Value::Array(a) => a.iter_mut().map(as_javascript_writes).sum(),
        serde_json::Value::Number(n) if n.is_f64() && n.as_f64().unwrap().fract() == 0.0 => {
            *v = (n.as_f64().unwrap() as i64).into();
            1
        }
        _ => 0,
    }
}

/// A document that went through a JS object (`JSON.parse` then `JSON.stringify`: 2.0 becomes
/// 2) keeps its digest and reopens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_through_javascript_numbers_still_reads() {
    let server = serve_dir(fixtures()).await;
    let store = store_at(&server.url("sample/sample.h5"), vec![]).await;
    let doc = Reference::export(&store, false).await.unwrap().to_json();
    let mut v: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    let changed = as_javascript_writes(&mut v);
    assert!(
        changed > 0,
        "the sample's records hold floats such as level_m 2.0"
    );
    let js = serde_json::to_vec(&v).unwrap();
    let r = Reference::from_json(&js).expect("the digest survives");
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), memory())
        .await
        .unwrap();
    let arr = reopened.get("/surface/temperature").await.unwrap();
    assert_eq!(reopened.traffic().requests, 0);
    assert_eq!(arr.shape(), [12, 24, 36]);
    // Typed as written: h5py's float attribute 2.0 is still a float.
    let surface = reopened
        .nodes()
        .iter()
        .find(|n| n.path == "/surface")
        .unwrap();
    let level = surface
        .attrs
        .0
        .iter()
        .find(|(k, _)| k == "level_m")
        .unwrap();
    assert_eq!(level.1, chunkwise::attrs::AttrValue::Float(2.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_query_user_info_or_header_is_written() {
    let server = serve_dir(fixtures()).await;
    let signed = format!(
        "{}?token=s3cr3tq&sig=abcdef",
        server.url("sample/sample.h5")
    );
    let headers = vec![("Authorization".to_string(), "Bearer h34d3r".to_string())];
    let store = store_at(&signed, headers.clone()).await;
    let r = Reference::export(&store, false).await.unwrap();
    let text = String::from_utf8(r.to_json()).unwrap();
    for secret in ["s3cr3tq", "abcdef", "token", "h34d3r", "Bearer", "?"] {
        assert!(!text.contains(secret), "{secret} in the document");
    }
    assert_eq!(r.url, server.url("sample/sample.h5"));
    // Reopened at the signed URL with its headers: still no request until a read, which
    // sends both.
    let reopened = open_reference(&r, Some(&signed), headers, OpenOptions::default(), memory())
        .await
        .unwrap();
    let arr = reopened.get("/surface/precip").await.unwrap();
    assert_eq!(reopened.traffic().requests, 0);
    let seen = server.requests().len();
    arr.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    let log = server.requests();
    assert!(log.len() > seen);
    assert!(log[seen..]
        .iter()
        .all(|q| q.query.as_deref() == Some("token=s3cr3tq&sig=abcdef")));
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().unwrap().is_dir() {
                out.extend(files_under(&e.path()));
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immutable_reference_keeps_nothing_on_disk_and_cannot_refresh() {
    let server = serve_dir(fixtures()).await;
    let store = store_at(&server.url("sample/sample.h5"), vec![]).await;
    let r = exported(&store).await;
    let tmp = tempfile::tempdir().unwrap();
    let disk = CacheCoordinator::disk(tmp.path(), Some(1 << 30)).unwrap();
    let layout = files_under(tmp.path());
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), disk.clone())
        .await
        .unwrap();
    let arr = reopened.get("/surface/temperature").await.unwrap();
    arr.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(reopened.traffic().requests, arr.traffic().requests);
    assert!(
        !reopened.coordinator().same_as(&disk),
        "a memory coordinator of its own"
    );
    assert_eq!(
        files_under(tmp.path()),
        layout,
        "nothing written in the cache directory"
    );
    for ns in ["payload", "discovery", "sources"] {
        assert_eq!(
            files_under(&tmp.path().join(ns)),
            Vec::<PathBuf>::new(),
            "{ns}"
        );
    }
    let e = reopened.refresh().await.unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(e.to_string().contains("cannot refresh"), "{e}");
    // The store still reads after the refused refresh.
    let again = reopened.get("/surface/temperature").await.unwrap();
    again
        .read(&Selection::parse("0").unwrap(), &ReadOptions::default())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutable_reference_writes_records_to_the_disk_cache_not_to_the_file() {
    let server = serve_dir(fixtures()).await;
    let url = server.url("sample/sample.h5");
    let store = store_at(&url, vec![]).await;
    let mut r = Reference::export(&store, false).await.unwrap();
    r.mutable = true;
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("ref.json");
    std::fs::write(&file, r.to_json()).unwrap();
    let written = std::fs::read(&file).unwrap();
    let r = Reference::from_json(&written).unwrap();
    assert!(r.mutable);
    let dir = tmp.path().join("cache");
    let disk = CacheCoordinator::disk(&dir, Some(1 << 30)).unwrap();
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), disk.clone())
        .await
        .unwrap();
    assert!(reopened.coordinator().same_as(&disk));
    let arr = reopened.get("/surface/precip").await.unwrap();
    arr.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(
        files_under(&dir.join("discovery")).len() >= 2 * r.records.len(),
        "every record and its marker on disk: {:?}",
        files_under(&dir.join("discovery"))
    );
    assert!(
        !files_under(&dir.join("payload")).is_empty(),
        "payload cached"
    );
    // Another process on the same directory opens the URL itself with no request.
    let next = CacheCoordinator::disk(&dir, Some(1 << 30)).unwrap();
    let plain = chunkwise::open::open_store(&url, vec![], OpenOptions::default(), next)
        .await
        .unwrap();
    plain.get("/surface/temperature").await.unwrap();
    assert_eq!(plain.traffic().requests, 0);
    // A mutable reference's store refreshes.
    reopened.refresh().await.expect("refresh");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        written,
        "the reference file is unchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_rewritten_since_the_export_fails_the_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("sample.h5");
    std::fs::copy(fixtures().join("sample/sample.h5"), &path).unwrap();
    let server = serve_dir(tmp.path().to_path_buf()).await;
    let store = store_at(&server.url("sample.h5"), vec![]).await;
    let r = exported(&store).await;
    drop(store);
    // Rewritten in place: 16 more bytes at the end (a new size and validators).
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0u8; 16]);
    std::fs::write(&path, &bytes).unwrap();
    let reopened = open_reference(&r, None, vec![], OpenOptions::default(), memory())
        .await
        .unwrap();
    let arr = reopened.get("/surface/precip").await.unwrap();
    assert_eq!(reopened.traffic().requests, 0);
    let e = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "SOURCE_CHANGED", "{e}");
}

/// `chunkwise ARGS...`: status, stdout, stderr.
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_reference_then_read_info_and_ls_from_it() {
    let server = serve_dir(fixtures()).await;
    let url = server.url("sample/sample.h5");
    let tmp = tempfile::tempdir().unwrap();
    // Not named .json: detected by content.
    let doc = tmp.path().join("sample.ref");
    let doc_s = doc.to_str().unwrap();
    let (ok, out, err) = cli(&[
        "reference",
        &url,
        "--out",
        doc_s,
        "--header",
        "X-Token: h34d3r",
    ]);
    assert!(ok, "{err}");
    let line: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["kind"], "hdf5");
    assert!(line["records"].as_u64().unwrap() >= 9, "{line}");
    let text = std::fs::read_to_string(&doc).unwrap();
    assert!(!text.contains("h34d3r") && !text.contains("X-Token"));
    let written = std::fs::read(&doc).unwrap();

    let seen = server.requests().len();
    let (ok, out, err) = cli(&["info", doc_s, "--path", "/surface/precip", "--json"]);
    assert!(ok, "{err}");
    let info: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(info["requests"], 0, "{info}");
    assert_eq!(info["shape"], serde_json::json!([24, 36]));
    let (ok, out, err) = cli(&["ls", doc_s]);
    assert!(ok, "{err}");
    assert!(out.contains("precip") && out.contains("station_a"), "{out}");
    assert_eq!(server.requests().len(), seen, "info and ls made no request");

    // An immutable reference with --cache disk writes nothing into the directory.
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let npy_out = tmp.path().join("precip.npy");
    let (ok, out, err) = cli(&[
        "read",
        doc_s,
        "--path",
        "/surface/precip",
        "--out",
        npy_out.to_str().unwrap(),
        "--cache",
        "disk",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let line: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(line["requests"].as_u64().unwrap() >= 1);
    let got = npy(npy_out);
    let want = npy(fixtures().join("sample/sample_h5_surface_precip.npy"));
    assert_eq!((got.shape, got.data), (want.shape, want.data));
    assert!(files_under(&cache).is_empty(), "{:?}", files_under(&cache));
    assert!(std::fs::read_dir(&cache).unwrap().next().is_none());

    // A tampered reference fails with a typed error.
    let bad = doc.with_extension("bad");
    std::fs::write(&bad, text.replacen("\"len\": ", "\"len\": 1", 1)).unwrap();
    let (ok, _, err) = cli(&["ls", bad.to_str().unwrap()]);
    assert!(!ok);
    let e: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "{err}");
    assert_eq!(std::fs::read(&doc).unwrap(), written);
}
