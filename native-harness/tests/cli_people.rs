//! The command line as people read it: `ls` trees, `info` text, `read --print` against
//! numpy's own print(), and error messages that name the cause (a group path, a Zarr group
//! root, an unknown URL scheme, `chunks` on a non-HDF5 source, Zarr stored sizes). Every
//! source goes through the real range server on loopback.
//!
//! Fixtures: `tests/fixtures/hdf5/groups.h5` (h5py, `tests/fixtures/gen_hdf5.py`: groups
//! /model and /model/run1, datasets /model/run1/values (10, 10) float32, /model/weights
//! (6, 4) int64, /time (100,) uint32), the Zarr stores of `tests/fixtures/gen_zarr.py`, and
//! `tests/fixtures/print` (`tests/fixtures/gen_print.py`: a Zarr v3 store and an HDF5 file
//! of byte strings and records and, per array, numpy's print() of the data written).
//!
//! `CHUNKWISE_BIN` runs another build of the binary (to see a test fail before a change).

mod common;

use native_harness::serve::ServerHandle;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

async fn serve() -> ServerHandle {
    common::serve_dir(fixtures()).await
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

/// The tree of groups.h5, from the structure gen_hdf5.py writes.
const GROUPS_TREE: &str = "/
  model/
    run1/
      values  [10, 10] <f4
    weights  [6, 4] <i8
  time  [100] <u4
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ls_prints_the_tree_the_node_list_or_one_line() {
    let server = serve().await;
    let h5 = server.url("hdf5/groups.h5");
    let r = cli(&["ls", &h5]).await;
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.stdout, GROUPS_TREE);

    let r = cli(&["ls", &h5, "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let nodes: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let paths: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/",
            "/model",
            "/model/run1",
            "/model/run1/values",
            "/model/weights",
            "/time"
        ]
    );
    assert_eq!(nodes[4]["shape"], serde_json::json!([6, 4]));
    assert_eq!(nodes[4]["dtype"], "<i8");

    // --path lists one group's subtree (not a sibling that shares its prefix).
    let r = cli(&["ls", &h5, "--path", "model", "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let nodes: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    let paths: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/model",
            "/model/run1",
            "/model/run1/values",
            "/model/weights"
        ]
    );
    let r = cli(&["ls", &h5, "--path", "/nothing"]).await;
    assert!(!r.ok);
    assert!(
        r.stderr.contains("NOT_FOUND") && r.stderr.contains("no group or array at /nothing"),
        "{}",
        r.stderr
    );

    // A Zarr store: a nested group, and the string array refused with its reason.
    let r = cli(&["ls", &server.url("zarr/v3.zarr")]).await;
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("/\n  big_endian  [13, 11] >f8\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\n  group/\n    nested  [6, 5] |u1\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\n  scalar  [] <f8\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("\n  strings  refused: ") && r.stdout.contains("data_type \"string\""),
        "{}",
        r.stdout
    );

    // Links and nodes that cannot be read, with the reason (hdf5_index/links.h5 of
    // gen_hdf5_index.py: a dangling soft link, an external link, external storage, a
    // virtual dataset).
    let r = cli(&["ls", &server.url("hdf5_index/links.h5")]).await;
    assert!(r.ok, "{}", r.stderr);
    for line in [
        "  dangling  link: dangling soft link: /nothing/here does not exist\n",
        "  extlink  link: external link to other.h5:/x is not followed\n",
        "  ext  [4, 6]  refused: external storage (External Data Files message) is not read\n",
        "  vds  refused: virtual dataset (layout class 3) is not read\n",
        "  grp/\n    inner  [7, 5] <f8\n",
        "  soft  [40, 30] <i4\n",
    ] {
        assert!(r.stdout.contains(line), "{line:?} in\n{}", r.stdout);
    }

    // A single array: one line.
    let b2nd = server.url("blosc2/be_f8.b2nd");
    let r = cli(&["ls", &b2nd]).await;
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.stdout, format!("{b2nd}  [20, 30] >f8\n"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_prints_one_format_per_flag() {
    let server = serve().await;
    let h5 = server.url("hdf5/groups.h5");
    // The hierarchy: the tree as text, the node list with --json.
    let r = cli(&["info", &h5]).await;
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.stdout, GROUPS_TREE);
    let r = cli(&["info", &h5, "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let nodes: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(nodes.as_array().unwrap().len(), 6);
    // An array: text lines, or one JSON object.
    let r = cli(&["info", &h5, "--path", "/model/weights"]).await;
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stdout.contains("shape:   [6, 4]\ndtype:   <i8\n"),
        "{}",
        r.stdout
    );
    let r = cli(&["info", &h5, "--path", "/model/weights", "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["shape"], serde_json::json!([6, 4]));
    assert_eq!(j["cbytes"], 6 * 4 * 8, "contiguous: stored as it is");
    server.shutdown().await;
}

/// `info` shows the dimension names a source gives (Zarr v3 `dimension_names`, as
/// tests/fixtures/gen_zarr_partition.py writes them for tas), and no `dims` when it names none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_shows_dimension_names() {
    let server = serve().await;
    let url = server.url("zarr_partition/v3.zarr");
    let r = cli(&["info", &url, "--path", "/tas", "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["dims"], serde_json::json!(["time", "lat", "lon"]), "{j}");
    let r = cli(&["info", &url, "--path", "/tas"]).await;
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stdout.contains("\ndims:    time, lat, lon\n"),
        "{}",
        r.stdout
    );
    let r = cli(&["info", &server.url("blosc2/be_f8.b2nd"), "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert!(j.get("dims").is_none(), "{j}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_info_says_the_stored_size_is_unknown_rather_than_zero() {
    let server = serve().await;
    let url = server.url("zarr/v3.zarr");
    let r = cli(&["info", &url, "--path", "/temperature", "--json"]).await;
    assert!(r.ok, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["nbytes"], 13 * 11 * 8);
    assert!(j["cbytes"].is_null(), "{j}");
    assert!(j["source_bytes"].is_null(), "{j}");
    let r = cli(&["info", &url, "--path", "/temperature"]).await;
    assert!(r.ok, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("bytes:   1144 uncompressed, stored size unknown"),
        "{}",
        r.stdout
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_print_matches_numpy_print_of_the_data_written() {
    let server = serve().await;
    let store = server.url("print/print.zarr");
    let h5 = server.url("print/print.h5");
    let dir = fixtures().join("print");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().and_then(|e| e.to_str()) != Some("txt") {
            continue;
        }
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let want = std::fs::read_to_string(&p).unwrap();
        // h5_<name>: a dataset of print.h5 (strings, records), else an array of print.zarr.
        let (source, path) = match name.strip_prefix("h5_") {
            Some(ds) => (h5.clone(), format!("/{ds}")),
            None => (store.clone(), format!("/{name}")),
        };
        let r = cli(&["read", &source, "--path", &path, "--print"]).await;
        assert!(r.ok, "{name}: {}", r.stderr);
        assert_eq!(r.stdout, want, "{name}");
        // The summary line moves to stderr, keys in the documented order.
        let line: serde_json::Value =
            serde_json::from_str(r.stderr.lines().last().unwrap()).unwrap();
        let keys: Vec<&String> = line.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["shape", "dtype", "requests", "bytes", "missing_chunks"],
            "{name}"
        );
        seen += 1;
    }
    assert_eq!(seen, 21, "every array of gen_print.py");
    // Without --print: the one JSON line on stdout, nothing else.
    let r = cli(&["read", &store, "--path", "/f4_2d"]).await;
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1, "{}", r.stdout);
    assert!(
        r.stdout.starts_with("{\"shape\":[4,5],\"dtype\":\"<f4\","),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.is_empty(),
        "no progress line off a terminal: {:?}",
        r.stderr
    );
    server.shutdown().await;
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
        for cmd in ["read", "info", "ls", "chunks", "attrs", "partition"] {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_on_other_formats_says_what_it_reads() {
    let server = serve().await;
    for (source, path, what) in [
        ("blosc2/be_f8.b2nd", None, "a Blosc2 .b2nd array"),
        ("zarr/v3.zarr", Some("/temperature"), "a Zarr v3 array"),
        ("zarr/v2.zarr", Some("/raw"), "a Zarr v2 array"),
    ] {
        let url = server.url(source);
        let mut args = vec!["chunks", &url];
        if let Some(p) = path {
            args.extend(["--path", p]);
        }
        let (code, message) = cli(&args).await.error();
        assert_eq!(code, "INVALID_ARGUMENT", "{source}: {message}");
        assert_eq!(
            message,
            format!(
                "{url}: chunks reads HDF5 datasets; this is {what} (for b2nd and zarr use info: \
                 chunk shape, chunk count and codecs)"
            )
        );
    }
    server.shutdown().await;
}

/// The examples of `chunkwise COMMAND --help` that read the repository's fixtures (local
/// paths under tests/fixtures, or the loopback server's URLs in place of port 8000) run and
/// succeed from the repository root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_examples_on_fixtures_run() {
    let server = serve().await;
    let base = server.url("");
    let repo = fixtures().join("..").join("..");
    let mut ran = 0;
    for cmd in ["ls", "info", "read", "attrs", "chunks"] {
        let help = cli(&[cmd, "--help"]).await;
        assert!(help.ok, "{}", help.stderr);
        let examples: Vec<String> = help
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("  chunkwise "))
            .filter(|l| l.contains("tests/fixtures/") || l.contains("127.0.0.1:8000"))
            .filter(|l| !l.contains("--out") && !l.contains("--cache-dir"))
            .map(|l| l.replace("http://127.0.0.1:8000/", &base))
            .collect();
        assert!(!examples.is_empty(), "{cmd} has no example on the fixtures");
        for line in examples {
            // The examples quote with double quotes only.
            let mut argv = Vec::new();
            for (i, part) in line.split('"').enumerate() {
                if i % 2 == 1 {
                    argv.push(part.to_string());
                } else {
                    argv.extend(part.split_whitespace().map(str::to_string));
                }
            }
            let bin =
                std::env::var("CHUNKWISE_BIN").unwrap_or(env!("CARGO_BIN_EXE_chunkwise").into());
            let repo = repo.clone();
            let out = tokio::task::spawn_blocking(move || {
                std::process::Command::new(bin)
                    .args(&argv)
                    .current_dir(repo)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap();
            assert!(
                out.status.success(),
                "chunkwise {line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.stdout.is_empty(), "chunkwise {line} printed nothing");
            ran += 1;
        }
    }
    assert!(ran >= 10, "{ran} examples ran");
    server.shutdown().await;
}

#[tokio::test]
async fn serve_names_a_missing_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("nothing");
    let root = root.to_str().unwrap();
    let (code, message) = cli(&["serve", "--root", root, "--port", "0"]).await.error();
    assert_eq!(code, "INVALID_ARGUMENT");
    assert_eq!(message, format!("--root {root}: no such directory"));
}

/// A local directory that is no Zarr store (tests/fixtures/hdf5, a directory of HDF5 files)
/// is named as such, not as a missing object `hdf5/`.
#[tokio::test]
async fn a_directory_without_zarr_metadata_says_so() {
    let dir = fixtures().join("hdf5");
    let dir = dir.to_str().unwrap();
    for cmd in ["read", "info", "ls", "attrs"] {
        let (code, message) = cli(&[cmd, dir]).await.error();
        assert_eq!(code, "NOT_FOUND", "{cmd}: {message}");
        assert_eq!(
            message,
            format!(
                "{dir}: a directory without Zarr metadata (no zarr.json, .zarray or .zgroup): \
                 give a file in it, or the directory of a Zarr store"
            ),
            "{cmd}"
        );
    }
    // A path inside it is still just missing.
    let (code, message) = cli(&["read", dir, "--path", "/x"]).await.error();
    assert_eq!(code, "NOT_FOUND");
    assert!(message.starts_with("not found: "), "{message}");
}
