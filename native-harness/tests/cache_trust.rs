//! What the caches may never do, checked with the real binary and the real range server on
//! loopback: mix two versions of a source rewritten at the same URL, keep or print a URL's
//! query or user info, or live in a directory other users can write to. The versions are
//! written at test time by python-blosc2 from seeded arrays (`tests/fixtures/gen_versions.py`);
//! expected values are those arrays (`vN.npy`).

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::CacheCoordinator;
use chunkwise::io::Traffic;
use chunkwise::npy::{read_npy, Npy};
use chunkwise::selection::Selection;
use native_harness::serve::ServerHandle;
use native_harness::source::transport;
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

async fn serve(root: &Path) -> ServerHandle {
    common::fault_server(root, &[], false).await
}

/// Puts version `v` at `dir/data.b2nd`, as a publisher rewriting the file in place would
/// (same name, a later modification time, so the server's `ETag` and `Last-Modified` change).
fn publish(dir: &Path, v: &str, step: u64) {
    let target = dir.join("data.b2nd");
    std::fs::copy(versions().join(format!("{v}.b2nd")), &target).unwrap();
    let t =
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000 + step);
    std::fs::File::options()
        .write(true)
        .open(&target)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// Runs the real binary; (exit success, last stdout line as JSON, stderr).
fn cli(args: &[String]) -> (bool, serde_json::Value, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap_or("").to_string();
    (
        out.status.success(),
        serde_json::from_str(&last).unwrap_or(serde_json::Value::Null),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `chunkwise read URL --select SEL --cache disk --cache-dir DIR --out OUT`, plus `extra`.
async fn read_disk(
    url: &str,
    sel: &str,
    cache: &Path,
    out: &Path,
    extra: &[&str],
) -> (bool, serde_json::Value, String) {
    let mut a = args(&[
        "read",
        url,
        "--select",
        sel,
        "--cache",
        "disk",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    a.extend(args(extra));
    tokio::task::spawn_blocking(move || cli(&a)).await.unwrap()
}

/// The rows `sel` of the version `v` as written.
fn expected(v: &str, sel: &str) -> Vec<u8> {
    let want = npy(&versions().join(format!("{v}.npy")));
    let s = Selection::parse(sel).unwrap();
    let dims = s.resolve(&want.shape).unwrap();
    reference(&want.data, &want.shape, 4, &dims)
}

fn npy_data(path: &Path) -> Vec<u8> {
    npy(path).data
}

/// A `.b2nd` rewritten at the same URL with other values of the same size, then with another
/// size: a second `read --cache disk` returns exactly the new version (the open restarts
/// once on SOURCE_CHANGED), never cached chunks of the old one beside fetched chunks of the
/// new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_cache_never_mixes_two_versions() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1", 1);
    let server = serve(root.path()).await;
    let url = server.url("data.b2nd");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("out.npy");

    // Run 1 caches the record and chunk 0 of v1.
    let (ok, j, err) = read_disk(&url, "0:256", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    assert!(npy_data(&out) == expected("v1", "0:256"), "run 1 reads v1");
    assert!(j["requests"].as_u64().unwrap() >= 2, "{j}");

    // Same size, other values: chunk 0 is cached (old), chunk 1 must be fetched (new).
    publish(root.path(), "v2", 2);
    let (ok, j, err) = read_disk(&url, "0:512", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    let got = npy_data(&out);
    assert!(
        got == expected("v2", "0:512"),
        "after the rewrite the read is exactly v2"
    );
    assert!(
        got[..256 * 1536 * 4] != expected("v1", "0:256")[..],
        "no row of v1 left"
    );
    // The answer to the first chunk fetch shows the new ETag, the open restarts: header,
    // offsets and both chunks of v2 are fetched.
    assert!(j["requests"].as_u64().unwrap() >= 4, "{j}");

    // A warm third run of v2 makes no request and still reads v2.
    let (ok, j, err) = read_disk(&url, "0:512", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    assert_eq!(j["requests"], 0, "{j}");
    assert!(npy_data(&out) == expected("v2", "0:512"));

    // Another size: not a DECODE error, the new version.
    publish(root.path(), "v3", 3);
    let (ok, j, err) = read_disk(&url, "1280:1600", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    assert_eq!(j["shape"], serde_json::json!([320, 1536]), "{j}");
    assert!(npy_data(&out) == expected("v3", "1280:1600"));
    server.shutdown().await;
}

/// In the library, a read on an array opened from the record of an older version fails with
/// SOURCE_CHANGED and the coordinator forgets the source: a reopen reads the new version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_of_a_changed_source_fails_and_the_reopen_is_fresh() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1", 1);
    let server = serve(root.path()).await;
    let url = server.url("data.b2nd");
    let tmp = tempfile::tempdir().unwrap();
    let coordinator = CacheCoordinator::disk(tmp.path(), Some(64 << 20)).unwrap();
    let open = || async {
        let traffic = Traffic::new();
        let t = transport(&url, vec![], &traffic).unwrap();
        let key = coordinator.source_key(&url, &[]);
        RemoteArray::open_with_cache(t, traffic, OpenOptions::default(), coordinator.clone(), key)
            .await
            .unwrap()
    };
    let sel = |s: &str| Selection::parse(s).unwrap();
    let a = open().await;
    let got = a
        .read(&sel("0:256"), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == expected("v1", "0:256"));
    drop(a);

    publish(root.path(), "v2", 2);
    let warm = open().await;
    assert_eq!(warm.traffic().requests, 0, "the record is trusted at open");
    let e = warm
        .read(&sel("0:512"), &ReadOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "SOURCE_CHANGED", "{e}");
    let fresh = open().await;
    assert!(fresh.traffic().requests > 0, "the record of v1 was dropped");
    let got = fresh
        .read(&sel("0:512"), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == expected("v2", "0:512"));
    server.shutdown().await;
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push(p.clone());
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A URL with `user:password@` and a token query, read with a header: no file of the cache
/// directory holds any of them, and an error message shows none of them. Cache files are
/// 0600 and directories 0700.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_secret_reaches_the_cache_directory_or_a_message() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1", 1);
    let server = serve(root.path()).await;
    let base = server.url("");
    let authed = base.replacen("http://", "http://reader:pa55word@", 1);
    let url = format!("{authed}data.b2nd?token=t0ken-123&x=1");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("o.npy");
    let (ok, _, err) = read_disk(
        &url,
        "0:300",
        &cache,
        &out,
        &["--header", "X-Api-Key: k3y-456"],
    )
    .await;
    assert!(ok, "{err}");
    assert!(npy_data(&out) == expected("v1", "0:300"));
    let (ok, j, err) = read_disk(
        &url,
        "0:300",
        &cache,
        &out,
        &["--header", "X-Api-Key: k3y-456"],
    )
    .await;
    assert!(ok, "{err}");
    assert_eq!(j["requests"], 0, "the keyed entries are found again: {j}");

    let mut files = Vec::new();
    all_files(&cache, &mut files);
    assert!(files.len() > 6, "{files:?}");
    for f in &files {
        let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        if f.is_dir() {
            assert_eq!(mode, 0o700, "{}", f.display());
            continue;
        }
        assert_eq!(mode, 0o600, "{}", f.display());
        let bytes = std::fs::read(f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [
            "pa55word",
            "reader",
            "t0ken-123",
            "k3y-456",
            "token=",
            "x=1",
        ] {
            assert!(!text.contains(secret), "{} holds {secret:?}", f.display());
        }
    }
    let m = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(m, 0o700);

    // Errors: a missing object named by a URL with a password and a token.
    let missing = format!("{authed}missing.b2nd?token=t0ken-123");
    let (ok, _, err) = tokio::task::spawn_blocking(move || cli(&args(&["info", &missing])))
        .await
        .unwrap();
    assert!(!ok);
    assert!(err.contains("\"code\":\"NOT_FOUND\""), "{err}");
    assert!(
        !err.contains("pa55word") && !err.contains("t0ken-123"),
        "{err}"
    );
    assert!(
        err.contains("missing.b2nd"),
        "the message still names the object: {err}"
    );
    server.shutdown().await;
}

/// A cache directory other users can write to is refused with INVALID_ARGUMENT naming the
/// path and the mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_cache_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("shared");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let file = fixtures().join("sample/field2d_f4.b2nd");
    let a = args(&[
        "read",
        file.to_str().unwrap(),
        "--select",
        "0",
        "--cache",
        "disk",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    let (ok, _, err) = tokio::task::spawn_blocking(move || cli(&a)).await.unwrap();
    assert!(!ok);
    assert!(err.contains("\"code\":\"INVALID_ARGUMENT\""), "{err}");
    assert!(
        err.contains("0777") && err.contains(cache.to_str().unwrap()),
        "{err}"
    );
}

/// A signed URL (a new signature each time) is not persisted under DISK, since it names no
/// stable source; with `--cache-key` it is, and a run with another signature finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_urls_persist_only_under_a_cache_key() {
    let root = tempfile::tempdir().unwrap();
    publish(root.path(), "v1", 1);
    let server = serve(root.path()).await;
    let signed = |sig: &str| {
        server.url(&format!(
            "data.b2nd?X-Amz-Expires=600&X-Amz-Signature={sig}"
        ))
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let out = tmp.path().join("o.npy");
    let (ok, j1, err) = read_disk(&signed("aaaa"), "0:10", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    let (ok, j2, err) = read_disk(&signed("aaaa"), "0:10", &cache, &out, &[]).await;
    assert!(ok, "{err}");
    assert_eq!(
        j1["requests"], j2["requests"],
        "nothing was persisted: {j1} {j2}"
    );
    let mut files = Vec::new();
    all_files(&cache, &mut files);
    assert!(
        files.iter().all(|f| f.is_dir() || f.ends_with("salt")),
        "no entry written: {files:?}"
    );

    let key = ["--cache-key", "v1-data"];
    let (ok, j1, err) = read_disk(&signed("bbbb"), "0:10", &cache, &out, &key).await;
    assert!(ok, "{err}");
    assert!(j1["requests"].as_u64().unwrap() > 0);
    let (ok, j2, err) = read_disk(&signed("cccc"), "0:10", &cache, &out, &key).await;
    assert!(ok, "{err}");
    assert_eq!(j2["requests"], 0, "another signature, same cache key: {j2}");
    assert!(npy_data(&out) == expected("v1", "0:10"));
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

/// A served copy of version 1 of the sharded Zarr store, with a DISK cache directory and an
/// output path for `read_disk`.
struct ZarrRun {
    _root: tempfile::TempDir,
    /// The served store (`shards.zarr`), to rewrite or delete objects in.
    store: PathBuf,
    server: ServerHandle,
    _tmp: tempfile::TempDir,
    cache: PathBuf,
    out: PathBuf,
}

async fn zarr_run() -> ZarrRun {
    let root = tempfile::tempdir().unwrap();
    let store = root.path().join("shards.zarr");
    copy_dir(&versions().join("zarr_v1/shards.zarr"), &store);
    let server = serve(root.path()).await;
    let tmp = tempfile::tempdir().unwrap();
    ZarrRun {
        cache: tmp.path().join("cache"),
        out: tmp.path().join("z.npy"),
        _root: root,
        store,
        server,
        _tmp: tmp,
    }
}

/// The elements `sel` of Zarr version `v` as written.
fn zarr_expected(v: &str, sel: &str) -> Vec<u8> {
    let n = npy(&versions().join(format!("zarr_{v}.npy")));
    let s = Selection::parse(sel).unwrap();
    reference(&n.data, &n.shape, 4, &s.resolve(&n.shape).unwrap())
}

/// A Zarr shard rewritten in place between two runs with a DISK cache: the second run's
/// shard index comes from the new version while an inner chunk of the old one is cached.
/// The answer's version differs from the one recorded, so the open restarts and the read is
/// exactly the new version, never the cached inner chunk beside new ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zarr_shard_rewritten_in_place_is_never_mixed() {
    let r = zarr_run().await;
    let url = r.server.url("shards.zarr");
    let (ok, _, err) = read_disk(&url, "0:5, 0:5", &r.cache, &r.out, &[]).await;
    assert!(ok, "{err}");
    assert!(npy_data(&r.out) == zarr_expected("v1", "0:5, 0:5"));

    let shard = r.store.join("c/0/0");
    std::fs::copy(versions().join("zarr_v2/shards.zarr/c/0/0"), &shard).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&shard)
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let (ok, j, err) = read_disk(&url, "0:10, 0:10", &r.cache, &r.out, &[]).await;
    assert!(ok, "{err}");
    assert!(
        npy_data(&r.out) == zarr_expected("v2", "0:10, 0:10"),
        "the read is exactly the new shard's values: {j}"
    );
    r.server.shutdown().await;
}

/// Zarr entries under DISK hold nothing of the URL's user info or query, and a cache key
/// names a Zarr store whose URL is signed anew each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_cache_entries_hold_no_secret_and_follow_the_cache_key() {
    let r = zarr_run().await;
    let (cache, out) = (&r.cache, &r.out);
    let base = r.server.url("");
    let authed = base.replacen("http://", "http://reader:pa55word@", 1);
    let url = format!("{authed}shards.zarr?token=t0ken-123");
    let (ok, _, err) = read_disk(&url, "0:10, 0:10", cache, out, &[]).await;
    assert!(ok, "{err}");
    let mut files = Vec::new();
    all_files(cache, &mut files);
    assert!(
        files.iter().filter(|f| f.is_file()).count() > 3,
        "{files:?}"
    );
    for f in files.iter().filter(|f| f.is_file()) {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).to_string();
        for secret in ["pa55word", "reader", "t0ken-123", "token="] {
            assert!(!text.contains(secret), "{} holds {secret:?}", f.display());
        }
    }
    let key = ["--cache-key", "shards-v1"];
    let signed = |sig: &str| format!("{base}shards.zarr?X-Amz-Expires=60&X-Amz-Signature={sig}");
    let (ok, j1, err) = read_disk(&signed("aaaa"), "0:10, 0:10", cache, out, &key).await;
    assert!(ok, "{err}");
    assert!(j1["requests"].as_u64().unwrap() > 0);
    let (ok, j2, err) = read_disk(&signed("bbbb"), "0:10, 0:10", cache, out, &key).await;
    assert!(ok, "{err}");
    assert_eq!(
        j2["requests"], 0,
        "another signature, the same cache key: {j2}"
    );
    assert!(npy_data(out) == zarr_expected("v1", "0:10, 0:10"));
    r.server.shutdown().await;
}

/// A Zarr shard deleted between two DISK runs (an inner chunk of it cached): not fill values
/// beside the cached chunk, but a restart that reads the store as it now is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zarr_shard_deleted_between_runs_is_not_mixed_with_its_cached_chunks() {
    let r = zarr_run().await;
    let url = r.server.url("shards.zarr");
    let (ok, _, err) = read_disk(&url, "0:5, 0:5", &r.cache, &r.out, &[]).await;
    assert!(ok, "{err}");
    std::fs::remove_file(r.store.join("c/0/0")).unwrap();
    let (ok, j, err) = read_disk(&url, "0:10, 0:10", &r.cache, &r.out, &[]).await;
    assert!(ok, "{err}");
    // The store now holds no shard: every element is the fill value (0), none is v1's.
    assert!(npy_data(&r.out).iter().all(|&b| b == 0), "{j}");
    assert_eq!(j["missing_chunks"], 4, "{j}");
    r.server.shutdown().await;
}
