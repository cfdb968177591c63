//! The chunk-cache simulator's JS bindings on plain objects. The expected reads and bytes are
//! those real HDF5 (1.10.8 and 2.0.0) made in the chunk-cache experiment: 4 raw chunk reads of
//! the four stored chunks (1,335 + 1,334 + 1,325 + 1,334 = 5,328 bytes) when every chunk stays
//! cached, 32 reads (8 x 5,328 = 42,624 bytes) when none does. `scripts/test-wasm.sh` runs this
//! file in Node, headless Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use chunkwise::wasm::{
    advise_chunk_cache, bench_chunk_trace, chunk_trace_experiment, random_chunk_trace,
    simulate_chunk_cache, KeyResolver,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

fn js(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap()
}

fn get(v: &JsValue, path: &str) -> JsValue {
    path.split('.')
        .fold(v.clone(), |o, k| match k.parse::<u32>() {
            Ok(i) => js_sys::Reflect::get_u32(&o, i).unwrap(),
            Err(_) => js_sys::Reflect::get(&o, &k.into()).unwrap(),
        })
}

fn num(v: &JsValue, path: &str) -> f64 {
    get(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

fn code(e: &JsValue) -> String {
    get(e, "code").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
fn experiment_cases_match_real_hdf5() {
    let x = chunk_trace_experiment().unwrap();
    let cases = js_sys::Array::from(&get(&x, "cases"));
    assert_eq!(cases.length(), 6);
    let reads: Vec<f64> = cases.iter().map(|c| num(&c, "reads")).collect();
    assert_eq!(reads, vec![4.0, 32.0, 4.0, 32.0, 32.0, 32.0]);
    let bytes: Vec<f64> = cases.iter().map(|c| num(&c, "raw_bytes")).collect();
    assert_eq!(
        bytes,
        vec![5328.0, 42624.0, 5328.0, 42624.0, 42624.0, 42624.0]
    );
    let settings: Vec<(String, f64, f64)> = cases
        .iter()
        .map(|c| {
            (
                get(&c, "order").as_string().unwrap(),
                num(&c, "nslots"),
                num(&c, "nbytes"),
            )
        })
        .collect();
    assert_eq!(settings[0], ("round-robin".into(), 17.0, 16384.0));
    assert_eq!(settings[2], ("grouped".into(), 1.0, 4096.0));
    assert_eq!(num(&x, "geometry.chunks.3.stored_size"), 1334.0);
    assert_eq!(
        js_sys::Array::from(&get(&x, "traces.grouped.selections")).length(),
        32
    );
}

#[wasm_bindgen_test]
fn simulate_round_robin_with_both_settings() {
    let x = chunk_trace_experiment().unwrap();
    let (g, t) = (get(&x, "geometry"), get(&x, "traces.round-robin"));
    let big = simulate_chunk_cache(
        g.clone(),
        t.clone(),
        js(r#"{"nslots":17,"nbytes":16384,"w0":0}"#),
    )
    .unwrap();
    assert_eq!(num(&big, "total.reads"), 4.0);
    assert_eq!(num(&big, "total.raw_bytes"), 5328.0);
    assert_eq!(num(&big, "total.hits"), 28.0);
    assert_eq!(num(&big, "total.evictions"), 0.0);
    // The first four selections each read one chunk; the rest hit.
    let sel = js_sys::Array::from(&get(&big, "selections"));
    assert_eq!(sel.length(), 32);
    assert_eq!(num(&sel.get(1), "reads"), 1.0);
    assert_eq!(num(&sel.get(1), "raw_bytes"), 1334.0);
    assert_eq!(num(&sel.get(4), "reads"), 0.0);
    let one = simulate_chunk_cache(
        g.clone(),
        t.clone(),
        js(r#"{"nslots":1,"nbytes":16384,"w0":0}"#),
    )
    .unwrap();
    assert_eq!(num(&one, "total.reads"), 32.0);
    assert_eq!(num(&one, "total.raw_bytes"), 42624.0);
    // One slot: every read after the first evicts the previous chunk.
    assert_eq!(num(&one, "total.evictions"), 31.0);
    assert_eq!(num(&one, "config.nslots"), 1.0);
    // 32 chunk reads of 4,096 decoded bytes for 32 selected 4-byte elements.
    assert_eq!(num(&one, "decode_ratio"), 1024.0);
}

#[wasm_bindgen_test]
fn advice_names_the_reuse_set() {
    let x = chunk_trace_experiment().unwrap();
    let a = advise_chunk_cache(
        get(&x, "geometry"),
        get(&x, "traces.round-robin"),
        js(r#"{"nslots":1,"nbytes":16384,"w0":0,"maxCacheBytes":5328}"#),
    )
    .unwrap();
    assert_eq!(
        js_sys::JSON::stringify(&get(&a, "reuse_set")).unwrap(),
        "[[0,0],[0,1],[1,0],[1,1]]"
    );
    assert_eq!(num(&a, "min_reads"), 4.0);
    assert_eq!(num(&a, "min_nbytes"), 16384.0);
    assert_eq!(num(&a, "lru.reads"), 4.0);
}

#[wasm_bindgen_test]
fn bad_input_throws_typed_errors() {
    let x = chunk_trace_experiment().unwrap();
    let (g, t) = (get(&x, "geometry"), get(&x, "traces.grouped"));
    let e =
        simulate_chunk_cache(js(r#"{"shape":[4]}"#), t.clone(), JsValue::UNDEFINED).unwrap_err();
    assert!(e.is_instance_of::<js_sys::Error>());
    assert_eq!(code(&e), "INVALID_ARGUMENT");
    let e = simulate_chunk_cache(
        g.clone(),
        js(r#"{"selections":[{"points":[[64,0]]}]}"#),
        JsValue::NULL,
    )
    .unwrap_err();
    assert_eq!(code(&e), "CHUNK_TRACE");
    let e = simulate_chunk_cache(g.clone(), t.clone(), js(r#"{"w0":1.5}"#)).unwrap_err();
    assert_eq!(code(&e), "CHUNK_TRACE");
    let e = simulate_chunk_cache(g.clone(), t.clone(), js(r#"{"hashForm":"1.8"}"#)).unwrap_err();
    assert_eq!(code(&e), "CHUNK_TRACE");
    let e = simulate_chunk_cache(g, t, js(r#"{"nslots":-1}"#)).unwrap_err();
    assert_eq!(code(&e), "INVALID_ARGUMENT");
    let e = random_chunk_trace(js("[10,10]"), js("[0,5]"), 1.0, 5.0).unwrap_err();
    assert_eq!(code(&e), "CHUNK_TRACE");
    let e = bench_chunk_trace(1.5, 1.0).unwrap_err();
    assert_eq!(code(&e), "INVALID_ARGUMENT");
}

#[wasm_bindgen_test]
fn random_traces_are_seeded_and_simulate() {
    let a = random_chunk_trace(js("[100,80]"), js("[10,16]"), 7.0, 50.0).unwrap();
    let b = random_chunk_trace(js("[100,80]"), js("[10,16]"), 7.0, 50.0).unwrap();
    let c = random_chunk_trace(js("[100,80]"), js("[10,16]"), 8.0, 50.0).unwrap();
    let text = |v: &JsValue| String::from(js_sys::JSON::stringify(v).unwrap());
    assert_eq!(text(&a), text(&b));
    assert_ne!(text(&a), text(&c));
    let g = js(r#"{"shape":[100,80],"chunk_shape":[10,16],"element_size":4,"filtered":true}"#);
    let r = simulate_chunk_cache(g, a, js(r#"{"nslots":1,"nbytes":640}"#)).unwrap();
    // Unlisted chunks are stored at their decoded size: 10 x 16 x 4 = 640 bytes each.
    assert_eq!(num(&r, "chunk_bytes"), 640.0);
    assert_eq!(num(&r, "total.raw_bytes"), 640.0 * num(&r, "total.reads"));
    assert_eq!(js_sys::Array::from(&get(&r, "selections")).length(), 50);
}

#[wasm_bindgen_test]
fn bench_counts_every_access() {
    let r = bench_chunk_trace(20_000.0, 42.0).unwrap();
    assert_eq!(num(&r, "accesses"), 20_000.0);
    // Every access is a hit or a read; nothing is unallocated here.
    assert_eq!(num(&r, "hits") + num(&r, "reads"), 20_000.0);
    assert!(num(&r, "ms") >= 0.0);
}

#[wasm_bindgen_test]
fn key_resolver_matches_resolve_key() {
    let manifest = js(r#"{"schema_version": 3, "scope": "s", "epoch": 1,
        "hot_always": [], "pinned": [],
        "blobs": [{"id": "b_tas", "prefixes": ["tas/c"],
                   "bucket": {"index": 0, "width": 10, "key_encoding": "v3_slash"}}]}"#);
    let mut r = KeyResolver::new();
    assert_eq!(r.size(), 0);
    r.add(manifest).unwrap();
    assert_eq!(r.size(), 1);
    let hit = r.resolve("s/tas/c/137/0/0").unwrap();
    assert_eq!(
        get(&hit, "blob_id").as_string().as_deref(),
        Some("b_tas_13")
    );
    assert!(r.is_archivable("s/tas/c/5/0/0"));
    assert!(!r.is_archivable("s/tas/zarr.json"));
    assert!(!r.is_archivable("other/x"));
    assert_eq!(code(&r.add(js("{}")).unwrap_err()), "MANIFEST_SCHEMA");
}

#[wasm_bindgen_test]
fn memory_size_is_whole_pages() {
    let bytes = chunkwise::wasm::wasm_memory_bytes();
    assert!(bytes >= 65536.0);
    assert_eq!(bytes % 65536.0, 0.0);
}
