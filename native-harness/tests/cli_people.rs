//! The command line as people read it: error messages that name the cause (a group path,
//! a Zarr group root, an unknown URL scheme). Every source goes through the real range
//! server on loopback.
//!
//! Fixtures: `tests/fixtures/hdf5/groups.h5` (h5py, `tests/fixtures/gen_hdf5.py`: groups
//! /model and /model/run1, datasets /model/run1/values (10, 10) float32, /model/weights
//! (6, 4) int64, /time (100,) uint32) and the Zarr stores of `tests/fixtures/gen_zarr.py`.
//!
//! `CHUNKWISE_BIN` runs another build of the binary (to see a test fail before a change).

use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

async fn serve() -> ServerHandle {
    spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts")
}

/// What one run of the binary gave.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The `{"error":{"code","message"}}` line on stderr as (code, message).
    fn error(&self) -> (String, String) {
        assert!(!self.ok, "the command succeeded: {}", self.stdout);
        let line = self.stderr.lines().last().unwrap_or("");
        let j: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not an error line: {line}"));
        (
            j["error"]["code"].as_str().unwrap_or("").to_string(),
            j["error"]["message"].as_str().unwrap_or("").to_string(),
        )
    }
}

async fn cli(args: &[&str]) -> Run {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let bin = std::env::var("CHUNKWISE_BIN").unwrap_or(env!("CARGO_BIN_EXE_chunkwise").into());
    tokio::task::spawn_blocking(move || {
        let out = std::process::Command::new(bin)
            .args(&args)
            .output()
            .expect("the binary runs");
        Run {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).to_string(),
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_path_says_it_is_a_group_and_lists_its_arrays() {
    let server = serve().await;
    let h5 = server.url("hdf5/groups.h5");
    for cmd in ["read", "info"] {
        let (code, message) = cli(&[cmd, &h5, "--path", "/model"]).await.error();
        assert_eq!(code, "NOT_FOUND", "{message}");
        assert_eq!(
            message,
            format!("{h5}: /model is a group, not an array; its arrays: run1/values, weights")
        );
    }
    let (code, message) = cli(&["read", &h5, "--path", "/model/run1"]).await.error();
    assert_eq!(code, "NOT_FOUND");
    assert!(
        message.ends_with("/model/run1 is a group, not an array; its arrays: values"),
        "{message}"
    );
    // A missing path stays a missing path.
    let (code, message) = cli(&["read", &h5, "--path", "/model/nothing"])
        .await
        .error();
    assert_eq!(code, "NOT_FOUND");
    assert!(
        message.ends_with("/model/nothing: dataset not found: nothing"),
        "{message}"
    );

    // Zarr v3: a group inside the store.
    let v3 = server.url("zarr/v3.zarr");
    let (code, message) = cli(&["read", &v3, "--path", "/group"]).await.error();
    assert_eq!(code, "INVALID_ARGUMENT");
    assert_eq!(
        message,
        format!("{v3}/group is a group, not an array; its arrays: nested")
    );
    // Zarr v2: the store's root group (.zgroup), no longer "not found".
    let v2 = server.url("zarr/v2.zarr");
    let (code, message) = cli(&["read", &v2]).await.error();
    assert_eq!(code, "INVALID_ARGUMENT", "{message}");
    assert_eq!(
        message,
        format!(
            "{v2} is a group, not an array; its arrays: big_endian, blosc, blosc_zstd, delta, \
             f_order, gzip, lz4, partial, raw, slash and 2 more"
        )
    );
    // Nothing there: still NOT_FOUND.
    let (code, _) = cli(&["read", &v2, "--path", "/nothing"]).await.error();
    assert_eq!(code, "NOT_FOUND");
    server.shutdown().await;
}

#[tokio::test]
async fn an_unknown_url_scheme_is_named_not_a_missing_file() {
    for (source, scheme) in [
        ("htp://x", "htp"),
        ("ftp://user:SECRETPW@host/a.h5?sig=SECRETQ", "ftp"),
        ("s3://bucket/store.zarr", "s3"),
    ] {
        for cmd in ["read", "info", "chunks", "attrs"] {
            let (code, message) = cli(&[cmd, source]).await.error();
            assert_eq!(code, "INVALID_ARGUMENT", "{cmd} {source}: {message}");
            assert_eq!(
                message,
                format!("unsupported URL scheme {scheme} (use http, https or a local path)"),
                "{cmd} {source}"
            );
        }
    }
}

