//! Caterva2 sources against a real server (caterva2[server] 2026.9.2, started on 127.0.0.1 by
//! `scripts/caterva2-serve.py` with the datasets of `tests/fixtures/gen_caterva2.py`):
//! values equal the arrays python-blosc2 was given (the `.npy` beside each), requests are
//! counted, credentials and freshness behave as the README says. A server that cannot start
//! fails these tests.

mod common;

use chunkwise::array::{OpenOptions, RemoteArray, SourceKind};
use chunkwise::cache::{CacheCoordinator, CacheStatus};
use chunkwise::formats::caterva2::Credentials;
use chunkwise::selection::Selection;
use common::caterva2::{start, Caterva2Server};

fn options(path: &str) -> OpenOptions {
    OpenOptions {
        source: SourceKind::Caterva2,
        path: Some(path.to_string()),
        ..Default::default()
    }
}

async fn open(
    server: &Caterva2Server,
    options: OpenOptions,
    coordinator: &CacheCoordinator,
) -> chunkwise::Result<RemoteArray> {
    chunkwise::open::open_array(&server.urlbase, vec![], options, coordinator.clone()).await
}

fn stored(server: &Caterva2Server, root: &str) -> Vec<serde_json::Value> {
    server
        .datasets()
        .into_iter()
        .filter(|d| d["kind"] == "stored" && d["path"].as_str().unwrap().starts_with(root))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_datasets_read_as_written_one_request_per_chunk() {
    let server = start();
    let public = stored(&server, "@public/");
    assert!(public.len() >= 6, "{public:?}");
    for d in public {
        let path = d["path"].as_str().unwrap();
        let want = server.expected(path);
        let coordinator = CacheCoordinator::memory(1 << 30);
        let arr = open(&server, options(path), &coordinator).await.unwrap();
        assert_eq!(arr.traffic().requests, 1, "{path}: open is one api/info");
        assert_eq!(arr.shape(), &want.shape[..], "{path}");
        assert_eq!(arr.dtype().to_string(), want.descr, "{path}");
        let nchunks = arr.info().nchunks.unwrap();
        let got = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!(got.data, want.data, "{path}: values differ from the .npy");
        let t = arr.traffic();
        assert!(
            t.requests <= 1 + nchunks,
            "{path}: {} requests for {nchunks} chunks",
            t.requests
        );
        // Warm: the same read makes no request.
        let again = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!(again.data, want.data);
        assert_eq!(arr.traffic().requests, t.requests, "{path}: warm read");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_read_asks_api_chunk_for_the_touched_chunks_only() {
    let server = start();
    // 1024 x 1280 float32 in 128 x 128 chunks: 8 x 10 chunks of 64 KiB.
    let path = "@public/big/grid.b2nd";
    let want = server.expected(path);
    let coordinator = CacheCoordinator::memory(1 << 30);
    let arr = open(&server, options(path), &coordinator).await.unwrap();
    let before = arr.traffic().requests;
    // A band of rows 0..128 over columns 0..1280: the 10 chunks of the first chunk row.
    let sel = Selection::parse("0:128, :").unwrap();
    let got = arr.read(&sel, &Default::default()).await.unwrap();
    assert_eq!(arr.traffic().requests - before, 10);
    let row = 1280 * 4;
    assert_eq!(got.data, want.data[..128 * row]);
    // A chunk's stored bytes: the Blosc2 chunk as the server holds it (one request).
    let before = arr.traffic().requests;
    let raw = arr.chunk_bytes(&[0, 1]).await.unwrap().unwrap();
    assert_eq!(arr.traffic().requests - before, 1);
    let decoded = chunkwise::codec::blosc2::decode_chunk(&raw).unwrap();
    let first_row: Vec<u8> = want.data[128 * 4..256 * 4].to_vec();
    assert_eq!(decoded[..128 * 4], first_row[..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_and_unauthorised_datasets_give_typed_errors() {
    let server = start();
    let coordinator = CacheCoordinator::memory(1 << 30);
    let path = "@shared/team.b2nd";
    // No credentials: 401, the permission code for HTTP.
    let e = open(&server, options(path), &coordinator)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "HTTP_STATUS", "{e}");
    assert!(e.message().contains("401"), "{}", e.message());
    // A wrong password: refused once (no retry loop), the password never shown.
    let wrong = OpenOptions {
        credentials: Some(Credentials::Login {
            username: server.username.clone(),
            password: "not-the-password-x9".into(),
        }),
        ..options(path)
    };
    assert!(!format!("{wrong:?}").contains("not-the-password"));
    let e = open(&server, wrong, &coordinator).await.unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(e.message().contains("login"), "{}", e.message());
    assert!(!e.message().contains("not-the-password"), "{}", e.message());
    // The right one: values as written.
    let good = OpenOptions {
        credentials: Some(Credentials::Login {
            username: server.username.clone(),
            password: server.password.clone(),
        }),
        ..options(path)
    };
    let arr = open(&server, good.clone(), &coordinator).await.unwrap();
    // The login and api/info.
    assert_eq!(arr.traffic().requests, 2);
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected(path).data);
    let personal = "@personal/secret.b2nd";
    let arr = open(
        &server,
        OpenOptions {
            path: Some(personal.into()),
            ..good
        },
        &coordinator,
    )
    .await
    .unwrap();
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected(personal).data);
    // A dataset that does not exist: NOT_FOUND naming it.
    let e = open(&server, options("@public/ds/nope.b2nd"), &coordinator)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    assert!(
        e.message().contains("@public/ds/nope.b2nd"),
        "{}",
        e.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_is_sent_as_the_cookie_and_keys_the_cache_apart() {
    let server = start();
    // Log in once by hand to get a token.
    let coordinator = CacheCoordinator::memory(1 << 30);
    let path = "@shared/team.b2nd";
    let login = OpenOptions {
        credentials: Some(Credentials::Login {
            username: server.username.clone(),
            password: server.password.clone(),
        }),
        ..options(path)
    };
    let arr = open(&server, login, &coordinator).await.unwrap();
    arr.read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    let token = login_token(&server).await;
    let with_token = OpenOptions {
        credentials: Some(Credentials::Token(token.clone())),
        ..options(path)
    };
    assert!(!format!("{with_token:?}").contains(&token));
    // Other credentials: another cache identity, so api/info and the chunks are asked again.
    let arr = open(&server, with_token, &coordinator).await.unwrap();
    assert_eq!(arr.cache_status(), CacheStatus::Created);
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected(path).data);
    assert!(arr.traffic().requests > 1);
}

/// A `c2subauth` token from the server's login, by a plain HTTP POST of the test.
async fn login_token(server: &Caterva2Server) -> String {
    let url = format!("{}/auth/jwt/login", server.urlbase.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .post(url)
        .form(&[
            ("username", server.username.as_str()),
            ("password", server.password.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .find_map(|v| {
            let v = v.to_str().ok()?;
            v.strip_prefix("c2subauth=")
                .map(|r| r.split(';').next().unwrap().to_string())
        })
        .unwrap();
    cookie
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_reopen_with_a_disk_cache_makes_no_request() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let path = "@public/ds/f8_2d_zstd_bitshuffle.b2nd";
    let want = server.expected(path);
    {
        let disk = CacheCoordinator::disk(dir.path(), None).unwrap();
        let arr = open(&server, options(path), &disk).await.unwrap();
        assert_eq!(arr.cache_status(), CacheStatus::Created);
        let got = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!(got.data, want.data);
    }
    let disk = CacheCoordinator::disk(dir.path(), None).unwrap();
    let arr = open(&server, options(path), &disk).await.unwrap();
    assert_eq!(arr.cache_status(), CacheStatus::Reused);
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data);
    assert_eq!(arr.traffic().requests, 0, "warm reopen and read");
    // A dataset behind a login under DISK: warm, no request (not even the login); nothing
    // of the credentials or the token in any file of the cache.
    let team = "@shared/team.b2nd";
    let login = OpenOptions {
        credentials: Some(Credentials::Login {
            username: server.username.clone(),
            password: server.password.clone(),
        }),
        ..options(team)
    };
    let arr = open(&server, login.clone(), &disk).await.unwrap();
    arr.read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    let disk = CacheCoordinator::disk(dir.path(), None).unwrap();
    let arr = open(&server, login, &disk).await.unwrap();
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected(team).data);
    assert_eq!(arr.traffic().requests, 0);
    let mut files = 0;
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&p).unwrap();
            let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
            assert!(!has(server.password.as_bytes()), "{}", p.display());
            // A JWT starts with the base64 of `{"`.
            assert!(!has(b"eyJ") && !has(b"c2subauth"), "{}", p.display());
        }
    }
    assert!(files > 4, "{files} files in the cache");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutable_open_refetches_a_changed_dataset() {
    let server = start();
    let coordinator = CacheCoordinator::memory(1 << 30);
    // Two datasets of one shape and dtype (37 x 53 float32 would not match: use the f8 one
    // and overwrite it with a copy of itself rewritten, then with another dataset's bytes).
    let path = "@public/ds/f4_2d_b.b2nd";
    let mutable = OpenOptions {
        assume_immutable: false,
        ..options(path)
    };
    let arr = open(&server, mutable.clone(), &coordinator).await.unwrap();
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected(path).data);
    // Unchanged: reused after one api/info, chunks from the cache.
    let arr = open(&server, mutable.clone(), &coordinator).await.unwrap();
    assert_eq!(arr.cache_status(), CacheStatus::Reused);
    arr.read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(arr.traffic().requests, 1);
    // Rewritten on disk with other values of the same shape and dtype.
    let (replacement, values) = rewrite_f4_2d(&server);
    std::fs::copy(&replacement, server.public_dir.join("ds/f4_2d_b.b2nd")).unwrap();
    let arr = open(&server, mutable, &coordinator).await.unwrap();
    assert_eq!(arr.cache_status(), CacheStatus::Invalidated);
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, values, "the new version's values");
}

/// A `.b2nd` of 37 x 53 float32 whose values are `arange` (written by python-blosc2), and
/// those values' bytes.
fn rewrite_f4_2d(server: &Caterva2Server) -> (std::path::PathBuf, Vec<u8>) {
    let out = server.statedir.join("replacement.b2nd");
    let status = std::process::Command::new(native_harness::venv_python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, blosc2\n\
             a = np.arange(37 * 53, dtype='<f4').reshape(37, 53)\n\
             blosc2.asarray(a, urlpath=sys.argv[1], mode='w', chunks=(10, 16), blocks=(5, 16))\n",
        )
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let values = (0..37 * 53)
        .flat_map(|i| (i as f32).to_le_bytes())
        .collect();
    (out, values)
}

/// Elements of `want` picked by `sel`.
fn expected_of(want: &chunkwise::npy::Npy, sel: &str, itemsize: usize) -> Vec<u8> {
    let dims = Selection::parse(sel).unwrap().resolve(&want.shape).unwrap();
    common::reference(&want.data, &want.shape, itemsize, &dims)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_selection_of_a_large_chunk_is_one_api_fetch() {
    let server = start();
    // 512 x 2048 float32 in one 4 MiB chunk.
    let path = "@public/big/one_chunk.b2nd";
    let want = server.expected(path);
    let coordinator = CacheCoordinator::memory(1 << 30);
    let arr = open(&server, options(path), &coordinator).await.unwrap();
    let cbytes = arr.info().cbytes;
    let t0 = arr.traffic();
    let sel = "10:12, 100:200";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.shape, vec![2, 100]);
    assert_eq!(got.data, expected_of(&want, sel, 4));
    let t = arr.traffic().since(t0);
    assert_eq!(t.requests, 1, "one api/fetch");
    assert!(
        t.bytes * 10 < cbytes,
        "{} bytes moved for a chunk of {cbytes} stored bytes",
        t.bytes
    );
    // The same box again: from the payload cache.
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, sel, 4));
    assert_eq!(arr.traffic().since(t0).requests, 1, "the box is cached");
    // An integer index and a step inside the box.
    let sel = "7, 3:900:7";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.shape, vec![129]);
    assert_eq!(got.data, expected_of(&want, sel, 4));
    // The whole array reads the chunk (api/chunk); then small selections come from it.
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data);
    let t1 = arr.traffic();
    let got = arr
        .read(
            &Selection::parse("10:12, 100:200").unwrap(),
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, "10:12, 100:200", 4));
    assert_eq!(
        arr.traffic().since(t1).requests,
        0,
        "served by the cached chunk"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_expression_reads_by_api_fetch_as_numpy_computes_it() {
    let server = start();
    let lazy = server
        .datasets()
        .into_iter()
        .find(|d| d["kind"] == "lazyexpr")
        .expect("the generator writes a lazy expression");
    let path = lazy["path"].as_str().unwrap();
    let want = server.expected(path);
    let coordinator = CacheCoordinator::memory(1 << 30);
    let arr = open(&server, options(path), &coordinator).await.unwrap();
    assert_eq!(arr.shape(), &want.shape[..]);
    assert_eq!(arr.dtype().to_string(), want.descr);
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data, "a * 2 + b as numpy computed it");
    // info, then one api/fetch.
    assert_eq!(arr.traffic().requests, 2);
    let sel = "3:30:4, -1:5:-3";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, sel, 8));
    assert_eq!(arr.traffic().requests, 3);
    // Both boxes again: cached.
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data);
    assert_eq!(arr.traffic().requests, 3);
    // With assume_immutable false a lazy expression is computed afresh (its api/info does
    // not change when an operand does).
    let mutable = OpenOptions {
        assume_immutable: false,
        ..options(path)
    };
    let arr = open(&server, mutable.clone(), &coordinator).await.unwrap();
    let arr2 = open(&server, mutable, &coordinator).await.unwrap();
    assert_eq!(arr2.cache_status(), CacheStatus::Invalidated);
    let got = arr2
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data);
    assert_eq!(arr2.traffic().requests, 2, "api/info and api/fetch");
    drop(arr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_lists_roots_and_datasets_and_gets_them() {
    let server = start();
    // A TreeStore written by python-blosc2 into @public: its leaves are listed too.
    let status = std::process::Command::new(native_harness::venv_python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, blosc2\n\
             ts = blosc2.TreeStore(sys.argv[1], mode='w')\n\
             ts['/a/x'] = np.arange(1000, dtype='<i8').reshape(10, 100)\n\
             ts.close()\n",
        )
        .arg(server.public_dir.join("t.b2z"))
        .status()
        .unwrap();
    assert!(status.success());
    let coordinator = CacheCoordinator::memory(1 << 30);
    let options = OpenOptions {
        source: SourceKind::Caterva2,
        credentials: Some(Credentials::Login {
            username: server.username.clone(),
            password: server.password.clone(),
        }),
        ..Default::default()
    };
    let store = chunkwise::open::open_store(&server.urlbase, vec![], options, coordinator)
        .await
        .unwrap();
    let paths: Vec<&str> = store.nodes().iter().map(|n| n.path.as_str()).collect();
    for want in [
        "/@public",
        "/@public/ds",
        "/@public/ds/sub/i2_3d_blosclz_delta.b2nd",
        "/@shared/team.b2nd",
        "/@personal/secret.b2nd",
        "/@public/t.b2z",
        "/@public/t.b2z/a/x",
    ] {
        assert!(paths.contains(&want), "{want} not in {paths:?}");
    }
    let x = store.get("/@public/t.b2z/a/x").await.unwrap();
    let got = x
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    let want: Vec<u8> = (0..1000i64).flat_map(|i| i.to_le_bytes()).collect();
    assert_eq!(got.data, want);
    // A directory is no dataset.
    let e = store.get("/@public/ds").await.unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    // A dataset published since: listed after a refresh; arrays got before are stale.
    std::fs::copy(
        server.public_dir.join("ds/f4_2d_b.b2nd"),
        server.public_dir.join("new.b2nd"),
    )
    .unwrap();
    assert!(!store.nodes().iter().any(|n| n.path == "/@public/new.b2nd"));
    store.refresh().await.unwrap();
    assert!(store.nodes().iter().any(|n| n.path == "/@public/new.b2nd"));
    let e = x
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "STALE", "{e}");
    let new = store.get("/@public/new.b2nd").await.unwrap();
    let got = new
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, server.expected("@public/ds/f4_2d_b.b2nd").data);
    // A dataset rewritten, then the store refreshed: get reads the new version (its
    // record, held from before, is checked by one api/info).
    let (replacement, values) = rewrite_f4_2d(&server);
    std::fs::copy(&replacement, server.public_dir.join("new.b2nd")).unwrap();
    store.refresh().await.unwrap();
    let new = store.get("/@public/new.b2nd").await.unwrap();
    assert_eq!(new.cache_status(), CacheStatus::Invalidated);
    let got = new
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, values);
    for path in [
        "@public/ds/sub/i2_3d_blosclz_delta.b2nd",
        "@shared/team.b2nd",
    ] {
        let arr = store.get(&format!("/{path}")).await.unwrap();
        let got = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!(got.data, server.expected(path).data, "{path}");
    }
    // Without credentials the listing shows the public root only.
    let store = chunkwise::open::open_store(
        &server.urlbase,
        vec![],
        OpenOptions {
            source: SourceKind::Caterva2,
            ..Default::default()
        },
        CacheCoordinator::memory(1 << 20),
    )
    .await
    .unwrap();
    assert!(store
        .nodes()
        .iter()
        .all(|n| !n.path.starts_with("/@shared")));
}

/// Runs the CLI with `args` (and `env`), returning status, stdout and stderr.
fn cli(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_reads_shows_and_lists_a_caterva2_server() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let base = server.urlbase.as_str();
    let path = "@public/ds/u8_2d_zlib_shuffle.b2nd";
    let npy = dir.path().join("out.npy");
    let (ok, stdout, stderr) = cli(
        &[
            "read",
            base,
            "--source",
            "caterva2",
            "--path",
            path,
            "--out",
            npy.to_str().unwrap(),
        ],
        &[],
    );
    assert!(ok, "{stderr}");
    let line: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let got = chunkwise::npy::read_npy(&std::fs::read(&npy).unwrap()).unwrap();
    let want = server.expected(path);
    assert_eq!((got.shape, got.data), (want.shape, want.data));
    // api/info and the 2 x 4 chunks of 16 x 16.
    assert_eq!(line["requests"], 1 + 8, "{line}");
    let (ok, stdout, stderr) = cli(
        &[
            "info", base, "--source", "caterva2", "--path", path, "--json",
        ],
        &[],
    );
    assert!(ok, "{stderr}");
    let info: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(info["format"], "caterva2");
    assert_eq!(info["shape"], serde_json::json!([50, 30]));
    assert_eq!(info["dtype"], "<u8");
    assert_eq!(info["requests"], 1);
    let (ok, stdout, stderr) = cli(&["ls", base, "--source", "caterva2", "--json"], &[]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("/@public/ds/u8_2d_zlib_shuffle.b2nd"),
        "{stdout}"
    );
    // A login: the password from an environment variable, never the command line.
    let team = "@shared/team.b2nd";
    let login = [
        "read",
        base,
        "--source",
        "caterva2",
        "--path",
        team,
        "--username",
        &server.username,
        "--password-env",
        "C2_TEST_PASSWORD",
        "--out",
        npy.to_str().unwrap(),
    ];
    let (ok, _, stderr) = cli(&login, &[("C2_TEST_PASSWORD", &server.password)]);
    assert!(ok, "{stderr}");
    let got = chunkwise::npy::read_npy(&std::fs::read(&npy).unwrap()).unwrap();
    assert_eq!(got.data, server.expected(team).data);
    let (ok, stdout, stderr) = cli(&login, &[("C2_TEST_PASSWORD", "wrong-pw-x7")]);
    assert!(!ok);
    assert!(stderr.contains("INVALID_ARGUMENT"), "{stderr}");
    assert!(!stderr.contains("wrong-pw-x7") && !stdout.contains("wrong-pw-x7"));
    // The variable unset: named, not guessed.
    let (ok, _, stderr) = cli(&login, &[]);
    assert!(!ok && stderr.contains("C2_TEST_PASSWORD"), "{stderr}");
    // No such flag as --password.
    let (ok, _, _) = cli(
        &[
            "read",
            base,
            "--source",
            "caterva2",
            "--path",
            team,
            "--password",
            "x",
        ],
        &[],
    );
    assert!(!ok);
}

/// Writes `body` at `root/rel`, making its directories.
fn put(root: &std::path::Path, rel: &str, body: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_answers_are_typed_errors_and_at_most_8_chunks_are_in_flight() {
    // The real server's api/info and first chunk of an 8 x 10 chunk grid, replayed by the
    // range server (with latency, so that concurrent requests overlap) beside broken ones.
    let server = start();
    let http = reqwest::Client::new();
    let base = server.urlbase.trim_end_matches('/');
    let get = |route: &str| {
        let url = format!("{base}/api/{route}");
        let http = http.clone();
        async move { http.get(url).send().await.unwrap().bytes().await.unwrap() }
    };
    let info = get("info/@public/big/grid.b2nd").await;
    let chunk = get("chunk/@public/big/grid.b2nd?nchunk=0").await;
    drop(server);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(root, "api/info/@public/grid.b2nd", &info);
    put(root, "api/chunk/@public/grid.b2nd", &chunk);
    let mut v: serde_json::Value = serde_json::from_slice(&info).unwrap();
    put(root, "api/info/@public/text.b2nd", b"<html>not json</html>");
    v["shape"] = serde_json::json!([1u64 << 62, 1u64 << 62]);
    put(root, "api/info/@public/huge.b2nd", v.to_string().as_bytes());
    let mut w: serde_json::Value = serde_json::from_slice(&info).unwrap();
    w["schunk"]["nchunks"] = 1_000_000_000u64.into();
    put(
        root,
        "api/info/@public/nchunks.b2nd",
        w.to_string().as_bytes(),
    );
    // A chunk answer that is not a Blosc2 chunk of this dataset.
    put(root, "api/info/@public/garbage.b2nd", &info);
    put(root, "api/chunk/@public/garbage.b2nd", &[7u8; 100]);
    put(root, "api/fetch/@public/garbage.b2nd", &[7u8; 100]);
    let srv = common::serve_dir_with_latency(root.to_path_buf(), 40).await;
    let url = srv.base_url();
    let coordinator = CacheCoordinator::memory(1 << 30);
    let open_at = |path: &str| {
        let (url, coordinator) = (url.clone(), coordinator.clone());
        let options = options(path);
        async move { chunkwise::open::open_array(&url, vec![], options, coordinator).await }
    };
    for (path, code) in [
        ("@public/text.b2nd", "INVALID_DATA"),
        ("@public/huge.b2nd", "INVALID_DATA"),
        ("@public/nchunks.b2nd", "INVALID_DATA"),
        ("@public/missing.b2nd", "NOT_FOUND"),
    ] {
        let e = open_at(path).await.unwrap_err();
        assert_eq!(e.code(), code, "{path}: {e}");
    }
    let arr = open_at("@public/garbage.b2nd").await.unwrap();
    // A whole read asks the chunks (api/chunk), a single element the box (api/fetch).
    let e = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "DECODE", "{e}");
    let e = arr
        .read(&Selection::parse("0, 0").unwrap(), &Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(e.code(), "INVALID_DATA" | "UNRECOGNISED_FORMAT"),
        "{}: {e}",
        e.code()
    );
    // 80 chunks, at most 8 in flight at once (each held 40 ms by the server).
    let arr = open_at("@public/grid.b2nd").await.unwrap();
    let before = srv.requests().len();
    arr.read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    let log = srv.requests();
    let reads = &log[before..];
    assert_eq!(reads.len(), 80);
    let in_flight = reads
        .iter()
        .map(|a| {
            reads
                .iter()
                .filter(|b| b.received <= a.received && a.received < b.answered)
                .count()
        })
        .max()
        .unwrap();
    assert!(
        (4..=8).contains(&in_flight),
        "{in_flight} requests in flight"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_datetime_complex_and_big_endian_dtypes_read_as_written() {
    // Written at test time by python-blosc2 into the served @public, with the arrays given
    // saved as .npy beside (numpy's names in api/info: `complex128`, `datetime64[s]`).
    let server = start();
    let out = server.statedir.join("dtypes");
    std::fs::create_dir_all(&out).unwrap();
    let status = std::process::Command::new(native_harness::venv_python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, blosc2\n\
             pub, out = sys.argv[1], sys.argv[2]\n\
             rng = np.random.default_rng(5)\n\
             arrs = {'u3': np.array(['ab', 'xyz', '\\u00e9', ''] * 25, dtype='<U3').reshape(10, 10),\n\
             's4': np.array([b'ab', b'wxyz', b'', b'q'] * 25, dtype='|S4'),\n\
             'bei4': rng.integers(-1000, 1000, size=(30, 7)).astype('>i4'),\n\
             'dt': (np.arange(50) * 3600).astype('datetime64[s]'),\n\
             'c16': (rng.random(40) + 1j * rng.random(40)).astype('<c16')}\n\
             for k, a in arrs.items():\n\
             \x20   blosc2.asarray(a, urlpath=f'{pub}/dt_{k}.b2nd', mode='w',\n\
             \x20                  chunks=tuple(max(1, s // 3) for s in a.shape))\n\
             \x20   np.save(f'{out}/{k}.npy', a)\n",
        )
        .arg(&server.public_dir)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let coordinator = CacheCoordinator::memory(1 << 30);
    for (k, dtype) in [
        ("u3", "<U3"),
        ("s4", "|S4"),
        ("bei4", ">i4"),
        ("dt", "<M8[s]"),
        ("c16", "<c16"),
    ] {
        let want = chunkwise::npy::read_npy(&std::fs::read(out.join(format!("{k}.npy"))).unwrap())
            .unwrap();
        let arr = open(
            &server,
            options(&format!("@public/dt_{k}.b2nd")),
            &coordinator,
        )
        .await
        .unwrap();
        assert_eq!(arr.dtype().to_string(), dtype, "{k}");
        let got = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!((&got.shape, &got.data), (&want.shape, &want.data), "{k}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dataset_of_an_hdf5_file_reads_by_api_fetch() {
    // caterva2 serves the datasets of an HDF5 file, whose api/chunk it refuses (400): they
    // are read by api/fetch boxes, however many chunks they have (5,000 here).
    let server = start();
    let out = server.statedir.join("h5.npy");
    let status = std::process::Command::new(native_harness::venv_python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, h5py\n\
             a = np.random.default_rng(11).integers(-9, 9, size=(100, 100)).astype('<i4')\n\
             with h5py.File(sys.argv[1], 'w') as f:\n\
             \x20   f.create_dataset('g/d', data=a, chunks=(1, 2), compression='gzip')\n\
             np.save(sys.argv[2], a)\n",
        )
        .arg(server.public_dir.join("h.h5"))
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let want = chunkwise::npy::read_npy(&std::fs::read(&out).unwrap()).unwrap();
    let coordinator = CacheCoordinator::memory(1 << 30);
    let arr = open(&server, options("@public/h.h5/g/d"), &coordinator)
        .await
        .unwrap();
    assert_eq!(arr.info().nchunks, Some(5000));
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data);
    assert_eq!(arr.traffic().requests, 2, "api/info and one api/fetch");
    let sel = "::7, 3:50:2";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, sel, 4));
    assert_eq!(arr.traffic().requests, 3);
    let e = arr.chunk_bytes(&[0, 0]).await.unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
}

/// python-blosc2 writes an empty array's chunk and block shapes as zeros (`(0,)`, `(3, 0)`),
/// and Caterva2's `api/info` passes them on; such a dataset opens (no request but its
/// `api/info`) and reads as the empty array written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_dataset_with_zero_chunk_extents_reads_empty() {
    let server = start();
    for path in ["@public/empty/f4_0.b2nd", "@public/empty/i2_3x0.b2nd"] {
        let want = server.expected(path);
        let coordinator = CacheCoordinator::memory(1 << 20);
        let arr = open(&server, options(path), &coordinator)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(arr.shape(), &want.shape[..], "{path}");
        assert_eq!(arr.dtype().to_string(), want.descr, "{path}");
        assert_eq!(arr.info().nchunks, Some(0), "{path}");
        let got = arr
            .read(&Selection::all(), &Default::default())
            .await
            .unwrap();
        assert_eq!(got.shape, want.shape, "{path}");
        assert!(got.data.is_empty() && want.data.is_empty(), "{path}");
        assert_eq!(arr.traffic().requests, 1, "{path}: only the api/info");
    }
}

/// A lazy expression dividing an integer operand (`c / 4` over int16): python-blosc2 4.14.1
/// names its dtype by the class `blosc2.schema.float64`, and Caterva2's `api/info` answers
/// `"<class 'blosc2.schema.float64'>"`; it opens as float64 and reads as numpy computes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_expression_typed_by_a_blosc2_schema_class_reads_as_float64() {
    let server = start();
    let path = "@public/ds/lazy_c_div4.b2nd";
    let want = server.expected(path);
    assert_eq!(want.descr, "<f8");
    let coordinator = CacheCoordinator::memory(1 << 20);
    let arr = open(&server, options(path), &coordinator)
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(arr.shape(), &want.shape[..]);
    assert_eq!(arr.dtype().to_string(), "<f8");
    let got = arr
        .read(&Selection::all(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, want.data, "c / 4 as numpy computed it");
    let sel = "-1, 1:10:3, ::-4";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, sel, 8));
}

/// An `api/fetch` answer is a Blosc2 frame that names its own dtype: one of the dataset's
/// item size but another dtype (here little-endian float32 where `api/info` says big-endian)
/// is refused as `INVALID_DATA`, not read as the dataset's dtype (which would byte-swap the
/// values without an error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_fetch_frame_of_another_dtype_is_an_error_not_reinterpreted() {
    let server = start();
    let http = reqwest::Client::new();
    let base = server.urlbase.trim_end_matches('/');
    let get = |route: &str| {
        let url = format!("{base}/api/{route}");
        let http = http.clone();
        async move { http.get(url).send().await.unwrap().bytes().await.unwrap() }
    };
    // 512 x 2048 float32 in one 4 MiB chunk: one element is read by api/fetch.
    let path = "@public/big/one_chunk.b2nd";
    let info = get(&format!("info/{path}")).await;
    let frame = get(&format!("fetch/{path}?slice_=0:1,0:1")).await;
    let want = server.expected(path);
    drop(server);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut v: serde_json::Value = serde_json::from_slice(&info).unwrap();
    assert_eq!(v["dtype"], "float32");
    v["dtype"] = ">f4".into();
    put(
        root,
        "api/info/@public/swapped.b2nd",
        v.to_string().as_bytes(),
    );
    put(root, "api/fetch/@public/swapped.b2nd", &frame);
    let srv = common::serve_dir_with_latency(root.to_path_buf(), 0).await;
    let coordinator = CacheCoordinator::memory(1 << 20);
    let arr = chunkwise::open::open_array(
        &srv.base_url(),
        vec![],
        options("@public/swapped.b2nd"),
        coordinator,
    )
    .await
    .unwrap();
    assert_eq!(arr.dtype().to_string(), ">f4");
    let got = arr
        .read(&Selection::parse("0, 0").unwrap(), &Default::default())
        .await;
    let written = f32::from_le_bytes(want.data[..4].try_into().unwrap());
    match got {
        Err(e) => assert_eq!(e.code(), "INVALID_DATA", "{e}"),
        Ok(d) => panic!(
            "read {:?} (as >f4: {}) where the frame holds <f4 {written}",
            d.data,
            f32::from_be_bytes(d.data[..4].try_into().unwrap())
        ),
    }
    // The fetch was the one request after the open.
    assert_eq!(arr.traffic().requests, 2);
}

/// A chunk answer names its item size (the Blosc2 chunk header's typesize): a dataset
/// rewritten between two reads of one open as another dtype with chunks of the same bytes
/// (float64 10 x 16 chunks as float32 10 x 32) gives `DECODE` for a chunk of the new file,
/// not its float32 bytes read as float64.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_of_another_item_size_is_a_decode_error_not_reinterpreted() {
    let server = start();
    let path = "@public/ds/f8_2d_zstd_bitshuffle.b2nd";
    let want = server.expected(path);
    assert_eq!(
        (want.descr.as_str(), &want.shape[..]),
        ("<f8", &[37u64, 53][..])
    );
    let coordinator = CacheCoordinator::memory(1 << 20);
    let arr = open(&server, options(path), &coordinator).await.unwrap();
    let sel = "0:10, 0:16";
    let got = arr
        .read(&Selection::parse(sel).unwrap(), &Default::default())
        .await
        .unwrap();
    assert_eq!(got.data, expected_of(&want, sel, 8));
    // The served copy rewritten by python-blosc2: float32, chunks (10, 32), blocks (5, 16),
    // 1280 bytes per chunk as before.
    let status = std::process::Command::new(native_harness::venv_python())
        .arg("-c")
        .arg(
            "import sys, blosc2, numpy as np\n\
             a = np.arange(37 * 53, dtype='<f4').reshape(37, 53)\n\
             blosc2.asarray(a, urlpath=sys.argv[1], mode='w', chunks=(10, 32), blocks=(5, 16))\n",
        )
        .arg(server.public_dir.join("ds/f8_2d_zstd_bitshuffle.b2nd"))
        .status()
        .unwrap();
    assert!(status.success());
    let got = arr
        .read(
            &Selection::parse("0:10, 16:32").unwrap(),
            &Default::default(),
        )
        .await;
    match got {
        Err(e) => assert_eq!(e.code(), "DECODE", "{e}"),
        Ok(d) => panic!(
            "chunk 1 of the float32 file read as float64 without an error: {:?}",
            d.data[..8]
                .chunks(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                .collect::<Vec<_>>()
        ),
    }
}
