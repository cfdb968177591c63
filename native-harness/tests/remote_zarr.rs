//! Zarr v2 and v3 arrays written by zarr-python and numcodecs (tests/fixtures/gen_zarr.py)
//! read through `RemoteArray` (the `chunkwise read` code path) over the real range server on
//! loopback, compared with the arrays that were written (their `.npy`); request counts of
//! cold and warm opens and reads; malformed stores give typed errors naming the key.

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::formats::zarr::{list_nodes, ZarrStore};
use chunkwise::io::Traffic;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::{open_array, zarr_opener, zarr_store};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod common;
use common::{reference, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("zarr/manifest.json")).expect("manifest"))
        .expect("manifest json")
}

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

async fn server() -> native_harness::serve::ServerHandle {
    common::fault_server(&fixtures(), &[], false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_array_reads_over_http() {
    let server = server().await;
    let mut checked = 0;
    for a in manifest()["arrays"].as_array().expect("arrays") {
        let store = a["store"].as_str().unwrap();
        let path = a["path"].as_str().unwrap();
        let what = format!("{store}:{path}");
        let url = server.url(&format!("zarr/{store}"));
        if let Some(code) = a.get("unreadable") {
            let e = open_array(&url, vec![], with_path(path)).await.unwrap_err();
            assert_eq!(e.code(), code.as_str().unwrap(), "{what}: {e}");
            // The error names the metadata key, and the filter or codec when the manifest
            // says which.
            let text = e.to_string();
            assert!(
                text.contains("zarr.json") || text.contains(".zarray"),
                "{what}: {e}"
            );
            if let Some(name) = a.get("names").and_then(|n| n.as_str()) {
                assert!(text.contains(name), "{what}: {e}");
            }
            continue;
        }
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{what}: open: {e}"));
        let npy = read_npy(
            &std::fs::read(fixtures().join("zarr").join(a["npy"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{what}");
        assert_eq!(arr.dtype().to_string(), npy.descr, "{what}");
        assert!(arr.info().format.starts_with("zarr"), "{what}");
        let whole = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: read: {e}"));
        assert_eq!(whole.data, npy.data, "{what}: whole array");
        if !npy.shape.is_empty() {
            for sel in SELECTIONS {
                let s = Selection::parse(sel).unwrap();
                let Ok(dims) = s.resolve(&npy.shape) else {
                    continue; // more indices than dimensions
                };
                let got = arr.read(&s, &ReadOptions::default()).await.unwrap();
                let want = reference(&npy.data, &npy.shape, arr.dtype().itemsize, &dims);
                assert_eq!(got.data, want, "{what}: {sel}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 43, "only {checked} arrays checked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_cold_warm_and_reopened() {
    let server = server().await;
    let url = server.url("zarr/v3.zarr");
    // v3: one metadata round trip (the array's own zarr.json, with .zarray and .zattrs asked
    // at once in case it is v2, both 404; no parent listing).
    let arr = open_array(&url, vec![], with_path("/temperature"))
        .await
        .unwrap();
    assert_eq!((arr.traffic().requests, arr.traffic().round_trips), (3, 1));
    // 13x11 in 5x4 chunks: 9 chunk objects, one request each.
    arr.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(arr.traffic().requests, 3 + 9);
    // Warm: every chunk comes from the payload cache (converted to Blosc2).
    let warm = arr
        .read(
            &Selection::parse("1:12, 2:9").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(arr.traffic().requests, 12, "warm read made requests");
    assert_eq!(warm.shape, vec![11, 7]);
    assert_eq!(arr.cache().stats().entries, 9);

    // v2: zarr.json is missing (404, remembered), then .zarray and .zattrs together.
    let v2 = open_array(&server.url("zarr/v2.zarr"), vec![], with_path("zlib"))
        .await
        .unwrap();
    assert_eq!(v2.traffic().requests, 3);

    // Reopen from remembered metadata: no metadata request; cached reads none at all.
    let coordinator = chunkwise::cache::CacheCoordinator::memory(1 << 28);
    let key = coordinator.source_key(&url, &[]);
    let traffic = Traffic::new();
    let store = zarr_store(&url, vec![], &traffic).unwrap();
    let p = RemoteArray::open_zarr_with_cache(
        store.clone(),
        "partial",
        traffic.clone(),
        key.clone(),
        OpenOptions::default(),
        coordinator.clone(),
    )
    .await
    .unwrap();
    p.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    // 3 metadata (zarr.json; .zarray and .zattrs, 404) + 9 chunk objects, of which 7 are
    // missing (404) and read as fill values.
    assert_eq!(traffic.snapshot().requests, 12);
    p.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(
        traffic.snapshot().requests,
        12,
        "missing chunks are cached too"
    );
    let saved = serde_json::to_string(&store.discovery()).unwrap();
    assert!(saved.contains("\"version\":1"), "{saved}");
    let traffic2 = Traffic::new();
    let restored = Arc::new(
        ZarrStore::with_discovery(
            &url,
            zarr_opener(&url, vec![], &traffic2).unwrap(),
            serde_json::from_str(&saved).unwrap(),
        )
        .unwrap(),
    );
    let again = RemoteArray::open_zarr_with_cache(
        restored,
        "/partial",
        traffic2.clone(),
        key.clone(),
        OpenOptions::default(),
        coordinator.clone(),
    )
    .await
    .unwrap();
    assert_eq!(traffic2.snapshot().requests, 0, "warm reopen made requests");
    assert_eq!(again.shape(), &[13, 11]);
    // Sharing the first handle's cache coordinator, the reopened array reads without a request.
    let values = again
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(
        traffic2.snapshot().requests,
        0,
        "warm read after reopen made requests"
    );
    let npy = read_npy(&std::fs::read(fixtures().join("zarr/v3_partial.npy")).unwrap()).unwrap();
    assert_eq!(values.data, npy.data);

    // A sharded read: per shard one index read (suffix) and one coalesced data read.
    let traffic = Traffic::new();
    let store = zarr_store(&url, vec![], &traffic).unwrap();
    let s = RemoteArray::open_zarr(
        store,
        "sharded_end",
        traffic.clone(),
        key.clone(),
        OpenOptions::default(),
    )
    .await
    .unwrap();
    s.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(traffic.snapshot().requests, 3 + 2 * 4);
    // Inner chunks of one shard only: the shard index is remembered, one data read.
    let before = traffic.snapshot().requests;
    let s2 = s;
    s2.cache().clear();
    s2.read(
        &Selection::parse("0:4, 0:3").unwrap(),
        &ReadOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(traffic.snapshot().requests - before, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_uses_consolidated_metadata() {
    let server = server().await;
    let traffic = Traffic::new();
    let store = zarr_store(&server.url("zarr/v3.zarr"), vec![], &traffic).unwrap();
    let nodes = list_nodes(&store).await.unwrap();
    assert_eq!(traffic.snapshot().requests, 2);
    let find = |p: &str| {
        nodes
            .iter()
            .find(|n| n.path == p)
            .unwrap_or_else(|| panic!("{p} in {nodes:?}"))
    };
    assert_eq!(find("/").kind, chunkwise::formats::NodeKind::Group);
    assert_eq!(find("/group").kind, chunkwise::formats::NodeKind::Group);
    assert_eq!(find("/group/nested").shape, Some(vec![6, 5]));
    assert!(find("/strings")
        .error
        .as_deref()
        .unwrap()
        .contains("string"));
    let arrays = manifest()["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["store"] == "v3.zarr")
        .count();
    assert_eq!(
        nodes
            .iter()
            .filter(|n| n.kind == chunkwise::formats::NodeKind::Array)
            .count(),
        arrays
    );
    // Arrays then open from the consolidated metadata without a request.
    RemoteArray::open_zarr(
        store.clone(),
        "/group/nested",
        traffic.clone(),
        chunkwise::cache::CacheCoordinator::none().source_key(store.base(), &[]),
        OpenOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(traffic.snapshot().requests, 2);

    let traffic = Traffic::new();
    let store = zarr_store(&server.url("zarr/v2.zarr"), vec![], &traffic).unwrap();
    let nodes = list_nodes(&store).await.unwrap();
    assert_eq!(
        traffic.snapshot().requests,
        2,
        "zarr.json (404) then .zmetadata"
    );
    assert!(nodes
        .iter()
        .any(|n| n.path == "/f_order" && n.shape == Some(vec![11, 7, 5])));
}

/// Copies a fixture store to a temporary directory for damaging.
fn copy_store(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let t = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &t);
            } else {
                std::fs::copy(e.path(), t).unwrap();
            }
        }
    }
    copy(&fixtures().join("zarr").join(name), &dir.path().join(name));
    dir
}

/// The decode error of a cut-short chunk of `array` keeps its codec's variant behind
/// `source()`: the Blosc2 codec's own error for `blosc`, a checksum mismatch for `crc32c`.
fn assert_decode_cause(array: &str, e: &chunkwise::Error) {
    use chunkwise::formats::ChunkDecodeError;
    let mut chain: Vec<&(dyn std::error::Error + 'static)> = vec![e];
    while let Some(s) = chain.last().and_then(|e| e.source()) {
        chain.push(s);
    }
    let cause = chain
        .iter()
        .find_map(|e| e.downcast_ref::<ChunkDecodeError>())
        .unwrap_or_else(|| panic!("{array}: no ChunkDecodeError behind {e:?}"));
    let codec = chain
        .iter()
        .find_map(|e| e.downcast_ref::<chunkwise::codec::blosc2::CodecError>());
    match array {
        "blosc" => {
            assert!(
                matches!(cause, ChunkDecodeError::ZarrBlosc(_)),
                "{array}: {cause:?}"
            );
            assert!(codec.is_some(), "{array}: {e:?}");
        }
        "crc32c" => assert!(
            matches!(
                cause,
                ChunkDecodeError::Checksum {
                    codec: "crc32c",
                    ..
                }
            ),
            "{array}: {cause:?}"
        ),
        _ => assert!(codec.is_none(), "{array}: {e:?}"),
    }
}

async fn open_local(root: &Path, path: &str) -> Result<RemoteArray, chunkwise::Error> {
    open_array(root.to_str().unwrap(), vec![], with_path(path)).await
}

async fn read_all(root: &Path, path: &str) -> Result<(), chunkwise::Error> {
    let a = open_local(root, path).await?;
    a.read(&Selection::all(), &ReadOptions::default())
        .await
        .map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_stores_give_typed_errors_naming_the_key() {
    let dir = copy_store("v3.zarr");
    let root = dir.path().join("v3.zarr");
    // Malformed JSON metadata.
    std::fs::write(root.join("gzip/zarr.json"), b"{\"zarr_format\": 3, ").unwrap();
    let e = open_local(&root, "gzip").await.unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(e.to_string().contains("gzip/zarr.json"), "{e}");
    // An unknown codec.
    let meta = std::fs::read_to_string(root.join("temperature/zarr.json")).unwrap();
    std::fs::write(
        root.join("temperature/zarr.json"),
        meta.replace("\"zstd\"", "\"snappy\""),
    )
    .unwrap();
    let e = open_local(&root, "temperature").await.unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(
        e.to_string().contains("snappy") && e.to_string().contains("temperature/zarr.json"),
        "{e}"
    );
    // A shard index pointing outside its shard (CRC recomputed so only the offset is wrong).
    let shard = root.join("sharded_end/c/0/0");
    let mut b = std::fs::read(&shard).unwrap();
    let n = b.len();
    let index_start = n - (16 * 4 + 4);
    b[index_start..index_start + 8].copy_from_slice(&(n as u64 * 2).to_le_bytes());
    let crc = chunkwise::formats::zarr::codecs::crc32c(&b[index_start..n - 4]);
    b[n - 4..].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&shard, &b).unwrap();
    let e = read_all(&root, "sharded_end").await.unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(
        e.to_string().contains("sharded_end/c/0/0") && e.to_string().contains("outside"),
        "{e}"
    );
    // A shard index whose CRC fails.
    let shard = root.join("sharded_edge/c/0/0");
    let mut b = std::fs::read(&shard).unwrap();
    let n = b.len();
    b[n - 10] ^= 0xff;
    std::fs::write(&shard, &b).unwrap();
    let e = read_all(&root, "sharded_edge").await.unwrap_err();
    assert!(e.to_string().contains("crc32c"), "{e}");
    // A shard shorter than its index.
    std::fs::write(root.join("sharded_start/c/0/0"), b"short").unwrap();
    let e = read_all(&root, "sharded_start").await.unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(e.to_string().contains("sharded_start/c/0/0"), "{e}");
    // Chunks shorter than their codec says, for each codec.
    for (array, key) in [
        ("temperature", "c/0/0"),
        ("gzip", "c/0/0"),
        ("blosc", "c/0/0"),
        ("crc32c", "c/0/0"),
        ("raw", "c/0/0"),
    ] {
        if array == "gzip" || array == "temperature" {
            continue; // metadata damaged above
        }
        let p = root.join(array).join(key);
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() / 2]).unwrap();
        let e = read_all(&root, array).await.unwrap_err();
        assert_eq!(e.code(), "DECODE", "{array}: {e}");
        assert!(
            e.to_string().contains(&format!("{array}/{key}")),
            "{array}: {e}"
        );
        assert_decode_cause(array, &e);
    }
    let dir2 = copy_store("v2.zarr");
    let root2 = dir2.path().join("v2.zarr");
    for (array, key) in [
        ("blosc", "0.0"),
        ("zlib", "0.0"),
        ("gzip", "0.0"),
        ("zstd", "0.0"),
        ("lz4", "0.0"),
    ] {
        let p = root2.join(array).join(key);
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() / 2]).unwrap();
        // The consolidated metadata is not read when the array is opened directly.
        let e = read_all(&root2, array).await.unwrap_err();
        assert_eq!(e.code(), "DECODE", "{array}: {e}");
        assert!(
            e.to_string().contains(&format!("{array}/{key}")),
            "{array}: {e}"
        );
        assert_decode_cause(array, &e);
    }
    // A path with no array.
    let e = open_local(&root2, "nothing").await.unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_reads_in_flight_are_made_once() {
    // Latency keeps each request in flight long enough for the second read to find it.
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        latency_ms: 30,
        ..Default::default()
    })
    .await
    .expect("server starts");
    let url = server.url("zarr/v3.zarr");
    for path in ["temperature", "sharded_end"] {
        let arr = open_array(&url, vec![], with_path(path)).await.unwrap();
        let opened = arr.traffic().requests;
        let all = Selection::all();
        let (o1, o2) = (ReadOptions::default(), ReadOptions::default());
        let (a, b) = futures::join!(arr.read(&all, &o1), arr.read(&all, &o2));
        assert_eq!(a.unwrap(), b.unwrap());
        // One read alone: 9 chunk objects, or 4 shards x (index + data).
        let one = if path == "temperature" { 9 } else { 8 };
        assert_eq!(arr.traffic().requests - opened, one, "{path}");
    }
}

/// zarr-python's (2, 2^40) float32 array with no chunk written (tests/fixtures/gen_long_axis.py):
/// a selection empty on its first axis reads nothing, at once, without walking the 2^40
/// positions of the other (the planner once listed them one by one and ran out of memory);
/// a window of the long axis reads the fill value written, 1.5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_selection_beside_a_long_axis_reads_nothing() {
    let server = server().await;
    let arr = open_array(
        &server.url("zarr/long_axis.zarr"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .expect("open");
    assert_eq!(arr.shape(), &[2, 1u64 << 40]);
    let empty = arr
        .read(
            &Selection::parse("0:0, :").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .expect("empty read");
    assert_eq!(empty.shape, vec![0, 1u64 << 40]);
    assert!(empty.data.is_empty());
    let window = arr
        .read(
            &Selection::parse("1, 1099511627770:").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .expect("window read");
    assert_eq!(window.shape, vec![6]);
    assert_eq!(window.data, 1.5f32.to_le_bytes().repeat(6));
}

/// zarr-python's (2^53, 2^53) int16 array with chunks (5, 4) (tests/fixtures/gen_long_axis.py):
/// about 4e30 chunks, more than the u64 the planner numbers them with. It opens (shape, dtype);
/// a read is refused as UNSUPPORTED saying so (it said chunk 0 was "outside the chunk grid");
/// its info and `chunkwise info` give no chunk or byte count (they said u64::MAX chunks, and
/// the byte count overflowed: a panic in debug builds, 0 in release ones).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grid_of_more_than_2_pow_64_chunks_is_refused_as_unsupported() {
    let server = server().await;
    let arr = open_array(
        &server.url("zarr/huge_grid.zarr"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .expect("open");
    common::assert_uncountable_grid(&arr, "0, 0").await;
    common::assert_cli_info_of_uncountable_grid(&server.url("zarr/huge_grid.zarr"), &[]).await;
}

/// zarr-python's (2^40, 2^40, 0) int16 array in chunks of (1, 1, 1)
/// (tests/fixtures/gen_long_axis.py): 0 chunks and 0 bytes, as zarr-python counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_axis_beside_huge_ones_has_no_chunk_and_no_byte() {
    let server = server().await;
    let arr = open_array(
        &server.url("zarr/empty_beside_huge.zarr"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .expect("open");
    common::assert_empty_beside_huge(&arr).await;
}

/// `chunkwise info` without --path on zarr-python's root array of 2 GiB chunks
/// (tests/fixtures/gen_long_axis.py), past the 1 GiB chunks chunkwise decodes: the open's
/// UNSUPPORTED error, exit 1, as text and --json (it listed the store's one node, with
/// `"error": null`, and exited 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_info_of_a_root_array_that_cannot_open_is_its_error() {
    let server = server().await;
    let url = server.url("zarr/chunk_2gib.zarr");
    for json in [false, true] {
        let mut args = vec!["info".to_string(), url.clone()];
        if json {
            args.push("--json".into());
        }
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
                .args(&args)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "json {json}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "json {json}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let line: serde_json::Value =
            serde_json::from_str(stderr.lines().last().unwrap_or("")).unwrap();
        assert_eq!(line["error"]["code"], "UNSUPPORTED", "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains("exceed 1073741824 bytes"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_geometry_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("big.zarr");
    std::fs::create_dir_all(&root).unwrap();
    let doc = |chunks: &str, codecs: &str| {
        format!(
            r#"{{"zarr_format":3,"node_type":"array","shape":[1000000000000,1000000000000],
            "data_type":"float64","chunk_grid":{{"name":"regular","configuration":
            {{"chunk_shape":{chunks}}}}},"codecs":{codecs},"fill_value":0}}"#
        )
    };
    std::fs::write(
        root.join("zarr.json"),
        doc("[100000000,100000000]", r#"[{"name":"bytes"}]"#),
    )
    .unwrap();
    let e = open_array(root.to_str().unwrap(), vec![], OpenOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    std::fs::write(
        root.join("zarr.json"),
        doc(
            "[1000000000,1000000000]",
            r#"[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,1],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes"},{"name":"crc32c"}]}}]"#,
        ),
    )
    .unwrap();
    let e = open_array(root.to_str().unwrap(), vec![], OpenOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("shard index"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_urls_groups_and_missing_paths() {
    let server = server().await;
    // The URL of an array directory (served as an HTML listing) opens the array.
    for url in [
        "zarr/v2.zarr/zlib",
        "zarr/v3.zarr/sharded_end/",
        "zarr/v3.zarr/group/nested",
    ] {
        let arr = open_array(&server.url(url), vec![], OpenOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(arr.info().format.starts_with("zarr"), "{url}");
    }
    // A group is not an array: an argument error naming it.
    let e = open_array(&server.url("zarr/v3.zarr"), vec![], with_path("/group"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(
        e.to_string().contains("v3.zarr/group") && e.to_string().contains("group"),
        "{e}"
    );
    // Nothing there at all.
    let e = open_array(&server.url("zarr/nothing"), vec![], OpenOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    // A file of another kind keeps its own error.
    let e = open_array(
        &server.url("zarr/manifest.json"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "UNRECOGNISED_FORMAT", "{e}");
}

/// `RemoteStore` over a Zarr store: the listing comes from the consolidated metadata, every
/// listed array reads equal to the array written, and a reopen in the same cache coordinator
/// (listing, open, read) makes no request at all.
#[tokio::test]
async fn remote_store_lists_reads_and_reopens_warm() {
    let server = server().await;
    let url = server.url("zarr/v3.zarr");
    let coordinator =
        chunkwise::cache::CacheCoordinator::memory(chunkwise::cache::DEFAULT_MAX_CACHE_BYTES);
    let store = native_harness::source::open_store_cached(&url, vec![], coordinator.clone(), None)
        .await
        .unwrap();
    assert_eq!(
        store.traffic().requests,
        2,
        "one consolidated zarr.json (and .zmetadata, 404, at once)"
    );
    let m = manifest();
    let mut read = 0;
    for a in m["arrays"].as_array().unwrap() {
        if a["store"] != "v3.zarr" || a["unreadable"].is_string() {
            continue;
        }
        let path = a["path"].as_str().unwrap();
        let node = store
            .nodes()
            .iter()
            .find(|n| n.path == format!("/{}", path.trim_start_matches('/')))
            .unwrap_or_else(|| panic!("{path} not listed"));
        let npy = read_npy(
            &std::fs::read(fixtures().join("zarr").join(a["npy"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(node.shape.as_deref(), Some(&npy.shape[..]), "{path}");
        let arr = store.get(path).await.unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(
            got.data == npy.data,
            "{path} differs from the array written"
        );
        read += 1;
    }
    assert!(read >= 10, "only {read} arrays read");
    let again = native_harness::source::open_store_cached(&url, vec![], coordinator, None)
        .await
        .unwrap();
    assert_eq!(again.nodes(), store.nodes());
    let arr = again.get("/temperature").await.unwrap();
    arr.read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(again.traffic().requests, 0, "warm reopen made requests");
    server.shutdown().await;
}

/// A node path stays inside its store: `..` cannot reach a sibling store on the server.
#[tokio::test]
async fn node_paths_cannot_leave_the_store() {
    let server = server().await;
    let url = server.url("zarr/v3.zarr");
    for path in ["../v2.zarr/gzip", "/group/../temperature", "./temperature"] {
        let e = open_array(&url, vec![], with_path(path)).await.unwrap_err();
        assert_eq!(e.code(), "NOT_FOUND", "{path}: {e}");
    }
    server.shutdown().await;
}

/// The `.npy` written next to the fixture for `name` (file name in the manifest).
fn fixture_npy(name: &str) -> chunkwise::npy::Npy {
    read_npy(&std::fs::read(fixtures().join("zarr").join(name)).unwrap()).unwrap()
}

/// A server of `root` answering `status` to the paths ending in each suffix.
async fn server_of(
    root: &Path,
    fault_status: Vec<(String, u16)>,
) -> native_harness::serve::ServerHandle {
    let specs: Vec<String> = fault_status
        .iter()
        .map(|(suffix, code)| format!("status={suffix}:{code}"))
        .collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    common::fault_server(root, &specs, false).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absent_chunks_read_as_fill_and_are_counted() {
    // Chunk objects the generator never wrote (gen_zarr.py): v3 /partial writes a[5:10, 4:10]
    // of 13x11 in 5x4 chunks (chunks (1,1) and (1,2): 7 of 9 absent); v2 /partial writes
    // a[5:11, 2:7] in 5x4 chunks (4 of 9 written, 5 absent); v3 /sharded_partial writes
    // a[0:4, 3:6] of 16x12 in 8x6 shards of 4x3 inner chunks (3 of 4 shards absent, 4 inner
    // chunks each: 12; the 3 inner chunks shard (0,0)'s index marks empty are not absent).
    let server = server().await;
    for (store, path, absent) in [
        ("v3.zarr", "partial", 7u64),
        ("v2.zarr", "partial", 5),
        ("v3.zarr", "sharded_partial", 12),
        ("v3.zarr", "temperature", 0),
        ("v3.zarr", "sharded_end", 0),
    ] {
        let arr = open_array(
            &server.url(&format!("zarr/{store}")),
            vec![],
            with_path(path),
        )
        .await
        .unwrap();
        let cold = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(cold.missing_chunks, absent, "{store}:{path} cold");
        let requests = arr.traffic().requests;
        let warm = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(
            arr.traffic().requests,
            requests,
            "{store}:{path}: warm read made requests"
        );
        assert_eq!(warm.missing_chunks, absent, "{store}:{path} warm");
        assert_eq!(warm.data, cold.data);
    }

    // One chunk object deleted from a copy of the store: 404, read as the fill value (0.0).
    let dir = copy_store("v3.zarr");
    std::fs::remove_file(dir.path().join("v3.zarr/temperature/c/1/1")).unwrap();
    let npy = fixture_npy("v3_temperature.npy");
    // Elements of chunk (1, 1): rows 5..10, columns 4..8 of the 13x11 float64 array.
    let mut want = npy.data.clone();
    for r in 5..10 {
        want[(r * 11 + 4) * 8..(r * 11 + 8) * 8].fill(0);
    }
    let local = server_of(dir.path(), vec![]).await;
    let url = local.url("v3.zarr");
    let arr = open_array(&url, vec![], with_path("temperature"))
        .await
        .unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.missing_chunks, 1);
    assert_eq!(got.data, want);
    let row = arr
        .read(&Selection::parse("7").unwrap(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(
        row.missing_chunks, 1,
        "the warm row touches the absent chunk once"
    );
    assert_eq!(row.data, want[7 * 11 * 8..8 * 11 * 8]);
    // Every chunk absent (a store behind a wrong prefix keeps its metadata but no chunks):
    // the read succeeds and says so.
    for i in 0..3 {
        std::fs::remove_dir_all(dir.path().join(format!("v3.zarr/temperature/c/{i}"))).unwrap();
    }
    let arr = open_array(&url, vec![], with_path("temperature"))
        .await
        .unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.missing_chunks, 9);
    assert!(got.data.iter().all(|&b| b == 0));
    // The CLI prints the count, also when a second run reads everything from its disk cache.
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    for (run, requests) in [("cold", 12), ("warm from disk", 0)] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
            .args(["read", &url, "--path", "temperature"])
            .args(["--cache", "disk", "--cache-dir", cache_dir])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value = serde_json::from_slice(
            out.stdout
                .trim_ascii_end()
                .rsplit(|&b| b == b'\n')
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line["missing_chunks"], 9, "{run}: {line}");
        assert_eq!(line["requests"], requests, "{run}: {line}");
        assert_eq!(line["shape"], serde_json::json!([13, 11]), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_404_means_absent_other_statuses_fail_the_read() {
    // 410 Gone, 401, 403 and 5xx for one chunk object are errors, never fill values.
    for code in [410u16, 401, 403, 500, 503] {
        let server = server_of(&fixtures(), vec![("/temperature/c/1/1".into(), code)]).await;
        let url = server.url("zarr/v3.zarr");
        let arr = open_array(&url, vec![], with_path("temperature"))
            .await
            .unwrap();
        let e = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .expect_err(&format!("HTTP {code} for a chunk read as data"));
        assert_eq!(e.code(), "HTTP_STATUS", "{code}: {e}");
        assert!(
            e.to_string().contains(&format!("HTTP {code}")),
            "{code}: {e}"
        );
        assert!(e.to_string().contains("temperature/c/1/1"), "{code}: {e}");
        // Within a shard: the shard object answered with the status.
        let server = server_of(&fixtures(), vec![("/sharded_end/c/1/0".into(), code)]).await;
        let arr = open_array(
            &server.url("zarr/v3.zarr"),
            vec![],
            with_path("sharded_end"),
        )
        .await
        .unwrap();
        let e = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .expect_err(&format!("HTTP {code} for a shard read as data"));
        assert_eq!(e.code(), "HTTP_STATUS", "shard {code}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_url_query_is_kept_on_every_key() {
    let server = server().await;
    for (store, path, npy) in [
        ("v3.zarr", "/temperature", "v3_temperature.npy"),
        ("v3.zarr", "/sharded_end", "v3_sharded_end.npy"),
        ("v2.zarr", "/zstd", "v2_zstd.npy"),
    ] {
        let before = server.requests().len();
        let url = format!("{}?token=abc", server.url(&format!("zarr/{store}")));
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{store}{path}: {e}"));
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.data, fixture_npy(npy).data, "{store}{path}");
        let seen = &server.requests()[before..];
        assert!(!seen.is_empty());
        for r in seen {
            // The URL itself is probed once as a single-object format before Zarr (the
            // server redirects the directory to its `/` form).
            assert!(
                r.path.trim_end_matches('/') == format!("/zarr/{store}")
                    || r.path.starts_with(&format!("/zarr/{store}{path}/")),
                "{store}{path}: key outside the path: {r:?}"
            );
            assert_eq!(r.query.as_deref(), Some("token=abc"), "{r:?}");
        }
        // A trailing `/` before the query is the same store.
        let url = format!("{}/?token=abc", server.url(&format!("zarr/{store}")));
        let again = open_array(&url, vec![], with_path(path)).await.unwrap();
        assert_eq!(again.shape(), arr.shape());
    }
    // The Zarr reader's errors name keys without the query (it may hold a credential).
    let url = format!("{}?token=secret", server.url("zarr/v3.zarr"));
    let store = zarr_store(&url, vec![], &Traffic::new()).unwrap();
    let e = chunkwise::formats::zarr::ZarrArray::open(store, "nothing")
        .await
        .unwrap_err();
    assert!(e.to_string().contains("v3.zarr/nothing"), "{e}");
    assert!(!e.to_string().contains("secret"), "{e}");
}

/// A shard whose every answer carries a new `ETag` (the object changing between any two
/// requests): its index and its inner chunks would come from two versions, so the read fails
/// with SOURCE_CHANGED instead of decoding inner chunks at offsets from another version.
/// Unsharded chunks, each read once, still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_index_and_its_chunks_come_from_one_version() {
    let server = common::fault_server(&fixtures(), &["etag-per-request"], false).await;
    for name in ["sharded_end", "sharded_start"] {
        let arr = open_array(&server.url("zarr/v3.zarr"), vec![], with_path(name))
            .await
            .unwrap();
        let e = arr
            .read(
                &Selection::parse("0:4, 0:3").unwrap(),
                &ReadOptions::default(),
            )
            .await
            .expect_err("a shard's index and data from two versions");
        assert_eq!(e.code(), "SOURCE_CHANGED", "{name}: {e}");
        assert!(e.to_string().contains(&format!("{name}/c/0/0")), "{e}");
    }
    let arr = open_array(
        &server.url("zarr/v3.zarr"),
        vec![],
        with_path("temperature"),
    )
    .await
    .unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.data, fixture_npy("v3_temperature.npy").data);
    server.shutdown().await;
}

/// Node names holding `%`, a space, `#` or `?` (zarr-python writes them as they are): over
/// HTTP their keys are percent-encoded, so `t%41` reads its own values, not those of `tA`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_names_with_reserved_characters_read_their_own_values() {
    let dir = tempfile::tempdir().unwrap();
    // zarr 3.1.6 (scripts/requirements.txt); the values are given here, so the test knows
    // them without reading anything back.
    let script = r#"
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1] + "/names.zarr", mode="w", zarr_format=3)
g.create_array("t%41", data=np.arange(5, dtype="<i4"))
g.create_array("tA", data=np.arange(100, 105, dtype="<i4"))
g.create_array("s%20p", data=np.full(3, 7, dtype="<i4"))
g.create_array("s p", data=np.full(3, -1, dtype="<i4"))
g.create_array("h#sh", data=np.full(2, 9, dtype="<i4"))
g.create_array("q?x", data=np.full(2, 11, dtype="<i4"))
"#;
    let status = std::process::Command::new(native_harness::venv_python())
        .args(["-c", script, dir.path().to_str().unwrap()])
        .status()
        .expect("the Python venv (scripts/setup.sh python) writes the store");
    assert!(status.success());
    let server = common::fault_server(dir.path(), &[], false).await;
    let url = server.url("names.zarr");
    let le = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for (path, want) in [
        ("/t%41", le(&[0, 1, 2, 3, 4])),
        ("/tA", le(&[100, 101, 102, 103, 104])),
        ("/s%20p", le(&[7, 7, 7])),
        ("/s p", le(&[-1, -1, -1])),
        ("/h#sh", le(&[9, 9])),
        ("/q?x", le(&[11, 11])),
    ] {
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(got.data, want, "{path}");
    }
    server.shutdown().await;
}

/// A zstd codec after `sharding_indexed` (zarr-python adds one when given a sharding
/// serializer and its default compressors): the outer codec decodes a whole shard, whose size
/// the codec chain only bounds (or does not know), so it is read from the frame header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outer_compressor_after_sharding_reads() {
    let dir = tempfile::tempdir().unwrap();
    // zarr 3.1.6 (scripts/requirements.txt); the expected values are saved beside the store.
    let script = r#"
import sys, numpy as np, zarr
from zarr.codecs import ShardingCodec, BytesCodec, ZstdCodec, GzipCodec
out = sys.argv[1]
a = np.random.default_rng(99).standard_normal((64, 64))
np.save(out + "/a.npy", a)
g = zarr.open_group(out + "/outer.zarr", mode="w", zarr_format=3)
for name, inner, loc, outer in [
    ("zstd_start", [BytesCodec(), ZstdCodec()], "start", [ZstdCodec()]),
    ("zstd_end", [BytesCodec()], "end", [ZstdCodec()]),
    ("gzip_end", [BytesCodec()], "end", [GzipCodec()]),
]:
    z = g.create_array(name, shape=a.shape, dtype="f8", chunks=(32, 32), fill_value=0,
        serializer=ShardingCodec(chunk_shape=(8, 8), codecs=inner, index_location=loc),
        compressors=outer)
    z[:] = a
"#;
    let status = std::process::Command::new(native_harness::venv_python())
        .args(["-c", script, dir.path().to_str().unwrap()])
        .status()
        .expect("the Python venv (scripts/setup.sh python) writes the store");
    assert!(status.success());
    let want = read_npy(&std::fs::read(dir.path().join("a.npy")).unwrap()).unwrap();
    let server = common::fault_server(dir.path(), &[], false).await;
    let url = server.url("outer.zarr");
    for name in ["zstd_start", "zstd_end", "gzip_end"] {
        let arr = open_array(&url, vec![], with_path(name))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for sel in ["", "0:8, 0:8", "30:40, 5:60"] {
            let s = Selection::parse(sel).unwrap();
            let got = arr
                .read(&s, &ReadOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{name}[{sel}]: {e}"));
            let dims = s.resolve(&want.shape).unwrap();
            assert!(
                got.data == reference(&want.data, &want.shape, 8, &dims),
                "{name}[{sel}] differs from the array written"
            );
        }
    }
    server.shutdown().await;
}

/// A shard whose index was read and which then answers 404 for its inner chunks changed
/// between the two reads: `SOURCE_CHANGED`, not fill values beside nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_that_vanishes_after_its_index_is_source_changed() {
    // zarr.json (with .zarray and .zattrs, 404), then the shard index (a suffix read); from
    // the fifth GET on, the shard 404s.
    let fault: native_harness::serve::Fault =
        "after=4:status=sharded_end/c/0/0:404".parse().unwrap();
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        faults: vec![fault],
        ..Default::default()
    })
    .await
    .expect("server starts");
    let arr = open_array(
        &server.url("zarr/v3.zarr"),
        vec![],
        with_path("sharded_end"),
    )
    .await
    .unwrap();
    let e = arr
        .read(
            &Selection::parse("0:4, 0:3").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .expect_err("a shard present for its index and absent for its data");
    assert_eq!(e.code(), "SOURCE_CHANGED", "{e}");
    server.shutdown().await;
}

/// A memory cache keeps converted chunks uncompressed: each entry is a memcpyed Blosc2 chunk
/// of exactly the decoded chunk's bytes (plus its 32-byte header), so a cold read spends no
/// time compressing what it keeps and a warm read none decompressing it; the warm read gives
/// the values written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_cache_keeps_converted_chunks_uncompressed() {
    let server = server().await;
    let mut entries = 0;
    for (store, path) in [
        ("v3.zarr", "/temperature"),
        ("v3.zarr", "/raw"),
        ("v3.zarr", "/bools"),
        ("v2.zarr", "/zlib"),
        ("v2.zarr", "/delta"),
    ] {
        let arr = open_array(
            &server.url(&format!("zarr/{store}")),
            vec![],
            with_path(path),
        )
        .await
        .unwrap();
        assert_eq!(
            arr.coordinator().policy(),
            chunkwise::cache::CachePolicy::Memory
        );
        arr.read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        let chunk_bytes = arr.chunks().iter().product::<u64>() * arr.dtype().itemsize as u64;
        use chunkwise::cache::backend::CacheBackend;
        for e in arr.cache().list("").await.unwrap() {
            let b = arr.cache().get_now(&e.key).unwrap();
            let h = chunkwise::codec::blosc2::ChunkHeader::parse(&b).unwrap();
            assert!(
                h.memcpyed,
                "{store}:{path}: entry of {} bytes is compressed",
                b.len()
            );
            assert_eq!(b.len() as u64, chunk_bytes + 32, "{store}:{path}");
            entries += 1;
        }
        let npy = read_npy(
            &std::fs::read(fixtures().join("zarr").join(format!(
                "{}_{}.npy",
                store.trim_end_matches(".zarr"),
                path.trim_start_matches('/')
            )))
            .unwrap(),
        )
        .unwrap();
        let requests = arr.traffic().requests;
        let warm = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(
            arr.traffic().requests,
            requests,
            "{store}:{path}: warm read fetched"
        );
        assert_eq!(warm.data, npy.data, "{store}:{path}: warm values");
    }
    assert!(entries > 20, "{entries} entries checked");
}

/// A v2 array costs no round trip more than a v3 one: opening it by path asks `zarr.json`,
/// `.zarray` and `.zattrs` at once (one wave in the server's log, 40 ms added per request);
/// a v2 store's listing asks `zarr.json` and `.zmetadata` at once, and an array the
/// consolidated metadata described opens with no request (no `zarr.json` probe). Values are
/// the arrays written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_array_opens_in_one_round_trip() {
    let server = common::serve_dir_with_latency(fixtures(), 40).await;
    let url = server.url("zarr/v2.zarr");
    let npy = fixture_npy("v2_zlib.npy");

    let arr = open_array(&url, vec![], with_path("zlib")).await.unwrap();
    let opened = arr.traffic();
    let log = server.requests();
    assert_eq!(opened.round_trips, 1, "{opened:?}: {log:?}");
    assert_eq!(common::waves(&log), 1, "{log:?}");
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == npy.data, "zlib differs from the array written");

    let before = server.requests().len();
    let store = native_harness::source::open_store_cached(
        &url,
        vec![],
        chunkwise::cache::CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    let listed = store.traffic();
    let log = server.requests()[before..].to_vec();
    assert_eq!(listed.round_trips, 1, "{listed:?}: {log:?}");
    assert_eq!(common::waves(&log), 1, "{log:?}");
    let arr = store.get("/zlib").await.unwrap();
    let log = server.requests()[before..].to_vec();
    assert_eq!(
        store.traffic().requests,
        listed.requests,
        "get probed again: {log:?}"
    );
    assert!(
        !log.iter().any(|r| r.path.ends_with("zlib/zarr.json")),
        "{log:?}"
    );
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == npy.data, "zlib differs from the array written");
    server.shutdown().await;
}

/// Two arrays of one store opened separately under one DISK cache, reads interleaved (the
/// first array's last read, which learnt new chunk versions, writes the store's record
/// last): a fresh coordinator over the same cache directory reopens both and reads all of
/// both without a request, counted by the server's request log. v2 (`/blosc`, `/zstd`) and
/// v3 (`/blosc`, `/gzip`) stores of the committed fixtures; values are the written `.npy`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_of_one_store_share_its_disk_record() {
    let server = server().await;
    for (store, a, b) in [
        ("v2.zarr", "/blosc", "/zstd"),
        ("v3.zarr", "/blosc", "/gzip"),
    ] {
        let url = server.url(&format!("zarr/{store}"));
        let tag = store.trim_end_matches(".zarr");
        let npy = |p: &str| fixture_npy(&format!("{tag}_{}.npy", p.trim_start_matches('/')));
        let tmp = tempfile::tempdir().unwrap();
        let disk = || chunkwise::cache::CacheCoordinator::disk(tmp.path(), None).unwrap();
        let open = |path: &str, c: chunkwise::cache::CacheCoordinator| {
            chunkwise::open::open_zarr(&url, vec![], with_path(path), c)
        };
        let (want_a, want_b) = (npy(a), npy(b));
        let c = disk();
        let arr_a = open(a, c.clone()).await.unwrap();
        let arr_b = open(b, c.clone()).await.unwrap();
        check_npy(&arr_a, "0:5, :", &want_a, &url).await;
        check_npy(&arr_b, ":, :", &want_b, &url).await;
        check_npy(&arr_a, "5:13, :", &want_a, &url).await;
        drop((arr_a, arr_b, c));

        let before = server.requests().len();
        let c = disk();
        let again_a = open(a, c.clone()).await.unwrap();
        let again_b = open(b, c.clone()).await.unwrap();
        let opened = server.requests()[before..].to_vec();
        assert!(
            opened.is_empty(),
            "{url}: reopening {a} and {b} from the disk cache made requests: {:?}",
            opened.iter().map(|r| &r.path).collect::<Vec<_>>()
        );
        check_npy(&again_a, ":, :", &want_a, &url).await;
        check_npy(&again_b, ":, :", &want_b, &url).await;
        assert_eq!(
            server.requests().len(),
            before,
            "{url}: reads after the reopen made requests"
        );
        // The record kept the chunk versions both arrays learnt.
        let versions = again_b.zarr_discovery().unwrap().versions;
        for p in [a, b] {
            let dir = format!("{}/", p.trim_start_matches('/'));
            assert_eq!(
                versions.keys().filter(|k| k.starts_with(&dir)).count(),
                9,
                "{url}: chunk versions of {p} in {versions:?}"
            );
        }
    }
}

/// Reads `sel` of `arr` and checks it against the written array `want`.
async fn check_npy(arr: &RemoteArray, sel: &str, want: &chunkwise::npy::Npy, what: &str) {
    let s = Selection::parse(sel).unwrap();
    let dims = s.resolve(&want.shape).unwrap();
    let got = arr.read(&s, &ReadOptions::default()).await.unwrap();
    assert!(
        got.data == reference(&want.data, &want.shape, arr.dtype().itemsize, &dims),
        "{what}: [{sel}] differs from the written array"
    );
}

/// A stepped read of a sharded array reads and decodes only the inner chunks it touches: the
/// box around them (what was read before) holds every inner chunk between them too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stepped_read_of_a_shard_reads_only_the_touched_inner_chunks() {
    let dir = tempfile::tempdir().unwrap();
    // zarr 3.1.6 (scripts/requirements.txt): 24x24 float32 in 12x12 shards of 2x2 inner
    // chunks (6x6 per shard), uncompressed so that every inner chunk is 16 bytes and every
    // shard index 6 * 6 * 16 + 4 (CRC-32C) bytes. The data written is saved as a.npy.
    let script = r#"
import sys, numpy as np, zarr
data = np.random.default_rng(20261206).standard_normal((24, 24)).astype("<f4")
g = zarr.open_group(sys.argv[1] + "/s.zarr", mode="w", zarr_format=3)
a = g.create_array("a", shape=data.shape, dtype="<f4", chunks=(2, 2), shards=(12, 12),
                   compressors=None)
a[...] = data
np.save(sys.argv[1] + "/a.npy", data)
"#;
    let status = std::process::Command::new(native_harness::venv_python())
        .args(["-c", script, dir.path().to_str().unwrap()])
        .status()
        .expect("the Python venv (scripts/setup.sh python) writes the store");
    assert!(status.success());
    let data = read_npy(&std::fs::read(dir.path().join("a.npy")).unwrap()).unwrap();
    let server = common::fault_server(dir.path(), &[], false).await;
    let opts = OpenOptions {
        path: Some("a".into()),
        // No gap bridged: the bytes moved are the ranges asked for.
        coalesce_gap: 0,
        ..Default::default()
    };
    let arr = open_array(&server.url("s.zarr"), vec![], opts)
        .await
        .unwrap();
    let before = arr.traffic();
    // Rows and columns 0, 5, 10, 15, 20: inner chunks 0, 2, 5 of the first shard along each
    // axis and 1, 4 of the second: 3x3 + 3x2 + 2x3 + 2x2 = 25 of the 144 inner chunks (the
    // boxes around them hold 6x6 + 6x4 + 4x6 + 4x4 = 100: 3,920 bytes moved, not 2,720).
    let got = arr
        .read(
            &Selection::parse("::5, ::5").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    let want: Vec<u8> = (0..24)
        .step_by(5)
        .flat_map(|i| (0..24).step_by(5).map(move |j| (i, j)))
        .flat_map(|(i, j)| data.data[(i * 24 + j) * 4..(i * 24 + j + 1) * 4].to_vec())
        .collect();
    assert_eq!(got.shape, vec![5, 5]);
    assert_eq!(got.data, want, "the values written");
    let moved = arr.traffic().bytes - before.bytes;
    assert_eq!(
        moved,
        4 * (6 * 6 * 16 + 4) + 25 * 16,
        "four shard indexes and 25 inner chunks"
    );
    // With the default gap, one index read and one coalesced read of the touched inner
    // chunks per shard (the gaps between them bridged, as the gap allows): the boxes of one
    // shard join one batch (`ZarrStorage::hold`; without it, 4 + 25 requests).
    let arr = open_array(&server.url("s.zarr"), vec![], with_path("a"))
        .await
        .unwrap();
    let before = arr.traffic();
    let again = arr
        .read(
            &Selection::parse("::5, ::5").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(again.data, want);
    let t = arr.traffic();
    assert_eq!(t.requests - before.requests, 4 + 4, "{t:?}");
    server.shutdown().await;
}

/// A v3 array whose metadata holds an extension field chunkwise does not know is refused as
/// UNSUPPORTED naming the field, unless the field says `"must_understand": false` (v3
/// specification, "Extension definition"); `v3_extensions.zarr` is written by
/// `tests/fixtures/gen_zarr_metadata.py` (zarr-python refuses the same two arrays).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_fields_that_must_be_understood_are_refused() {
    let server = server().await;
    let url = server.url("zarr/v3_extensions.zarr");
    for path in ["/must", "/implicit"] {
        let e = open_array(&url, vec![], with_path(path))
            .await
            .err()
            .unwrap_or_else(|| panic!("{path}: opened"));
        assert_eq!(e.code(), "UNSUPPORTED", "{path}: {e}");
        assert!(e.to_string().contains("chunkwise_test_ext"), "{path}: {e}");
    }
    let want =
        read_npy(&std::fs::read(fixtures().join("zarr/v3_extensions_may.npy")).unwrap()).unwrap();
    let arr = open_array(&url, vec![], with_path("/may")).await.unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.shape, want.shape);
    assert!(got.data == want.data, "/may differs from the array written");
    server.shutdown().await;
}

/// A v2 complex array whose `fill_value` is `null` (zarr-python's `fill_value=None`) opens,
/// and its unwritten chunks read as zero, as zarr-python reads them (`gen_zarr_metadata.py`);
/// it was refused as INVALID_DATA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_complex_arrays_with_a_null_fill_value_read_zeros_where_unwritten() {
    let server = server().await;
    let url = server.url("zarr/v2_null_fill.zarr");
    for name in ["c8", "c16_be"] {
        let want = read_npy(
            &std::fs::read(fixtures().join(format!("zarr/v2_null_fill_{name}.npy"))).unwrap(),
        )
        .unwrap();
        let arr = open_array(&url, vec![], with_path(&format!("/{name}")))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.shape, want.shape, "{name}");
        // Both in the stored byte order.
        assert_eq!(arr.dtype().to_string(), want.descr, "{name}");
        assert!(
            got.data == want.data,
            "{name}: differs from the array written"
        );
        assert_eq!(got.missing_chunks, 2, "{name}");
    }
    server.shutdown().await;
}

/// A v2 array of a numpy structured dtype (`gen_zarr_metadata.py`) is refused as UNSUPPORTED
/// naming it, not as invalid metadata (it is valid v2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_structured_dtype_is_unsupported() {
    let server = server().await;
    let url = server.url("zarr/v2_structured.zarr");
    let e = open_array(&url, vec![], OpenOptions::default())
        .await
        .err()
        .expect("opened");
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("structured dtype"), "{e}");
    server.shutdown().await;
}
