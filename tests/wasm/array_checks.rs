//! Checks of `RemoteArray` over `fetch`, shared by the wasm test binaries that run them in
//! Node, in headless Chromium and in a dedicated worker. They read every Blosc2 fixture from
//! a `chunkwise serve` on loopback (`CHUNKWISE_TEST_BASE_URL`, set at build time by
//! `scripts/test-wasm.sh`) and compare with the `.npy` of the array that was written.

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::io::fetch::FetchSource;
use chunkwise::io::{ByteRange, Counted, RangeSource, Traffic};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use std::sync::Arc;

/// Base URL of the fixture server (see `server.rs`: a missing one fails the test, unless a
/// skip was asked for at build time).
pub fn base() -> Option<&'static str> {
    crate::server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    )
}

async fn fetch_all(url: &str) -> Vec<u8> {
    let src = FetchSource::new(url);
    // a suffix read of more than the object returns all of it
    let f = src
        .read(ByteRange::Suffix(1 << 40))
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    f.bytes.to_vec()
}

async fn open(url: &str, options: OpenOptions) -> RemoteArray {
    let traffic = Traffic::new();
    let t = Arc::new(Counted::new(FetchSource::new(url), traffic.clone()));
    RemoteArray::open_source(t, traffic, options)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// Every fixture: shape, dtype and all values equal the written array; a small file costs at
/// most 2 requests and nothing after open.
pub async fn every_fixture_matches() {
    let Some(base) = base() else {
        eprintln!("CHUNKWISE_TEST_BASE_URL not set at build time: skipped");
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&fetch_all(&format!("{base}blosc2/manifest.json")).await).unwrap();
    let mut n = 0;
    for fx in manifest["fixtures"].as_array().unwrap() {
        let file = fx["file"].as_str().unwrap();
        let arr = open(&format!("{base}blosc2/{file}"), OpenOptions::default()).await;
        let npy =
            read_npy(&fetch_all(&format!("{base}blosc2/{}", fx["npy"].as_str().unwrap())).await)
                .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{file}");
        let opened = arr.traffic();
        assert!(opened.requests <= 2, "{file}: {opened:?}");
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(
            all.data == npy.data,
            "{file}: values differ from the written array"
        );
        let one = arr
            .read(
                &Selection::parse("..., -1").unwrap(),
                &ReadOptions::default(),
            )
            .await
            .unwrap();
        assert_eq!(one.shape.len(), npy.shape.len() - 1, "{file}");
        assert_eq!(
            arr.traffic().requests,
            opened.requests,
            "{file}: reads after open made requests"
        );
        n += 1;
    }
    assert!(n >= 40, "{n} fixtures");
}

/// Errors surface as typed errors: a missing file is NOT_FOUND, a non-array is UNRECOGNISED.
pub async fn errors_are_typed() {
    let Some(base) = base() else { return };
    let traffic = Traffic::new();
    let t = Arc::new(Counted::new(
        FetchSource::new(format!("{base}blosc2/missing.b2nd")),
        traffic.clone(),
    ));
    let e = RemoteArray::open_source(t, traffic, OpenOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "NOT_FOUND", "{e}");
    let traffic = Traffic::new();
    let t = Arc::new(Counted::new(
        FetchSource::new(format!("{base}blosc2/manifest.json")),
        traffic.clone(),
    ));
    let e = RemoteArray::open_source(t, traffic, OpenOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "UNRECOGNISED_FORMAT", "{e}");
}
