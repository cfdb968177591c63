//! Transports against a misbehaving server: `chunkwise serve` with test faults (a server that
//! never answers, one that trickles, redirects, a new ETag on every answer, injected statuses,
//! ignored ranges), in-process on an ephemeral loopback port, and the CLI's `--timeout`.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::io::http::{HttpOptions, HttpSource};
use chunkwise::io::{
    ByteRange, Counted, IoError, RangeSource, RetryConfig, Retrying, TimeoutScope, Traffic,
};
use chunkwise::selection::Selection;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;
use common::fault_server;

fn io_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/io")
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The bytes of tests/fixtures/io/pattern-N.bin (the formula its README gives).
fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (((i * 131 + 7) ^ (i >> 8)) & 0xff) as u8)
        .collect()
}

/// Retries with short backoffs (seeded), otherwise the defaults.
fn quick_retries() -> RetryConfig {
    RetryConfig {
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        seed: Some(5),
        ..Default::default()
    }
}

fn http(url: String, request_ms: u64, idle_ms: u64) -> HttpSource {
    HttpSource::with_options(
        url,
        HttpOptions {
            request_timeout: Duration::from_millis(request_ms),
            read_timeout: Duration::from_millis(idle_ms),
            ..Default::default()
        },
    )
    .unwrap()
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried_once() {
    let s = fault_server(&io_fixtures(), &["never-answer"], false).await;
    let traffic = Traffic::new();
    let src = Retrying::new(
        Counted::new(
            http(s.url("pattern-5000.bin"), 400, 10_000),
            traffic.clone(),
        ),
        quick_retries(),
    );
    let t = Instant::now();
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    let took = t.elapsed();
    assert_eq!(
        e,
        IoError::Timeout {
            location: s.url("pattern-5000.bin"),
            millis: 400,
            scope: TimeoutScope::Request
        }
    );
    // Two attempts of 0.4 s (one retry after a timeout), not four.
    assert_eq!(traffic.snapshot().requests, 2);
    assert_eq!(s.stats().gets, 2);
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "{took:?}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_idle_timeout_is_a_timeout_too() {
    let s = fault_server(&io_fixtures(), &["never-answer"], false).await;
    let src = http(s.url("pattern-10.bin"), 10_000, 300);
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(
        matches!(
            e,
            IoError::Timeout {
                scope: TimeoutScope::Idle,
                millis: 300,
                ..
            }
        ),
        "{e:?}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_trickling_server_hits_the_deadline_of_the_whole_answer() {
    // One byte every 100 ms never trips a 1 s idle timeout; the 0.5 s deadline of the
    // whole answer ends it.
    let s = fault_server(&io_fixtures(), &["trickle-ms=100"], false).await;
    let src = http(s.url("pattern-5000.bin"), 500, 1_000);
    let t = Instant::now();
    let e = src.read(ByteRange::bounded(0..100)).await.unwrap_err();
    assert!(
        matches!(
            e,
            IoError::Timeout {
                scope: TimeoutScope::Request,
                millis: 500,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // A short body still arrives whole, byte by byte.
    let src = http(s.url("pattern-10.bin"), 5_000, 1_000);
    let f = src.read(ByteRange::bounded(2..5)).await.unwrap();
    assert_eq!(f.bytes[..], pattern(10)[2..5]);
    s.shutdown().await;
}

#[tokio::test]
async fn a_redirect_loop_is_final_and_redirects_are_bounded() {
    let s = fault_server(&io_fixtures(), &["redirect-loop"], false).await;
    let traffic = Traffic::new();
    let src = Retrying::new(
        Counted::new(
            HttpSource::new(s.url("pattern-10.bin")).unwrap(),
            traffic.clone(),
        ),
        quick_retries(),
    );
    let e = src.read(ByteRange::bounded(0..4)).await.unwrap_err();
    assert!(matches!(e, IoError::Redirect { .. }), "{e:?}");
    assert_eq!(chunkwise::Error::from(e).code(), "REDIRECT");
    // The loop is seen on the first redirect back: one request, no retry.
    assert_eq!(s.stats().gets, 1);
    assert_eq!(traffic.snapshot().requests, 1);
    s.shutdown().await;

    let s = fault_server(&io_fixtures(), &["redirect-endless"], false).await;
    let src = Retrying::new(
        HttpSource::new(s.url("pattern-10.bin")).unwrap(),
        quick_retries(),
    );
    let e = src.read(ByteRange::bounded(0..4)).await.unwrap_err();
    assert!(matches!(e, IoError::Redirect { .. }), "{e:?}");
    // The request and 10 redirects followed, then the error; not retried.
    assert_eq!(s.stats().gets, 11);
    let hops: Vec<String> = s.requests().iter().map(|r| r.path.clone()).collect();
    assert!(hops.iter().all(|p| p == "/pattern-10.bin"), "{hops:?}");
    s.shutdown().await;
}

#[tokio::test]
async fn a_new_etag_between_reads_is_source_changed() {
    let s = fault_server(&io_fixtures(), &["etag-per-request"], false).await;
    let src = HttpSource::new(s.url("pattern-5000.bin")).unwrap();
    let f = src.read(ByteRange::bounded(0..10)).await.unwrap();
    assert_eq!(f.bytes[..], pattern(5000)[..10]);
    let e = src.read(ByteRange::bounded(10..20)).await.unwrap_err();
    assert!(
        matches!(e, IoError::SourceChanged { ref detail, .. } if detail.starts_with("ETag")),
        "{e:?}"
    );
    assert_eq!(chunkwise::Error::from(e).code(), "SOURCE_CHANGED");
    s.shutdown().await;
}

#[tokio::test]
async fn injected_statuses_map_to_typed_errors() {
    let s = fault_server(
        &io_fixtures(),
        &[
            "status=-10.bin:410",
            "status=-5000.bin:404",
            "status=space.bin:503",
        ],
        false,
    )
    .await;
    let read = |name: &str| {
        let src = HttpSource::new(s.url(name)).unwrap();
        async move { src.read(ByteRange::bounded(0..1)).await.unwrap_err() }
    };
    let name = "pattern-5000.bin";
    assert_eq!(
        read(name).await,
        IoError::NotFound {
            location: s.url(name)
        }
    );
    // 410 Gone is not "absent" (a Zarr reader reads an absent chunk as fill; only 404
    // means that): a status error, not retried.
    let e = read("pattern-10.bin").await;
    assert!(
        matches!(e, IoError::HttpStatus { status: 410, .. }),
        "{e:?}"
    );
    let src = Retrying::new(
        HttpSource::new(s.url("with%20space.bin")).unwrap(),
        quick_retries(),
    );
    let e = src.read(ByteRange::bounded(0..1)).await.unwrap_err();
    assert!(
        matches!(e, IoError::HttpStatus { status: 503, .. }),
        "{e:?}"
    );
    // 503 is transient: the first attempt and three retries.
    assert_eq!(s.requests().iter().filter(|r| r.status == 503).count(), 4);
    s.shutdown().await;
}

#[tokio::test]
async fn an_ignored_range_counts_the_whole_body_and_hands_it_over() {
    let s = fault_server(&io_fixtures(), &[], true).await;
    let traffic = Traffic::new();
    let src = Counted::new(
        HttpSource::new(s.url("pattern-5000.bin")).unwrap(),
        traffic.clone(),
    );
    let f = src.read(ByteRange::bounded(100..200)).await.unwrap();
    assert_eq!(f.bytes[..], pattern(5000)[100..200]);
    assert_eq!(f.whole.as_deref(), Some(&pattern(5000)[..]));
    // What crossed the wire, as the server counts it.
    assert_eq!(traffic.snapshot().bytes, 5000);
    assert_eq!(s.stats().bytes_sent, 5000);
    s.shutdown().await;
}

#[tokio::test]
async fn a_small_source_whose_server_ignores_range_is_fetched_in_one_round_trip() {
    let s = fault_server(&fixtures(), &[], true).await;
    let file = "blosc2/split_never.b2nd";
    let want = chunkwise::npy::read_npy(
        &std::fs::read(fixtures().join("blosc2/split_never.npy")).unwrap(),
    )
    .unwrap();
    let size = std::fs::metadata(fixtures().join(file)).unwrap().len();
    // A head read shorter than the file, so the rest would be asked for.
    let options = OpenOptions {
        head_bytes: 1024,
        ..Default::default()
    };
    let arr = native_harness::source::open_array(&s.url(file), vec![], options)
        .await
        .unwrap();
    let got = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.shape, want.shape);
    assert_eq!(got.data, want.data);
    // The name ends in `.b2nd`: the frame's tail is asked with its head, in the same round
    // trip; a server that ignores `Range` answers both with the whole file, and nothing
    // more is asked.
    let t = arr.traffic();
    assert_eq!(
        (t.requests, t.round_trips, t.bytes),
        (2, 1, 2 * size),
        "{t:?}"
    );
    assert_eq!(s.stats().gets, 2);
    assert_eq!(s.stats().bytes_sent, 2 * size);
    s.shutdown().await;
}

/// Runs the CLI with `args`; returns its exit status, stderr and the time it took.
fn cli(args: &[&str]) -> (std::process::ExitStatus, String, Duration) {
    let t = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_timeout_bounds_a_command_against_a_server_that_never_answers() {
    let s = fault_server(&fixtures(), &["never-answer"], false).await;
    let url = s.url("blosc2/split_never.b2nd");
    for cmd in ["read", "info", "chunks"] {
        let (status, stderr, took) =
            tokio::task::block_in_place(|| cli(&[cmd, &url, "--timeout", "1.5"]));
        assert!(!status.success(), "{cmd}");
        let err: serde_json::Value = serde_json::from_str(stderr.trim()).unwrap();
        assert_eq!(err["error"]["code"], "TIMEOUT", "{cmd}: {stderr}");
        assert!(
            took >= Duration::from_millis(1500) && took < Duration::from_secs(5),
            "{cmd}: {took:?}"
        );
    }
    let (status, stderr, _) = cli(&["read", &url, "--timeout", "0"]);
    assert!(!status.success());
    assert!(stderr.contains("INVALID_ARGUMENT"), "{stderr}");
    s.shutdown().await;
}

#[tokio::test]
async fn small_answers_on_a_kept_alive_connection_are_not_delayed() {
    // Without TCP_NODELAY on the server, the body of a small answer now and then waited for
    // the client's delayed ACK of the headers (about 40 ms on Linux): 2 of 20 answers with
    // curl, 17 of 40 in one run of this test and none in the next, so it catches the
    // regression only in some runs.
    let s = fault_server(&io_fixtures(), &[], false).await;
    let src = HttpSource::new(s.url("pattern-5000.bin")).unwrap();
    src.read(ByteRange::bounded(0..10)).await.unwrap(); // connect
    let mut times = Vec::new();
    for i in 0..40u64 {
        let t = Instant::now();
        let f = src
            .read(ByteRange::bounded(i * 10..i * 10 + 10))
            .await
            .unwrap();
        times.push(t.elapsed());
        assert_eq!(
            f.bytes[..],
            pattern(5000)[i as usize * 10..i as usize * 10 + 10]
        );
    }
    assert_eq!(s.stats().connections, 1, "one kept-alive connection");
    times.sort();
    let slow = times
        .iter()
        .filter(|t| **t >= Duration::from_millis(35))
        .count();
    assert_eq!(slow, 0, "answers of 35 ms or more: {times:?}");
    s.shutdown().await;
}

#[tokio::test]
async fn server_honours_if_range_unit_case_dotfiles_and_cors_origin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.bin"), pattern(100)).unwrap();
    std::fs::write(dir.path().join(".secret"), b"token").unwrap();
    let s = native_harness::serve::spawn(native_harness::serve::ServeOptions {
        root: dir.path().into(),
        quiet: true,
        cors_origin: "https://app.example".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let client = reqwest::Client::new();
    let get = |path: &str, headers: &[(&str, &str)]| {
        let mut r = client.get(s.url(path));
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.send()
    };
    let first = get("a.bin", &[]).await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_string();
    let lm = first.headers()["last-modified"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        first.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    assert_eq!(first.headers()["vary"], "Origin");
    for (if_range, status) in [
        (etag.as_str(), 206),
        (lm.as_str(), 206),
        ("\"stale\"", 200),
        (&format!("W/{etag}"), 200),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 200),
    ] {
        let r = get("a.bin", &[("Range", "bytes=10-19"), ("If-Range", if_range)])
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), status, "If-Range {if_range}");
        let body = r.bytes().await.unwrap();
        let want = if status == 206 {
            &pattern(100)[10..20]
        } else {
            &pattern(100)[..]
        };
        assert_eq!(&body[..], want, "If-Range {if_range}");
    }
    let r = get("a.bin", &[("Range", "Bytes=0-1")]).await.unwrap();
    assert_eq!(r.status().as_u16(), 206);
    assert_eq!(get(".secret", &[]).await.unwrap().status().as_u16(), 404);
    let listing = get("", &[]).await.unwrap().text().await.unwrap();
    assert!(
        listing.contains("a.bin") && !listing.contains("secret"),
        "{listing}"
    );
    s.shutdown().await;
}
