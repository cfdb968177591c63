//! The JS `RemoteArray.read` on HDF5 strings and compounds (`tests/fixtures/hdf5_types`,
//! written by h5py): variable-length and fixed-length strings come as an Array of strings,
//! compounds as an Array of plain objects; compared with the values written.
//! `scripts/test-wasm.sh` runs this file in Node, headless Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use crate::server;

use chunkwise::wasm::RemoteArray;
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

fn base() -> Option<&'static str> {
    server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    )
}

async fn read(path: &str, selection: &str) -> (JsValue, String) {
    let base = base().unwrap();
    let opts = js_sys::Object::new();
    Reflect::set(&opts, &"path".into(), &path.into()).unwrap();
    let arr = RemoteArray::open(format!("{base}hdf5_types/types.h5").into(), opts.into())
        .await
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    let r = JsFuture::from(arr.read(selection.into(), JsValue::UNDEFINED).unwrap())
        .await
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    let dtype = Reflect::get(&r, &"dtype".into())
        .unwrap()
        .as_string()
        .unwrap();
    (Reflect::get(&r, &"data".into()).unwrap(), dtype)
}

fn strings(v: &JsValue) -> Vec<String> {
    v.dyn_ref::<js_sys::Array>()
        .expect("an Array")
        .iter()
        .map(|s| s.as_string().expect("a string"))
        .collect()
}

#[wasm_bindgen_test]
async fn strings_come_as_js_strings() {
    if base().is_none() {
        return;
    }
    // As written by tests/fixtures/gen_hdf5_types.py.
    let (data, dtype) = read("/vs_utf8_contiguous", "").await;
    assert_eq!(
        strings(&data),
        ["", "café", "naïve", "über", "plain", "日本", "x"]
    );
    assert_eq!(dtype, "|S6");
    let (data, _) = read("/vs_ascii_chunked", "1:4").await;
    assert_eq!(strings(&data), ["a", "bb", "a longer string with spaces"]);
    // Null-terminated: cut at the first NUL; space-padded: trailing spaces dropped.
    let (data, dtype) = read("/fs_nullterm_ascii", "").await;
    assert_eq!(dtype, "|S8");
    assert_eq!(
        strings(&data),
        ["abc", "hello wo", "", "a", "xy  ", "  lead", "end", "8 chars!"]
    );
    let (data, _) = read("/fs_spacepad_utf8", "1:4").await;
    assert_eq!(strings(&data), ["café", "naïve", "über"]);
}

#[wasm_bindgen_test]
async fn compounds_come_as_objects() {
    if base().is_none() {
        return;
    }
    let (data, dtype) = read("/compound_chunked", "3:5").await;
    assert!(dtype.starts_with("[('id', '<i4'), ('x', '<f8')"), "{dtype}");
    let rows = data.dyn_into::<js_sys::Array>().unwrap();
    assert_eq!(rows.length(), 2);
    let row = rows.get(0);
    let get = |o: &JsValue, k: &str| Reflect::get(o, &k.into()).unwrap();
    assert_eq!(get(&row, "id").as_f64(), Some(0.0));
    assert_eq!(get(&row, "be").as_f64(), Some(-900.0));
    assert_eq!(get(&row, "name").as_string().as_deref(), Some("n3n3n3"));
    assert_eq!(get(&row, "flag").as_bool(), Some(true));
    assert_eq!(get(&get(&row, "pos"), "lon").as_f64(), Some(-6.75));
    let vec: Vec<f64> = get(&row, "vec")
        .dyn_into::<js_sys::Array>()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(vec, [2.25, 2.5, 2.75]);
    let big = get(&row, "big");
    assert!(big.is_bigint());
    assert_eq!(big, JsValue::from(js_sys::BigInt::from(3u64 << 61)));
    assert_eq!(get(&rows.get(1), "flag").as_bool(), Some(false));
    // Variable-length string members come as strings too; each member is as wide as its
    // longest string in the selection ("été" is 5 bytes).
    let (data, dtype) = read("/compound_vlen", "2").await;
    assert_eq!(
        dtype,
        "[('n', '<i4'), ('s', '|S5'), ('x', '<f8'), ('tags', '|S2', (2,))]"
    );
    let row = data.dyn_into::<js_sys::Array>().unwrap().get(0);
    assert_eq!(get(&row, "s").as_string().as_deref(), Some("été"));
    assert_eq!(strings(&get(&row, "tags")), ["t2", "uu"]);
}

/// A scalar (h5py shape `()`) is `shape: []` in JS, on the array and in its read; a
/// variable-length string's dtype is `|S` (unsized) before the read gives `|S{n}`.
#[wasm_bindgen_test]
async fn scalar_has_shape_empty() {
    let Some(base) = base() else {
        return;
    };
    let opts = js_sys::Object::new();
    Reflect::set(&opts, &"path".into(), &"/vs_scalar".into()).unwrap();
    let arr = RemoteArray::open(format!("{base}hdf5_types/types.h5").into(), opts.into())
        .await
        .unwrap();
    assert_eq!(arr.shape().unwrap().length(), 0);
    assert_eq!(arr.dtype().unwrap(), "|S");
    let r = JsFuture::from(arr.read("".into(), JsValue::UNDEFINED).unwrap())
        .await
        .unwrap();
    let shape: js_sys::Array = Reflect::get(&r, &"shape".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    assert_eq!(shape.length(), 0);
    let dtype = Reflect::get(&r, &"dtype".into()).unwrap().as_string();
    assert_eq!(dtype.as_deref(), Some("|S9"));
    let data = Reflect::get(&r, &"data".into()).unwrap();
    assert_eq!(strings(&data), ["scalar \u{e9}"]);
}
