//! Every Blosc2 fixture read through `RemoteArray` over the real range server on loopback,
//! compared with the array that was written (its `.npy`), for whole reads and numpy-like
//! selections; plus the request budget of small and large files and the payload cache.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CachePolicy;
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

/// numpy writes one-byte types with `|`; the manifest may say `<`.
fn norm_dtype(s: &str) -> String {
    if s.len() == 3 && s.ends_with('1') {
        format!("|{}", &s[1..])
    } else {
        s.to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fixture_reads_over_http() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts");
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("blosc2/manifest.json")).expect("manifest"),
    )
    .expect("manifest json");
    let mut checked = 0;
    for fx in manifest["fixtures"].as_array().expect("fixtures list") {
        let file = fx["file"].as_str().unwrap();
        let url = server.url(&format!("blosc2/{file}"));
        let arr = open_array(&url, vec![], OpenOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{file}: open: {e}"));
        let want_shape: Vec<u64> = fx["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(arr.shape(), &want_shape[..], "{file}");
        assert_eq!(
            arr.dtype().to_string(),
            norm_dtype(fx["dtype"].as_str().unwrap()),
            "{file}"
        );
        let npy_path = fixtures().join("blosc2").join(fx["npy"].as_str().unwrap());
        let npy = read_npy(&std::fs::read(npy_path).unwrap()).unwrap();
        assert_eq!(npy.shape, want_shape, "{file}");
        // numpy's nbytes of the array written, not the frame's (edge chunks padded to whole
        // chunks and blocks).
        assert_eq!(
            arr.info().nbytes,
            Some(npy.data.len() as u64),
            "{file}: info nbytes"
        );
        let opened = arr.traffic();
        assert!(
            opened.requests <= 2,
            "{file}: open of a small file took {opened:?}"
        );
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{file}: read: {e}"));
        assert_eq!(all.shape, want_shape, "{file}");
        assert!(
            all.data == npy.data,
            "{file}: whole array differs from the written one"
        );
        let itemsize = arr.dtype().itemsize;
        check_selections(&arr, &npy.data, &want_shape, itemsize, SELECTIONS, &file).await;
        // A small file is held whole after open: reads make no further request.
        assert_eq!(
            arr.traffic().requests,
            opened.requests,
            "{file}: reads after open made requests"
        );
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} fixtures");
    println!("{checked} fixtures read over HTTP and compared");
    server.shutdown().await;
}

/// Writes the >8 MiB frame of `gen_blosc2.py --big` (python-blosc2, seeded data, with its
/// `.npy`) into `dir` and returns its path.
fn big_fixture(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let venv = std::env::var("CHUNKWISE_VENV")
        .unwrap_or_else(|_| format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap()));
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg(fixtures().join("gen_blosc2.py"))
        .arg("--big")
        .arg(dir)
        .status()
        .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
    assert!(status.success(), "gen_blosc2.py --big failed");
    let big = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "b2nd"))
        .expect("a .b2nd was written");
    assert!(
        std::fs::metadata(&big).unwrap().len() > 8 << 20,
        "the big fixture must exceed 8 MiB"
    );
    big
}

/// A large `.b2nd` asks for its head and its tail (offsets chunk and trailer) at once: open
/// plus a one-chunk preview is 2 sequential round trips, seen by the client's counters and
/// in the server's log (40 ms added per request so concurrent requests overlap), 3 requests
/// in all; the values are the array written. Held whole, the same frame costs the head, the
/// tail and the bytes between them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_file_open_and_preview_take_two_round_trips() {
    let dir = std::env::temp_dir().join(format!("chunkwise-big2-{}", std::process::id()));
    let big = big_fixture(&dir);
    let npy = read_npy(&std::fs::read(big.with_extension("npy")).unwrap()).unwrap();
    let server = common::serve_dir_with_latency(dir.clone(), 40).await;
    let url = server.url(big.file_name().unwrap().to_str().unwrap());
    let arr = open_array(&url, vec![], OpenOptions::default())
        .await
        .unwrap();
    let opened = arr.traffic();
    let chunks = arr.chunks().to_vec();
    let sel = Selection::parse(&format!("0:{}, 0:{}", chunks[0], chunks[1])).unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(arr.shape()).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, arr.dtype().itemsize, &dims));
    let t = arr.traffic();
    let log = server.requests();
    let ranges: Vec<_> = log.iter().map(|r| r.range.clone()).collect();
    assert_eq!(opened.round_trips, 1, "open: {opened:?}, ranges {ranges:?}");
    assert_eq!(t.round_trips, 2, "open + preview: {t:?}, ranges {ranges:?}");
    assert_eq!(t.requests, 3, "open + preview: {t:?}, ranges {ranges:?}");
    assert_eq!(common::waves(&log), 2, "server log: {log:?}");

    // Held whole (the small-source limit raised past its size): head and tail at once, then
    // only the bytes between them, each byte once; the whole array is the one written.
    let whole = open_array(
        &url,
        vec![],
        OpenOptions {
            small_source_bytes: 32 << 20,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let t = whole.traffic();
    let len = std::fs::metadata(&big).unwrap().len();
    assert_eq!((t.requests, t.round_trips, t.bytes), (3, 2, len), "{t:?}");
    let all = whole
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(
        all.data == npy.data,
        "the whole array differs from the written one"
    );
    assert_eq!(
        whole.traffic().requests,
        3,
        "a source held whole was read again"
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A >8 MiB frame written by python-blosc2 at test time: open plus a one-chunk preview in at
/// most 3 round trips, a warm re-read from the payload cache with no request, and the NONE
/// policy fetching again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_file_request_budget_and_cache() {
    let dir = std::env::temp_dir().join(format!("chunkwise-big-{}", std::process::id()));
    let big = big_fixture(&dir);
    let npy = read_npy(&std::fs::read(big.with_extension("npy")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: dir.clone(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url(big.file_name().unwrap().to_str().unwrap());

    let arr = open_array(&url, vec![], OpenOptions::default())
        .await
        .unwrap();
    let chunks = arr.chunks().to_vec();
    let sel = Selection::parse(&format!("0:{}, 0:{}", chunks[0], chunks[1])).unwrap();
    let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
    let dims = sel.resolve(arr.shape()).unwrap();
    assert!(got.data == reference(&npy.data, &npy.shape, arr.dtype().itemsize, &dims));
    let t = arr.traffic();
    assert!(t.round_trips <= 3, "open + one-chunk preview took {t:?}");
    let info = arr.info();
    let stored = info.cbytes / info.nchunks.unwrap();
    assert!(
        t.bytes < 64 * 1024 + 4 * stored + 64 * 1024,
        "moved {} bytes for one chunk of about {stored}",
        t.bytes
    );
    // Warm: the same chunk comes from the payload cache.
    arr.read(&sel, &ReadOptions::default()).await.unwrap();
    assert_eq!(
        arr.traffic().requests,
        t.requests,
        "a cached chunk was fetched again"
    );

    let none = open_array(
        &url,
        vec![],
        OpenOptions {
            cache: CachePolicy::None,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    none.read(&sel, &ReadOptions::default()).await.unwrap();
    let n1 = none.traffic().requests;
    none.read(&sel, &ReadOptions::default()).await.unwrap();
    assert_eq!(
        none.traffic().requests,
        n1 + 1,
        "NONE policy must not retain payload"
    );
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Block-level reads: with whole-source copies and the size threshold turned off, a small
/// selection of a chunk made of several blocks fetches the chunk's header and block offsets,
/// then only the touched blocks (plus block 0 under DELTA). Values must equal the written
/// array for every fixture, and a one-element read must move fewer bytes than its chunk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_reads_match_the_written_arrays() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("blosc2/manifest.json")).unwrap())
            .unwrap();
    let options = OpenOptions {
        small_source_bytes: 0,
        block_read_min_bytes: 0,
        ..Default::default()
    };
    let (mut files, mut saved) = (0, 0);
    for fx in manifest["fixtures"].as_array().unwrap() {
        let file = fx["file"].as_str().unwrap();
        let arr = open_array(
            &server.url(&format!("blosc2/{file}")),
            vec![],
            options.clone(),
        )
        .await
        .unwrap();
        if arr.blocks() == arr.chunks() || arr.shape().contains(&0) {
            continue;
        }
        let npy_path = fixtures().join("blosc2").join(fx["npy"].as_str().unwrap());
        let npy = read_npy(&std::fs::read(npy_path).unwrap()).unwrap();
        let itemsize = arr.dtype().itemsize;
        let last: Vec<String> = arr.shape().iter().map(|s| (s - 1).to_string()).collect();
        let one = vec!["1"; arr.shape().len()].join(",");
        for s in [last.join(","), one, "..., -1".to_string(), "0".to_string()] {
            let sel = Selection::parse(&s).unwrap();
            let Ok(dims) = sel.resolve(arr.shape()) else {
                continue;
            };
            let before = arr.traffic();
            let got = arr
                .read(&sel, &ReadOptions::default())
                .await
                .unwrap_or_else(|e| panic!("{file} [{s}]: {e}"));
            assert!(
                got.data == reference(&npy.data, &npy.shape, itemsize, &dims),
                "{file} [{s}] differs"
            );
            if dims.iter().all(|d| d.count == 1) {
                let moved = arr.traffic().bytes - before.bytes;
                let info = arr.info();
                if moved > 0 && moved < info.cbytes / info.nchunks.unwrap().max(1) {
                    saved += 1;
                }
            }
        }
        files += 1;
    }
    assert!(
        files >= 20,
        "{files} fixtures with blocks smaller than chunks"
    );
    assert!(
        saved >= 5,
        "only {saved} one-element reads moved less than a chunk"
    );
    println!(
        "{files} fixtures read block by block; {saved} one-element reads moved less than a chunk"
    );
    server.shutdown().await;
}
