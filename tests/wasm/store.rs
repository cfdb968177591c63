//! `RemoteStore` and the shared cache over `fetch` in wasm: an HDF5 fixture listed and read
//! from the loopback server, values compared with the written arrays (`.npy`), warm reopens
//! in MEMORY making no request; the same through the JS bindings. `scripts/test-wasm.sh`
//! runs this file in Node, headless Chromium and a dedicated worker.
#![cfg(target_arch = "wasm32")]

use crate::server;

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::CacheCoordinator;
use chunkwise::io::fetch::FetchSource;
use chunkwise::io::{ByteRange, Counted, RangeSource, Traffic};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use chunkwise::store::RemoteStore;
use std::sync::Arc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
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

/// (path, kind, .npy) of groups.h5 as gen_hdf5.py writes it, sorted by path.
const NODES: &[(&str, &str, Option<&str>)] = &[
    ("/", "group", None),
    ("/model", "group", None),
    ("/model/run1", "group", None),
    (
        "/model/run1/values",
        "array",
        Some("groups_model_run1_values.npy"),
    ),
    ("/model/weights", "array", Some("groups_model_weights.npy")),
    ("/time", "array", Some("groups_time.npy")),
];

async fn open_store(url: &str, c: &CacheCoordinator) -> RemoteStore {
    let traffic = Traffic::new();
    let t = Arc::new(Counted::new(FetchSource::new(url), traffic.clone()));
    RemoteStore::open(
        t,
        traffic,
        OpenOptions::default(),
        c.clone(),
        c.source_key(url, &[]),
    )
    .await
    .unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[wasm_bindgen_test]
async fn store_lists_reads_and_reopens_warm() {
    let Some(base) = base() else {
        eprintln!("CHUNKWISE_TEST_BASE_URL not set at build time: skipped");
        return;
    };
    let url = format!("{base}hdf5/groups.h5");
    let c = CacheCoordinator::memory(256 << 20);
    let store = open_store(&url, &c).await;
    let listed: Vec<(&str, String)> = store
        .nodes()
        .iter()
        .map(|n| (n.path.as_str(), format!("{:?}", n.kind).to_lowercase()))
        .collect();
    let want: Vec<(&str, String)> = NODES.iter().map(|(p, k, _)| (*p, k.to_string())).collect();
    assert_eq!(listed, want);
    let opened = store.traffic().requests;
    assert!((1..=2).contains(&opened), "{opened}");
    for (path, _, npy) in NODES {
        let Some(npy) = npy else { continue };
        let want = read_npy(&fetch_all(&format!("{base}hdf5/{npy}")).await).unwrap();
        let arr = store.get(path).await.unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.shape, want.shape, "{path}");
        assert!(
            got.data == want.data,
            "{path}: differs from the written array"
        );
    }
    assert_eq!(store.traffic().requests, opened, "leaves made no request");

    // Warm reopens in the same MEMORY coordinator: no request.
    let again = open_store(&url, &c).await;
    assert_eq!(again.traffic().requests, 0);
    let open_array = |url: String| {
        let c = c.clone();
        async move {
            let traffic = Traffic::new();
            let t = Arc::new(Counted::new(FetchSource::new(&url), traffic.clone()));
            let options = OpenOptions {
                path: Some("/model/run1/values".into()),
                ..Default::default()
            };
            let key = c.source_key(&url, &[]);
            RemoteArray::open_with_cache(t, traffic, options, c, key)
                .await
                .unwrap()
        }
    };
    let a = open_array(url.clone()).await;
    assert_eq!(a.traffic().requests, 0, "dataset record from the listing");
    let b2nd = format!("{base}blosc2/be_f8.b2nd");
    let cold = open_array(b2nd.clone()).await;
    assert!(cold.traffic().requests > 0);
    let warm = open_array(b2nd).await;
    assert_eq!(warm.traffic().requests, 0, "warm b2nd reopen");
    let want = read_npy(&fetch_all(&format!("{base}blosc2/be_f8.npy")).await).unwrap();
    let got = warm
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(got.data == want.data);
}

fn get(o: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(o, &k.into()).unwrap()
}

async fn call_async(o: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: js_sys::Function = get(o, method).unchecked_into();
    let arr: js_sys::Array = args.iter().collect();
    let p: js_sys::Promise = f.apply(o, &arr)?.unchecked_into();
    JsFuture::from(p).await
}

#[wasm_bindgen_test]
async fn js_bindings_list_read_and_share() {
    let Some(base) = base() else {
        return;
    };
    let url = format!("{base}hdf5/groups.h5");
    let store = chunkwise::wasm::RemoteStore::open(url.clone().into(), JsValue::UNDEFINED)
        .await
        .unwrap();
    let nodes: js_sys::Array = store.nodes().unwrap().unchecked_into();
    assert_eq!(nodes.length() as usize, NODES.len());
    for (i, (path, kind, _)) in NODES.iter().enumerate() {
        let n = nodes.get(i as u32);
        assert_eq!(get(&n, "path").as_string().unwrap(), *path);
        assert_eq!(get(&n, "kind").as_string().unwrap(), *kind);
        assert!(get(&n, "error").is_null());
    }
    let time = nodes.get(5);
    assert_eq!(get(&get(&time, "shape"), "0").as_f64(), Some(100.0));
    assert_eq!(get(&time, "dtype").as_string().unwrap(), "<u4");

    let store_js: JsValue = store.into();
    let arr = call_async(&store_js, "get", &["/time".into()])
        .await
        .unwrap();
    let res = call_async(&arr, "read", &[JsValue::UNDEFINED, JsValue::UNDEFINED])
        .await
        .unwrap();
    let data: js_sys::Uint32Array = get(&res, "data").unchecked_into();
    let want = read_npy(&fetch_all(&format!("{base}hdf5/groups_time.npy")).await).unwrap();
    let want: Vec<u32> = want
        .data
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(data.to_vec(), want);
    let traffic = get(&store_js, "traffic");
    let requests = get(&traffic, "requests").as_f64().unwrap();
    assert!((1.0..=2.0).contains(&requests), "{requests}");

    // shareCache: the second open of the same URL is warm.
    let opts = js_sys::Object::new();
    js_sys::Reflect::set(&opts, &"shareCache".into(), &true.into()).unwrap();
    let b2nd = format!("{base}blosc2/be_i4.b2nd");
    let a1 = chunkwise::wasm::RemoteArray::open(b2nd.clone().into(), opts.clone().into())
        .await
        .unwrap();
    assert!(get(&a1.traffic().unwrap(), "requests").as_f64().unwrap() > 0.0);
    let a2 = chunkwise::wasm::RemoteArray::open(b2nd.into(), opts.into())
        .await
        .unwrap();
    assert_eq!(get(&a2.traffic().unwrap(), "requests").as_f64(), Some(0.0));

    // cache "disk": IndexedDB where the host has it (Chromium, a window or a worker); in
    // Node, without a cacheStore, a typed error naming the adapter to use.
    let opts = js_sys::Object::new();
    js_sys::Reflect::set(&opts, &"cache".into(), &"disk".into()).unwrap();
    let has_idb = js_sys::Reflect::has(&js_sys::global(), &"indexedDB".into()).unwrap();
    let opened = chunkwise::wasm::RemoteStore::open(url.into(), opts.into()).await;
    if has_idb {
        let store = opened.unwrap_or_else(|e| panic!("disk store: {e:?}"));
        assert!(store.nodes().is_ok());
    } else {
        let err = opened.err().expect("disk needs a cacheStore in Node");
        assert_eq!(get(&err, "code").as_string().unwrap(), "INVALID_ARGUMENT");
        let msg = get(&err, "message").as_string().unwrap();
        assert!(msg.contains("nodeFsStore"), "{msg}");
    }
}

/// The warm-up beside an open that waits (src/open/warm_up.rs): it runs to its end as a task
/// of its own while the open waits, and the open's value comes back.
#[wasm_bindgen_test]
async fn warm_up_runs_beside_a_waiting_open() {
    use chunkwise::open::warm_up::{beside, finished, forget, Format};
    for format in [Format::Zarr, Format::Hdf5, Format::B2nd] {
        // Earlier tests of this instance may have opened the format already.
        forget(format);
        let slow = async {
            chunkwise::io::sleep::sleep(std::time::Duration::from_millis(1500)).await;
            7
        };
        assert_eq!(beside(Some(format), slow).await, 7);
        assert!(finished(format), "{format:?}");
        // An open that completes before the warm-up's first step stops it there.
        forget(format);
        assert_eq!(beside(Some(format), async { 6 }).await, 6);
        chunkwise::io::sleep::sleep(std::time::Duration::from_millis(100)).await;
        assert!(!finished(format), "{format:?}");
        // Later opens of the format run alone.
        assert_eq!(beside(Some(format), async { 8 }).await, 8);
    }
    assert_eq!(beside(None, async { 9 }).await, 9);
}
