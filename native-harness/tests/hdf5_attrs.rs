//! HDF5 attributes and dimension names over the real range server on loopback, compared with
//! what `tests/fixtures/gen_hdf5_attrs.py` wrote (`expected.json`, made from the Python values,
//! not read back): `chunkwise attrs` for every group and dataset, `RemoteStore` nodes and
//! opened arrays, a warm DISK reopen with zero requests, a corrupt attribute message shown as
//! omitted (the open and the read still succeed), and the dimension names netCDF-4 gives
//! through dimension scales (`tests/fixtures/gen_hdf5_netcdf.py`).

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::CacheCoordinator;
use chunkwise::io::Traffic;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use chunkwise::store::RemoteStore;
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use native_harness::source::transport;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5_attrs")
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap()
}

async fn serve(root: &Path) -> ServerHandle {
    spawn(ServeOptions {
        root: root.to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts")
}

/// Expected dims as the library gives them.
fn dims_of(v: &Value) -> Option<Vec<Option<String>>> {
    v.as_array()
        .map(|d| d.iter().map(|x| x.as_str().map(str::to_string)).collect())
}

async fn open_store(url: &str, c: &CacheCoordinator) -> RemoteStore {
    let traffic = Traffic::new();
    let t = transport(url, vec![], &traffic).unwrap();
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

async fn open_array(url: &str, path: &str, c: &CacheCoordinator) -> RemoteArray {
    let traffic = Traffic::new();
    let t = transport(url, vec![], &traffic).unwrap();
    let options = OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    };
    RemoteArray::open_with_cache(t, traffic, options, c.clone(), c.source_key(url, &[]))
        .await
        .unwrap_or_else(|e| panic!("{url} {path}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_prints_the_attributes_written() {
    let want = expected();
    let server = serve(&fixtures()).await;
    let mut checked = 0;
    for (file, nodes) in want["files"].as_object().unwrap() {
        let url = server.url(file);
        for (path, node) in nodes.as_object().unwrap() {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
                .args(["attrs", &url, "--path", path])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{file} {path}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(got, node["attrs"], "{file} {path}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "{checked} nodes");
    // `chunkwise info` lists the hierarchy with its documented fields only.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(["info", "--json", &server.url("attrs_latest.h5")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    for n in list.as_array().unwrap() {
        let keys: Vec<&String> = n.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 5, "{n}");
        for k in ["path", "kind", "shape", "dtype", "error"] {
            assert!(n.get(k).is_some(), "{n}");
        }
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_nodes_and_arrays_carry_attributes_and_dims() {
    let want = expected();
    let server = serve(&fixtures()).await;
    for (file, nodes) in want["files"].as_object().unwrap() {
        let url = server.url(file);
        let c = CacheCoordinator::memory(256 << 20);
        let store = open_store(&url, &c).await;
        for (path, node) in nodes.as_object().unwrap() {
            let n = store
                .nodes()
                .iter()
                .find(|n| n.path == *path)
                .unwrap_or_else(|| panic!("{file}: {path} listed"));
            assert_eq!(n.attrs.to_json(), node["attrs"], "{file} {path}: listing");
            assert_eq!(
                n.dims,
                dims_of(&node["dims"]),
                "{file} {path}: listing dims"
            );
            if n.kind == chunkwise::formats::NodeKind::Array {
                let arr = store.get(path).await.unwrap();
                assert_eq!(arr.attrs().to_json(), node["attrs"], "{file} {path}: array");
                assert_eq!(
                    arr.dims(),
                    dims_of(&node["dims"]),
                    "{file} {path}: array dims"
                );
            }
        }
        // The same through a standalone open (its own discovery of the scales).
        let p = if file.contains("earliest") {
            "/cube"
        } else {
            "/dims/cube"
        };
        let fresh = open_array(&url, p, &CacheCoordinator::memory(1 << 20)).await;
        assert_eq!(
            fresh.dims(),
            Some(vec![Some("x".into()), Some("lat".into()), None]),
            "{file}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_disk_reopen_keeps_attributes_without_a_request() {
    let want = expected();
    let node = &want["files"]["attrs_latest.h5"]["/dims/cube"];
    let data = &want["files"]["attrs_latest.h5"]["/g/data"];
    let server = serve(&fixtures()).await;
    let url = server.url("attrs_latest.h5");
    let tmp = tempfile::tempdir().unwrap();
    let disk = || CacheCoordinator::disk(tmp.path(), Some(256 << 20)).unwrap();
    let cold = open_array(&url, "/dims/cube", &disk()).await;
    assert!(cold.traffic().requests > 0);
    let store = open_store(&url, &disk()).await;
    assert!(store.traffic().requests > 0 || cold.traffic().requests > 0);
    for _ in 0..2 {
        let warm = open_array(&url, "/dims/cube", &disk()).await;
        assert_eq!(warm.traffic().requests, 0, "warm reopen from DISK");
        assert_eq!(warm.attrs().to_json(), node["attrs"]);
        assert_eq!(warm.dims(), dims_of(&node["dims"]));
        let store = open_store(&url, &disk()).await;
        assert_eq!(store.traffic().requests, 0, "warm store reopen from DISK");
        let n = store.nodes().iter().find(|n| n.path == "/g/data").unwrap();
        assert_eq!(n.attrs.to_json(), data["attrs"]);
        let n = store
            .nodes()
            .iter()
            .find(|n| n.path == "/dims/cube")
            .unwrap();
        assert_eq!(n.dims, dims_of(&node["dims"]));
    }
    server.shutdown().await;
}

/// The offset of the only occurrence of `needle` in `hay`.
fn find_once(hay: &[u8], needle: &[u8]) -> usize {
    let at: Vec<usize> = hay
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "{:?} occurs once",
        String::from_utf8_lossy(needle)
    );
    at[0]
}

/// Makes the attribute message named `name` in the dense storage (a fractal heap direct
/// block) of `bytes` malformed: the byte after its name's NUL, the first of its datatype
/// (class and version), becomes class 15, which does not exist. The direct block's lookup3
/// checksum is computed again, so the damage reaches the attribute parser (HDF5 File Format
/// Specification, "Fractal Heap": direct block header, checksum over the block with the
/// checksum field zeroed).
fn corrupt_dense_attribute(bytes: &mut [u8], name: &str) {
    let mut needle = name.as_bytes().to_vec();
    needle.push(0);
    let at = find_once(bytes, &needle);
    bytes[at + needle.len()] = 0xff;
    // The direct block holding it: the last FHDB signature before it.
    let block = (0..at)
        .rev()
        .find(|&i| &bytes[i..i + 4] == b"FHDB")
        .unwrap();
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let heap = u64_at(bytes, block + 5) as usize;
    assert_eq!(&bytes[heap..heap + 4], b"FRHP");
    // Fractal heap header: 14 bytes, twelve 8-byte fields, table width (2), starting block
    // size (8), maximum direct block size (8), maximum heap size in bits (2).
    let width = u16::from_le_bytes([bytes[heap + 110], bytes[heap + 111]]) as u64;
    let start = u64_at(bytes, heap + 112);
    let bits = u16::from_le_bytes([bytes[heap + 128], bytes[heap + 129]]) as usize;
    let offset_bytes = bits.div_ceil(8);
    let mut off = [0u8; 8];
    off[..offset_bytes].copy_from_slice(&bytes[block + 13..block + 13 + offset_bytes]);
    let block_offset = u64::from_le_bytes(off);
    assert!(
        block_offset < 2 * width * start,
        "a block of the first two rows (starting block size)"
    );
    let size = start as usize;
    let sum_at = block + 13 + offset_bytes;
    assert!(at < block + size);
    bytes[sum_at..sum_at + 4].fill(0);
    let sum = hdf5_reader::checksum::jenkins_lookup3(&bytes[block..block + size]);
    bytes[sum_at..sum_at + 4].copy_from_slice(&sum.to_le_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_group_attribute_is_omitted_and_the_file_still_reads() {
    let want = expected();
    let node = &want["files"]["attrs_latest.h5"]["/dense"];
    let tmp = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures().join("attrs_latest.h5")).unwrap();
    corrupt_dense_attribute(&mut bytes, "attribute_03");
    std::fs::write(tmp.path().join("corrupt.h5"), &bytes).unwrap();
    let server = serve(tmp.path()).await;
    let url = server.url("corrupt.h5");
    let c = CacheCoordinator::memory(256 << 20);
    let store = open_store(&url, &c).await;
    let n = store.nodes().iter().find(|n| n.path == "/dense").unwrap();
    let got = n.attrs.to_json();
    let reason = got["attribute_03"]["omitted"]
        .as_str()
        .unwrap_or_else(|| panic!("attribute_03 is omitted: {got}"))
        .to_string();
    assert!(reason.contains("malformed attribute message"), "{reason}");
    for (k, v) in node["attrs"].as_object().unwrap() {
        if k != "attribute_03" {
            assert_eq!(&got[k], v, "{k}");
        }
    }
    assert_eq!(got.as_object().unwrap().len(), 20);
    // The CLI shows the same, and a dataset of the file still reads as written.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(["attrs", &url, "--path", "/dense"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli, got);
    let arr = store.get("/dense_ds").await.unwrap();
    let npy =
        read_npy(&std::fs::read(fixtures().join("attrs_latest_dense_ds.npy")).unwrap()).unwrap();
    let all = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(all.data == npy.data, "values as written");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_dataset_attribute_is_omitted_and_the_dataset_still_opens() {
    let want = expected();
    let node = &want["files"]["attrs_latest.h5"]["/dense_ds"];
    let tmp = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures().join("attrs_latest.h5")).unwrap();
    corrupt_dense_attribute(&mut bytes, "corrupt_me");
    std::fs::write(tmp.path().join("corrupt.h5"), &bytes).unwrap();
    let server = serve(tmp.path()).await;
    let url = server.url("corrupt.h5");
    let npy =
        read_npy(&std::fs::read(fixtures().join("attrs_latest_dense_ds.npy")).unwrap()).unwrap();
    let check = |got: Value, what: &str| {
        let reason = got["corrupt_me"]["omitted"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: corrupt_me is omitted: {got}"))
            .to_string();
        assert!(
            reason.contains("malformed attribute message"),
            "{what}: {reason}"
        );
        for (k, v) in node["attrs"].as_object().unwrap() {
            if k != "corrupt_me" {
                assert_eq!(&got[k], v, "{what}: {k}");
            }
        }
        assert_eq!(got.as_object().unwrap().len(), 12, "{what}");
    };
    // Opened on its own, through a store, and listed.
    let arr = open_array(&url, "/dense_ds", &CacheCoordinator::memory(256 << 20)).await;
    check(arr.attrs().to_json(), "open");
    let all = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    assert!(all.data == npy.data, "values as written");
    let store = open_store(&url, &CacheCoordinator::memory(256 << 20)).await;
    let n = store
        .nodes()
        .iter()
        .find(|n| n.path == "/dense_ds")
        .unwrap();
    assert_eq!(n.error, None);
    assert_eq!(n.shape, Some(vec![4, 5]));
    check(n.attrs.to_json(), "listing");
    let arr = store.get("/dense_ds").await.unwrap();
    check(arr.attrs().to_json(), "store");
    let all = arr
        .read(&Selection::parse("1:3").unwrap(), &ReadOptions::default())
        .await
        .unwrap();
    // Rows 1 and 2 of a (4, 5) int32 array: bytes 20 to 60.
    assert!(all.data == npy.data[20..60], "rows 1:3 as written");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_compact_attribute_of_a_version_1_header_is_omitted() {
    let want = expected();
    let node = &want["files"]["attrs_earliest.h5"]["/g/data"];
    let tmp = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures().join("attrs_earliest.h5")).unwrap();
    // A version 1 Attribute message in a version 1 object header (no checksum): the name,
    // NUL included, padded to 8 bytes, then the datatype, whose first byte becomes class 15.
    let at = find_once(&bytes, b"enum_list\0");
    bytes[at + 16] = 0xff;
    std::fs::write(tmp.path().join("corrupt.h5"), &bytes).unwrap();
    let server = serve(tmp.path()).await;
    let url = server.url("corrupt.h5");
    let check = |got: Value, what: &str| {
        let reason = got["enum_list"]["omitted"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: enum_list is omitted: {got}"))
            .to_string();
        assert!(
            reason.contains("malformed attribute message"),
            "{what}: {reason}"
        );
        for (k, v) in node["attrs"].as_object().unwrap() {
            if k != "enum_list" {
                assert_eq!(&got[k], v, "{what}: {k}");
            }
        }
        assert_eq!(
            got.as_object().unwrap().len(),
            node["attrs"].as_object().unwrap().len(),
            "{what}"
        );
    };
    let arr = open_array(&url, "/g/data", &CacheCoordinator::memory(256 << 20)).await;
    check(arr.attrs().to_json(), "open");
    // gen_hdf5_attrs.py wrote np.arange(10, dtype=">i4") there.
    let all = arr
        .read(&Selection::all(), &ReadOptions::default())
        .await
        .unwrap();
    let want_data: Vec<u8> = (0i32..10).flat_map(|v| v.to_be_bytes()).collect();
    let le: Vec<u8> = (0i32..10).flat_map(|v| v.to_le_bytes()).collect();
    assert!(all.data == want_data || all.data == le, "values as written");
    let store = open_store(&url, &CacheCoordinator::memory(256 << 20)).await;
    let n = store.nodes().iter().find(|n| n.path == "/g/data").unwrap();
    assert_eq!(n.error, None);
    check(n.attrs.to_json(), "listing");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn netcdf_dimensions_name_the_variables_dims() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5_netcdf");
    // The dimensions gen_hdf5_netcdf.py gave each variable (its `specs`).
    let want: [(&str, &[&str]); 4] = [
        ("/f4_fletcher_shuffle_zlib", &["y", "x"]),
        ("/i2_fletcher_zlib", &["y", "x"]),
        ("/f8_fletcher", &["y", "x"]),
        ("/i4_time_fletcher_shuffle_zlib", &["time", "y", "x"]),
    ];
    let server = serve(&root).await;
    let url = server.url("checksums.nc");
    let c = CacheCoordinator::memory(256 << 20);
    let store = open_store(&url, &c).await;
    for (path, dims) in want {
        let dims: Vec<Option<String>> = dims.iter().map(|d| Some(d.to_string())).collect();
        let n = store.nodes().iter().find(|n| n.path == path).unwrap();
        assert_eq!(n.dims.as_ref(), Some(&dims), "{path}: listing");
        assert!(
            matches!(n.attrs.get("DIMENSION_LIST"), Some(chunkwise::attrs::AttrValue::Omitted(r)) if r.contains("reference")),
            "{path}: {:?}",
            n.attrs.get("DIMENSION_LIST")
        );
        let arr = open_array(&url, path, &CacheCoordinator::memory(1 << 20)).await;
        assert_eq!(arr.dims(), Some(dims), "{path}: open");
    }
    // A netCDF dimension without a variable is a scale named by its basename.
    let x = store.nodes().iter().find(|n| n.path == "/x").unwrap();
    assert_eq!(x.dims, Some(vec![Some("x".to_string())]));
    server.shutdown().await;
}
