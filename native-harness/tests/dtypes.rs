//! float16, complex and datetime64/timedelta64 arrays written by zarr-python (Zarr v2 and v3)
//! and python-blosc2 (.b2nd) (tests/fixtures/gen_dtypes.py) read over the real range server on
//! loopback: the dtype as numpy spells it (unit kept) and the bytes of the `.npy` written next
//! to each; `chunkwise read --out` writes a `.npy` numpy reads back with the same dtype.
//! numpy's fixed-width unicode (`<U8`, `>U3`) `.b2nd` frames of python-blosc2
//! (tests/fixtures/gen_b2z.py: non-ASCII text, an emoji, empty strings) likewise, and their
//! `read --print` against numpy's own print() of the data written.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> Vec<serde_json::Value> {
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixtures().join("dtypes/manifest.json")).expect("dtypes manifest"),
    )
    .expect("manifest json");
    m["fixtures"].as_array().expect("fixtures").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dtype_fixture_reads_as_written() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let entries = manifest();
    assert!(entries.len() >= 15, "{} fixtures", entries.len());
    for e in &entries {
        let source = e["source"].as_str().unwrap();
        let what = format!("{}:{source}:{}", e["format"], e["name"]);
        let url = server.url(&format!("dtypes/{source}"));
        let options = OpenOptions {
            path: e.get("path").and_then(|p| p.as_str()).map(String::from),
            ..Default::default()
        };
        let arr = open_array(&url, vec![], options)
            .await
            .unwrap_or_else(|err| panic!("{what}: open: {err}"));
        let npy = read_npy(
            &std::fs::read(fixtures().join("dtypes").join(e["npy"].as_str().unwrap())).unwrap(),
        )
        .unwrap();
        assert_eq!(arr.dtype().to_string(), npy.descr, "{what}: dtype");
        assert_eq!(npy.descr, e["dtype"].as_str().unwrap(), "{what}");
        assert_eq!(arr.shape(), &npy.shape[..], "{what}");
        let whole = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|err| panic!("{what}: read: {err}"));
        assert_eq!(whole.dtype.to_string(), npy.descr, "{what}");
        assert_eq!(whole.data, npy.data, "{what}: values");
        // A strided selection across chunk edges, against the same bytes.
        let sel = "1::2, ::-3";
        let dims = Selection::parse(sel).unwrap().resolve(&npy.shape).unwrap();
        let part = arr
            .read(&Selection::parse(sel).unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        let want = common::reference(&npy.data, &npy.shape, whole.dtype.itemsize, &dims);
        assert_eq!(part.data, want, "{what}: {sel}");
    }
}

#[test]
fn cli_read_writes_datetime_npy_with_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    for (source, path, name) in [
        ("dtypes/M8_ns.b2nd", None, "b2nd_M8_ns.npy"),
        ("dtypes/v2.zarr", Some("/M8_s_be"), "zarr2_M8_s_be.npy"),
        ("dtypes/v3.zarr", Some("/m8_ms"), "zarr3_m8_ms.npy"),
    ] {
        let out = dir.path().join(name);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"));
        cmd.arg("read")
            .arg(fixtures().join(source))
            .arg("--out")
            .arg(&out);
        if let Some(p) = path {
            cmd.args(["--path", p]);
        }
        let run = cmd.output().unwrap();
        assert!(
            run.status.success(),
            "{source}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let want = read_npy(&std::fs::read(fixtures().join("dtypes").join(name)).unwrap()).unwrap();
        assert_eq!(summary["dtype"], want.descr.as_str(), "{source}");
        let got = read_npy(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(got.descr, want.descr, "{source}");
        assert_eq!(got.shape, want.shape, "{source}");
        assert_eq!(got.data, want.data, "{source}");
    }
}

/// The CLI at `CHUNKWISE_BIN` (another build, to see a test fail before a change) or this
/// build's: (success, stdout, stderr).
fn chunkwise(args: &[&str]) -> (bool, String, String) {
    let bin = std::env::var("CHUNKWISE_BIN").unwrap_or(env!("CARGO_BIN_EXE_chunkwise").into());
    let out = std::process::Command::new(bin)
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The `<U` fixtures of gen_b2z.py: (frame, dtype as numpy spells it).
const UNICODE: [(&str, &str); 2] = [("unicode_u8", "<U8"), (("unicode_be_u3"), ">U3")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unicode_b2nd_reads_as_written() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    for (name, dtype) in UNICODE {
        let npy =
            read_npy(&std::fs::read(fixtures().join(format!("b2z/{name}.npy"))).unwrap()).unwrap();
        assert_eq!(npy.descr, dtype, "{name}: the .npy numpy wrote");
        let url = server.url(&format!("b2z/{name}.b2nd"));
        let arr = open_array(&url, vec![], OpenOptions::default())
            .await
            .unwrap_or_else(|err| panic!("{name}: open: {err}"));
        assert_eq!(arr.dtype().to_string(), dtype, "{name}");
        assert_eq!(
            arr.dtype().itemsize,
            npy.data.len() / npy.shape.iter().product::<u64>() as usize
        );
        assert_eq!(arr.shape(), &npy.shape[..], "{name}");
        let whole = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|err| panic!("{name}: read: {err}"));
        assert_eq!(whole.dtype.to_string(), dtype, "{name}");
        assert_eq!(whole.data, npy.data, "{name}: values");
        let sel = if npy.shape.len() == 2 {
            "1::2, ::-3"
        } else {
            "::-1"
        };
        let dims = Selection::parse(sel).unwrap().resolve(&npy.shape).unwrap();
        let part = arr
            .read(&Selection::parse(sel).unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        let want = common::reference(&npy.data, &npy.shape, whole.dtype.itemsize, &dims);
        assert_eq!(part.data, want, "{name}: {sel}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unicode_cli_read_out_print_and_info() {
    let server = common::serve_dir(fixtures()).await;
    let dir = tempfile::tempdir().unwrap();
    for (name, dtype) in UNICODE {
        let url = server.url(&format!("b2z/{name}.b2nd"));
        let want =
            read_npy(&std::fs::read(fixtures().join(format!("b2z/{name}.npy"))).unwrap()).unwrap();
        // --out: a .npy of numpy's descr and the bytes written.
        let out = dir.path().join(format!("{name}.npy"));
        let (ok, stdout, stderr) = chunkwise(&["read", &url, "--out", out.to_str().unwrap()]);
        assert!(ok, "{name}: {stderr}");
        let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(summary["dtype"], dtype, "{name}");
        let got = read_npy(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(
            (got.descr.as_str(), &got.shape, &got.data),
            (dtype, &want.shape, &want.data),
            "{name}"
        );
        // --print: numpy's print() of the array written.
        let printed =
            std::fs::read_to_string(fixtures().join(format!("b2z/{name}.print.txt"))).unwrap();
        let (ok, stdout, stderr) = chunkwise(&["read", &url, "--print"]);
        assert!(ok, "{name}: {stderr}");
        assert_eq!(stdout, printed, "{name}");
        // info --json names the dtype as numpy does.
        let (ok, stdout, stderr) = chunkwise(&["info", &url, "--json"]);
        assert!(ok, "{name}: {stderr}");
        let info: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(info["dtype"], dtype, "{name}: {stdout}");
    }
    server.shutdown().await;
}

/// SHUFFLE with a filters_meta (C-Blosc2 3.x: shuffle in groups of that many bytes, not the
/// typesize), as python-blosc2 writes `<U` arrays, here on float64 (gen_b2z.py
/// `shuffle_meta_f8.b2nd`: meta 4, LZ4, chunks 400 of 1000 items, blocks 100).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shuffle_meta_groups_bytes_as_c_blosc2_3_does() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let npy =
        read_npy(&std::fs::read(fixtures().join("b2z/shuffle_meta_f8.npy")).unwrap()).unwrap();
    let arr = open_array(
        &server.url("b2z/shuffle_meta_f8.b2nd"),
        vec![],
        OpenOptions::default(),
    )
    .await
    .unwrap();
    let whole = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.data, npy.data, "values");
    // Inside one block, and across the edge chunk.
    for sel in ["130:170", "390:1000:7"] {
        let dims = Selection::parse(sel).unwrap().resolve(&npy.shape).unwrap();
        let part = arr
            .read(&Selection::parse(sel).unwrap(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(
            part.data,
            common::reference(&npy.data, &npy.shape, 8, &dims),
            "{sel}"
        );
    }
    server.shutdown().await;
}
