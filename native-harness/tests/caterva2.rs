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
        let nchunks = arr.info().nchunks;
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
