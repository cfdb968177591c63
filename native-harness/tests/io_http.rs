//! Range I/O against the real loopback range server (spawned in-process on an ephemeral port):
//! the shared conformance checks over `FileSource`, `HttpSource` and its wrappers, and the
//! server's own behaviour (status codes, headers, CORS, faults, latency).

use chunkwise::io::conformance::check_source;
use chunkwise::io::file::{etag_for, FileSource};
use chunkwise::io::http::{HttpOptions, HttpSource};
use chunkwise::io::{ByteRange, Counted, IoError, RangeSource, RetryConfig, Retrying, Traffic};
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The fixture files and their lengths (content: see tests/fixtures/io/README.md).
const FIXTURES: &[(&str, usize)] = &[
    ("pattern-5000.bin", 5000),
    ("pattern-10.bin", 10),
    ("empty.bin", 0),
    ("with space.bin", 100),
];

fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (((i * 131 + 7) ^ (i >> 8)) & 0xff) as u8)
        .collect()
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/io")
}

async fn server(opts: ServeOptions) -> ServerHandle {
    spawn(ServeOptions {
        quiet: true,
        ..opts
    })
    .await
    .expect("server starts")
}

async fn fixture_server() -> ServerHandle {
    server(ServeOptions {
        root: fixtures(),
        ..Default::default()
    })
    .await
}

fn url_of(s: &ServerHandle, name: &str) -> String {
    s.url(&name.replace(' ', "%20"))
}

#[test]
fn fixtures_match_their_formula() {
    for (name, n) in FIXTURES {
        let got = std::fs::read(fixtures().join(name)).unwrap();
        assert_eq!(got, pattern(*n), "{name}");
    }
}

#[tokio::test]
async fn file_source_conformance() {
    for (name, n) in FIXTURES {
        let src = FileSource::open(fixtures().join(name)).unwrap();
        check_source(&src, &pattern(*n)).await;
    }
}

#[tokio::test]
async fn http_source_conformance() {
    let s = fixture_server().await;
    for (name, n) in FIXTURES {
        let src = HttpSource::new(url_of(&s, name)).unwrap();
        check_source(&src, &pattern(*n)).await;
    }
    s.shutdown().await;
}

#[tokio::test]
async fn wrapped_http_source_conformance() {
    let s = fixture_server().await;
    let traffic = Traffic::new();
    let src = Retrying::new(
        Counted::new(
            HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap(),
            traffic.clone(),
        ),
        RetryConfig::default(),
    );
    check_source(&src, &pattern(5000)).await;
    // Every request the transport made reached the server, and nothing else did.
    assert_eq!(traffic.snapshot().requests, s.stats().gets);
    s.shutdown().await;
}

#[tokio::test]
async fn http_and_file_sources_share_identity() {
    let s = fixture_server().await;
    let path = fixtures().join("pattern-5000.bin");
    let file = FileSource::open(&path).unwrap();
    let http = HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap();
    assert_eq!(http.info(), None);
    let f = http.read(ByteRange::Suffix(10)).await.unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    let etag = etag_for(meta.len(), meta.modified().unwrap());
    assert_eq!(f.info.etag.as_deref(), Some(etag.as_str()));
    assert_eq!(file.info().etag.as_deref(), Some(etag.as_str()));
    assert_eq!(f.info.last_modified, file.info().last_modified);
    assert_eq!(http.info().unwrap().len, 5000);
    assert!(!http.range_ignored());
    s.shutdown().await;
}

#[tokio::test]
async fn traffic_counts_requests_and_bytes() {
    let s = fixture_server().await;
    let traffic = Traffic::new();
    let src = Counted::new(
        HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap(),
        traffic.clone(),
    );
    let got = src
        .read_many(&[0..100, 1000..1500, 4990..5000], 2)
        .await
        .unwrap();
    assert_eq!(got[1][..], pattern(5000)[1000..1500]);
    assert_eq!(traffic.snapshot().requests, 3);
    assert_eq!(traffic.snapshot().bytes, 610);
    assert_eq!(s.stats().bytes_sent, 610);
    s.shutdown().await;
}

#[tokio::test]
async fn missing_and_outside_paths_are_not_found() {
    let s = fixture_server().await;
    for path in [
        "missing.bin",
        "..%2F..%2FCargo.toml",
        "%2e%2e/%2e%2e/Cargo.toml",
    ] {
        let src = HttpSource::new(s.url(path)).unwrap();
        let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
        assert!(matches!(e, IoError::NotFound { .. }), "{path}: {e:?}");
    }
    assert!(s.requests().iter().all(|r| r.status == 404));
    s.shutdown().await;
}

#[tokio::test]
async fn unsatisfiable_range_is_416_with_length() {
    let s = fixture_server().await;
    let src = HttpSource::new(url_of(&s, "pattern-10.bin")).unwrap();
    let e = src.read(ByteRange::Offset(10)).await.unwrap_err();
    assert_eq!(
        e,
        IoError::RangeNotSatisfiable {
            location: url_of(&s, "pattern-10.bin"),
            range: "bytes=10-".into(),
            len: 10
        }
    );
    let log = s.requests();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].status, 416);
    assert_eq!(log[0].range.as_deref(), Some("bytes=10-"));
    s.shutdown().await;
}

#[tokio::test]
async fn ignored_range_on_small_file_serves_the_slice() {
    let s = server(ServeOptions {
        root: fixtures(),
        ignore_range: true,
        ..Default::default()
    })
    .await;
    let src = HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap();
    assert!(!src.range_ignored());
    let f = src.read(ByteRange::bounded(100..200)).await.unwrap();
    assert!(src.range_ignored());
    assert_eq!(f.range, 100..200);
    assert_eq!(f.bytes[..], pattern(5000)[100..200]);
    assert_eq!(f.info.len, 5000);
    let f = src.read(ByteRange::Suffix(7)).await.unwrap();
    assert_eq!(f.range, 4993..5000);
    assert_eq!(
        s.requests().iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![200, 200]
    );
    // The conformance checks hold too: a server ignoring ranges is slower, not wrong.
    check_source(&src, &pattern(5000)).await;
    // With a lower whole-read limit the same answer is refused.
    let opts = HttpOptions {
        whole_read_limit: 4999,
        ..Default::default()
    };
    let strict = HttpSource::with_options(url_of(&s, "pattern-5000.bin"), opts).unwrap();
    let e = strict.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert_eq!(
        e,
        IoError::RangeIgnored {
            location: url_of(&s, "pattern-5000.bin"),
            len: Some(5000),
            limit: 4999
        }
    );
    s.shutdown().await;
}

#[tokio::test]
async fn ignored_range_on_big_file_fails_without_reading_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let big = 64 * 1024 * 1024u64;
    let f = std::fs::File::create(dir.path().join("big.bin")).unwrap();
    f.set_len(big).unwrap(); // sparse: cheap to create
    drop(f);
    let s = server(ServeOptions {
        root: dir.path().into(),
        ignore_range: true,
        ..Default::default()
    })
    .await;
    let traffic = Traffic::new();
    let src = Counted::new(HttpSource::new(s.url("big.bin")).unwrap(), traffic.clone());
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(
        matches!(e, IoError::RangeIgnored { len: Some(n), limit, .. } if n == big && limit == 8 << 20),
        "{e:?}"
    );
    assert_eq!(traffic.snapshot().bytes, 0);
    // Give the server a moment to notice the closed connection, then check it stopped
    // streaming: only what fits in socket buffers left it, far less than the file.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = s.stats().bytes_sent;
    assert!(sent < big / 4, "server sent {sent} of {big} bytes");
    s.shutdown().await;
}

#[tokio::test]
async fn whole_object_asked_is_read_past_the_limit_when_answered_200() {
    let dir = tempfile::tempdir().unwrap();
    let n = 12 * 1024 * 1024u64; // above the 8 MiB whole-read limit
    let f = std::fs::File::create(dir.path().join("big.bin")).unwrap();
    f.set_len(n).unwrap();
    drop(f);
    let s = server(ServeOptions {
        root: dir.path().into(),
        ignore_range: true,
        ..Default::default()
    })
    .await;
    let src = HttpSource::new(s.url("big.bin")).unwrap();
    let f = src.read(ByteRange::Offset(0)).await.unwrap();
    assert_eq!((f.range, f.bytes.len() as u64), (0..n, n));
    assert!(f.bytes.iter().all(|&b| b == 0));
    assert!(
        !src.range_ignored(),
        "a 200 to bytes=0- is not ignoring the range"
    );
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(
        matches!(e, IoError::RangeIgnored { len: Some(l), .. } if l == n),
        "{e:?}"
    );
    assert!(src.range_ignored());
    s.shutdown().await;
}

#[tokio::test]
async fn latency_option_delays_each_request() {
    let s = server(ServeOptions {
        root: fixtures(),
        latency_ms: 150,
        ..Default::default()
    })
    .await;
    let src = HttpSource::new(url_of(&s, "pattern-10.bin")).unwrap();
    src.read(ByteRange::bounded(0..1)).await.unwrap(); // connection set up
    let t = Instant::now();
    src.read(ByteRange::bounded(0..5)).await.unwrap();
    src.read(ByteRange::bounded(5..10)).await.unwrap();
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(300),
        "two requests took {took:?}"
    );
    assert!(took < Duration::from_secs(3), "two requests took {took:?}");
    s.shutdown().await;
}

#[tokio::test]
async fn retries_ride_out_injected_failures() {
    let s = server(ServeOptions {
        root: fixtures(),
        fail_first: 2,
        ..Default::default()
    })
    .await;
    let config = RetryConfig {
        max_retries: 3,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        seed: Some(3),
        ..Default::default()
    };
    let traffic = Traffic::new();
    let src = Retrying::new(
        Counted::new(
            HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap(),
            traffic.clone(),
        ),
        config.clone(),
    );
    let f = src.read(ByteRange::bounded(10..20)).await.unwrap();
    assert_eq!(f.bytes[..], pattern(5000)[10..20]);
    assert_eq!(traffic.snapshot().requests, 3);
    let statuses: Vec<u16> = s.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![503, 503, 206]);
    s.shutdown().await;

    // Too few retries: the 503 comes through.
    let s = server(ServeOptions {
        root: fixtures(),
        fail_first: 2,
        ..Default::default()
    })
    .await;
    let src = Retrying::new(
        HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap(),
        RetryConfig {
            max_retries: 1,
            ..config
        },
    );
    let e = src.read(ByteRange::bounded(10..20)).await.unwrap_err();
    assert!(
        matches!(e, IoError::HttpStatus { status: 503, .. }),
        "{e:?}"
    );
    assert_eq!(s.stats().gets, 2);
    s.shutdown().await;
}

#[tokio::test]
async fn rewritten_object_is_source_changed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.bin");
    std::fs::write(&path, pattern(100)).unwrap();
    let s = server(ServeOptions {
        root: dir.path().into(),
        ..Default::default()
    })
    .await;
    let src = HttpSource::new(s.url("a.bin")).unwrap();
    src.read(ByteRange::bounded(0..10)).await.unwrap();
    std::fs::write(&path, pattern(120)).unwrap();
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(matches!(e, IoError::SourceChanged { .. }), "{e:?}");
    s.shutdown().await;
}

#[tokio::test]
async fn sources_sharing_a_client_share_connections() {
    let s = fixture_server().await;
    let client = HttpSource::client_for(&HttpOptions::default()).unwrap();
    for name in ["pattern-10.bin", "pattern-5000.bin", "with space.bin"] {
        let src = HttpSource::with_client(url_of(&s, name), client.clone(), HttpOptions::default())
            .unwrap();
        src.read(ByteRange::bounded(0..5)).await.unwrap();
    }
    assert_eq!((s.stats().gets, s.stats().connections), (3, 1));
    for name in ["pattern-10.bin", "pattern-5000.bin"] {
        HttpSource::new(url_of(&s, name))
            .unwrap()
            .read(ByteRange::bounded(0..5))
            .await
            .unwrap();
    }
    assert_eq!((s.stats().gets, s.stats().connections), (5, 3));
    s.shutdown().await;
}

#[test]
fn invalid_extra_headers_are_refused() {
    for (k, v) in [("bad name", "x"), ("X-Ok", "bad\nvalue")] {
        let opts = HttpOptions {
            headers: vec![(k.into(), v.into())],
            ..Default::default()
        };
        let e = HttpSource::with_options("http://127.0.0.1:1/", opts).unwrap_err();
        assert!(matches!(e, IoError::Network { .. }), "{e:?}");
    }
}

#[tokio::test]
async fn connection_refused_is_a_transient_network_error() {
    let s = fixture_server().await;
    let url = url_of(&s, "pattern-10.bin");
    s.shutdown().await;
    let opts = HttpOptions {
        connect_timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let src = HttpSource::with_options(url, opts).unwrap();
    let e = src.read(ByteRange::bounded(0..1)).await.unwrap_err();
    assert!(matches!(e, IoError::Network { .. }), "{e:?}");
    assert!(e.is_transient());
}

// ---- the server itself, seen through a plain HTTP client ----

async fn get(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = reqwest::Client::new().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

fn header<'a>(r: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    r.headers().get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn server_sends_range_validator_and_cors_headers() {
    let s = fixture_server().await;
    let url = url_of(&s, "pattern-5000.bin");
    let r = get(&url, &[("Range", "bytes=-100")]).await;
    assert_eq!(r.status(), 206);
    assert_eq!(header(&r, "content-range"), Some("bytes 4900-4999/5000"));
    assert_eq!(header(&r, "content-length"), Some("100"));
    assert_eq!(header(&r, "accept-ranges"), Some("bytes"));
    assert_eq!(header(&r, "access-control-allow-origin"), Some("*"));
    let expose = header(&r, "access-control-expose-headers").unwrap();
    for h in [
        "Content-Range",
        "Content-Length",
        "ETag",
        "Last-Modified",
        "Accept-Ranges",
    ] {
        assert!(expose.contains(h), "{expose}");
    }
    assert_eq!(header(&r, "cache-control"), Some("no-store"));
    assert_eq!(header(&r, "content-type"), Some("application/octet-stream"));
    assert!(header(&r, "etag").unwrap().starts_with('"'));
    assert!(header(&r, "last-modified").unwrap().ends_with("GMT"));
    assert_eq!(r.bytes().await.unwrap()[..], pattern(5000)[4900..]);

    // Several ranges: the whole body with 200 (documented choice).
    let r = get(&url, &[("Range", "bytes=0-1,5-6")]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().len(), 5000);

    // HEAD: headers, no body.
    let r = reqwest::Client::new().head(&url).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "content-length"), Some("5000"));
    assert_eq!(r.bytes().await.unwrap().len(), 0);

    // Preflight: Range and the asked headers allowed.
    let r = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &url)
        .header("Origin", "http://127.0.0.1:1")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "range, authorization")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        header(&r, "access-control-allow-headers"),
        Some("range, authorization")
    );
    assert!(header(&r, "access-control-allow-methods")
        .unwrap()
        .contains("GET"));
    assert_eq!(header(&r, "access-control-allow-origin"), Some("*"));

    // Other methods are refused.
    let r = reqwest::Client::new().post(&url).send().await.unwrap();
    assert_eq!(r.status(), 405);
    s.shutdown().await;
}

#[tokio::test]
async fn server_lists_directories_and_serves_index_and_types() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("site")).unwrap();
    std::fs::write(dir.path().join("site/index.html"), "<p>hi</p>").unwrap();
    std::fs::write(dir.path().join("site/app.wasm"), b"\0asm").unwrap();
    std::fs::write(dir.path().join("a&b.txt"), "x").unwrap();
    let s = server(ServeOptions {
        root: dir.path().into(),
        ..Default::default()
    })
    .await;

    let r = get(&s.base_url(), &[]).await;
    assert_eq!(r.status(), 200);
    let html = r.text().await.unwrap();
    assert!(html.contains("href=\"site/\""), "{html}");
    assert!(html.contains("a&amp;b.txt"), "{html}");

    // reqwest follows the redirect from "site" to "site/".
    let r = get(&s.url("site"), &[]).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.url().path(), "/site/");
    assert_eq!(r.text().await.unwrap(), "<p>hi</p>");

    let r = get(&s.url("site/app.wasm"), &[]).await;
    assert_eq!(header(&r, "content-type"), Some("application/wasm"));
    s.shutdown().await;
}

#[tokio::test]
async fn server_counts_and_logs_requests() {
    let s = fixture_server().await;
    let url = url_of(&s, "with space.bin");
    let src = HttpSource::new(url).unwrap();
    src.read(ByteRange::bounded(0..50)).await.unwrap();
    src.read(ByteRange::Offset(90)).await.unwrap();
    let log = s.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].method, "GET");
    assert_eq!(log[0].path, "/with%20space.bin");
    assert_eq!(log[0].range.as_deref(), Some("bytes=0-49"));
    assert_eq!((log[0].status, log[0].body_len), (206, 50));
    assert_eq!((log[1].status, log[1].body_len), (206, 10));
    assert_eq!(s.stats().requests, 2);
    assert_eq!(s.stats().bytes_sent, 60);
    s.shutdown().await;
}

#[tokio::test]
async fn coalescing_saves_round_trips_under_latency() {
    use chunkwise::io::coalesce::{read_coalesced, CoalesceOptions};
    let s = server(ServeOptions {
        root: fixtures(),
        latency_ms: 40,
        ..Default::default()
    })
    .await;
    let traffic = Traffic::new();
    let src = Counted::new(
        HttpSource::new(url_of(&s, "pattern-5000.bin")).unwrap(),
        traffic.clone(),
    );
    src.read(ByteRange::bounded(0..1)).await.unwrap(); // connection set up
                                                       // 20 chunks of 100 bytes with 100-byte gaps.
    let wanted: Vec<std::ops::Range<u64>> = (0..20u64).map(|i| i * 200..i * 200 + 100).collect();

    let before = traffic.snapshot();
    let t = Instant::now();
    let one_by_one = src.read_many(&wanted, 1).await.unwrap();
    let separate = t.elapsed();
    let used = traffic.snapshot().since(before);
    assert_eq!(
        (used.requests, used.bytes, used.round_trips),
        (20, 2000, 20)
    );

    let before = traffic.snapshot();
    let t = Instant::now();
    let opts = CoalesceOptions {
        max_gap: 100,
        max_len: None,
        concurrency: 1,
    };
    let merged = read_coalesced(&src, &wanted, &opts).await.unwrap();
    let coalesced = t.elapsed();
    let used = traffic.snapshot().since(before);
    assert_eq!((used.requests, used.bytes, used.round_trips), (1, 3900, 1));

    assert_eq!(one_by_one, merged);
    for (r, b) in wanted.iter().zip(&merged) {
        assert_eq!(b[..], pattern(5000)[r.start as usize..r.end as usize]);
    }
    eprintln!("20 ranges at 40 ms: separate {separate:?}, coalesced {coalesced:?}");
    assert!(separate >= Duration::from_millis(800), "{separate:?}");
    assert!(coalesced * 4 < separate, "{coalesced:?} vs {separate:?}");
    s.shutdown().await;
}
