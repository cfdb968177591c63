//! Chunk indexes of 10,000 chunks (B-tree v1, B-tree v2, extensible array, fixed array) in
//! files larger than 8 MiB written by h5py at test time, discovered over the real range server on
//! loopback: the chunk map equals the HDF5 library's `chunk_iter` dump, the values read equal
//! the array written, and open takes at most 4 sequential round trips while moving about the
//! index's size, not the file's.

use chunkwise::array::ReadOptions;
use chunkwise::formats::hdf5::Hdf5Array;
use chunkwise::io::http::HttpSource;
use chunkwise::io::{Counted, Traffic};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;
use common::reference;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn generate(mode: &str, dir: &Path) {
    let venv = std::env::var("CHUNKWISE_VENV")
        .unwrap_or_else(|_| format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap()));
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg(fixtures().join("gen_hdf5_index.py"))
        .arg(mode)
        .arg(dir)
        .status()
        .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
    assert!(status.success(), "gen_hdf5_index.py {mode} failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_chunk_indexes_in_few_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    generate("--index", dir.path());
    let npy = read_npy(&std::fs::read(dir.path().join("data.npy")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: dir.path().to_path_buf(),
        port: 0,
        quiet: true,
        // Round trips are counted as waves of requests in flight: with answers in well
        // under a millisecond (TCP_NODELAY, loopback) a loaded machine can finish one
        // request of a batch before it sends the next. A little latency keeps a batch one
        // wave, as it is on any real network.
        latency_ms: 10,
        ..Default::default()
    })
    .await
    .unwrap();
    for name in ["btree_v1", "btree_v2", "earray", "farray"] {
        let file = format!("idx_{name}.h5");
        let len = std::fs::metadata(dir.path().join(&file)).unwrap().len();
        assert!(len > 8 << 20, "{file} is {len} bytes");
        let traffic = Traffic::new();
        let src = Counted::new(HttpSource::new(server.url(&file)).unwrap(), traffic.clone());
        let arr = Hdf5Array::open_source(&src, Some("/data"), 64 * 1024)
            .await
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let t = traffic.snapshot();
        println!(
            "{name}: {} chunks, open: {} requests, {} bytes, {} round trips",
            arr.chunk_map().len(),
            t.requests,
            t.bytes,
            t.round_trips
        );
        // The library's chunk map, chunk for chunk.
        let want: Vec<serde_json::Value> = serde_json::from_slice(
            &std::fs::read(dir.path().join(format!("chunks_{name}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(want.len(), 10_000, "{name}");
        let mut got: Vec<serde_json::Value> = arr
            .chunk_map()
            .iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect();
        let mut want = want;
        let key = |v: &serde_json::Value| {
            let o = v["offset"].as_array().unwrap();
            (o[0].as_u64().unwrap(), o[1].as_u64().unwrap())
        };
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert!(got == want, "{name}: chunk map differs from the library's");
        assert!(t.round_trips <= 4, "{name}: open took {t:?}");
        // About the index, not the file: the largest index here (B-tree v1, 157 leaves of
        // 2,616 bytes) is about 420 KB, plus the 64 KiB head.
        assert!(t.bytes < 1 << 20, "{name}: open moved {t:?} of {len}");

        // Values: a corner, an interior window, and the whole array.
        let arr = open_array(&server.url(&file), vec![], Default::default())
            .await
            .unwrap();
        for s in ["0:10, 0:14", "495:517, 700:731", "990:1000, 1390:1400", ":"] {
            let sel = Selection::parse(s).unwrap();
            let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
            let dims = sel.resolve(&npy.shape).unwrap();
            assert!(
                got.data == reference(&npy.data, &npy.shape, 8, &dims),
                "{name} [{s}] differs from the array written"
            );
        }
    }
    server.shutdown().await;
}

/// The committed 200-chunk files of each index type, discovered from a 512-byte head with
/// 512-byte readahead (so every index level is fetched in rounds): chunk maps equal the
/// library's, values equal the array written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_indexes_from_a_tiny_head() {
    use chunkwise::formats::hdf5::discover::Layout;
    use chunkwise::formats::hdf5::Hdf5Source;
    use chunkwise::io::{ByteRange, RangeSource};
    let dir = fixtures().join("hdf5_index");
    let maps: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("indexes.json")).unwrap()).unwrap();
    let npy = read_npy(&std::fs::read(dir.join("indexes_data.npy")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: dir.clone(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    for name in ["btree_v1", "btree_v2", "earray", "farray"] {
        let url = server.url(&format!("indexes_{name}.h5"));
        let traffic = Traffic::new();
        let src = Counted::new(HttpSource::new(url.clone()).unwrap(), traffic.clone());
        let head = src.read(ByteRange::bounded(0..512)).await.unwrap();
        let mut h = Hdf5Source::new(&src, head.bytes, head.info.len).with_readahead(512);
        let meta = h.dataset("/data").await.unwrap();
        let Layout::Chunked { entries, .. } = &meta.layout else {
            panic!("{name}: not chunked");
        };
        println!(
            "indexes_{name}.h5: {} rounds, {:?}",
            h.rounds(),
            traffic.snapshot()
        );
        let mut got: Vec<serde_json::Value> = entries
            .iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect();
        let mut want = maps[name].as_array().unwrap().clone();
        assert_eq!(want.len(), 200, "{name}");
        let key = |v: &serde_json::Value| v["offset"].to_string();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert!(got == want, "{name}: chunk map differs from the library's");
        let arr = open_array(&url, vec![], Default::default()).await.unwrap();
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert!(
            all.data == npy.data,
            "{name}: values differ from the array written"
        );
    }
    server.shutdown().await;
}

/// Version 2 B-tree child pointers that point back at the root (a cycle) or past the end of
/// the file, and a root record count that lies: discovery from a tiny head ends with a typed
/// error after a bounded number of rounds, never a hang or a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_btree_v2_pointers_are_typed_errors() {
    use chunkwise::formats::hdf5::{Hdf5Error, Hdf5Source};
    use chunkwise::io::{ByteRange, RangeSource};
    let good = std::fs::read(fixtures().join("hdf5_index/indexes_btree_v2.h5")).unwrap();
    let find = |sig: &[u8]| good.windows(4).position(|w| w == sig).unwrap();
    let (bthd, btin) = (find(b"BTHD"), find(b"BTIN"));
    // BTHD: signature 4, version 1, type 1, node size 4, record size 2, depth 2, split 1,
    // merge 1, root address 8, records in root 2 (File Format Specification III.A.2).
    let rec = u16::from_le_bytes([good[bthd + 10], good[bthd + 11]]) as usize;
    let depth = u16::from_le_bytes([good[bthd + 12], good[bthd + 13]]);
    let nrec = u16::from_le_bytes([good[bthd + 24], good[bthd + 25]]) as usize;
    assert_eq!(depth, 1, "the fixture's tree has one internal level");
    // The first child address of the root internal node follows its records.
    let child = btin + 6 + nrec * rec;
    // After the records: per child an address (8) and a record count (1 byte at depth 1),
    // then the node's lookup3 checksum, which is recomputed so the walk meets the damage.
    let sum_at = child + (nrec + 1) * 9;
    let resign = |d: &mut Vec<u8>| {
        let sum = hdf5_reader::checksum::jenkins_lookup3(&d[btin..sum_at]);
        d[sum_at..sum_at + 4].copy_from_slice(&sum.to_le_bytes());
    };
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut good_resigned = good.clone();
    resign(&mut good_resigned);
    assert!(
        good_resigned == good,
        "the checksum is where the layout says"
    );
    let mut cyc = good.clone();
    cyc[child..child + 8].copy_from_slice(&(btin as u64).to_le_bytes());
    resign(&mut cyc);
    cases.push(("cycle", cyc));
    let mut far = good.clone();
    far[child..child + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    resign(&mut far);
    cases.push(("past the end", far));
    let mut lying = good.clone();
    lying[bthd + 24..bthd + 26].copy_from_slice(&u16::MAX.to_le_bytes());
    // The header's checksum follows the total record count (8 bytes) at offset 34.
    let sum = hdf5_reader::checksum::jenkins_lookup3(&lying[bthd..bthd + 34]);
    lying[bthd + 34..bthd + 38].copy_from_slice(&sum.to_le_bytes());
    cases.push(("records in root", lying));
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in &cases {
        std::fs::write(
            dir.path().join(format!("{}.h5", name.replace(' ', "_"))),
            bytes,
        )
        .unwrap();
    }
    let server = spawn(ServeOptions {
        root: dir.path().to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    for (name, _) in &cases {
        let src = HttpSource::new(server.url(&format!("{}.h5", name.replace(' ', "_")))).unwrap();
        let head = src.read(ByteRange::bounded(0..512)).await.unwrap();
        let mut h = Hdf5Source::new(&src, head.bytes, head.info.len).with_readahead(512);
        let err = h.dataset("/data").await.unwrap_err();
        assert!(
            matches!(err, Hdf5Error::Reader(_) | Hdf5Error::Invalid(_)),
            "{name}: {err:?}"
        );
        println!("{name}: {err} ({} rounds)", h.rounds());
        assert!(h.rounds() <= 12, "{name}: {} rounds", h.rounds());
    }
    server.shutdown().await;
}
