//! wasm-bindgen tests of `cache: "disk"` in JS hosts (Node, headless Chromium, a dedicated
//! worker; see `scripts/test-wasm.sh`): the cache-backend conformance suite on IndexedDB, on
//! OPFS and on a JS-supplied store; damaged entries read as misses; and `.b2nd`, HDF5 and
//! Zarr sources reopened from a new coordinator on the same storage (as after a reload)
//! with zero requests and the values written.
//!
//! IndexedDB and OPFS exist in Chromium (window and worker); in Node the tests that need them
//! check that they are absent for the right reason (this is Node) and that `cache: "disk"`
//! there asks for a `cacheStore`.
#![cfg(all(target_arch = "wasm32", feature = "conformance"))]

use crate::server;

use bytes::Bytes;
use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::cache::backend::conformance::{self, blob, BUDGET};
use chunkwise::cache::backend::{CacheBackend, KeyValueStore, MarkedBackend};
use chunkwise::cache::{CacheCoordinator, CachePolicy};
use chunkwise::npy::read_npy;
use chunkwise::open::options::DiskBackend;
use chunkwise::selection::Selection;
use chunkwise::wasm::cache::{store_of, JsStore};
use std::sync::Arc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(inline_js = r#"
export function mapStore() {
  const m = new Map();
  return {
    get: async (k) => m.get(k),
    put: async (k, b) => { m.set(k, b.slice()); },
    delete: async (k) => { m.delete(k); },
    keys: async (p) => [...m.keys()].filter((k) => k.startsWith(p)),
  };
}
export function isNode() {
  return typeof process !== "undefined" && !!(process.versions && process.versions.node);
}
export function uniqueName(tag) {
  return `chunkwise-test-${tag}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = mapStore)]
    fn map_store() -> JsValue;
    #[wasm_bindgen(js_name = isNode)]
    fn is_node() -> bool;
    #[wasm_bindgen(js_name = uniqueName)]
    fn unique_name(tag: &str) -> String;
}

/// The store of `backend` under a fresh name; `None` in Node for IndexedDB and OPFS, which
/// Node lacks (checked: anywhere else their absence fails the test).
fn store(backend: DiskBackend) -> Option<Arc<dyn KeyValueStore>> {
    let name = unique_name(&format!("{backend:?}"));
    let obj = map_store();
    match store_of(backend, &name, Some(&obj)) {
        Ok(s) => Some(s),
        Err(e) => {
            assert!(is_node(), "{backend:?} missing outside Node: {e:?}");
            None
        }
    }
}

async fn conformance_on(backend: DiskBackend) {
    let Some(kv) = store(backend) else { return };
    let b = MarkedBackend::new(kv.clone(), "payload/", BUDGET);
    conformance::check_backend(&b, BUDGET, None).await;
    damage_is_a_miss(&b, &*kv).await;
    // The entries and their order survive a new backend on the same storage.
    b.put("kept", blob(9, 1000)).await.unwrap();
    let reloaded = MarkedBackend::new(kv, "payload/", BUDGET);
    assert_eq!(reloaded.get("kept").await.unwrap(), Some(blob(9, 1000)));
    assert_eq!(reloaded.clear().await.unwrap(), 1);
}

/// A blob damaged in the store (through the store itself, as a page's own code could) and
/// a marker left without its blob are misses, and the pair is gone.
async fn damage_is_a_miss(b: &MarkedBackend, kv: &dyn KeyValueStore) {
    let name = kv.name();
    b.put("bad", blob(5, 4096)).await.unwrap();
    let blob_key = |k: &str| {
        format!(
            "payload/b/{}",
            chunkwise::cache::identity::sha256_hex(k.as_bytes())
        )
    };
    let mut damaged = kv.get(&blob_key("bad")).await.unwrap().unwrap().to_vec();
    damaged[77] ^= 0x10;
    kv.put(&blob_key("bad"), Bytes::from(damaged))
        .await
        .unwrap();
    assert_eq!(b.get("bad").await.unwrap(), None, "{name}: damaged blob");
    assert_eq!(
        kv.keys("payload/").await.unwrap(),
        Vec::<String>::new(),
        "{name}: pair removed"
    );
    b.put("gone", blob(6, 100)).await.unwrap();
    kv.delete(&blob_key("gone")).await.unwrap();
    assert_eq!(
        b.get("gone").await.unwrap(),
        None,
        "{name}: marker without blob"
    );
    assert_eq!(
        kv.keys("payload/").await.unwrap(),
        Vec::<String>::new(),
        "{name}"
    );
}

#[wasm_bindgen_test]
async fn indexeddb_passes_the_conformance_suite() {
    conformance_on(DiskBackend::IndexedDb).await;
}

#[wasm_bindgen_test]
async fn opfs_passes_the_conformance_suite() {
    conformance_on(DiskBackend::Opfs).await;
}

#[wasm_bindgen_test]
async fn a_js_supplied_store_passes_the_conformance_suite() {
    conformance_on(DiskBackend::Store).await;
}

/// A store whose methods fail or answer nonsense gives misses and counted errors, never a
/// failed call.
#[wasm_bindgen_test]
async fn a_failing_store_is_misses_not_errors() {
    let obj: JsValue = js_sys::eval(
        "({ get: async () => 42, put: async () => { throw new DOMException('full', 'QuotaExceededError') }, \
           delete: async () => {}, keys: () => { throw new Error('no') } })",
    )
    .unwrap();
    let kv: Arc<dyn KeyValueStore> = Arc::new(JsStore::new(obj, "x/", "js-store"));
    let c = CacheCoordinator::on_store(kv, Some(1 << 20), None).await;
    let key = chunkwise::cache::CacheKey {
        source: Arc::from("s"),
        item: chunkwise::cache::Item::Chunk(0),
    };
    c.put_payload(key.clone(), Bytes::from_static(b"abc")).await;
    assert_eq!(c.get_payload(&key).await, None);
    assert!(c.stats().cache_errors >= 2, "{:?}", c.stats());
}

/// Opens `path` of `url` through `coordinator`, reads `select`, and returns the data and
/// the requests the open and read made.
async fn open_read(
    url: &str,
    path: Option<&str>,
    select: &str,
    coordinator: CacheCoordinator,
) -> (Vec<u8>, u64) {
    let opts = OpenOptions {
        cache: CachePolicy::Disk,
        path: path.map(str::to_string),
        ..OpenOptions::default()
    };
    let arr = chunkwise::open::open_array(url, Vec::new(), opts, coordinator)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let data = arr
        .read(&Selection::parse(select).unwrap(), &ReadOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    (data.data, arr.traffic().requests)
}

async fn fetch_npy(url: &str) -> chunkwise::npy::Npy {
    let src = chunkwise::io::fetch::FetchSource::new(url);
    let f = chunkwise::io::RangeSource::read(&src, chunkwise::io::ByteRange::Suffix(1 << 40))
        .await
        .unwrap();
    read_npy(&f.bytes).unwrap()
}

/// For each format: a cold read fetches, a new coordinator on the same storage (a reload)
/// reopens and rereads with zero requests, and the values equal the array written.
async fn reopen_without_requests(backend: DiskBackend) {
    let Some(base) = server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    ) else {
        return;
    };
    let Some(kv) = store(backend) else { return };
    let cases = [
        (
            "blosc2/cf_blosclz_nofilter.b2nd",
            None,
            "blosc2/cf_blosclz_nofilter.npy",
        ),
        ("hdf5/contiguous.h5", Some("/x"), "hdf5/contiguous_x.npy"),
        ("zarr/v3.zarr", Some("/raw"), "zarr/v3_raw.npy"),
    ];
    for (file, path, npy) in cases {
        let url = format!("{base}{file}");
        let want = fetch_npy(&format!("{base}{npy}")).await;
        let cold = CacheCoordinator::on_store(kv.clone(), Some(1 << 20), None).await;
        let (data, requests) = open_read(&url, path, "...", cold).await;
        assert!(
            data == want.data,
            "{file}: cold values differ from the array written"
        );
        assert!(requests > 0, "{file}: the cold read fetched");
        let warm = CacheCoordinator::on_store(kv.clone(), Some(1 << 20), None).await;
        let (data, requests) = open_read(&url, path, "...", warm.clone()).await;
        assert!(
            data == want.data,
            "{file}: warm values differ from the array written"
        );
        assert_eq!(
            requests, 0,
            "{file}: the reopen from {backend:?} made requests"
        );
        assert!(
            warm.stats().payload.hits > 0 || warm.stats().source_hits > 0,
            "{file}"
        );
    }
}

#[wasm_bindgen_test]
async fn indexeddb_reopens_every_format_without_requests() {
    reopen_without_requests(DiskBackend::IndexedDb).await;
}

#[wasm_bindgen_test]
async fn opfs_reopens_every_format_without_requests() {
    reopen_without_requests(DiskBackend::Opfs).await;
}

#[wasm_bindgen_test]
async fn a_js_store_reopens_every_format_without_requests() {
    reopen_without_requests(DiskBackend::Store).await;
}
