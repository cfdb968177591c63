//! `chunkwise cache ls|verify|clear` on DISK cache directories that the real binary filled by
//! reading fixtures over the loopback range server, and two processes publishing into one
//! cache directory at once. Values are compared with the arrays the generators wrote (their
//! `.npy`).

mod common;

use chunkwise::cache::discovery::SourceIdentity;
use chunkwise::cache::CacheCoordinator;
use chunkwise::npy::{read_npy, Npy};
use native_harness::serve::ServerHandle;
use std::path::{Path, PathBuf};
use std::process::Output;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn npy(path: &Path) -> Npy {
    read_npy(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

async fn serve() -> ServerHandle {
    common::serve_dir(fixtures()).await
}

/// Runs the `chunkwise` binary.
fn run(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs the binary, which must succeed; its stdout lines parsed as JSON.
fn ok(args: &[&str]) -> Vec<serde_json::Value> {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// `chunkwise cache CMD --cache-dir DIR`, succeeding, its one line of JSON (`ls`: all lines).
fn cache(cmd: &str, dir: &Path) -> Vec<serde_json::Value> {
    ok(&["cache", cmd, "--cache-dir", dir.to_str().unwrap()])
}

/// Reads the whole dataset `path` of `url` with `--cache disk --cache-dir cache` into
/// `out`; returns the `requests` reported, after checking the values against `want`.
fn read_checked(url: &str, path: Option<&str>, cache: &Path, out: &Path, want: &Npy) -> u64 {
    let mut args = vec!["read", url, "--select", "..."];
    if let Some(p) = path {
        args.extend(["--path", p]);
    }
    args.extend([
        "--cache",
        "disk",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let lines = ok(&args);
    let got = npy(out);
    assert_eq!(got.shape, want.shape, "{url} {path:?}");
    assert!(got.data == want.data, "{url} {path:?}: values differ");
    lines[0]["requests"].as_u64().unwrap()
}

/// Every file under `root`, recursively.
fn all_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn blobs(dir: &Path) -> Vec<PathBuf> {
    let mut b: Vec<PathBuf> = all_files(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "blob"))
        .collect();
    b.sort();
    b
}

fn flip_middle_byte(path: &Path) {
    let mut data = std::fs::read(path).unwrap();
    let mid = data.len() / 2;
    data[mid] ^= 0x40;
    std::fs::write(path, data).unwrap();
}

/// `ls` after a read of a URL with a query and a credential header lists entries of all
/// three namespaces under the public URL; neither the query nor the header's value appears
/// in the listing or in any file of the cache directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_lists_entries_under_the_public_url_only() {
    let server = serve().await;
    let public = server.url("hdf5/gzip_shuffle.h5");
    let url = format!("{public}?token=qsecret42");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let want = npy(&fixtures().join("hdf5/gzip_shuffle_ints.npy"));
    let d = dir.clone();
    tokio::task::spawn_blocking(move || {
        let lines = ok(&[
            "read",
            &url,
            "--path",
            "/ints",
            "--select",
            "...",
            "--header",
            "Authorization: Bearer hsecret77",
            "--cache",
            "disk",
            "--cache-dir",
            d.to_str().unwrap(),
        ]);
        assert_eq!(lines[0]["shape"], serde_json::json!(want.shape));
    })
    .await
    .unwrap();
    let d = dir.clone();
    let (listed, raw) = tokio::task::spawn_blocking(move || {
        let out = run(&["cache", "ls", "--cache-dir", d.to_str().unwrap()]);
        assert!(out.status.success());
        (cache("ls", &d), String::from_utf8(out.stdout).unwrap())
    })
    .await
    .unwrap();
    // 16 converted chunks, the dataset's record and the source's, the source copy.
    let count = |ns: &str| listed.iter().filter(|l| l["namespace"] == ns).count();
    assert_eq!(
        (count("payload"), count("discovery"), count("sources")),
        (16, 2, 1),
        "{raw}"
    );
    for l in &listed {
        let key = l["key"].as_str().unwrap();
        assert!(key.starts_with(&format!("{public}\n")), "{key}");
        assert!(l["bytes"].as_u64().unwrap() > 0, "{l}");
        assert!(l["used"].as_u64().unwrap() > 1_600_000_000_000, "{l}");
        assert_eq!(
            l.as_object().unwrap().len(),
            4,
            "namespace, key, bytes, used"
        );
    }
    for secret in ["qsecret42", "token", "hsecret77", "Bearer", "?"] {
        assert!(!raw.contains(secret), "{secret} listed: {raw}");
        for f in all_files(&dir) {
            let bytes = std::fs::read(&f).unwrap();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes())
                    || secret == "?" && f.extension().is_some_and(|x| x == "blob"),
                "{secret} written in {}",
                f.display()
            );
        }
    }
    server.shutdown().await;
}

/// `verify` finds a flipped byte in a cached chunk and in the source copy, reports each as
/// bad 1 and removes it; the next reads are right, the chunk is made again from the copy,
/// and once the copy is gone the missing chunks are fetched again from the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_removes_a_flipped_entry_and_the_next_read_refetches() {
    let server = serve().await;
    let url = server.url("hdf5/gzip_shuffle.h5");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let out = tmp.path().join("out.npy");
    let ints = npy(&fixtures().join("hdf5/gzip_shuffle_ints.npy"));
    let floats = npy(&fixtures().join("hdf5/gzip_shuffle_f32_fletcher.npy"));
    let requests = tokio::task::spawn_blocking(move || {
        let cold = read_checked(&url, Some("/ints"), &dir, &out, &ints);
        assert!(cold > 0);
        // 16 chunks, 2 records, 1 copy.
        assert_eq!(
            cache("verify", &dir)[0],
            serde_json::json!({"checked": 19, "bad": 0})
        );
        let payload = blobs(&dir.join("payload"));
        flip_middle_byte(&payload[3]);
        assert_eq!(
            cache("verify", &dir)[0],
            serde_json::json!({"checked": 19, "bad": 1})
        );
        assert!(!payload[3].exists(), "the bad entry is removed");
        assert_eq!(
            cache("verify", &dir)[0],
            serde_json::json!({"checked": 18, "bad": 0})
        );
        let warm = read_checked(&url, Some("/ints"), &dir, &out, &ints);
        assert_eq!(warm, 0, "the chunk is decoded again from the source copy");
        assert_eq!(
            cache("verify", &dir)[0],
            serde_json::json!({"checked": 19, "bad": 0})
        );

        let copy = blobs(&dir.join("sources"));
        assert_eq!(copy.len(), 1);
        flip_middle_byte(&copy[0]);
        assert_eq!(
            cache("verify", &dir)[0],
            serde_json::json!({"checked": 19, "bad": 1})
        );
        // Another dataset of the file: its chunks were never cached, and the copy is gone.
        let other = read_checked(&url, Some("/f32_fletcher"), &dir, &out, &floats);
        assert!(other > 0, "fetched again from the server");
        let again = read_checked(&url, Some("/ints"), &dir, &out, &ints);
        assert_eq!(again, 0, "the cached chunks of /ints are still good");
        assert_eq!(cache("verify", &dir)[0]["bad"], 0);
        cold + warm + other + again
    })
    .await
    .unwrap();
    assert_eq!(server.stats().requests, requests);
    server.shutdown().await;
}

/// `clear` empties a cache directory (entries and salt) and keeps its layout; the next read
/// is cold and right. Directories without the layout are refused and left untouched: an
/// ordinary directory holding files named like entries, one whose payload/ is a symbolic
/// link to such a directory, one missing sources/, one that does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_empties_a_cache_and_refuses_other_directories() {
    let server = serve().await;
    let url = server.url("blosc2/cf_lz4_shuffle.b2nd");
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let dir = root.join("cache");
        let out = root.join("out.npy");
        let want = npy(&fixtures().join("blosc2/cf_lz4_shuffle.npy"));
        assert!(read_checked(&url, None, &dir, &out, &want) > 0);
        let n = cache("ls", &dir).len() as u64;
        assert!(n >= 3, "{n}");
        assert_eq!(cache("clear", &dir)[0], serde_json::json!({"removed": n}));
        assert!(cache("ls", &dir).is_empty());
        assert!(!dir.join("salt").exists());
        for ns in ["payload", "discovery", "sources"] {
            assert!(dir.join(ns).is_dir(), "{ns}/ is kept");
            assert_eq!(std::fs::read_dir(dir.join(ns)).unwrap().count(), 0, "{ns}");
        }
        assert!(
            read_checked(&url, None, &dir, &out, &want) > 0,
            "cold again"
        );
        assert_eq!(cache("clear", &dir)[0], serde_json::json!({"removed": n}));

        // Not cache directories.
        let plain = root.join("plain");
        std::fs::create_dir(&plain).unwrap();
        for f in ["x.json", "x.blob", "salt", "notes.txt"] {
            std::fs::write(plain.join(f), b"keep me").unwrap();
        }
        let linked = root.join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&plain, linked.join("payload")).unwrap();
        std::fs::create_dir(linked.join("discovery")).unwrap();
        std::fs::create_dir(linked.join("sources")).unwrap();
        let partial = root.join("partial");
        std::fs::create_dir_all(partial.join("payload")).unwrap();
        std::fs::create_dir_all(partial.join("discovery")).unwrap();
        std::fs::write(partial.join("payload/y.json"), b"keep me").unwrap();
        for bad in [&plain, &linked, &partial, &root.join("missing")] {
            for cmd in ["clear", "verify", "ls"] {
                let o = run(&["cache", cmd, "--cache-dir", bad.to_str().unwrap()]);
                assert_eq!(o.status.code(), Some(1), "{cmd} {}", bad.display());
                let e: serde_json::Value = serde_json::from_slice(&o.stderr).unwrap();
                assert_eq!(e["error"]["code"], "INVALID_ARGUMENT", "{e}");
                assert!(
                    e["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("not a chunkwise cache directory"),
                    "{e}"
                );
                assert!(o.stdout.is_empty());
            }
        }
        for f in ["x.json", "x.blob", "salt", "notes.txt"] {
            assert_eq!(std::fs::read(plain.join(f)).unwrap(), b"keep me", "{f}");
        }
        assert!(partial.join("payload/y.json").exists());
        assert!(!root.join("missing").exists(), "nothing is created");
    })
    .await
    .unwrap();
    server.shutdown().await;
}

/// Sources the publishing processes share, and how many rounds each publishes.
const SOURCES: u64 = 4;
const ROUNDS: u64 = 50;
const COPY_BYTES: usize = 4096;

/// The bytes of a source copy of version `etag`: different for each version, same size.
fn copy_of(etag: &str) -> Vec<u8> {
    let seed = chunkwise::cache::identity::sha256_hex(etag.as_bytes());
    seed.as_bytes()
        .iter()
        .cycle()
        .take(COPY_BYTES)
        .copied()
        .collect()
}

/// Waits (at most 60 s) until `path` exists.
fn wait_for(path: &Path) {
    let start = std::time::Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed().as_secs() < 60,
            "{} never came",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// One publishing process (run by [`two_processes_publishing_at_once_stay_consistent`]
/// through this test binary; ignored otherwise). Once both are ready it publishes, for
/// `ROUNDS` rounds, a new version of each of `SOURCES` sources into
/// `CHUNKWISE_TEST_CACHE_DIR` (as an open of a small source does: the copy, then its
/// identity record) and looks each up from disk through a second coordinator while holding
/// the source's publication lock. Prints `{"hits","misses","wrong","unlocked"}`: `wrong`
/// counts copies whose bytes are not those of the version their identity names, `misses`
/// lookups that found a copy and a record of different writers, `unlocked` lookups made
/// without the lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a worker process of two_processes_publishing_at_once_stay_consistent"]
async fn publishing_worker() {
    let dir = PathBuf::from(std::env::var("CHUNKWISE_TEST_CACHE_DIR").unwrap());
    let who = std::env::var("CHUNKWISE_TEST_WORKER").unwrap();
    let writer = CacheCoordinator::disk(&dir, Some(1 << 20)).unwrap();
    let reader = CacheCoordinator::disk(&dir, Some(1 << 20)).unwrap();
    std::fs::write(dir.join(format!("ready-{who}")), b"").unwrap();
    wait_for(&dir.join("go"));
    let (mut hits, mut misses, mut wrong, mut unlocked) = (0u64, 0u64, 0u64, 0u64);
    for round in 0..ROUNDS {
        for s in 0..SOURCES {
            let id = format!("http://127.0.0.1/s{s}.h5\nfp");
            let etag = format!("\"{who}-{round}\"");
            let ident = SourceIdentity {
                location: format!("http://127.0.0.1/s{s}.h5"),
                len: COPY_BYTES as u64,
                etag: Some(etag.clone()),
                last_modified: None,
            };
            writer
                .put_source_copy(&id, &ident, copy_of(&etag).into())
                .await;
            let lock = reader.publication_lock(&id).await;
            unlocked += u64::from(lock.is_none());
            reader.clear_memory();
            let found = reader.source_copy(&id).await;
            drop(lock);
            match found {
                Some((ident, bytes)) => {
                    hits += 1;
                    if bytes[..] != copy_of(ident.etag.as_deref().unwrap())[..] {
                        wrong += 1;
                    }
                }
                None => misses += 1,
            }
        }
    }
    assert_eq!(writer.stats().cache_errors, 0);
    let counts = serde_json::json!({
        "hits": hits, "misses": misses, "wrong": wrong, "unlocked": unlocked
    });
    println!("{counts}");
}

/// Two processes publish new versions of the same small sources into one cache directory
/// at once, 50 rounds each. No lookup ever pairs one version's bytes with another's
/// identity; every lookup under the publication lock finds one writer's copy with that
/// writer's record (without the lock the two writers' copies and records interleave, and
/// such lookups miss); afterwards every source still does, `cache verify` finds every entry
/// good, and two concurrent CLI reads into a fresh directory give the written arrays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_publishing_at_once_stay_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    CacheCoordinator::disk(&dir, Some(1 << 20)).unwrap();
    let exe = std::env::current_exe().unwrap();
    let workers: Vec<_> = ["a", "b"]
        .iter()
        .map(|who| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "publishing_worker", "--nocapture"])
                .env("CHUNKWISE_TEST_CACHE_DIR", &dir)
                .env("CHUNKWISE_TEST_WORKER", who)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    wait_for(&dir.join("ready-a"));
    wait_for(&dir.join("ready-b"));
    std::fs::write(dir.join("go"), b"").unwrap();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let counts: serde_json::Value = text
            .lines()
            .find_map(|l| {
                serde_json::from_str(l)
                    .ok()
                    .filter(|v: &serde_json::Value| v.is_object())
            })
            .unwrap_or_else(|| panic!("no counts in {text}"));
        eprintln!("worker: {counts}");
        assert_eq!(counts["wrong"], 0, "{counts}");
        assert_eq!(counts["misses"], 0, "{counts}");
        assert_eq!(counts["unlocked"], 0, "{counts}");
        assert_eq!(
            counts["hits"].as_u64().unwrap() + counts["misses"].as_u64().unwrap(),
            ROUNDS * SOURCES
        );
    }
    let c = CacheCoordinator::disk(&dir, Some(1 << 20)).unwrap();
    for s in 0..SOURCES {
        let (ident, bytes) = c
            .source_copy(&format!("http://127.0.0.1/s{s}.h5\nfp"))
            .await
            .unwrap_or_else(|| panic!("source {s}: its copy and record are of different writers"));
        let etag = ident.etag.unwrap();
        assert!(etag.ends_with(&format!("-{}\"", ROUNDS - 1)), "{etag}");
        assert!(bytes[..] == copy_of(&etag)[..]);
    }
    let d = dir.clone();
    let verified = tokio::task::spawn_blocking(move || cache("verify", &d))
        .await
        .unwrap();
    assert_eq!(
        verified[0],
        serde_json::json!({"checked": 2 * SOURCES, "bad": 0})
    );

    // Real reads: two CLI processes at once, each reading five fixtures cold into one
    // fresh directory, three times over (a new directory each time).
    let server = serve().await;
    let cases: Vec<(String, Option<&str>, Npy)> = [
        (
            "hdf5/gzip_shuffle.h5",
            Some("/ints"),
            "hdf5/gzip_shuffle_ints.npy",
        ),
        (
            "hdf5/gzip_shuffle.h5",
            Some("/f32_fletcher"),
            "hdf5/gzip_shuffle_f32_fletcher.npy",
        ),
        ("hdf5/btree_v1.h5", Some("/b"), "hdf5/btree_v1_b.npy"),
        ("hdf5/contiguous.h5", Some("/x"), "hdf5/contiguous_x.npy"),
        (
            "blosc2/cf_lz4_shuffle.b2nd",
            None,
            "blosc2/cf_lz4_shuffle.npy",
        ),
    ]
    .into_iter()
    .map(|(f, p, n)| (server.url(f), p, npy(&fixtures().join(n))))
    .collect();
    let cases = std::sync::Arc::new(cases);
    let root = tmp.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        for round in 0..3 {
            let cache_dir = root.join(format!("reads{round}"));
            let readers: Vec<_> = (0..2)
                .map(|who| {
                    let (cases, cache_dir) = (cases.clone(), cache_dir.clone());
                    let out = root.join(format!("out{round}-{who}.npy"));
                    std::thread::spawn(move || {
                        for (url, path, want) in cases.iter() {
                            read_checked(url, *path, &cache_dir, &out, want);
                        }
                    })
                })
                .collect();
            for r in readers {
                r.join().unwrap();
            }
            // One salt for both processes: one copy per file, not one per process.
            let listed = cache("ls", &cache_dir);
            let copies = listed.iter().filter(|l| l["namespace"] == "sources");
            assert_eq!(copies.count(), 4, "round {round}: {listed:?}");
            let v = cache("verify", &cache_dir);
            assert_eq!(v[0]["bad"], 0, "round {round}: {}", v[0]);
            // Per fixture at least a record and a chunk; each source's copy and record.
            assert!(v[0]["checked"].as_u64().unwrap() > 10, "{}", v[0]);
        }
    })
    .await
    .unwrap();
    server.shutdown().await;
}
