//! The coalescing options (`coalesce_gap`, `max_merged_bytes`; CLI `--coalesce-gap`,
//! `--max-merged-bytes`) change the requests of a read as documented, and only the requests:
//! the values equal the array written. The fixture is python-blosc2's 2000 x 2000 float32
//! frame in 250 x 250 chunks (`gen_blosc2.py --big`, over 8 MiB so it is read by ranges),
//! written at test time from a seeded array with its `.npy`; the requests are the real range
//! server's log.

mod common;

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::source::open_array;
use std::ops::Range;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn make_big(dir: &Path) {
    let status = std::process::Command::new(native_harness::venv_python())
        .arg(fixtures().join("gen_blosc2.py"))
        .arg("--big")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
    assert!(status.success(), "gen_blosc2.py --big failed");
}

fn range_of(header: &str) -> Range<u64> {
    let (a, b) = header
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .unwrap_or_else(|| panic!("range {header}"));
    a.parse().unwrap()..b.parse::<u64>().unwrap() + 1
}

/// Every row of chunks at columns 0, 2, 4, 6 of chunk row 0: four chunks with one chunk's
/// bytes between each two.
const SELECT: &str = "0:250, ::500";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_options_change_the_requests_and_not_the_values() {
    let dir = tempfile::tempdir().unwrap();
    make_big(dir.path());
    let npy = read_npy(&std::fs::read(dir.path().join("big_f4.npy")).unwrap()).unwrap();
    let server = common::serve_dir(dir.path().to_path_buf()).await;
    let url = server.url("big_f4.b2nd");
    let sel = Selection::parse(SELECT).unwrap();
    let want = common::reference(&npy.data, &npy.shape, 4, &sel.resolve(&npy.shape).unwrap());

    // The read's requests under each setting, from the server's log.
    let reads = |gap: u64, max: Option<u64>| {
        let url = url.clone();
        let server = &server;
        let sel = sel.clone();
        let want = want.clone();
        async move {
            let options = OpenOptions {
                coalesce_gap: gap,
                max_merged_bytes: max,
                ..Default::default()
            };
            let arr = open_array(&url, vec![], options).await.unwrap();
            let before = server.requests().len();
            let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
            assert!(got.data == want, "gap {gap}, max {max:?}: values differ");
            let mut ranges: Vec<Range<u64>> = server.requests()[before..]
                .iter()
                .map(|r| range_of(r.range.as_deref().expect("a ranged request")))
                .collect();
            // The log is in completion order.
            ranges.sort_by_key(|r| r.start);
            ranges
        }
    };

    // Gap 0: one request per chunk, four chunks, nothing between them read.
    let exact = reads(0, None).await;
    println!("gap 0: {exact:?}");
    assert_eq!(exact.len(), 4, "{exact:?}");
    let chunk_bytes: u64 = exact.iter().map(|r| r.end - r.start).sum();
    let gaps: Vec<u64> = exact.windows(2).map(|w| w[1].start - w[0].end).collect();
    let (small, large) = (*gaps.iter().min().unwrap(), *gaps.iter().max().unwrap());
    assert!(small > 0, "{exact:?}");

    // A gap as large as the largest gap: one request from the first chunk to the last.
    let one = reads(large, None).await;
    assert_eq!(one, vec![exact[0].start..exact[3].end], "gap {large}");

    // One byte short of the smallest gap: as with 0.
    assert_eq!(reads(small - 1, None).await, exact, "gap {}", small - 1);

    // The same gap with merged requests bounded to the first two chunks and their gap: the
    // first merge is allowed, the next would pass the bound.
    let two = exact[1].end - exact[0].start;
    let capped = reads(large, Some(two)).await;
    assert_eq!(capped.len(), 3, "{capped:?}");
    assert_eq!(capped[0], exact[0].start..exact[1].end);
    assert!(capped.iter().all(|r| r.end - r.start <= two), "{capped:?}");
    // A bound below every chunk: one request per chunk, each chunk still read whole.
    assert_eq!(reads(large, Some(1)).await, exact);
    let merged_bytes: u64 = one.iter().map(|r| r.end - r.start).sum();
    println!(
        "chunks {chunk_bytes} bytes in 4 requests at gap 0; {merged_bytes} bytes in 1 at gap {large}"
    );
    server.shutdown().await;
}

/// Runs the real binary; (exit success, stdout, stderr).
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn error_code(stderr: &str) -> String {
    let line = stderr.lines().last().unwrap_or("");
    let j: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("{stderr}"));
    j["error"]["code"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_flags_change_the_requests_and_refuse_nonsense() {
    let dir = tempfile::tempdir().unwrap();
    make_big(dir.path());
    let server = common::serve_dir(dir.path().to_path_buf()).await;
    let url = server.url("big_f4.b2nd");
    let run = |extra: &'static [&'static str]| {
        let url = url.clone();
        tokio::task::spawn_blocking(move || {
            let mut a = vec!["read", url.as_str(), "--select", SELECT];
            a.extend_from_slice(extra);
            cli(&a)
        })
    };
    let requests = |out: &str| {
        let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        j["requests"].as_u64().unwrap()
    };
    let (ok, out0, err) = run(&["--coalesce-gap", "0"]).await.unwrap();
    assert!(ok, "{err}");
    let (ok, out1, err) = run(&["--coalesce-gap", "4194304"]).await.unwrap();
    assert!(ok, "{err}");
    let (ok, out2, err) = run(&["--coalesce-gap", "4194304", "--max-merged-bytes", "1"])
        .await
        .unwrap();
    assert!(ok, "{err}");
    // The open's requests are the same in each run; the read's differ by three.
    assert_eq!(requests(&out0), requests(&out1) + 3, "{out0} {out1}");
    assert_eq!(requests(&out2), requests(&out0), "{out2}");

    for (args, msg) in [
        (
            &["--coalesce-gap", "1073741825"][..],
            "--coalesce-gap must be at most 1073741824 bytes (1 GiB), not 1073741825",
        ),
        (
            &["--max-merged-bytes", "0"][..],
            "--max-merged-bytes must be a positive number of bytes",
        ),
        (
            &["--columns", "a", "--coalesce-gap", "0"][..],
            "--coalesce-gap and --max-merged-bytes are for array reads, not --columns",
        ),
    ] {
        let (ok, _, err) = run(args).await.unwrap();
        assert!(!ok, "{args:?}");
        assert_eq!(error_code(&err), "INVALID_ARGUMENT", "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    // Not a number of bytes at all: the argument parser refuses it.
    let (ok, _, err) = run(&["--coalesce-gap", "64k"]).await.unwrap();
    assert!(!ok && err.contains("--coalesce-gap"), "{err}");
    let (ok, _, err) = run(&["--max-merged-bytes", "-1"]).await.unwrap();
    assert!(!ok, "{err}");
    server.shutdown().await;
}
