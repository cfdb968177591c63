//! netCDF-4 files (HDF5 written by netCDF-C through netCDF4-python,
//! `tests/fixtures/gen_hdf5_netcdf.py`) read over the real range server on loopback: netCDF-C
//! puts fletcher32 first in the filter pipeline, so deflate's output holds the chunk and its
//! 4-byte checksum. Every variable must read equal to the array written, whole and in
//! selections, with the pipeline in the order the file records.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::Hdf5Array;
use chunkwise::io::http::HttpSource;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;
use common::{check_selections, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5_netcdf")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netcdf_fletcher32_first_pipelines_read_as_written() {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("manifest.json")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url(m["file"].as_str().unwrap());
    let mut checked = 0;
    for v in m["variables"].as_array().unwrap() {
        let path = v["path"].as_str().unwrap();
        let src = HttpSource::new(url.clone()).unwrap();
        let meta = Hdf5Array::open_source(&src, Some(path), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let ids: Vec<u64> = meta.meta().filters.iter().map(|f| f.id as u64).collect();
        let want: Vec<u64> = v["filters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(ids, want, "{path}: pipeline");
        assert_eq!(ids[0], 3, "{path}: fletcher32 first");
        let npy =
            read_npy(&std::fs::read(fixtures().join(v["npy"].as_str().unwrap())).unwrap()).unwrap();
        let options = OpenOptions {
            path: Some(path.to_string()),
            ..Default::default()
        };
        let arr = open_array(&url, vec![], options)
            .await
            .unwrap_or_else(|e| panic!("{path}: open: {e}"));
        assert_eq!(arr.shape(), &npy.shape[..], "{path}");
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: read: {e}"));
        assert!(
            all.data == npy.data,
            "{path}: differs from the array written"
        );
        let itemsize = arr.dtype().itemsize;
        check_selections(&arr, &npy.data, &npy.shape, itemsize, SELECTIONS, &path).await;
        checked += 1;
    }
    assert_eq!(checked, 4);
    server.shutdown().await;
}
