//! `chunkwise chunk-trace SOURCE --path P`: the simulator fed by chunkwise's own HDF5 chunk
//! maps. The geometry read from each chunked fixture dataset equals the one h5py's
//! `get_chunk_info` gives (recorded by the fixture script), and the command's counts equal a
//! simulation of that geometry.

use chunkwise::chunk_trace::{random_trace, simulate, CacheConfig, HashForm, StoredChunk};
use native_harness::source::chunk_geometry;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geometry_from_our_chunk_maps_drives_the_simulator() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("manifest.json")).unwrap()).unwrap();
    let mut checked = 0;
    for d in manifest["datasets"].as_array().unwrap() {
        let Some(map) = d["chunk_map"].as_array() else {
            continue;
        };
        let file = fixtures().join(d["file"].as_str().unwrap());
        let path = d["path"].as_str().unwrap();
        let chunk: Vec<u64> = d["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let ours = chunk_geometry(file.to_str().unwrap(), Some(path), vec![])
            .await
            .unwrap();
        // h5py's answer, in the simulator's form
        let mut want: Vec<StoredChunk> = map
            .iter()
            .map(|c| StoredChunk {
                coords: c["offset"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(&chunk)
                    .map(|(o, n)| o.as_u64().unwrap() / n)
                    .collect(),
                address: c["address"].as_u64(),
                stored_size: c["size"].as_u64().unwrap(),
            })
            .collect();
        let mut got = ours.chunks.clone();
        want.sort_by(|a, b| a.coords.cmp(&b.coords));
        got.sort_by(|a, b| a.coords.cmp(&b.coords));
        assert_eq!(
            got, want,
            "{path}: chunk geometry differs from h5py's chunk info"
        );
        assert_eq!(ours.chunk_shape, chunk, "{path}");

        // The command's counts equal a direct simulation of that geometry.
        let trace = random_trace(&ours.shape, &ours.chunk_shape, 7, 40);
        let dir = tempfile::tempdir().unwrap();
        let tpath = dir.path().join("trace.json");
        std::fs::write(&tpath, serde_json::to_vec(&trace).unwrap()).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
            .args([
                "chunk-trace",
                file.to_str().unwrap(),
                "--path",
                path,
                "--trace",
            ])
            .arg(&tpath)
            .args(["--nslots", "3", "--nbytes", "2048", "--w0", "0", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let config = CacheConfig {
            nslots: 3,
            nbytes: 2048,
            w0: 0.0,
        };
        let sim = simulate(&ours, &trace, config, HashForm::Current).unwrap();
        assert_eq!(
            rows[0]["reads"].as_u64().unwrap(),
            sim.total.reads,
            "{path}"
        );
        assert_eq!(
            rows[0]["raw_bytes"].as_u64().unwrap(),
            sim.total.raw_bytes,
            "{path}"
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} chunked datasets");
}

#[tokio::test]
async fn contiguous_datasets_are_refused() {
    let e = chunk_geometry(
        fixtures().join("contiguous.h5").to_str().unwrap(),
        Some("/x"),
        vec![],
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("not chunked"), "{e}");
}
