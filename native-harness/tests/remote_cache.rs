//! The cache layers over the real range server on loopback: warm reopens make no request
//! (b2nd and HDF5, small and > 8 MiB), converted HDF5 chunks skip transfer and the filter
//! pipeline, DISK persists across coordinators and treats every damaged entry as a miss,
//! the payload bound holds, credentials separate entries, `RemoteStore` lists and reads an
//! HDF5 file, and the CLI with `--cache disk` makes no request on a second run. Values are
//! compared with the arrays the generators wrote (their `.npy`).

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::CacheCoordinator;
use chunkwise::formats::{Node, NodeKind};
use chunkwise::io::Traffic;
use chunkwise::npy::{read_npy, Npy};
use chunkwise::selection::Selection;
use chunkwise::store::RemoteStore;
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use native_harness::source::transport;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod common;
use common::{reference, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn npy(path: &Path) -> Npy {
    read_npy(&std::fs::read(path).unwrap()).unwrap()
}

/// Big files written once per test binary by the fixture generators (> 8 MiB each).
fn big_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::process_dir("chunkwise-cache-big-");
        let venv = std::env::var("CHUNKWISE_VENV").unwrap_or_else(|_| {
            format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap())
        });
        for gen in ["gen_hdf5.py", "gen_blosc2.py"] {
            let status = std::process::Command::new(format!("{venv}/bin/python"))
                .arg(fixtures().join(gen))
                .arg("--big")
                .arg(&dir)
                .status()
                .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
            assert!(status.success(), "{gen} --big failed");
        }
        assert!(std::fs::metadata(dir.join("big.h5")).unwrap().len() > 8 << 20);
        dir
    })
}

fn big_b2nd() -> PathBuf {
    std::fs::read_dir(big_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "b2nd"))
        .expect("a .b2nd was written")
}

async fn serve(root: &Path) -> ServerHandle {
    spawn(ServeOptions {
        root: root.to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts")
}

/// Opens `url` (dataset `path`) with `coordinator` and `headers`, on a fresh traffic counter.
async fn open(
    url: &str,
    path: Option<&str>,
    coordinator: &CacheCoordinator,
    headers: &[(String, String)],
) -> RemoteArray {
    let traffic = Traffic::new();
    let t = transport(url, headers.to_vec(), &traffic).unwrap();
    let options = OpenOptions {
        path: path.map(str::to_string),
        ..Default::default()
    };
    RemoteArray::open_with_cache(
        t,
        traffic,
        options,
        coordinator.clone(),
        coordinator.source_key(url, headers),
    )
    .await
    .unwrap_or_else(|e| panic!("{url} {path:?}: {e}"))
}

/// Reads `sel` and checks it against the written array.
async fn check(arr: &RemoteArray, want: &Npy, sel: &str) {
    let s = Selection::parse(sel).unwrap();
    let got = arr.read(&s, &ReadOptions::default()).await.unwrap();
    let dims = s.resolve(&want.shape).unwrap();
    assert!(
        got.data == reference(&want.data, &want.shape, arr.dtype().itemsize, &dims),
        "[{sel}] differs from the written array"
    );
}

/// Cold open + read, then a reopen in the same coordinator: no request to open or read.
async fn warm_reopen(url: &str, path: Option<&str>, want: &Npy, sel: &str) {
    let c = CacheCoordinator::memory(256 << 20);
    let cold = open(url, path, &c, &[]).await;
    assert!(
        cold.traffic().requests > 0,
        "{url}: a cold open makes requests"
    );
    check(&cold, want, sel).await;
    let warm = open(url, path, &c, &[]).await;
    assert_eq!(warm.traffic().requests, 0, "{url}: warm reopen");
    check(&warm, want, sel).await;
    assert_eq!(warm.traffic().requests, 0, "{url}: warm read");
    assert_eq!(warm.shape(), &want.shape[..]);
    // Other selections through the rebuilt reader (these may fetch chunks not read before).
    for s in SELECTIONS {
        if Selection::parse(s).unwrap().resolve(&want.shape).is_ok() {
            check(&warm, want, s).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_reopen_makes_no_request() {
    let server = serve(&fixtures()).await;
    let b2nd = fixtures().join("blosc2/be_f8.b2nd");
    warm_reopen(
        &server.url("blosc2/be_f8.b2nd"),
        None,
        &npy(&b2nd.with_extension("npy")),
        "",
    )
    .await;
    warm_reopen(
        &server.url("hdf5/groups.h5"),
        Some("/model/run1/values"),
        &npy(&fixtures().join("hdf5/groups_model_run1_values.npy")),
        "",
    )
    .await;
    server.shutdown().await;

    let server = serve(big_dir()).await;
    let big = big_b2nd();
    let name = big.file_name().unwrap().to_str().unwrap().to_string();
    warm_reopen(
        &server.url(&name),
        None,
        &npy(&big.with_extension("npy")),
        "0:3, 10:20",
    )
    .await;
    warm_reopen(
        &server.url("big.h5"),
        Some("/data"),
        &npy(&big_dir().join("data.npy")),
        "0:200, 200:400",
    )
    .await;
    server.shutdown().await;
}

/// A converted HDF5 chunk read warm: no request and no run of the filter pipeline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converted_chunks_skip_transfer_and_filters() {
    let server = serve(big_dir()).await;
    let url = server.url("big.h5");
    let want = npy(&big_dir().join("data.npy"));
    let c = CacheCoordinator::memory(256 << 20);
    let arr = open(&url, Some("/data"), &c, &[]).await;
    let sel = "0:200, 200:600"; // two gzip+shuffle chunks of 200 x 200
    check(&arr, &want, sel).await;
    let s0 = c.stats();
    assert_eq!(s0.format_decodes, 2);
    assert_eq!(s0.converted_hits, 0);
    assert_eq!(s0.payload.entries, 2, "two converted chunks retained");
    let before = arr.traffic();
    check(&arr, &want, sel).await;
    let s1 = c.stats();
    assert_eq!(
        arr.traffic().requests,
        before.requests,
        "warm read: no request"
    );
    assert_eq!(s1.format_decodes, 2, "warm read: no HDF5 filter decode");
    assert_eq!(s1.converted_hits, 2);

    // NONE: nothing converted or retained; every read fetches and decodes again.
    let n = CacheCoordinator::none();
    let arr = open(&url, Some("/data"), &n, &[]).await;
    let opened = arr.traffic().requests;
    check(&arr, &want, sel).await;
    let once = arr.traffic().requests - opened;
    check(&arr, &want, sel).await;
    assert_eq!(arr.traffic().requests - opened, 2 * once);
    let s = n.stats();
    assert_eq!(
        (s.format_decodes, s.converted_hits, s.payload.entries),
        (4, 0, 0)
    );
    server.shutdown().await;
}

fn files_under(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for ns in ["payload", "discovery", "sources"] {
        if let Ok(rd) = std::fs::read_dir(dir.join(ns)) {
            out.extend(
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == ext)),
            );
        }
    }
    out
}

/// DISK survives a new coordinator; each kind of damage is a miss with correct data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_persists_and_damage_is_a_miss() {
    let server = serve(big_dir()).await;
    let url = server.url("big.h5");
    let want = npy(&big_dir().join("data.npy"));
    let sel = "150:250, 390:410";
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let disk = || CacheCoordinator::disk(dir, Some(256 << 20)).unwrap();

    let cold = open(&url, Some("/data"), &disk(), &[]).await;
    check(&cold, &want, sel).await;
    assert!(cold.traffic().requests > 0);

    // A new coordinator on the same directory is warm.
    let c = disk();
    let warm = open(&url, Some("/data"), &c, &[]).await;
    check(&warm, &want, sel).await;
    assert_eq!(warm.traffic().requests, 0, "warm from disk");
    assert_eq!(c.stats().format_decodes, 0);

    type Damage = fn(&Path);
    let damages: [(&str, Damage); 5] = [
        ("corrupted blob", |p| {
            let mut b = std::fs::read(p).unwrap();
            let i = b.len() / 2;
            b[i] ^= 0x55;
            std::fs::write(p, b).unwrap();
        }),
        ("truncated blob", |p| {
            let b = std::fs::read(p).unwrap();
            std::fs::write(p, &b[..b.len() / 2]).unwrap();
        }),
        ("missing marker", |p| {
            std::fs::remove_file(p.with_extension("json")).unwrap();
        }),
        ("corrupted marker", |p| {
            std::fs::write(p.with_extension("json"), b"{\"schema\":2,").unwrap();
        }),
        ("marker of another schema version", |p| {
            let m = p.with_extension("json");
            let t = std::fs::read_to_string(&m).unwrap();
            let now = format!("\"schema\":{}", chunkwise::cache::disk::SCHEMA_VERSION);
            assert!(t.contains(&now));
            std::fs::write(&m, t.replace(&now, "\"schema\":99")).unwrap();
        }),
    ];
    for (what, damage) in damages {
        let blobs = files_under(dir, "blob");
        assert!(
            blobs.len() >= 3,
            "{what}: discovery and payload entries exist"
        );
        for b in &blobs {
            damage(b);
        }
        let c = disk();
        let arr = open(&url, Some("/data"), &c, &[]).await;
        let opened = arr.traffic().requests;
        assert!(opened > 0, "{what}: damaged discovery record is a miss");
        check(&arr, &want, sel).await;
        assert!(
            arr.traffic().requests > opened,
            "{what}: damaged payload is a miss"
        );
        assert!(
            c.stats().format_decodes > 0,
            "{what}: chunks decoded afresh"
        );
        // Republished: the next coordinator is warm again.
        let again = open(&url, Some("/data"), &disk(), &[]).await;
        check(&again, &want, sel).await;
        assert_eq!(again.traffic().requests, 0, "{what}: republished");
    }
    server.shutdown().await;
}

/// A small file's complete copy on disk serves a dataset scope never opened before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_source_copy_is_shared_between_scopes() {
    let server = serve(&fixtures()).await;
    let url = server.url("hdf5/groups.h5");
    let tmp = tempfile::tempdir().unwrap();
    let disk = || CacheCoordinator::disk(tmp.path(), Some(256 << 20)).unwrap();
    let first = open(&url, Some("/time"), &disk(), &[]).await;
    assert!(first.traffic().requests > 0);
    check(&first, &npy(&fixtures().join("hdf5/groups_time.npy")), "").await;
    let c = disk();
    let other = open(&url, Some("/model/weights"), &c, &[]).await;
    assert_eq!(other.traffic().requests, 0, "served by the source copy");
    check(
        &other,
        &npy(&fixtures().join("hdf5/groups_model_weights.npy")),
        "",
    )
    .await;
    assert_eq!(other.traffic().requests, 0);
    assert_eq!(
        c.stats().discovery_hits,
        0,
        "a new scope: discovered, from the copy"
    );
    assert!(c.stats().source_hits >= 1);

    // A damaged copy is a miss: fetched again, right values, republished.
    let copies = files_under(tmp.path(), "blob")
        .into_iter()
        .filter(|p| p.parent().unwrap().ends_with("sources"))
        .collect::<Vec<_>>();
    assert_eq!(copies.len(), 1);
    let mut b = std::fs::read(&copies[0]).unwrap();
    b[100] ^= 1;
    std::fs::write(&copies[0], b).unwrap();
    let values = "/model/run1/values";
    let arr = open(&url, Some(values), &disk(), &[]).await;
    assert!(arr.traffic().requests > 0, "damaged copy: fetched again");
    check(
        &arr,
        &npy(&fixtures().join("hdf5/groups_model_run1_values.npy")),
        "",
    )
    .await;
    let arr = open(&url, Some("/model/weights"), &disk(), &[]).await;
    check(
        &arr,
        &npy(&fixtures().join("hdf5/groups_model_weights.npy")),
        "",
    )
    .await;
    assert_eq!(arr.traffic().requests, 0, "republished copy");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payload_bound_is_respected() {
    let server = serve(big_dir()).await;
    let url = server.url("big.h5");
    let want = npy(&big_dir().join("data.npy"));
    // A converted 200 x 200 float32 chunk of random data takes about 150 KB: room for two
    // of the 25 chunks read.
    let bound = 400_000;
    let c = CacheCoordinator::memory(bound);
    let arr = open(&url, Some("/data"), &c, &[]).await;
    check(&arr, &want, "0:1000, 0:1000").await;
    let s = c.stats();
    assert!(s.payload.bytes <= bound, "{s:?}");
    assert!(s.payload.evictions > 0, "{s:?}");
    assert!(s.payload.entries > 0, "{s:?}");

    let tmp = tempfile::tempdir().unwrap();
    let d = CacheCoordinator::disk(tmp.path(), Some(bound)).unwrap();
    let arr = open(&url, Some("/data"), &d, &[]).await;
    check(&arr, &want, "0:1000, 0:1000").await;
    let s = d.stats();
    assert!(s.payload.bytes <= bound && s.payload.evictions > 0, "{s:?}");
    let on_disk: u64 = std::fs::read_dir(tmp.path().join("payload"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "blob"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(on_disk, s.payload.bytes);
    server.shutdown().await;
}

/// A native Blosc2 read of four times the payload budget, MEMORY and DISK: the payload
/// retained stays within `max_cache_bytes` (in memory, and in the blobs on disk), the most
/// recently read chunks are kept, and the values equal the written array.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b2nd_read_of_four_budgets_retains_at_most_the_budget() {
    let server = serve(big_dir()).await;
    let big = big_b2nd();
    let url = server.url(big.file_name().unwrap().to_str().unwrap());
    let want = npy(&big.with_extension("npy"));
    let budget = std::fs::metadata(&big).unwrap().len() / 4;
    let tmp = tempfile::tempdir().unwrap();
    for c in [
        CacheCoordinator::memory(budget),
        CacheCoordinator::disk(tmp.path(), Some(budget)).unwrap(),
    ] {
        let arr = open(&url, None, &c, &[]).await;
        check(&arr, &want, "").await;
        let read = arr.traffic().bytes;
        let s = c.stats();
        eprintln!(
            "{:?}: read {read} bytes, retained {} bytes in {} entries, budget {budget}, \
             {} evictions",
            c.policy(),
            s.payload.bytes,
            s.payload.entries,
            s.payload.evictions
        );
        assert!(read >= 4 * budget, "read {read} < 4 x {budget}");
        assert!(s.payload.bytes <= budget, "{s:?}");
        assert!(s.payload.bytes > budget / 2, "the budget is used: {s:?}");
        assert!(s.payload.evictions > 0, "{s:?}");
        if c.policy() == chunkwise::cache::CachePolicy::Disk {
            let on_disk: u64 = std::fs::read_dir(tmp.path().join("payload"))
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "blob"))
                .map(|e| e.metadata().unwrap().len())
                .sum();
            assert_eq!(on_disk, s.payload.bytes);
        } else {
            assert_eq!(arr.cache().stats().bytes, s.payload.bytes);
        }
        // The last chunks read are retained: reading them again makes no request.
        let before = arr.traffic().requests;
        check(&arr, &want, "1750:2000, 1750:2000").await;
        assert_eq!(arr.traffic().requests, before, "the last chunk is retained");
        // The first were evicted: reading them again fetches.
        check(&arr, &want, "0:250, 0:250").await;
        assert!(
            arr.traffic().requests > before,
            "the first chunk was evicted"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_separate_entries() {
    let server = serve(&fixtures()).await;
    let url = server.url("blosc2/be_f8.b2nd");
    let want = npy(&fixtures().join("blosc2/be_f8.npy"));
    let c = CacheCoordinator::memory(256 << 20);
    let h = |v: &str| vec![("Authorization".to_string(), format!("Bearer {v}"))];
    let a = open(&url, None, &c, &h("a")).await;
    check(&a, &want, "").await;
    assert!(a.traffic().requests > 0);
    let a2 = open(&url, None, &c, &h("a")).await;
    assert_eq!(a2.traffic().requests, 0, "same credentials: warm");
    let b = open(&url, None, &c, &h("b")).await;
    assert!(b.traffic().requests > 0, "other credentials: a miss");
    check(&b, &want, "").await;
    let none = open(&url, None, &c, &[]).await;
    assert!(none.traffic().requests > 0, "no credentials: a miss");
    server.shutdown().await;
}

fn groups_nodes() -> Vec<Node> {
    let node = |path: &str, kind, shape: Option<Vec<u64>>, dtype: Option<&str>| Node {
        path: path.into(),
        kind,
        shape,
        dtype: dtype.map(str::to_string),
        error: None,
        attrs: Default::default(),
        dims: None,
    };
    // As gen_hdf5.py writes groups.h5.
    vec![
        node("/", NodeKind::Group, None, None),
        node("/model", NodeKind::Group, None, None),
        node("/model/run1", NodeKind::Group, None, None),
        node(
            "/model/run1/values",
            NodeKind::Array,
            Some(vec![10, 10]),
            Some("<f4"),
        ),
        node(
            "/model/weights",
            NodeKind::Array,
            Some(vec![6, 4]),
            Some("<i8"),
        ),
        node("/time", NodeKind::Array, Some(vec![100]), Some("<u4")),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_lists_and_reads_hdf5() {
    let server = serve(&fixtures()).await;
    let url = server.url("hdf5/groups.h5");
    let c = CacheCoordinator::memory(256 << 20);
    let open_store = || async {
        let traffic = Traffic::new();
        let t = transport(&url, vec![], &traffic).unwrap();
        RemoteStore::open(
            t,
            traffic,
            OpenOptions::default(),
            c.clone(),
            c.source_key(&url, &[]),
        )
        .await
        .unwrap()
    };
    let store = open_store().await;
    assert_eq!(store.nodes(), &groups_nodes()[..]);
    let opened = store.traffic().requests;
    assert!((1..=2).contains(&opened), "a small file whole: {opened}");
    for (path, file) in [
        ("/model/run1/values", "groups_model_run1_values.npy"),
        ("model/weights", "groups_model_weights.npy"),
        ("/time", "groups_time.npy"),
    ] {
        let arr = store.get(path).await.unwrap();
        check(&arr, &npy(&fixtures().join("hdf5").join(file)), "").await;
        check(&arr, &npy(&fixtures().join("hdf5").join(file)), "1:5").await;
    }
    assert_eq!(
        store.traffic().requests,
        opened,
        "leaves share the store's copy"
    );
    assert!(store.get("/nope").await.is_err());

    let again = open_store().await;
    assert_eq!(again.nodes(), &groups_nodes()[..]);
    assert_eq!(again.traffic().requests, 0, "warm store reopen");

    // A single array is not a store.
    let traffic = Traffic::new();
    let u = server.url("blosc2/be_f8.b2nd");
    let t = transport(&u, vec![], &traffic).unwrap();
    let e = RemoteStore::open(
        t,
        traffic,
        OpenOptions::default(),
        c.clone(),
        c.source_key(&u, &[]),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED");
    server.shutdown().await;
}

fn cli(args: Vec<String>) -> (serde_json::Value, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap_or("").to_string();
    (
        serde_json::from_str(&last).unwrap_or(serde_json::Value::Null),
        text,
    )
}

/// Two runs of the real binary with `--cache disk`: the second makes no request and writes
/// the same `.npy`, equal to the written array.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_disk_cache_second_run_makes_no_request() {
    let server = serve(big_dir()).await;
    let url = server.url("big.h5");
    let tmp = tempfile::tempdir().unwrap();
    let run = |n: u32| {
        let out = tmp.path().join(format!("run{n}.npy"));
        let args: Vec<String> = [
            "read",
            &url,
            "--path",
            "/data",
            "--select",
            "100:300, 0:250",
            "--cache",
            "disk",
            "--cache-dir",
            tmp.path().join("cache").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        (args, out)
    };
    let (a1, o1) = run(1);
    let (j1, _) = tokio::task::spawn_blocking(move || cli(a1)).await.unwrap();
    let (a2, o2) = run(2);
    let (j2, _) = tokio::task::spawn_blocking(move || cli(a2)).await.unwrap();
    assert!(j1["requests"].as_u64().unwrap() > 0, "{j1}");
    assert_eq!(j2["requests"].as_u64().unwrap(), 0, "{j2}");
    assert_eq!(j2["bytes"].as_u64().unwrap(), 0, "{j2}");
    let (r1, r2) = (npy(&o1), npy(&o2));
    assert_eq!(r1, r2);
    let want = npy(&big_dir().join("data.npy"));
    let s = Selection::parse("100:300, 0:250").unwrap();
    let dims = s.resolve(&want.shape).unwrap();
    assert!(r1.data == reference(&want.data, &want.shape, 4, &dims));

    // `chunks` and `info` with the same cache directory: warm, no request.
    let cache = tmp.path().join("cache").to_str().unwrap().to_string();
    let u = url.clone();
    let (j, _) = tokio::task::spawn_blocking(move || {
        cli([
            "info",
            &u,
            "--path",
            "/data",
            "--json",
            "--cache",
            "disk",
            "--cache-dir",
            &cache,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect())
    })
    .await
    .unwrap();
    assert_eq!(j["requests"].as_u64().unwrap(), 0, "{j}");
    assert_eq!(j["shape"], serde_json::json!([2000, 1600]));
    // The server agrees, and `chunks` answers from the cached record too.
    assert_eq!(server.stats().requests, j1["requests"].as_u64().unwrap());
    let cache = tmp.path().join("cache").to_str().unwrap().to_string();
    let u = url.clone();
    let (map, _) = tokio::task::spawn_blocking(move || {
        cli([
            "chunks",
            &u,
            "--path",
            "/data",
            "--json",
            "--cache",
            "disk",
            "--cache-dir",
            &cache,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect())
    })
    .await
    .unwrap();
    assert_eq!(map.as_array().unwrap().len(), 80, "10 x 8 allocated chunks");
    assert_eq!(server.stats().requests, j1["requests"].as_u64().unwrap());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_info_lists_a_container_without_path() {
    let server = serve(&fixtures()).await;
    let url = server.url("hdf5/groups.h5");
    let (j, text) =
        tokio::task::spawn_blocking(move || cli(vec!["info".into(), url, "--json".into()]))
            .await
            .unwrap();
    assert_eq!(text.lines().count(), 1, "one JSON line: {text}");
    let nodes: Vec<Node> = serde_json::from_value(j).unwrap();
    assert_eq!(nodes, groups_nodes());
    server.shutdown().await;
}
