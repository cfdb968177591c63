//! Freshness of cached sources, with the real range server on loopback: the mutable-source
//! mode of a standalone `.b2nd` (`OpenOptions::assume_immutable` false, CLI `--mutable`),
//! the cache status an open reports, and the refresh of a store. The versions are written
//! at test time by python-blosc2 and h5py from seeded arrays
//! (`tests/fixtures/gen_versions.py`); expected values are those arrays (`.npy`).

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::{CacheCoordinator, CacheStatus};
use chunkwise::npy::{read_npy, Npy};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};

mod common;
use common::reference;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn npy(path: &Path) -> Npy {
    read_npy(&std::fs::read(path).unwrap()).unwrap()
}

use common::versions;

/// Puts the version file `file` (of [`versions`]) at `dir/name`, as a publisher rewriting
/// the file in place would: same name, modification time `step` seconds after a fixed
/// instant, so the server's `ETag` and `Last-Modified` change.
fn publish(dir: &Path, file: &str, name: &str, step: u64) {
    let target = dir.join(name);
    std::fs::copy(versions().join(file), &target).unwrap();
    let t =
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + step);
    std::fs::File::options()
        .write(true)
        .open(&target)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn sel(s: &str) -> Selection {
    Selection::parse(s).unwrap()
}

/// The rows `sel` of the `.b2nd` version `v` (float32) as written.
fn expected(v: &str, s: &str) -> Vec<u8> {
    let want = npy(&versions().join(format!("{v}.npy")));
    let dims = sel(s).resolve(&want.shape).unwrap();
    reference(&want.data, &want.shape, 4, &dims)
}

fn mutable() -> OpenOptions {
    OpenOptions {
        assume_immutable: false,
        ..Default::default()
    }
}

/// Opens `url` as an array with a new DISK coordinator on `cache` (as a new process would).
async fn open_disk(
    url: &str,
    cache: &Path,
    options: OpenOptions,
) -> chunkwise::Result<RemoteArray> {
    let coordinator = CacheCoordinator::disk(cache, Some(64 << 20)).unwrap();
    chunkwise::open::open_array(url, vec![], options, coordinator).await
}

/// A `.b2nd` rewritten at the same URL (same size, other values) and reopened from a DISK
/// cache in the mutable-source mode: the open sees the change, drops what it held, and the
/// read is exactly the new version with no `SOURCE_CHANGED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutable_reopen_of_a_rewritten_b2nd_reads_the_new_version() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1.b2nd", "data.b2nd", 1);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("data.b2nd");
    let tmp = tempfile::tempdir().unwrap();

    let cold = open_disk(&url, tmp.path(), mutable()).await.unwrap();
    assert_eq!(cold.cache_status(), CacheStatus::Created);
    let got = cold
        .read(&sel("0:256"), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == expected("v1", "0:256"), "v1 read");
    assert!(cold.cache_bytes() > 0, "chunk 0 of v1 is cached");
    drop(cold);

    publish(root.path(), "v2.b2nd", "data.b2nd", 2);
    let before = server.stats().requests;
    let warm = open_disk(&url, tmp.path(), mutable()).await.unwrap();
    let got = warm
        .read(&sel("0:512"), &ReadOptions::default())
        .await
        .expect("no SOURCE_CHANGED: the open saw the change");
    assert_eq!(warm.cache_status(), CacheStatus::Invalidated);
    assert!(got.data == expected("v2", "0:512"), "exactly v2");
    assert!(
        got.data[..256 * 1536 * 4] != expected("v1", "0:256")[..],
        "no row of v1"
    );
    // The check, the head and offsets of v2, its chunks 0 and 1 (one coalesced request or two).
    let requests = server.stats().requests - before;
    assert!((4..=5).contains(&requests), "{requests} requests");
    assert_eq!(warm.traffic().requests, requests);
    server.shutdown().await;
}

/// An unchanged `.b2nd` reopened from a warm DISK cache in the mutable-source mode costs
/// exactly one request (one byte) for the check, and the cached region is read with none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutable_reopen_of_an_unchanged_b2nd_costs_one_request() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1.b2nd", "data.b2nd", 1);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("data.b2nd");
    let tmp = tempfile::tempdir().unwrap();

    let cold = open_disk(&url, tmp.path(), OpenOptions::default())
        .await
        .unwrap();
    cold.read(&sel("0:256"), &ReadOptions::default())
        .await
        .unwrap();
    drop(cold);

    let before = server.stats().requests;
    let warm = open_disk(&url, tmp.path(), mutable()).await.unwrap();
    assert_eq!(warm.cache_status(), CacheStatus::Reused);
    assert_eq!(server.stats().requests - before, 1, "one check request");
    let t = warm.traffic();
    assert_eq!((t.requests, t.bytes), (1, 1), "the check reads one byte");
    let log = server.requests();
    assert_eq!(log.last().unwrap().range.as_deref(), Some("bytes=0-0"));
    let got = warm
        .read(&sel("0:256"), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == expected("v1", "0:256"));
    assert_eq!(
        (warm.traffic().requests, warm.traffic().bytes),
        (1, 1),
        "the cached region is read with no request"
    );
    assert_eq!(server.stats().requests - before, 1);
    server.shutdown().await;
}

/// A small `.b2nd` (held whole as the coordinator's source copy) rewritten with another
/// array: an immutable reopen serves the held copy, a mutable one sees the change with its
/// one request, drops the copy and reads the new array; unchanged, it costs that request
/// only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutable_reopen_does_not_serve_a_stale_source_copy() {
    let blosc2 = fixtures().join("blosc2");
    let root = tempfile::tempdir().unwrap();
    let place = |name: &str, step: u64| {
        let target = root.path().join("small.b2nd");
        std::fs::copy(blosc2.join(name), &target).unwrap();
        let t = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs(1_700_000_000 + step);
        std::fs::File::options()
            .write(true)
            .open(&target)
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    place("be_i4.b2nd", 1);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("small.b2nd");
    let c = CacheCoordinator::memory(1 << 20);
    let open = |options: OpenOptions| chunkwise::open::open_array(&url, vec![], options, c.clone());
    let want = |name: &str| npy(&blosc2.join(name)).data;

    let a = open(OpenOptions::default()).await.unwrap();
    assert!(read_all(&a).await.unwrap() == want("be_i4.npy"));
    let before = server.stats().requests;
    let a = open(mutable()).await.unwrap();
    assert_eq!(server.stats().requests - before, 1, "one check request");
    assert_eq!(a.cache_status(), CacheStatus::Reused);
    assert!(read_all(&a).await.unwrap() == want("be_i4.npy"));
    assert_eq!(
        server.stats().requests - before,
        1,
        "read from the held copy"
    );

    place("be_f8.b2nd", 2);
    let stale = open(OpenOptions::default()).await.unwrap();
    assert!(
        read_all(&stale).await.unwrap() == want("be_i4.npy"),
        "immutable by default: the held copy is served"
    );
    let a = open(mutable()).await.unwrap();
    assert_eq!(a.cache_status(), CacheStatus::Invalidated);
    assert_eq!(a.dtype_descr(), ">f8");
    assert!(
        read_all(&a).await.unwrap() == want("be_f8.npy"),
        "the new array"
    );
    server.shutdown().await;
}

/// A discovery record of another version is dropped and reported as `invalidated`; the
/// reopen discovers afresh and reads the values written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_of_another_version_is_invalidated() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let url = server.url("blosc2/be_i4.b2nd");
    let c = CacheCoordinator::memory(1 << 20);
    let open = || chunkwise::open::open_array(&url, vec![], OpenOptions::default(), c.clone());
    assert_eq!(open().await.unwrap().cache_status(), CacheStatus::Created);
    let record_key = chunkwise::open::source_key(&url, &[], &c, None).scoped("");
    let json = String::from_utf8(c.record(&record_key).await.unwrap().to_vec()).unwrap();
    let v = chunkwise::cache::discovery::DISCOVERY_VERSION;
    let older = json.replacen(
        &format!("\"version\":{v}"),
        &format!("\"version\":{}", v - 1),
        1,
    );
    assert_ne!(older, json);
    c.put_record(&record_key, older.into_bytes()).await;
    let a = open().await.unwrap();
    assert_eq!(a.cache_status(), CacheStatus::Invalidated);
    let want = npy(&fixtures().join("blosc2/be_i4.npy")).data;
    assert!(read_all(&a).await.unwrap() == want);
    assert_eq!(open().await.unwrap().cache_status(), CacheStatus::Reused);
    server.shutdown().await;
}

/// The mutable-source mode is refused for the formats whose readers assume immutability
/// (HDF5, Zarr) and for stores, with INVALID_ARGUMENT naming the format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mutable_mode_is_refused_for_other_formats() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let coordinator = || CacheCoordinator::memory(1 << 20);
    let h5 = server.url("hdf5/byteorder.h5");
    let zarr = server.url("zarr/v3.zarr");
    for (url, path, format) in [
        (&h5, Some("/be_f8"), "hdf5"),
        (&zarr, Some("/temperature"), "zarr"),
    ] {
        let options = OpenOptions {
            path: path.map(str::to_string),
            ..mutable()
        };
        let e = chunkwise::open::open_array(url, vec![], options, coordinator())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains(format), "{e}");
        assert!(e.to_string().contains("assume_immutable"), "{e}");
        let e = chunkwise::open::open_store(url, vec![], mutable(), coordinator())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains("store"), "{e}");
    }
    // A warm HDF5 record is refused too, without a request.
    let c = coordinator();
    let options = OpenOptions {
        path: Some("/be_f8".into()),
        ..Default::default()
    };
    chunkwise::open::open_array(&h5, vec![], options.clone(), c.clone())
        .await
        .unwrap();
    let before = server.stats().requests;
    let e = chunkwise::open::open_array(
        &h5,
        vec![],
        OpenOptions {
            assume_immutable: false,
            ..options
        },
        c,
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert_eq!(server.stats().requests, before);
    server.shutdown().await;
}

/// Runs the real binary; (exit success, last stdout line as JSON, stderr).
async fn cli(args: Vec<String>) -> (bool, serde_json::Value, String) {
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
            .args(&args)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let last = text.lines().last().unwrap_or("").to_string();
        (
            out.status.success(),
            serde_json::from_str(&last).unwrap_or(serde_json::Value::Null),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `chunkwise info --json` reports `cache_status`: created cold, reused warm, invalidated
/// for a rewritten source under `--mutable`; `read --mutable` then reads the new version
/// with no restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_reports_cache_status_and_reads_a_mutable_source() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1.b2nd", "data.b2nd", 1);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("data.b2nd");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("out.npy");
    let disk = |cmd: &str, extra: &[&str]| {
        let mut a = args(&[
            cmd,
            &url,
            "--cache",
            "disk",
            "--cache-dir",
            cache.to_str().unwrap(),
        ]);
        a.extend(args(extra));
        a
    };
    let status = |j: &serde_json::Value| j["cache_status"].as_str().unwrap_or("").to_string();

    let (ok, j, err) = cli(disk("info", &["--json"])).await;
    assert!(ok, "{err}");
    assert_eq!(status(&j), "created", "{j}");
    let (ok, j, err) = cli(disk("info", &["--json"])).await;
    assert!(ok, "{err}");
    assert_eq!(status(&j), "reused", "{j}");
    assert_eq!(j["requests"], 0, "{j}");
    let (ok, j, err) = cli(disk("info", &["--json", "--mutable"])).await;
    assert!(ok, "{err}");
    assert_eq!(
        (status(&j), j["requests"].as_u64()),
        ("reused".into(), Some(1)),
        "{j}"
    );
    let (ok, _, err) = cli(disk(
        "read",
        &["--select", "0:256", "--out", out.to_str().unwrap()],
    ))
    .await;
    assert!(ok, "{err}");

    publish(root.path(), "v2.b2nd", "data.b2nd", 2);
    let (ok, j, err) = cli(disk("info", &["--json", "--mutable"])).await;
    assert!(ok, "{err}");
    assert_eq!(status(&j), "invalidated", "{j}");
    publish(root.path(), "v1.b2nd", "data.b2nd", 3);
    let before = server.stats().requests;
    let (ok, j, err) = cli(disk(
        "read",
        &[
            "--select",
            "0:512",
            "--out",
            out.to_str().unwrap(),
            "--mutable",
        ],
    ))
    .await;
    assert!(ok, "{err}");
    assert!(
        npy(&out).data == expected("v1", "0:512"),
        "the version now served"
    );
    // The check, header, offsets and two chunks: no failed first attempt and restart.
    let requests = j["requests"].as_u64().unwrap();
    assert!((4..=5).contains(&requests), "{j}");
    assert_eq!(server.stats().requests - before, requests);

    // --mutable on an HDF5 file is refused, not answered with a listing.
    let h5 = fixtures().join("hdf5/groups.h5");
    let (ok, _, err) = cli(args(&["info", h5.to_str().unwrap(), "--mutable"])).await;
    assert!(!ok);
    assert!(
        err.contains("\"code\":\"INVALID_ARGUMENT\"") && err.contains("hdf5"),
        "{err}"
    );
    server.shutdown().await;
}

/// Stores report their cache status too: an HDF5 file's or a Zarr store's listing is
/// created cold and reused warm; `cache_bytes` counts the payload their reads keep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_report_created_then_reused() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    for (url, path) in [
        (server.url("hdf5/byteorder.h5"), "/be_i2_chunked"),
        (server.url("zarr/v3.zarr"), "/temperature"),
    ] {
        let c = CacheCoordinator::memory(1 << 20);
        let open = || chunkwise::open::open_store(&url, vec![], OpenOptions::default(), c.clone());
        let cold = open().await.unwrap();
        assert_eq!(cold.cache_status(), CacheStatus::Created, "{url}");
        assert_eq!(cold.cache_bytes(), 0);
        let a = cold.get(path).await.unwrap();
        a.read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(cold.cache_bytes() > 0, "{url}: the read's chunks are kept");
        assert_eq!(a.cache_bytes(), cold.cache_bytes(), "one coordinator");
        let warm = open().await.unwrap();
        assert_eq!(warm.cache_status(), CacheStatus::Reused, "{url}");
        assert_eq!(warm.traffic().requests, 0, "{url}");
    }
    server.shutdown().await;
}

/// The arrays `h5_v{version}{path}.npy` as written.
fn h5_expected(version: u32, path: &str) -> Npy {
    npy(&versions().join(format!("h5_v{version}{}.npy", path.replace('/', "_"))))
}

async fn read_all(a: &RemoteArray) -> chunkwise::Result<Vec<u8>> {
    Ok(a.read(&Selection::all(), &ReadOptions::default())
        .await?
        .data)
}

/// An HDF5 store whose file is rewritten: `refresh` lists and reads the new version, arrays
/// got before fail with STALE, arrays got after read the new values; both for a small file
/// (held whole) and for one read by ranges (`small_source_bytes` below its size).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshed_store_reads_the_new_version_and_old_handles_are_stale() {
    refreshed_store(OpenOptions::default()).await;
    refreshed_store(OpenOptions {
        small_source_bytes: 1024,
        head_bytes: 1024,
        ..Default::default()
    })
    .await;
}

async fn refreshed_store(options: OpenOptions) {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "h5_v1.h5", "data.h5", 1);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("data.h5");
    let coordinator = CacheCoordinator::memory(1 << 20);
    let store = chunkwise::open::open_store(&url, vec![], options.clone(), coordinator.clone())
        .await
        .unwrap();
    assert_eq!(store.cache_status(), CacheStatus::Created);
    let old = store.get("/data").await.unwrap();
    assert!(read_all(&old).await.unwrap() == h5_expected(1, "/data").data);
    assert!(!store.nodes().iter().any(|n| n.path == "/extra"));

    publish(root.path(), "h5_v2.h5", "data.h5", 2);
    // Without a refresh the store trusts what it holds (immutable by default).
    let again = chunkwise::open::open_store(&url, vec![], options.clone(), coordinator.clone())
        .await
        .unwrap();
    assert_eq!(again.cache_status(), CacheStatus::Reused);

    store.refresh().await.unwrap();
    assert_eq!(store.cache_status(), CacheStatus::Invalidated);
    let data = store.nodes().iter().find(|n| n.path == "/data").unwrap();
    assert_eq!(data.shape.as_deref(), Some(&[120u64][..]), "{data:?}");
    assert!(store.nodes().iter().any(|n| n.path == "/extra"));
    let new = store.get("/data").await.unwrap();
    assert_eq!(new.shape(), &[120]);
    assert!(read_all(&new).await.unwrap() == h5_expected(2, "/data").data);
    let extra = store.get("/extra").await.unwrap();
    assert!(read_all(&extra).await.unwrap() == h5_expected(2, "/extra").data);
    let b = store.get("/group/b").await.unwrap();
    assert!(read_all(&b).await.unwrap() == h5_expected(2, "/group/b").data);

    let e = read_all(&old).await.unwrap_err();
    assert_eq!(e.code(), "STALE", "{e}");
    assert!(e.to_string().contains("store.get"), "{e}");
    // A second refresh makes the handles of the first stale in turn.
    store.refresh().await.unwrap();
    assert_eq!(read_all(&new).await.unwrap_err().code(), "STALE");
    let newer = store.get("/data").await.unwrap();
    assert!(read_all(&newer).await.unwrap() == h5_expected(2, "/data").data);
    server.shutdown().await;
}

/// A refresh against a server answering 500 fails, and the store and its arrays keep
/// reading the old generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_refresh_leaves_the_old_generation_usable() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "h5_v1.h5", "data.h5", 1);
    // The file is under 64 KiB: the open is one GET (the whole file); every GET after it
    // is answered 500.
    let server = common::fault_server(root.path(), &["after=1:status=data.h5:500"], false).await;
    let url = server.url("data.h5");
    let store = chunkwise::open::open_store(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap();
    let old = store.get("/data").await.unwrap();
    assert!(read_all(&old).await.unwrap() == h5_expected(1, "/data").data);
    assert_eq!(server.stats().gets, 1, "the fault starts after the open");

    publish(root.path(), "h5_v2.h5", "data.h5", 2);
    let e = store.refresh().await.unwrap_err();
    assert_eq!(e.code(), "HTTP_STATUS", "{e}");
    assert!(server.stats().gets > 1, "the refresh asked the server");
    assert_eq!(store.cache_status(), CacheStatus::Created);
    assert!(read_all(&old).await.unwrap() == h5_expected(1, "/data").data);
    assert!(!store.nodes().iter().any(|n| n.path == "/extra"));
    let data = store.get("/data").await.unwrap();
    assert!(read_all(&data).await.unwrap() == h5_expected(1, "/data").data);
    let b = store.get("/group/b").await.unwrap();
    assert!(read_all(&b).await.unwrap() == h5_expected(1, "/group/b").data);
    server.shutdown().await;
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// A Zarr store whose shard is rewritten in place: `refresh` lists a new store (nothing
/// remembered), the array got after it reads the new shard's values, the one got before is
/// STALE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refreshed_zarr_store_reads_the_rewritten_shard() {
    let root = tempfile::tempdir().unwrap();
    let store_dir = root.path().join("shards.zarr");
    copy_dir(&versions().join("zarr_v1/shards.zarr"), &store_dir);
    let server = common::fault_server(root.path(), &[], false).await;
    let url = server.url("shards.zarr");
    let expected = |v: u32| npy(&versions().join(format!("zarr_v{v}.npy"))).data;
    let store = chunkwise::open::open_store(
        &url,
        vec![],
        OpenOptions::default(),
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap();
    let old = store.get("/").await.unwrap();
    assert!(read_all(&old).await.unwrap() == expected(1));

    let shard = store_dir.join("c/0/0");
    std::fs::copy(versions().join("zarr_v2/shards.zarr/c/0/0"), &shard).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&shard)
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    store.refresh().await.unwrap();
    let new = store.get("/").await.unwrap();
    assert!(
        read_all(&new).await.unwrap() == expected(2),
        "the new shard"
    );
    assert_eq!(read_all(&old).await.unwrap_err().code(), "STALE");
    server.shutdown().await;
}
