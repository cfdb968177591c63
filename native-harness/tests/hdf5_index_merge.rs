//! Merging the nodes of one chunk-index level with a bounded over-read: h5py's 10,000-chunk
//! B-tree v1 and extensible-array files (`gen_hdf5_index.py --index`, seeded data, written at
//! test time) opened through six connections (a browser's HTTP/1.1 cap) over the real range
//! server. With the default over-read ([`DEFAULT_INDEX_OVER_READ`]) the open makes fewer
//! requests than with none, moves at most that fraction more bytes (from the server's log),
//! finds the library's 10,000 chunks, and the values read equal the array written.

use chunkwise::array::ReadOptions;
use chunkwise::formats::hdf5::discover::Layout;
use chunkwise::formats::hdf5::index::DEFAULT_INDEX_OVER_READ;
use chunkwise::formats::hdf5::Hdf5Source;
use chunkwise::io::http::HttpSource;
use chunkwise::io::{ByteRange, RangeSource};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::bench_coalesce::Limited;
use native_harness::serve::{spawn, ServeOptions, ServerHandle};
use std::path::Path;

mod common;

fn generate(dir: &Path) {
    let status = std::process::Command::new(native_harness::venv_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_hdf5_index.py"))
        .arg("--index")
        .arg(dir)
        .status()
        .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
    assert!(status.success(), "gen_hdf5_index.py --index failed");
}

/// Opens `/data` of `file` with `over_read`: (requests, body bytes) from the server's log,
/// waves, and the number of chunks found.
async fn open(server: &ServerHandle, file: &str, over_read: f64) -> (usize, u64, u64, usize) {
    let before = server.requests().len();
    let src = Limited::new(HttpSource::new(server.url(file)).unwrap(), 6);
    let head = src.read(ByteRange::bounded(0..64 * 1024)).await.unwrap();
    let meta = Hdf5Source::new(&src, head.bytes, head.info.len)
        .with_index_over_read(over_read)
        .dataset("/data")
        .await
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    let Layout::Chunked { entries, .. } = meta.layout else {
        panic!("{file}: not chunked")
    };
    let log = server.requests();
    let log = &log[before..];
    (
        log.len(),
        log.iter().map(|r| r.body_len).sum(),
        src.waves(),
        entries.len(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_level_merges_with_a_bounded_over_read() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path());
    let npy = read_npy(&std::fs::read(dir.path().join("data.npy")).unwrap()).unwrap();
    let server = spawn(ServeOptions {
        root: dir.path().to_path_buf(),
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let mut fewer = 0;
    for name in ["btree_v1", "earray"] {
        let file = format!("idx_{name}.h5");
        let (r0, b0, w0, n0) = open(&server, &file, 0.0).await;
        let (r, b, w, n) = open(&server, &file, DEFAULT_INDEX_OVER_READ).await;
        println!(
            "{file}: no over-read {r0} requests, {w0} waves, {b0} bytes; \
             default {r} requests, {w} waves, {b} bytes"
        );
        assert_eq!((n0, n), (10_000, 10_000), "{file}");
        assert!(r <= r0, "{file}: {r} requests, {r0} without over-read");
        fewer += usize::from(r < r0);
        // What the merges read beyond the nodes is bounded by the fraction of the bytes
        // asked (here at most the bytes moved without over-read).
        assert!(
            b as f64 <= b0 as f64 * (1.0 + DEFAULT_INDEX_OVER_READ),
            "{file}: {b} bytes, {b0} without over-read"
        );
        // Values through the default open.
        let arr =
            native_harness::source::open_array(&server.url(&file), vec![], Default::default())
                .await
                .unwrap();
        for s in ["0:10, 0:14", "495:517, 700:731", "990:1000, 1390:1400"] {
            let sel = Selection::parse(s).unwrap();
            let got = arr.read(&sel, &ReadOptions::default()).await.unwrap();
            let dims = sel.resolve(&npy.shape).unwrap();
            assert!(
                got.data == common::reference(&npy.data, &npy.shape, 8, &dims),
                "{file} [{s}] differs from the array written"
            );
        }
    }
    // The B-tree v1 leaves (157 of 2,616 bytes, about 64 KiB of chunks apart) merge.
    assert!(fewer >= 1, "no file made fewer requests");
    server.shutdown().await;
}
