//! How the real binary takes what a user types: `--header` values that are malformed are
//! refused as INVALID_ARGUMENT without being echoed, and a URL's scheme is recognised in any
//! case. Reads go to the real range server on loopback; the fixture was written by
//! python-blosc2 from a seeded array (`tests/fixtures/gen_blosc2.py`), and the expected values
//! are its `.npy`.

mod common;

use chunkwise::npy::read_npy;
use native_harness::serve::ServerHandle;
use std::path::{Path, PathBuf};

const FIXTURE: &str = "delta_partial_i4";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/blosc2")
}

async fn serve() -> ServerHandle {
    common::serve_dir(fixtures()).await
}

/// Runs the real binary; (exit success, stderr).
async fn cli(args: Vec<String>) -> (bool, String) {
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
            .args(&args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    })
    .await
    .unwrap()
}

/// `chunkwise read URL --out OUT --header H...`; (success, stderr).
async fn read(url: &str, out: &Path, headers: &[&str]) -> (bool, String) {
    let mut a = vec![
        "read".to_string(),
        url.to_string(),
        "--out".to_string(),
        out.to_str().unwrap().to_string(),
    ];
    for h in headers {
        a.push("--header".to_string());
        a.push(h.to_string());
    }
    cli(a).await
}

/// The error code of the JSON error line the binary prints on failure.
fn code(stderr: &str) -> String {
    let line = stderr.lines().last().unwrap_or("");
    let j: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("{stderr}"));
    j["error"]["code"].as_str().unwrap_or("").to_string()
}

/// The read's `.npy` holds the fixture's array exactly.
fn assert_values(out: &Path) {
    let want =
        read_npy(&std::fs::read(fixtures().join(format!("{FIXTURE}.npy"))).unwrap()).unwrap();
    let got = read_npy(&std::fs::read(out).unwrap()).unwrap();
    assert_eq!(got.shape, want.shape);
    assert!(!want.data.is_empty());
    assert!(got.data == want.data, "values differ from {FIXTURE}.npy");
}

#[tokio::test]
async fn malformed_headers_are_invalid_arguments_and_never_echoed() {
    let server = serve().await;
    let url = format!("{}{FIXTURE}.b2nd", server.base_url());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.npy");

    // Control: well-formed headers read the array.
    let (ok, err) = read(&url, &out, &["Authorization: Bearer HDRSECRET", "X-A:b"]).await;
    assert!(ok, "{err}");
    assert_values(&out);

    for (headers, which) in [
        (&["Authorization HDRSECRET"][..], "--header 1 "),
        (&["X-A: b", "BearerHDRSECRET"][..], "--header 2 "),
        (&["Bearer HDRSECRET: x"][..], "--header 1 "),
        (&["Auth\u{7}HDRSECRET: x"][..], "--header 1 "),
        (&["Authorization: HDR\u{1}SECRET"][..], "--header 1 "),
    ] {
        let _ = std::fs::remove_file(&out);
        let (ok, err) = read(&url, &out, headers).await;
        assert!(!ok, "{headers:?} was accepted");
        assert_eq!(code(&err), "INVALID_ARGUMENT", "{headers:?}: {err}");
        assert!(!err.contains("HDRSECRET"), "{headers:?} echoed: {err}");
        assert!(err.contains(which), "{headers:?}: {err}");
        assert!(!out.exists());
    }
}

#[tokio::test]
async fn an_uppercase_scheme_is_a_url() {
    let server = serve().await;
    let base = server.base_url();
    let rest = base.strip_prefix("http://").expect("an http base URL");
    let tmp = tempfile::tempdir().unwrap();
    for scheme in ["HTTP://", "Http://", "hTtP://"] {
        let out = tmp
            .path()
            .join(format!("{}.npy", scheme.trim_end_matches("://")));
        let url = format!("{scheme}{rest}{FIXTURE}.b2nd");
        let (ok, err) = read(&url, &out, &[]).await;
        assert!(ok, "{url}: {err}");
        assert_values(&out);
    }
    // Still a URL when nothing is there: the server's 404, not a missing local file.
    let (ok, err) = read(
        &format!("HTTP://{rest}absent.b2nd"),
        &tmp.path().join("x.npy"),
        &[],
    )
    .await;
    assert!(!ok);
    assert_eq!(code(&err), "NOT_FOUND", "{err}");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.path == "/absent.b2nd" && r.status == 404),
        "the server was not asked: {err}"
    );
}
