//! HDF5's szip, nbit and scale-offset filters decoded in wasm: every dataset of
//! `tests/fixtures/hdf5/filters.h5` read over `fetch` from the loopback server
//! (`CHUNKWISE_TEST_BASE_URL`, set at build time by `scripts/test-wasm.sh`) and compared with
//! the `.npy` of the array that was written.
#![cfg(target_arch = "wasm32")]

use crate::server;

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::io::fetch::FetchSource;
use chunkwise::io::{ByteRange, Counted, RangeSource, Traffic};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use std::sync::Arc;
use wasm_bindgen_test::wasm_bindgen_test;

async fn fetch_all(url: &str) -> Vec<u8> {
    let f = FetchSource::new(url)
        .read(ByteRange::Suffix(1 << 40))
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    f.bytes.to_vec()
}

#[wasm_bindgen_test]
async fn szip_nbit_scaleoffset_read_as_written() {
    let Some(base) = server::url(
        option_env!("CHUNKWISE_TEST_BASE_URL"),
        "CHUNKWISE_TEST_BASE_URL",
    ) else {
        eprintln!("CHUNKWISE_TEST_BASE_URL not set at build time: skipped");
        return;
    };
    let manifest: serde_json::Value =
        serde_json::from_slice(&fetch_all(&format!("{base}hdf5/filters_manifest.json")).await)
            .unwrap();
    let url = format!("{base}hdf5/filters.h5");
    let mut n = 0;
    for ds in manifest["datasets"].as_array().unwrap() {
        if ds.get("refused").is_some() {
            continue;
        }
        let path = ds["path"].as_str().unwrap();
        let traffic = Traffic::new();
        let t = Arc::new(Counted::new(FetchSource::new(&url), traffic.clone()));
        let options = OpenOptions {
            path: Some(path.to_string()),
            ..Default::default()
        };
        let arr = RemoteArray::open_source(t, traffic, options)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let npy =
            read_npy(&fetch_all(&format!("{base}hdf5/{}", ds["npy"].as_str().unwrap())).await)
                .unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(got.shape, npy.shape, "{path}");
        assert!(
            got.data == npy.data,
            "{path}: differs from the array written"
        );
        n += 1;
    }
    assert_eq!(n, 25);
}
