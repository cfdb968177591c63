//! The Caterva2 test server (scripts/caterva2-serve.py, caterva2[server] 2026.9.2) serves the
//! datasets of tests/fixtures/gen_caterva2.py: publicly, and behind its JWT login.

mod common;

use chunkwise::codec::blosc2::decode_chunk;
use std::time::{Duration, Instant};

async fn get(url: &str, cookie: Option<&str>) -> reqwest::Response {
    let mut req = reqwest::Client::new().get(url);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

async fn json(url: &str, cookie: Option<&str>) -> serde_json::Value {
    let r = get(url, cookie).await;
    assert_eq!(r.status(), 200, "{url}");
    serde_json::from_slice(&r.bytes().await.unwrap()).unwrap()
}

/// `POST auth/jwt/login`; answers the status and the `c2subauth` cookie (`name=value`).
async fn login(base: &str, user: &str, password: &str) -> (u16, Option<String>) {
    let body = format!(
        "username={}&password={}",
        percent_encoding::utf8_percent_encode(user, percent_encoding::NON_ALPHANUMERIC),
        percent_encoding::utf8_percent_encode(password, percent_encoding::NON_ALPHANUMERIC)
    );
    let r = reqwest::Client::new()
        .post(format!("{base}auth/jwt/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    let cookie = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("c2subauth="))
        .map(|v| v.split(';').next().unwrap().to_string());
    (r.status().as_u16(), cookie)
}

#[tokio::test]
async fn serves_the_fixtures_publicly_and_behind_login() {
    let srv = common::caterva2::start();
    let base = srv.urlbase.clone();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with('/'),
        "{base}"
    );

    let roots = json(&format!("{base}api/roots"), None).await;
    assert!(roots.get("@public").is_some(), "{roots}");
    assert!(roots.get("@personal").is_none(), "{roots}");

    // Every public dataset of the manifest is listed, and nothing else.
    let datasets = srv.datasets();
    let mut want: Vec<String> = datasets
        .iter()
        .filter_map(|d| {
            d["path"]
                .as_str()?
                .strip_prefix("@public/")
                .map(String::from)
        })
        .collect();
    want.sort();
    let listed = json(&format!("{base}api/list/@public"), None).await;
    let listed: Vec<String> = serde_json::from_value(listed).unwrap();
    assert_eq!(listed, want);
    assert!(want.len() >= 9, "{want:?}");

    // Stored datasets: the metadata of what was written.
    for d in datasets.iter().filter(|d| d["kind"] == "stored") {
        let path = d["path"].as_str().unwrap();
        if !path.starts_with("@public/") {
            continue;
        }
        let info = json(&format!("{base}api/info/{path}"), None).await;
        assert_eq!(info["shape"], d["shape"], "{path}");
        assert_eq!(info["chunks"], d["chunks"], "{path}");
        assert_eq!(info["blocks"], d["blocks"], "{path}");
        assert_eq!(info["schunk"]["nchunks"], d["nchunks"], "{path}");
    }

    // A raw chunk through api/chunk decodes to the values written (chunk 1 of 128 float32).
    let path = "@public/ds/f4_1d_lz4_shuffle.b2nd";
    let r = get(&format!("{base}api/chunk/{path}?nchunk=1"), None).await;
    assert_eq!(r.status(), 200);
    let chunk = decode_chunk(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(chunk, srv.expected(path).data[128 * 4..256 * 4]);

    // The lazy expression answers its expression and operands (it opens on the server).
    let info = json(&format!("{base}api/info/@public/ds/lazy_a2b.b2nd"), None).await;
    assert_eq!(info["expression"], "a * 2 + b", "{info}");
    assert_eq!(info["shape"], serde_json::json!([37, 53]), "{info}");
    let r = get(
        &format!("{base}api/fetch/@public/ds/lazy_a2b.b2nd?slice_=0:10,5:9"),
        None,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(&r.bytes().await.unwrap()[2..9], b"b2frame");

    // Private roots need the login.
    let r = get(&format!("{base}api/list/@personal"), None).await;
    assert_eq!(r.status(), 401);
    let (status, cookie) = login(&base, &srv.username, "wrong password").await;
    assert_eq!((status, cookie.is_none()), (400, true));
    let (status, cookie) = login(&base, &srv.username, &srv.password).await;
    assert_eq!(status, 204);
    let cookie = cookie.expect("the login sets c2subauth");
    let personal = json(&format!("{base}api/list/@personal"), Some(&cookie)).await;
    assert_eq!(personal, serde_json::json!(["secret.b2nd"]));
    let shared = json(&format!("{base}api/list/@shared"), Some(&cookie)).await;
    assert_eq!(shared, serde_json::json!(["team.b2nd"]));
    let path = "@personal/secret.b2nd";
    let r = get(&format!("{base}api/chunk/{path}?nchunk=0"), Some(&cookie)).await;
    assert_eq!(r.status(), 200);
    let chunk = decode_chunk(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(chunk, srv.expected(path).data[..16 * 8]);

    // Dropping the handle stops the server process and removes its state.
    let (pid, statedir) = (srv.server_pid, srv.statedir.clone());
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    drop(srv);
    let t = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}/stat")).exists()
        && t.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
    assert!(!statedir.exists(), "{}", statedir.display());
}
