//! HDF5 datasets written by h5py read through `RemoteArray` (the `chunkwise read` code path)
//! over the real range server on loopback, compared with the arrays that were written (their
//! `.npy`), for whole reads and numpy-like selections; chunk maps compared with the HDF5
//! library's own `get_chunk_info`; the request budget of a >8 MiB file; malformed input.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::Hdf5Array;
use chunkwise::formats::FormatError;
use chunkwise::io::http::HttpSource;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;
use common::{check_selections, reference, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("hdf5/manifest.json")).expect("manifest"))
        .expect("manifest json")
}

/// The shared selections plus one that crosses several edge chunks of the 2-D fixtures.
const EXTRA_SELECTIONS: &[&str] = &["5:33, 9:21"];

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dataset_reads_over_http() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts");
    let mut checked = 0;
    for ds in manifest()["datasets"].as_array().expect("datasets") {
        let file = ds["file"].as_str().unwrap();
        let path = ds["path"].as_str().unwrap();
        let what = format!("{file}:{path}");
        let url = server.url(&format!("hdf5/{file}"));
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{what}: open: {e}"));
        let npy = read_npy(
            &std::fs::read(fixtures().join("hdf5").join(ds["npy"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{what}");
        assert_eq!(
            arr.dtype().to_string(),
            ds["dtype"].as_str().unwrap(),
            "{what}"
        );
        assert_eq!(arr.info().format, "hdf5");
        // Plugin-filtered datasets are named after their filter.
        let name = path.trim_start_matches('/');
        for (prefix, codec) in [
            ("blosc2_", "BLOSC2"),
            ("blosc_", "BLOSC "),
            ("zstd_", "ZSTD"),
            ("lz4_", "LZ4"),
            ("bitshuffle_", "BITSHUFFLE"),
            ("lzf_", "LZF"),
        ] {
            if file == "plugins.h5" && name.starts_with(prefix) {
                let codecs = arr.info().codecs;
                assert!(codecs.contains(codec), "{what}: {codecs}");
            }
        }
        let opened = arr.traffic();
        assert!(
            opened.requests <= 2,
            "{what}: open of a small file took {opened:?}"
        );
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: read: {e}"));
        assert_eq!(all.shape, npy.shape, "{what}");
        assert!(
            all.data == npy.data,
            "{what}: whole dataset differs from the written one"
        );
        let itemsize = arr.dtype().itemsize;
        check_selections(
            &arr,
            &npy.data,
            &npy.shape,
            itemsize,
            SELECTIONS.iter().chain(EXTRA_SELECTIONS),
            &what,
        )
        .await;
        assert_eq!(
            arr.traffic().requests,
            opened.requests,
            "{what}: reads after open made requests"
        );
        checked += 1;
    }
    assert_eq!(checked, 32);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunk_maps_match_the_hdf5_library() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let mut compared = 0;
    for ds in manifest()["datasets"].as_array().unwrap() {
        let file = ds["file"].as_str().unwrap();
        let path = ds["path"].as_str().unwrap();
        let src = HttpSource::new(server.url(&format!("hdf5/{file}"))).unwrap();
        let arr = Hdf5Array::open_source(&src, Some(path), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{file}:{path}: {e}"));
        let Some(want) = ds["chunk_map"].as_array() else {
            assert!(arr.chunk_map().is_empty(), "{file}:{path} is not chunked");
            continue;
        };
        let mut got: Vec<serde_json::Value> = arr
            .chunk_map()
            .iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect();
        let mut want = want.clone();
        let key = |v: &serde_json::Value| v["offset"].to_string();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got, want, "{file}:{path}");
        assert_eq!(
            arr.meta().layout_name(),
            ds["layout"].as_str().unwrap(),
            "{file}:{path}"
        );
        compared += 1;
    }
    assert_eq!(compared, 26);
    server.shutdown().await;
}

/// h5py's (2^53, 2^53) int16 dataset with chunks (5, 4) and no chunk written
/// (tests/fixtures/gen_hdf5_huge_grid.py; h5py reads `[0:2, 0:3]` as its fill value 7): about
/// 4e30 chunks, more than the u64 the planner numbers them with. It opens; a read is refused
/// as UNSUPPORTED naming the grid (it was DECODE, "outside the grid of 0 chunks"); its info
/// and `chunkwise info` give no chunk or byte count (they said 0 chunks, and the byte count
/// overflowed: a panic in debug builds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grid_of_more_than_2_pow_64_chunks_is_refused_as_unsupported() {
    let server = common::serve_dir(fixtures()).await;
    let arr = open_array(&server.url("hdf5/huge_grid.h5"), vec![], with_path("/d"))
        .await
        .expect("open");
    common::assert_uncountable_grid(&arr, "0:2, 0:3").await;
    common::assert_cli_info_of_uncountable_grid(
        &server.url("hdf5/huge_grid.h5"),
        &["--path", "/d"],
    )
    .await;
}

/// h5py's (2^40, 2^40, 0) int16 dataset in chunks of (1, 1, 1), its last axis extendible
/// (tests/fixtures/gen_hdf5_huge_grid.py): 0 chunks and 0 bytes, as h5py counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_axis_beside_huge_ones_has_no_chunk_and_no_byte() {
    let server = common::serve_dir(fixtures()).await;
    let arr = open_array(&server.url("hdf5/huge_grid.h5"), vec![], with_path("/e"))
        .await
        .expect("open");
    common::assert_empty_beside_huge(&arr).await;
}

/// Unallocated chunks are never fetched: a read of only fill-value chunks of a >8 MiB-like
/// source needs no request beyond discovery. Checked on the small sparse fixture served
/// without the whole-file copy (`small_source_bytes: 0`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_chunks_make_no_request() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5/sparse_fill.h5");
    let arr = open_array(
        &url,
        vec![],
        OpenOptions {
            small_source_bytes: 0,
            head_bytes: 1024,
            ..with_path("/s")
        },
    )
    .await
    .unwrap();
    let opened = arr.traffic().requests;
    // Rows 10..20 hold no written chunk: every element is the fill value -7.
    let got = arr
        .read(
            &Selection::parse("10:20, :").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(arr.traffic().requests, opened);
    assert!(got
        .data
        .chunks(2)
        .all(|e| i16::from_le_bytes([e[0], e[1]]) == -7));
    // One written chunk: one request.
    let got = arr
        .read(
            &Selection::parse("0:10, 0:10").unwrap(),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(arr.traffic().requests, opened + 1);
    let npy = read_npy(&std::fs::read(fixtures().join("hdf5/sparse_fill_s.npy")).unwrap()).unwrap();
    let dims = Selection::parse("0:10, 0:10")
        .unwrap()
        .resolve(&npy.shape)
        .unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 2, &dims));
    server.shutdown().await;
}

/// Groups list their children; a file with several root members needs a path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_listing_and_path_errors() {
    use chunkwise::formats::hdf5::discover::{Member, MemberKind};
    use chunkwise::formats::hdf5::Hdf5Source;
    use chunkwise::io::{ByteRange, RangeSource};
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5/groups.h5");
    let src = HttpSource::new(url.clone()).unwrap();
    let head = src.read(ByteRange::bounded(0..64 * 1024)).await.unwrap();
    let mut h = Hdf5Source::new(&src, head.bytes, head.info.len);
    let m = |name: &str, kind| Member {
        name: name.to_string(),
        kind,
    };
    let mut root = h.members("/").await.unwrap();
    root.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        root,
        vec![
            m("model", MemberKind::Group),
            m("time", MemberKind::Dataset)
        ]
    );
    let mut model = h.members("/model").await.unwrap();
    model.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        model,
        vec![
            m("run1", MemberKind::Group),
            m("weights", MemberKind::Dataset)
        ]
    );
    assert_eq!(
        h.rounds(),
        0,
        "a small file arrives whole with the first read"
    );

    let err = open_array(&url, vec![], OpenOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, chunkwise::Error::Format(FormatError::PathNeeded { detail, .. }) if detail.contains("model (group)")),
        "{err}"
    );
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    // A missing dataset and a group path: NOT_FOUND naming the path.
    for path in ["/model/nothing", "/model"] {
        let err = open_array(&url, vec![], with_path(path)).await.unwrap_err();
        assert!(
            matches!(&err, chunkwise::Error::Format(FormatError::NoSuchNode { detail, .. }) if detail.contains(path.rsplit('/').next().unwrap())),
            "{path}: {err}"
        );
        assert_eq!(err.code(), "NOT_FOUND", "{path}");
    }
    // The only root dataset opens without a path.
    let arr = open_array(
        &server.url("hdf5/contiguous.h5"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(arr.shape(), &[37, 23]);
    server.shutdown().await;
}

/// Truncated files and garbage after a valid signature give typed errors, not panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read(fixtures().join("hdf5/gzip_shuffle.h5")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    // Cut inside the last stored chunk of /ints (from the library's chunk map).
    let last = manifest()["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "gzip_shuffle.h5" && d["path"] == "/ints")
        .and_then(|d| {
            d["chunk_map"]
                .as_array()?
                .iter()
                .map(|c| c["address"].as_u64().unwrap() + c["size"].as_u64().unwrap() / 2)
                .max()
        })
        .unwrap() as usize;
    for n in [8usize, 40, 200, 800, 2000, 4000, last] {
        cases.push((format!("trunc{n}.h5"), good[..n].to_vec()));
    }
    let mut garbage = b"\x89HDF\r\n\x1a\n".to_vec();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..4000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        garbage.push(x as u8);
    }
    cases.push(("garbage.h5".into(), garbage));
    // A valid file with its chunk data overwritten: decode errors for the chunks.
    let mut smashed = good.clone();
    let l = smashed.len();
    for b in &mut smashed[l / 2..l - 50] {
        *b = 0xAB;
    }
    cases.push(("smashed.h5".into(), smashed));
    for (name, bytes) in &cases {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let server = spawn(ServeOptions {
        root: dir.path().to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    for (name, _) in &cases {
        let res = match open_array(&server.url(name), vec![], with_path("/ints")).await {
            Ok(arr) => arr
                .read(&Selection::all(), &ReadOptions::default())
                .await
                .map(|_| ()),
            Err(e) => Err(e),
        };
        let err = res.expect_err(name);
        assert!(
            matches!(err, chunkwise::Error::Format(_)),
            "{name}: expected a format error, got {err:?}"
        );
    }
    server.shutdown().await;
}

/// h5py's >8 MiB `big.h5` (`gen_hdf5.py --big`, seeded data, with `data.npy`) written at
/// test time into a new directory, served with 10 ms of latency: round trips are waves of
/// requests in flight, and a little latency keeps the requests of one batch in one wave on a
/// loaded machine, as on any real network.
async fn serve_big_h5() -> (tempfile::TempDir, native_harness::serve::ServerHandle) {
    let dir = tempfile::tempdir().unwrap();
    let venv = std::env::var("CHUNKWISE_VENV")
        .unwrap_or_else(|_| format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap()));
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg(fixtures().join("gen_hdf5.py"))
        .arg("--big")
        .arg(dir.path())
        .status()
        .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
    assert!(status.success(), "gen_hdf5.py --big failed");
    assert!(std::fs::metadata(dir.path().join("big.h5")).unwrap().len() > 8 << 20);
    let server = common::serve_dir_with_latency(dir.path().to_path_buf(), 10).await;
    (dir, server)
}

/// A >8 MiB file written by h5py at test time: open plus a one-chunk read in few round
/// trips, moving about one chunk's bytes beyond discovery; a contiguous dataset reads only
/// the blocks (rows, or parts of rows longer than 64 KiB) a selection touches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_file_request_budget() {
    let (dir, server) = serve_big_h5().await;
    let url = server.url("big.h5");

    let npy = read_npy(&std::fs::read(dir.path().join("data.npy")).unwrap()).unwrap();
    let arr = open_array(&url, vec![], with_path("/data")).await.unwrap();
    let opened = arr.traffic();
    let sel = Selection::parse("0:200, 200:400").unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(&npy.shape).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 4, &dims));
    let t = arr.traffic();
    println!("big.h5 /data: open {opened:?}, open + one chunk {t:?}");
    assert!(t.round_trips <= 4, "open + one chunk took {t:?}");
    assert_eq!(t.requests - opened.requests, 1, "one chunk, one request");
    let chunk_bytes = 200 * 200 * 4;
    assert!(t.bytes - opened.bytes <= chunk_bytes + 4096, "{t:?}");

    let npy = read_npy(&std::fs::read(dir.path().join("contig.npy")).unwrap()).unwrap();
    let arr = open_array(&url, vec![], with_path("/contig"))
        .await
        .unwrap();
    let opened = arr.traffic();
    let sel = Selection::parse("500:510, ::7").unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(&npy.shape).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 8, &dims));
    let t = arr.traffic();
    println!("big.h5 /contig: open {opened:?}, open + ten rows {t:?}");
    assert_eq!(t.requests - opened.requests, 1);
    // Rows of 8,000 bytes, read by blocks of 8 rows (64 KiB at most): rows 500..510 are two
    // blocks. With 1 MiB row blocks they were one, 1,048,000 bytes.
    const BLOCK: u64 = 64 << 10;
    assert!(t.bytes - opened.bytes <= 2 * BLOCK, "{t:?}");
    let before = arr.traffic();
    let sel = Selection::parse("777, 555").unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 8, &sel.resolve(&npy.shape).unwrap()));
    let t = arr.traffic();
    assert!(t.bytes - before.bytes <= BLOCK, "one element: {t:?}");

    // Rows longer than a block: read by parts of rows, values as written across their edges.
    let npy = read_npy(&std::fs::read(dir.path().join("contig_wide.npy")).unwrap()).unwrap();
    let arr = open_array(&url, vec![], with_path("/contig_wide"))
        .await
        .unwrap();
    for sel in [
        "...",
        "5, 39999",
        "::-1, 16380:16390",
        "::5, ::1000",
        "3:4, 32760:",
    ] {
        let before = arr.traffic();
        let s = Selection::parse(sel).unwrap();
        let got = arr.read(&s, &ReadOptions::default()).await.unwrap();
        let dims = s.resolve(&npy.shape).unwrap();
        assert!(
            got.data == reference(&npy.data, &npy.shape, 4, &dims),
            "/contig_wide [{sel}]"
        );
        if sel == "5, 39999" {
            let t = arr.traffic();
            assert!(t.bytes - before.bytes <= BLOCK, "{sel}: {t:?}");
        }
    }

    // A version 1 B-tree of 10,000 chunks, fetched level by level, not node by node.
    let npy = read_npy(&std::fs::read(dir.path().join("tree.npy")).unwrap()).unwrap();
    let arr = open_array(
        &server.url("btree.h5"),
        vec![],
        OpenOptions {
            small_source_bytes: 0,
            ..with_path("/tree")
        },
    )
    .await
    .unwrap();
    let opened = arr.traffic();
    assert_eq!(arr.info().nchunks, Some(10_000));
    let sel = Selection::parse("995:1000, 5:25").unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(&npy.shape).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 4, &dims));
    println!(
        "btree.h5 /tree: open {opened:?}, open + three chunks {:?}",
        arr.traffic()
    );
    assert!(opened.round_trips <= 5, "open took {opened:?}");
    server.shutdown().await;
}

/// A store of a >8 MiB file (h5py, at test time) reads its head once: `get` reuses the
/// first bytes the store's open read (no second `bytes=0-65535`), so store open plus a
/// one-chunk read of `/data` costs the requests of an array open plus that chunk; values are
/// the array written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_get_reuses_the_head_of_a_large_file() {
    let (dir, server) = serve_big_h5().await;
    let url = server.url("big.h5");
    let npy = read_npy(&std::fs::read(dir.path().join("data.npy")).unwrap()).unwrap();
    let store = native_harness::source::open_store_cached(
        &url,
        vec![],
        chunkwise::cache::CacheCoordinator::memory(1 << 26),
        None,
    )
    .await
    .unwrap();
    let arr = store.get("/data").await.unwrap();
    let sel = Selection::parse("0:200, 0:200").unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(&npy.shape).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, 4, &dims));
    let log = server.requests();
    let ranges: Vec<_> = log.iter().filter_map(|r| r.range.clone()).collect();
    let heads = ranges.iter().filter(|r| *r == "bytes=0-65535").count();
    assert_eq!(heads, 1, "the head was read {heads} times: {ranges:?}");
    server.shutdown().await;
}

/// Restart-on-miss with a tiny head and readahead: discovery of every dataset takes several
/// rounds and finds what a whole-file discovery finds (chunk maps equal the library's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_in_rounds_matches_whole_file_discovery() {
    use chunkwise::formats::hdf5::discover::Layout;
    use chunkwise::formats::hdf5::Hdf5Source;
    use chunkwise::io::{ByteRange, Counted, RangeSource, Traffic};
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        // One round trip per round is counted as one wave of requests in flight (see
        // large_file_request_budget).
        latency_ms: 10,
        ..Default::default()
    })
    .await
    .unwrap();
    for ds in manifest()["datasets"].as_array().unwrap() {
        let file = ds["file"].as_str().unwrap();
        let path = ds["path"].as_str().unwrap();
        let url = server.url(&format!("hdf5/{file}"));
        let whole = HttpSource::new(url.clone()).unwrap();
        let all = whole.read(ByteRange::bounded(0..1 << 20)).await.unwrap();
        let mut h = Hdf5Source::new(&whole, all.bytes, all.info.len);
        let want = h.dataset(path).await.unwrap();
        assert_eq!(h.rounds(), 0);

        let traffic = Traffic::new();
        let src = Counted::new(HttpSource::new(url).unwrap(), traffic.clone());
        let head = src.read(ByteRange::bounded(0..256)).await.unwrap();
        let mut h = Hdf5Source::new(&src, head.bytes, head.info.len).with_readahead(512);
        let got = h.dataset(path).await.unwrap();
        assert_eq!(got, want, "{file}:{path}");
        assert!(h.rounds() >= 1, "{file}:{path}: no round needed");
        assert_eq!(
            traffic.snapshot().round_trips,
            1 + h.rounds() as u64,
            "{file}:{path}: one round trip per round"
        );
        if let (Layout::Chunked { entries, .. }, Some(map)) =
            (&got.layout, ds["chunk_map"].as_array())
        {
            assert_eq!(entries.len(), map.len(), "{file}:{path}");
        }
    }
    server.shutdown().await;
}

/// `chunkwise chunks --json` prints the library's chunk map, through the binary over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_command_prints_the_chunk_map() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let ds = manifest()["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "sparse_fill.h5" && d["path"] == "/s")
        .cloned()
        .unwrap();
    let url = server.url("hdf5/sparse_fill.h5");
    let bin = env!("CARGO_BIN_EXE_chunkwise");
    let u = url.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(bin)
            .args(["chunks", &u, "--path", "/s", "--json"])
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sorted = |v: &serde_json::Value| {
        let mut l = v.as_array().unwrap().clone();
        l.sort_by_key(|c| c["offset"].to_string());
        l
    };
    assert_eq!(sorted(&got), sorted(&ds["chunk_map"]));
    let text = native_harness::source::chunks_command(&url, Some("/s"), vec![], false)
        .await
        .unwrap();
    assert!(text.contains("(3 allocated chunks)"), "{text}");
    let err = native_harness::source::chunks_command(&url, Some("/nope"), vec![], true)
        .await
        .unwrap_err();
    assert!(matches!(err, chunkwise::Error::Format(_)), "{err}");
    server.shutdown().await;
}

/// Valid HDF5 features not read here give `Unsupported`, naming what is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_features_are_named() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5/unsupported.h5");
    // (Strings and compounds read since: tests/hdf5_types.rs.)
    for (path, needle) in [("/bzip2", "filter 307")] {
        let err = open_array(&url, vec![], with_path(path)).await.unwrap_err();
        match &err {
            chunkwise::Error::Format(FormatError::Unsupported { detail, .. }) => {
                assert!(detail.contains(needle), "{path}: {detail}")
            }
            other => panic!("{path}: expected Unsupported, got {other:?}"),
        }
    }
    server.shutdown().await;
}

/// Damaged plugin-filtered chunks (cut short, bytes changed) of every dataset of
/// `plugins.h5` decode to an error or to exactly one chunk's bytes, never a panic; the
/// undamaged chunks decode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_plugin_chunks_are_errors() {
    use chunkwise::formats::{ArrayFormat, ChunkPlace};
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let bytes = std::fs::read(fixtures().join("hdf5/plugins.h5")).unwrap();
    let src = HttpSource::new(server.url("hdf5/plugins.h5")).unwrap();
    let mut checked = 0;
    for ds in manifest()["datasets"].as_array().unwrap() {
        if ds["file"] != "plugins.h5" {
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
            let mut cases: Vec<Vec<u8>> = [0, 1, 4, 11, 12, 16, 31, n / 2, n - 1]
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
            for case in cases {
                if let Ok(d) = arr.decode(chunk, &case) {
                    assert_eq!(d.len(), want, "{path}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked}");
    server.shutdown().await;
}

/// A dataset with a null dataspace (h5py `Empty`, written here by the venv's h5py) holds no
/// element: opening it is a typed UNSUPPORTED error, never an invented value; its scalar
/// neighbour still reads.
#[tokio::test]
async fn null_dataspace_is_refused_not_invented() {
    let home = std::env::var("HOME").unwrap_or_default();
    let venv = std::env::var("CHUNKWISE_VENV").unwrap_or(format!("{home}/.cache/chunkwise/venv"));
    let dir = std::env::temp_dir().join(format!("chunkwise-null-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("empty.h5");
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg("-c")
        .arg(
            "import sys, h5py, numpy as np\n\
             with h5py.File(sys.argv[1], 'w') as f:\n\
             \x20   f.create_dataset('empty', data=h5py.Empty('f4'))\n\
             \x20   f['scalar'] = np.float64(3.5)\n",
        )
        .arg(&file)
        .status()
        .expect("the venv python runs (scripts/setup.sh)");
    assert!(status.success());
    let path = file.to_str().unwrap();
    let e = open_array(path, vec![], with_path("/empty"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("null dataspace"), "{e}");
    let arr = open_array(path, vec![], with_path("/scalar"))
        .await
        .unwrap();
    let got = arr
        .read(&chunkwise::selection::Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, 3.5f64.to_le_bytes().to_vec());
    std::fs::remove_dir_all(&dir).ok();
}
