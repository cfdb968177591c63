//! Zarr v2 and v3 arrays over `fetch` in wasm: every readable array of
//! tests/fixtures/zarr (written by zarr-python and numcodecs) read from the loopback server
//! and compared with the written array; warm reads make no request; unsupported arrays give
//! typed errors; the JS `RemoteArray.open(storeUrl, {path})` opens one array.
//! `scripts/test-wasm.sh` runs this file in Node, headless Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use crate::server;

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::CacheCoordinator;
use chunkwise::io::fetch::FetchSource;
use chunkwise::io::{ByteRange, RangeSource};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use chunkwise::wasm::zarr::open_zarr;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn base() -> Option<&'static str> {
    server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    )
}

async fn fetch_all(url: &str) -> Vec<u8> {
    let f = FetchSource::new(url)
        .read(ByteRange::Suffix(1 << 40))
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    f.bytes.to_vec()
}

/// A fresh in-memory cache coordinator (each array its own caches).
fn coordinator() -> CacheCoordinator {
    CacheCoordinator::memory(64 << 20)
}

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

#[wasm_bindgen_test]
async fn every_zarr_array_matches_the_written_array() {
    let Some(base) = base() else {
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&fetch_all(&format!("{base}zarr/manifest.json")).await).unwrap();
    let mut n = 0;
    for a in manifest["arrays"].as_array().unwrap() {
        let store = a["store"].as_str().unwrap();
        let path = a["path"].as_str().unwrap();
        let what = format!("{store}:{path}");
        let url = format!("{base}zarr/{store}");
        if let Some(code) = a.get("unreadable") {
            let e = open_zarr(&url, vec![], with_path(path), coordinator())
                .await
                .unwrap_err();
            assert_eq!(e.code(), code.as_str().unwrap(), "{what}: {e}");
            continue;
        }
        let arr = open_zarr(&url, vec![], with_path(path), coordinator())
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let npy = read_npy(&fetch_all(&format!("{base}zarr/{}", a["npy"].as_str().unwrap())).await)
            .unwrap();
        assert_eq!(arr.shape(), &npy.shape[..], "{what}");
        assert_eq!(arr.dtype().to_string(), npy.descr, "{what}");
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            all.data == npy.data,
            "{what}: values differ from the written array"
        );
        let cold = arr.traffic().requests;
        let again = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(again.data == npy.data, "{what}: warm values differ");
        assert_eq!(
            again.missing_chunks, all.missing_chunks,
            "{what}: warm missing chunks"
        );
        assert_eq!(
            arr.traffic().requests,
            cold,
            "{what}: warm read made requests"
        );
        n += 1;
    }
    assert!(n >= 30, "{n} arrays");
}

#[wasm_bindgen_test]
async fn js_open_takes_a_store_url_and_path() {
    let Some(base) = base() else {
        return;
    };
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"path".into(), &"/group/nested".into()).unwrap();
    let arr =
        chunkwise::wasm::RemoteArray::open(format!("{base}zarr/v3.zarr").into(), options.into())
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
    let shape: Vec<f64> = arr
        .shape()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(shape, vec![6.0, 5.0]);
    assert_eq!(arr.dtype().unwrap(), "|u1");
    // The JS result counts the chunks absent from the store (v3 /partial: 7 of its 9 chunk
    // objects were never written, see gen_zarr.py), cold and warm.
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"path".into(), &"/partial".into()).unwrap();
    let partial =
        chunkwise::wasm::RemoteArray::open(format!("{base}zarr/v3.zarr").into(), options.into())
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
    for pass in ["cold", "warm"] {
        let r = wasm_bindgen_futures::JsFuture::from(
            partial
                .read(JsValue::from_str(""), JsValue::UNDEFINED)
                .unwrap(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
        let missing = js_sys::Reflect::get(&r, &JsValue::from_str("missingChunks")).unwrap();
        assert_eq!(missing.as_f64(), Some(7.0), "{pass}");
    }
    let full = chunkwise::wasm::RemoteArray::open(format!("{base}zarr/v3.zarr").into(), {
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"path".into(), &"/temperature".into()).unwrap();
        o.into()
    })
    .await
    .unwrap();
    let r = wasm_bindgen_futures::JsFuture::from(
        full.read(JsValue::from_str(""), JsValue::UNDEFINED)
            .unwrap(),
    )
    .await
    .unwrap();
    let missing = js_sys::Reflect::get(&r, &JsValue::from_str("missingChunks")).unwrap();
    assert_eq!(missing.as_f64(), Some(0.0));
    // A missing path: a typed error.
    let options = js_sys::Object::new();
    js_sys::Reflect::set(&options, &"path".into(), &"/nothing".into()).unwrap();
    let e =
        chunkwise::wasm::RemoteArray::open(format!("{base}zarr/v2.zarr").into(), options.into())
            .await
            .map(|_| ())
            .unwrap_err();
    let code = js_sys::Reflect::get(&e, &JsValue::from_str("code")).unwrap();
    assert_eq!(code.as_string().as_deref(), Some("NOT_FOUND"));
}

/// The JS `RemoteStore.open` on a Zarr store URL: lists groups and arrays from the
/// consolidated metadata, `get(path)` gives a readable `RemoteArray`, and a reopen sharing
/// the page-wide cache makes no request.
#[wasm_bindgen_test]
async fn js_remote_store_lists_a_zarr_store() {
    let Some(base) = base() else {
        return;
    };
    let url = format!("{base}zarr/v3.zarr");
    let options = || {
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"shareCache".into(), &JsValue::TRUE).unwrap();
        JsValue::from(o)
    };
    let store = chunkwise::wasm::RemoteStore::open(url.clone().into(), options())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let nodes: js_sys::Array = store.nodes().unwrap().into();
    let paths: Vec<String> = nodes
        .iter()
        .map(|n| {
            js_sys::Reflect::get(&n, &"path".into())
                .unwrap()
                .as_string()
                .unwrap()
        })
        .collect();
    assert!(paths.contains(&"/group/nested".to_string()), "{paths:?}");
    assert!(paths.contains(&"/temperature".to_string()), "{paths:?}");
    let arr = wasm_bindgen_futures::JsFuture::from(store.get("/temperature".into()).unwrap())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let shape: Vec<f64> =
        js_sys::Array::from(&js_sys::Reflect::get(&arr, &"shape".into()).unwrap())
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
    assert_eq!(shape, vec![13.0, 11.0]);
    let again = chunkwise::wasm::RemoteStore::open(url.into(), options())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let traffic = again.traffic().unwrap();
    let requests = js_sys::Reflect::get(&traffic, &"requests".into())
        .unwrap()
        .as_f64()
        .unwrap();
    assert_eq!(requests, 0.0, "warm reopen of the store made requests");
}
