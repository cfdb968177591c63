//! wasm-bindgen tests of `FetchSource` against the loopback range server (Node, headless
//! Chromium and a dedicated worker; see `scripts/test-wasm.sh`, which starts the servers and
//! sets the URLs at compile time):
//! - `CHUNKWISE_TEST_BASE_URL`: a server on `tests/fixtures`;
//! - `CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL`: the same files from a server ignoring `Range`;
//! - `CHUNKWISE_TEST_FAIL_FIRST_BASE_URL`: a server answering 503 to its first 2 GETs (fresh
//!   for each run; only one test uses it).
//!
//! Without them the tests fail (`server.rs`; `CHUNKWISE_WASM_SKIP_SERVER=1` at
//! build time skips them instead). Needs the
//! `conformance` feature (`cargo test --target wasm32-unknown-unknown --features conformance`).
#![cfg(all(target_arch = "wasm32", feature = "conformance"))]

use crate::server;

use chunkwise::io::conformance::check_source;
use chunkwise::io::fetch::{FetchOptions, FetchSource};
use chunkwise::io::{ByteRange, Counted, IoError, RangeSource, RetryConfig, Retrying, Traffic};
use std::time::Duration;
use wasm_bindgen_test::*;

const FIXTURES: &[(&str, usize)] = &[
    ("pattern-5000.bin", 5000),
    ("pattern-10.bin", 10),
    ("empty.bin", 0),
    ("with%20space.bin", 100),
];

fn pattern(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (((i * 131 + 7) ^ (i >> 8)) & 0xff) as u8)
        .collect()
}

fn base() -> Option<&'static str> {
    let b = server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    );
    if b.is_none() {
        console_log!(
            "CHUNKWISE_TEST_BASE_URL unset at build time: skipping (run scripts/test-wasm.sh)"
        );
    }
    b
}

/// URL of a file of `tests/fixtures/io` (the servers serve `tests/fixtures`).
fn url(base: &str, name: &str) -> String {
    format!("{}/io/{}", base.trim_end_matches('/'), name)
}

#[wasm_bindgen_test]
async fn fetch_source_conformance() {
    let Some(base) = base() else { return };
    for (name, n) in FIXTURES {
        let src = FetchSource::new(url(base, name));
        check_source(&src, &pattern(*n)).await;
    }
}

#[wasm_bindgen_test]
async fn wrapped_fetch_source_conformance() {
    let Some(base) = base() else { return };
    let traffic = Traffic::new();
    let src = Retrying::new(
        Counted::new(
            FetchSource::new(url(base, "pattern-5000.bin")),
            traffic.clone(),
        ),
        RetryConfig::default(),
    );
    check_source(&src, &pattern(5000)).await;
    assert!(traffic.snapshot().requests > 10);
}

#[wasm_bindgen_test]
async fn validators_are_readable_across_origins() {
    let Some(base) = base() else { return };
    let src = FetchSource::new(url(base, "pattern-5000.bin"));
    let f = src.read(ByteRange::Suffix(4)).await.unwrap();
    assert_eq!(f.range, 4996..5000);
    assert_eq!(f.info.len, 5000);
    assert!(
        f.info.etag.as_deref().is_some_and(|e| e.starts_with('"')),
        "{:?}",
        f.info
    );
    assert!(
        f.info
            .last_modified
            .as_deref()
            .is_some_and(|l| l.ends_with("GMT")),
        "{:?}",
        f.info
    );
    assert_eq!(src.info().unwrap().len, 5000);
}

#[wasm_bindgen_test]
async fn missing_object_is_not_found() {
    let Some(base) = base() else { return };
    let src = FetchSource::new(url(base, "missing.bin"));
    let e = src.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(matches!(e, IoError::NotFound { .. }), "{e:?}");
}

#[wasm_bindgen_test]
async fn extra_headers_pass_the_preflight() {
    let Some(base) = base() else { return };
    let options = FetchOptions {
        headers: vec![("Authorization".into(), "Bearer test".into())],
        ..Default::default()
    };
    let src = FetchSource::with_options(url(base, "pattern-10.bin"), options);
    let f = src.read(ByteRange::bounded(2..5)).await.unwrap();
    assert_eq!(f.bytes[..], pattern(10)[2..5]);
}

#[wasm_bindgen_test]
async fn abort_signal_cancels() {
    let Some(base) = base() else { return };
    // Aborted before the read.
    let controller = web_sys::AbortController::new().unwrap();
    controller.abort();
    let options = FetchOptions {
        signal: Some(controller.signal()),
        ..Default::default()
    };
    let src = FetchSource::with_options(url(base, "pattern-5000.bin"), options);
    assert_eq!(
        src.read(ByteRange::bounded(0..10)).await.unwrap_err(),
        IoError::Cancelled
    );

    // Aborted while the request is in flight: `join!` polls the read first (which sends the
    // request), then aborts.
    let controller = web_sys::AbortController::new().unwrap();
    let options = FetchOptions {
        signal: Some(controller.signal()),
        ..Default::default()
    };
    let src = FetchSource::with_options(url(base, "pattern-5000.bin"), options);
    let (result, ()) = futures::join!(src.read(ByteRange::bounded(0..10)), async {
        controller.abort();
    });
    assert_eq!(result.unwrap_err(), IoError::Cancelled);
}

#[wasm_bindgen_test]
async fn server_ignoring_ranges() {
    let Some(base) = server::url(
        option_env!("CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL"),
        "CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL",
    ) else {
        console_log!("CHUNKWISE_TEST_IGNORE_RANGE_BASE_URL unset: skipping");
        return;
    };
    let src = FetchSource::new(url(base, "pattern-5000.bin"));
    let f = src.read(ByteRange::bounded(100..200)).await.unwrap();
    assert!(src.range_ignored());
    assert_eq!(f.range, 100..200);
    assert_eq!(f.bytes[..], pattern(5000)[100..200]);
    let options = FetchOptions {
        whole_read_limit: 4999,
        ..Default::default()
    };
    let strict = FetchSource::with_options(url(base, "pattern-5000.bin"), options);
    let e = strict.read(ByteRange::bounded(0..10)).await.unwrap_err();
    assert!(
        matches!(
            e,
            IoError::RangeIgnored {
                len: Some(5000),
                limit: 4999,
                ..
            }
        ),
        "{e:?}"
    );
}

#[wasm_bindgen_test]
async fn retries_ride_out_injected_failures() {
    let Some(base) = server::url(
        option_env!("CHUNKWISE_TEST_FAIL_FIRST_BASE_URL"),
        "CHUNKWISE_TEST_FAIL_FIRST_BASE_URL",
    ) else {
        console_log!("CHUNKWISE_TEST_FAIL_FIRST_BASE_URL unset: skipping");
        return;
    };
    let traffic = Traffic::new();
    let config = RetryConfig {
        max_retries: 3,
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(40),
        seed: Some(1),
        ..Default::default()
    };
    let src = Retrying::new(
        Counted::new(
            FetchSource::new(url(base, "pattern-5000.bin")),
            traffic.clone(),
        ),
        config,
    );
    let t = js_sys::Date::now();
    let f = src.read(ByteRange::bounded(10..20)).await.unwrap();
    let took = js_sys::Date::now() - t;
    assert_eq!(f.bytes[..], pattern(5000)[10..20]);
    assert_eq!(traffic.snapshot().requests, 3);
    // Two backoffs of at least 10 ms and 20 ms (jitter keeps at least half the bound).
    assert!(took >= 29.0, "took {took} ms");
}

#[wasm_bindgen_test]
async fn sleep_uses_the_host_timer() {
    let t = js_sys::Date::now();
    chunkwise::io::sleep::sleep(Duration::from_millis(50)).await;
    let took = js_sys::Date::now() - t;
    assert!(took >= 45.0, "slept {took} ms");
}
