//! The blob partitioner's JS bindings (`partition`, `diff`, `resolveKey`, `KeyResolver`) on plain
//! objects: manifests in and out in their JSON shapes, errors with `code` and `field`.
//! `scripts/test-wasm.sh` runs this file in Node, headless Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use chunkwise::wasm::{diff_js, partition_js, resolve_js};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

fn js(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap()
}

fn json_text(v: &JsValue) -> String {
    js_sys::JSON::stringify(v).unwrap().into()
}

const ARRAYS: &str = r#"[
  {"path": "time", "shape": [400], "chunks": [400], "itemsize": 8, "is_coordinate": true},
  {"path": "tas", "shape": [400, 4, 4], "chunks": [10, 4, 4], "itemsize": 4,
   "stored_bytes": 429496729600}]"#;

#[wasm_bindgen_test]
fn partition_diff_and_resolve_on_plain_objects() {
    let out = partition_js(
        js(ARRAYS),
        js(r#"{"scope": "cordex/a.zarr", "generated_at": "2026-12-01T00:00:00+00:00"}"#),
    )
    .unwrap();
    let manifest = js_sys::Reflect::get(&out, &"manifest".into()).unwrap();
    let blobs = json_text(&js_sys::Reflect::get(&manifest, &"blobs".into()).unwrap());
    assert_eq!(
        blobs,
        r#"[{"id":"b_tas","prefixes":["tas/c"],"bucket":{"index":0,"width":10,"key_encoding":"v3_slash"}}]"#
    );
    let warnings = json_text(&js_sys::Reflect::get(&out, &"warnings".into()).unwrap());
    assert_eq!(warnings, "[]");

    let d = diff_js(JsValue::NULL, manifest.clone()).unwrap();
    assert_eq!(
        js_sys::Reflect::get(&d, &"describe".into()).unwrap(),
        JsValue::from_str("+ b_tas ['tas/c']")
    );
    assert_eq!(
        js_sys::Reflect::get(&d, &"is_additive".into()).unwrap(),
        JsValue::TRUE
    );
    let same = diff_js(manifest.clone(), manifest.clone()).unwrap();
    assert_eq!(
        js_sys::Reflect::get(&same, &"is_empty".into()).unwrap(),
        JsValue::TRUE
    );

    let r = resolve_js(manifest, "tas/c/137/0/0").unwrap();
    assert_eq!(
        json_text(&r),
        r#"{"kind":"blob","blob_id":"b_tas_13","definition_id":"b_tas","bucket_index":13}"#
    );
}

#[wasm_bindgen_test]
fn errors_carry_code_and_field() {
    let e = partition_js(
        js(r#"[{"path": "a", "shape": [4], "chunks": [0], "itemsize": 4}]"#),
        JsValue::UNDEFINED,
    )
    .unwrap_err();
    assert!(e.is_instance_of::<js_sys::Error>());
    assert_eq!(
        js_sys::Reflect::get(&e, &"code".into()).unwrap(),
        JsValue::from_str("PARTITION_INVALID")
    );
    assert_eq!(
        js_sys::Reflect::get(&e, &"field".into()).unwrap(),
        JsValue::from_str("arrays[0].chunks")
    );
    let e = diff_js(
        JsValue::NULL,
        js(r#"{"schema_version": 99, "scope": "s", "epoch": 1, "hot_always": [], "blobs": []}"#),
    )
    .unwrap_err();
    assert_eq!(
        js_sys::Reflect::get(&e, &"code".into()).unwrap(),
        JsValue::from_str("MANIFEST_SCHEMA")
    );
    assert_eq!(
        js_sys::Reflect::get(&e, &"message".into()).unwrap(),
        JsValue::from_str("schema_version: expected 3, got 99")
    );
}

#[wasm_bindgen_test]
fn inputs_that_are_not_json_are_refused() {
    let big = js_sys::BigInt::from(5u64);
    let arrays = js_sys::Array::of1(&big.into());
    let e = partition_js(arrays.into(), JsValue::UNDEFINED).unwrap_err();
    assert_eq!(
        js_sys::Reflect::get(&e, &"code".into()).unwrap(),
        JsValue::from_str("PARTITION_INVALID")
    );
    assert_eq!(
        js_sys::Reflect::get(&e, &"field".into()).unwrap(),
        JsValue::from_str("arrays")
    );
    let e = partition_js(JsValue::UNDEFINED, JsValue::UNDEFINED).unwrap_err();
    assert_eq!(
        js_sys::Reflect::get(&e, &"field".into()).unwrap(),
        JsValue::from_str("arrays")
    );
}
