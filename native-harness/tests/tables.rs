//! Remote tables ([`chunkwise::table::RemoteTable`]) over the loopback range server, on
//! tables written at test time by `tests/fixtures/gen_tables.py` (python-blosc2 CTable saved
//! as a directory of standalone `.b2nd` columns plus its valid-rows mask; an h5py compound
//! dataset and groups of 1-D arrays; a zarr-python group). Values are compared with the
//! `.npy` files the generator wrote from the arrays it stored (live rows only).

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::cache::{CacheCoordinator, CachePolicy};
use chunkwise::npy::{read_npy, Npy};
use chunkwise::table::{Column, RemoteTable};
use native_harness::serve::ServerHandle;
use std::path::{Path, PathBuf};

mod common;

/// The generated tables, once per test binary.
fn fixtures() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::process_dir("chunkwise-tables-");
        let generator =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_tables.py");
        let status = std::process::Command::new(native_harness::venv_python())
            .arg(generator)
            .arg(&dir)
            .status()
            .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
        assert!(status.success(), "gen_tables.py failed");
        dir
    })
}

fn npy(name: &str) -> Npy {
    let path = fixtures().join(name);
    read_npy(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

async fn server() -> ServerHandle {
    common::serve_dir(fixtures().to_path_buf()).await
}

/// Opens one CTable column file (`_cols/<name>.b2nd`, or the mask) with `options`.
async fn open_b2nd(
    server: &ServerHandle,
    rel: &str,
    options: &OpenOptions,
    coordinator: &CacheCoordinator,
) -> chunkwise::Result<RemoteArray> {
    chunkwise::open::open_array(
        &server.url(rel),
        vec![],
        options.clone(),
        coordinator.clone(),
    )
    .await
}

/// The CTable of `ctable.b2d` as the `.b2z` wiring will build it: every column whose array
/// opens is a column, the others are listed with their open error, `_valid_rows` the mask.
async fn ctable(server: &ServerHandle, options: &OpenOptions) -> RemoteTable {
    let coordinator = CacheCoordinator::new(CachePolicy::Memory, 1 << 28).unwrap();
    let mut columns = Vec::new();
    let mut unreadable = Vec::new();
    for name in ["id", "x", "tag", "name"] {
        match open_b2nd(
            server,
            &format!("ctable.b2d/_cols/{name}.b2nd"),
            options,
            &coordinator,
        )
        .await
        {
            Ok(a) => columns.push((name.to_string(), a)),
            Err(e) => unreadable.push(Column {
                name: name.to_string(),
                dtype: "<U6".into(),
                error: Some(e.message()),
            }),
        }
    }
    let mask = open_b2nd(server, "ctable.b2d/_valid_rows.b2nd", options, &coordinator)
        .await
        .unwrap();
    RemoteTable::from_columns(columns, unreadable, Some(mask)).unwrap()
}

/// Rows `start..stop` of a 1-D `.npy` (its itemsize from its length).
fn rows(n: &Npy, start: usize, stop: usize) -> Vec<u8> {
    let item = n.data.len() / n.shape[0] as usize;
    n.data[start * item..stop * item].to_vec()
}

#[tokio::test]
async fn ctable_reads_live_rows_only() {
    let server = server().await;
    let table = ctable(&server, &OpenOptions::default()).await;
    let names: Vec<&str> = table.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "x", "tag", "name"]);
    let dtypes: Vec<&str> = table.columns().iter().map(|c| c.dtype.as_str()).collect();
    assert_eq!(dtypes, ["<i8", "<f8", "|S8", "<U6"]);
    // 3,000 physical rows, 21 deleted.
    assert_eq!(table.physical_rows(), 3000);
    assert_eq!(table.nrows().await.unwrap(), 2979);
    assert_eq!(table.known_nrows(), Some(2979));
    let want: Vec<(&str, Npy)> = ["id", "x", "tag", "name"]
        .iter()
        .map(|c| (*c, npy(&format!("ct_{c}.npy"))))
        .collect();
    // All rows; rows 5..25 (live rows over the deleted 10..20, physical 5..35); the tail
    // past a deleted run; past the end, clamped; empty.
    for (start, stop) in [
        (0, 2979),
        (5, 25),
        (480, 520),
        (2960, 10_000),
        (7, 7),
        (3000, 4000),
    ] {
        let got = table
            .read_rows(start, stop, None, &ReadOptions::default())
            .await
            .unwrap();
        let (s, e) = (
            start.min(2979) as usize,
            stop.min(2979).max(start.min(2979)) as usize,
        );
        assert_eq!(got.nrows, (e - s) as u64, "{start}..{stop}");
        assert_eq!(got.columns.len(), 4);
        for ((name, data), (want_name, w)) in got.columns.iter().zip(&want) {
            assert_eq!(name, want_name);
            assert_eq!(data.shape, vec![(e - s) as u64], "{name} {start}..{stop}");
            assert_eq!(data.data, rows(w, s, e), "{name} {start}..{stop}");
        }
    }
    // The mask is applied: live row 10 is physical row 20 (id = 20 * 3 - 100).
    let got = table
        .read_rows(10, 11, Some(&["id".to_string()]), &ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(got.columns[0].1.data, (-40i64).to_le_bytes().to_vec());
    server.shutdown().await;
}

#[tokio::test]
async fn ctable_reads_only_the_columns_asked_for() {
    let server = server().await;
    // Small head reads and no whole-file copies, so each column's chunk is a request of
    // its own at read time.
    let options = OpenOptions {
        head_bytes: 256,
        small_source_bytes: 0,
        cache: CachePolicy::None,
        ..Default::default()
    };
    let wanted = ["id".to_string(), "x".to_string()];
    let mut bytes = Vec::new();
    for columns in [Some(&wanted[..]), None] {
        let table = ctable(&server, &options).await;
        table.nrows().await.unwrap();
        let before = server.requests().len();
        let sent = server.stats().bytes_sent;
        let got = table
            .read_rows(0, 100, columns, &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.nrows, 100);
        let paths: Vec<String> = server.requests()[before..]
            .iter()
            .map(|r| r.path.clone())
            .collect();
        bytes.push(server.stats().bytes_sent - sent);
        println!(
            "{columns:?}: {} requests {paths:?}, {} bytes",
            paths.len(),
            bytes.last().unwrap()
        );
        assert!(!paths.is_empty());
        assert!(
            paths.iter().all(|p| !p.contains("_valid_rows")),
            "{paths:?}"
        );
        if columns.is_some() {
            assert!(
                paths
                    .iter()
                    .all(|p| p.ends_with("/id.b2nd") || p.ends_with("/x.b2nd")),
                "a column not asked for was requested: {paths:?}"
            );
            assert_eq!(got.columns.len(), 2);
            assert_eq!(got.columns[0].1.data, rows(&npy("ct_id.npy"), 0, 100));
            assert_eq!(got.columns[1].1.data, rows(&npy("ct_x.npy"), 0, 100));
        } else {
            assert!(paths.iter().any(|p| p.ends_with("/tag.b2nd")), "{paths:?}");
        }
    }
    assert!(
        bytes[0] < bytes[1],
        "2 columns moved {} bytes, all {}",
        bytes[0],
        bytes[1]
    );
    server.shutdown().await;
}

async fn store(server: &ServerHandle, rel: &str) -> chunkwise::store::RemoteStore {
    let coordinator = CacheCoordinator::new(CachePolicy::Memory, 1 << 28).unwrap();
    chunkwise::open::open_store(
        &server.url(rel),
        vec![],
        OpenOptions::default(),
        coordinator,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn hdf5_compound_is_a_table_of_its_members() {
    let server = server().await;
    let store = store(&server, "tables.h5").await;
    let table = store.table("/run/table").await.unwrap();
    let columns: Vec<(&str, &str)> = table
        .columns()
        .iter()
        .map(|c| (c.name.as_str(), c.dtype.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("id", "<i8"),
            ("x", "<f4"),
            ("v", ">i4"),
            ("tag", "|S5"),
            ("w", "('<f8', (2,))")
        ]
    );
    assert_eq!(table.nrows().await.unwrap(), 500);
    let rec = npy("rec.npy");
    // numpy's packed layout of the written dtype: id 0..8, x 8..12, v 12..16, tag 16..21,
    // w 21..37.
    assert_eq!(
        rec.descr,
        "[('id', '<i8'), ('x', '<f4'), ('v', '>i4'), ('tag', '|S5'), ('w', '<f8', (2,))]"
    );
    let member = |r: std::ops::Range<usize>, at: std::ops::Range<usize>| -> Vec<u8> {
        rec.data
            .chunks_exact(37)
            .skip(r.start)
            .take(r.len())
            .flat_map(|e| e[at.clone()].to_vec())
            .collect()
    };
    // Every column of every row: the structured .npy equals the written records.
    let all = table
        .read_rows(0, 500, None, &ReadOptions::default())
        .await
        .unwrap();
    let back = read_npy(&all.to_npy().unwrap()).unwrap();
    assert_eq!(back.descr, rec.descr);
    assert_eq!(back.shape, vec![500]);
    assert_eq!(back.data, rec.data);
    // Two members over rows spanning chunks (64 rows each).
    let got = table
        .read_rows(
            100,
            170,
            Some(&["v".to_string(), "w".to_string()]),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(got.nrows, 70);
    assert_eq!(got.columns[0].0, "v");
    assert_eq!(got.columns[0].1.dtype.to_string(), ">i4");
    assert_eq!(got.columns[0].1.data, member(100..170, 12..16));
    assert_eq!(got.columns[1].1.shape, vec![70, 2]);
    assert_eq!(got.columns[1].1.data, member(100..170, 21..37));
    server.shutdown().await;
}

#[tokio::test]
async fn groups_of_arrays_are_tables() {
    let server = server().await;
    let h5 = store(&server, "tables.h5").await;
    let table = h5.table("cols").await.unwrap();
    let names: Vec<&str> = table.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(table.nrows().await.unwrap(), 500);
    let got = table
        .read_rows(250, 480, None, &ReadOptions::default())
        .await
        .unwrap();
    for (name, data) in &got.columns {
        assert_eq!(
            data.data,
            rows(&npy(&format!("cols_{name}.npy")), 250, 480),
            "{name}"
        );
    }
    // Rows 0..100 read only the first chunk (100 rows) of each column asked for: without a
    // whole-file copy and a payload cache, fewer bytes than reading all 500 rows.
    let coordinator = CacheCoordinator::new(CachePolicy::None, 0).unwrap();
    let options = OpenOptions {
        small_source_bytes: 0,
        cache: CachePolicy::None,
        ..Default::default()
    };
    let h5 = chunkwise::open::open_store(&server.url("tables.h5"), vec![], options, coordinator)
        .await
        .unwrap();
    let table = h5.table("/cols").await.unwrap();
    let ab = ["a".to_string(), "b".to_string()];
    let mut moved = Vec::new();
    for stop in [100, 500] {
        let sent = server.stats().bytes_sent;
        let got = table
            .read_rows(0, stop, Some(&ab), &ReadOptions::default())
            .await
            .unwrap();
        moved.push(server.stats().bytes_sent - sent);
        assert_eq!(
            got.columns[1].1.data,
            rows(&npy("cols_b.npy"), 0, stop as usize)
        );
    }
    println!(
        "rows 0..100 of a, b: {} bytes; 0..500: {} bytes",
        moved[0], moved[1]
    );
    assert!(moved[0] * 3 < moved[1], "{moved:?}");
    let zarr = store(&server, "cols.zarr").await;
    let table = zarr.table("/").await.unwrap();
    let names: Vec<&str> = table.columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["p", "q"]);
    let got = table
        .read_rows(
            60,
            200,
            Some(&["q".to_string(), "p".to_string()]),
            &ReadOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(got.columns[0].0, "q");
    assert_eq!(got.columns[0].1.data, rows(&npy("zarr_q.npy"), 60, 200));
    assert_eq!(got.columns[1].1.data, rows(&npy("zarr_p.npy"), 60, 200));
    server.shutdown().await;
}

#[tokio::test]
async fn table_errors_are_typed() {
    let server = server().await;
    let table = ctable(&server, &OpenOptions::default()).await;
    let read = |cols: &[&str]| {
        let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
        let table = &table;
        async move {
            table
                .read_rows(0, 10, Some(&cols), &ReadOptions::default())
                .await
                .unwrap_err()
        }
    };
    let e = read(&["id", "nope"]).await;
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(
        e.message().contains("\"nope\"") && e.message().contains("id, x, tag, name"),
        "{e}"
    );
    let e = read(&["x", "x"]).await;
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(e.message().contains("twice"), "{e}");
    // The <U6 column (numpy unicode) is readable (a refused column's error is checked on a
    // .b2z CTable's vlstring column, tests/b2z.rs).
    let name = &table.columns()[3];
    assert!(name.error.is_none(), "{name:?}");

    let h5 = store(&server, "tables.h5").await;
    let e = h5.table("/uneven").await.unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA", "{e}");
    assert!(
        e.message()
            .contains("arrays of different lengths: a has 500, b 400"),
        "{e}"
    );
    for (path, code, says) in [
        ("/grid", "INVALID_ARGUMENT", "shape [10, 10]"),
        (
            "/empty",
            "INVALID_ARGUMENT",
            "a group without readable arrays",
        ),
        ("/cols/a", "INVALID_ARGUMENT", "dtype <i8"),
        ("/nothing", "NOT_FOUND", "/nothing"),
    ] {
        let e = h5.table(path).await.unwrap_err();
        assert_eq!(e.code(), code, "{path}: {e}");
        assert!(e.message().contains(says), "{path}: {e}");
    }
    // Columns that are not 1-D, and a mask that is not a |b1 array of their length.
    let grid = h5.get("/grid").await.unwrap();
    let e = RemoteTable::from_columns(vec![("g".into(), grid)], vec![], None).unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA");
    assert!(e.message().contains("not 1-D"), "{e}");
    let (a, b) = (
        h5.get("/cols/a").await.unwrap(),
        h5.get("/cols/b").await.unwrap(),
    );
    let e = RemoteTable::from_columns(vec![("a".into(), a)], vec![], Some(b)).unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA");
    assert!(e.message().contains("not |b1"), "{e}");
    let e = RemoteTable::from_records(h5.get("/cols/a").await.unwrap()).unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA");
    server.shutdown().await;
}

fn chunkwise(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
        .args(args)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_reads_columns_into_a_structured_npy() {
    let server = server().await;
    let url = server.url("tables.h5");
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("rows.npy");
    let o = chunkwise(&[
        "read",
        &url,
        "--path",
        "/run/table",
        "--columns",
        "tag,id",
        "--select",
        "10:20",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(line["shape"], serde_json::json!([10]));
    assert_eq!(line["dtype"], "[('tag', '|S5'), ('id', '<i8')]");
    let got = read_npy(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(got.descr, "[('tag', '|S5'), ('id', '<i8')]");
    assert_eq!(got.shape, vec![10]);
    let rec = npy("rec.npy");
    let want: Vec<u8> = rec
        .data
        .chunks_exact(37)
        .skip(10)
        .take(10)
        .flat_map(|e| [&e[16..21], &e[0..8]].concat())
        .collect();
    assert_eq!(got.data, want);
    // Negative bounds count live rows from the end; --print shows numpy's structured print.
    let o = chunkwise(&[
        "read",
        &url,
        "--path",
        "/cols",
        "--columns",
        "a,c",
        "--select",
        "-2:",
        "--print",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "[(-996, b'c13') (-998, b'c14')]"
    );
    // Other selections, an HDF5 file without --path, an unknown column.
    for (args, code) in [
        (
            vec!["--path", "/cols", "--columns", "a", "--select", "::2"],
            "INVALID_ARGUMENT",
        ),
        (
            vec!["--path", "/cols", "--columns", "a", "--select", "3"],
            "INVALID_ARGUMENT",
        ),
        (vec!["--columns", "a"], "INVALID_ARGUMENT"),
        (
            vec!["--path", "/cols", "--columns", "a,zz"],
            "INVALID_ARGUMENT",
        ),
        (vec!["--path", "/uneven", "--columns", "a"], "INVALID_DATA"),
        (
            vec!["--path", "/cols", "--columns", "a", "--mutable"],
            "INVALID_ARGUMENT",
        ),
    ] {
        let mut all = vec!["read", url.as_str()];
        all.extend(&args);
        let o = chunkwise(&all);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(code), "{args:?}: {err}");
    }
    server.shutdown().await;
}

/// `read --columns` on a python-blosc2 CTable saved as `.b2z` (tests/fixtures/b2z/table.b2z,
/// gen_b2z.py: 1,099 physical rows, 1,045 live): without --path the table is the archive's
/// root; --select counts live rows; values equal the live rows written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_reads_a_b2z_ctable_at_the_root() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let server = common::serve_dir(root.clone()).await;
    let url = server.url("b2z/table.b2z");
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("rows.npy");
    let o = chunkwise(&[
        "read",
        &url,
        "--columns",
        "id,f64,raw,flag",
        "--select",
        "100:-5",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = read_npy(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(
        got.descr,
        "[('id', '<i8'), ('f64', '<f8'), ('raw', '|S4'), ('flag', '|b1')]"
    );
    assert_eq!(got.shape, vec![1040 - 100]);
    let cols: Vec<Npy> = ["id", "f64", "raw", "flag"]
        .iter()
        .map(|c| {
            read_npy(&std::fs::read(root.join(format!("b2z/table/{c}.npy"))).unwrap()).unwrap()
        })
        .collect();
    assert!(cols.iter().all(|c| c.shape == vec![1045]));
    let want: Vec<u8> = (100..1040)
        .flat_map(|r| {
            cols.iter()
                .flat_map(|c| rows(c, r, r + 1))
                .collect::<Vec<u8>>()
        })
        .collect();
    assert_eq!(got.data, want);
    // The vlstring column is listed but refused with its reason.
    let o = chunkwise(&["read", &url, "--columns", "id,note"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("UNSUPPORTED") && err.contains(".b2b"), "{err}");
    server.shutdown().await;
}

/// The columns of a read are fetched concurrently: three columns' chunks are one round trip
/// (requests in flight together), not three, over a server with 30 ms of latency.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn columns_are_read_concurrently() {
    let server = native_harness::serve::spawn(native_harness::serve::ServeOptions {
        root: fixtures().to_path_buf(),
        port: 0,
        quiet: true,
        latency_ms: 30,
        ..Default::default()
    })
    .await
    .unwrap();
    let options = OpenOptions {
        small_source_bytes: 0,
        cache: CachePolicy::None,
        ..Default::default()
    };
    let coordinator = CacheCoordinator::new(CachePolicy::None, 0).unwrap();
    let h5 = chunkwise::open::open_store(&server.url("tables.h5"), vec![], options, coordinator)
        .await
        .unwrap();
    let table = h5.table("/cols").await.unwrap();
    // First read: also each column's chunk index.
    table
        .read_rows(0, 1, None, &ReadOptions::default())
        .await
        .unwrap();
    let before = h5.traffic();
    let last = std::sync::Mutex::new(None);
    let record = |p: chunkwise::array::Progress| *last.lock().unwrap() = Some((p.done, p.total));
    let progress = ReadOptions {
        progress: Some(&record),
        cancel: None,
        ..Default::default()
    };
    let got = table.read_rows(150, 250, None, &progress).await.unwrap();
    let t = h5.traffic().since(before);
    // One progress for the read: chunks of all columns together (2 of each of 3 columns).
    assert_eq!(*last.lock().unwrap(), Some((6, 6)));
    println!(
        "3 columns, rows 150..250: {} requests in {} round trips",
        t.requests, t.round_trips
    );
    // Rows 150..250 are chunks 1 and 2 of each column (100 rows a chunk).
    assert!(t.requests >= 3, "{t:?}");
    assert_eq!(t.round_trips, 1, "{t:?}");
    assert_eq!(got.columns[2].1.data, rows(&npy("cols_c.npy"), 150, 250));
    server.shutdown().await;
}

/// The committed HDF5 table file of gen_b2z.py (tests/fixtures/b2z/tables.h5, described by
/// tables.json): each table's columns, dtypes and row count as listed, every column's values
/// equal to the `.npy` written next to it, and `/uneven` refused naming both lengths.
#[tokio::test]
async fn committed_tables_h5_matches_its_manifest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/b2z");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("tables.json")).unwrap()).unwrap();
    let server = common::serve_dir(root.clone()).await;
    let h5 = store(&server, "tables.h5").await;
    let tables = manifest["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2);
    for t in tables {
        let path = t["path"].as_str().unwrap();
        let table = h5.table(path).await.unwrap();
        let want: Vec<(String, String)> = t["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["dtype"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let got: Vec<(String, String)> = table
            .columns()
            .iter()
            .map(|c| (c.name.clone(), c.dtype.clone()))
            .collect();
        assert_eq!(got, want, "{path}");
        let nrows = t["nrows"].as_u64().unwrap();
        assert_eq!(table.nrows().await.unwrap(), nrows, "{path}");
        let rows_read = table
            .read_rows(0, nrows, None, &ReadOptions::default())
            .await
            .unwrap();
        for (name, data) in &rows_read.columns {
            // A compound's members are `tables/run/table.<member>.npy`, a group's arrays
            // `tables/cols/<name>.npy`.
            let file = match t["kind"].as_str().unwrap() {
                "compound" => format!("tables{path}.{name}.npy"),
                _ => format!("tables{path}/{name}.npy"),
            };
            let expected = read_npy(&std::fs::read(root.join(&file)).unwrap()).unwrap();
            assert_eq!(data.data, expected.data, "{file}");
            assert_eq!(data.shape, expected.shape, "{file}");
        }
    }
    let refused = &manifest["refused"][0];
    let e = h5
        .table(refused["path"].as_str().unwrap())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_DATA");
    let (p, q) = (
        refused["lengths"]["p"].as_u64().unwrap(),
        refused["lengths"]["q"].as_u64().unwrap(),
    );
    assert!(
        e.message()
            .contains(&format!("arrays of different lengths: p has {p}, q {q}")),
        "{e}"
    );
    server.shutdown().await;
}

/// A table file rewritten at its URL between two `read --columns --cache disk` runs: the
/// second run's first chunk fetch sees the new version (SOURCE_CHANGED), and as `read` of an
/// array it restarts once, afresh, giving exactly the new values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_table_read_restarts_once_on_a_rewritten_source() {
    let dir = tempfile::tempdir().unwrap();
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gen_tables.py");
    let publish = |version: u64| {
        let status = std::process::Command::new(native_harness::venv_python())
            .arg(&generator)
            .args(["--big", &version.to_string()])
            .arg(dir.path())
            .status()
            .expect("the Python venv runs the fixture generator");
        assert!(status.success(), "gen_tables.py --big {version} failed");
        // Distinct modification times, so the server's validators differ.
        let t = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs(1_700_000_000 + version);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join("big.h5"))
            .unwrap()
            .set_modified(t)
            .unwrap();
    };
    publish(1);
    assert!(std::fs::metadata(dir.path().join("big.h5")).unwrap().len() > 8 << 20);
    let server = common::serve_dir(dir.path().to_path_buf()).await;
    let url = server.url("big.h5");
    let cache = dir.path().join("cache");
    let out = dir.path().join("rows.npy");
    let run = |select: &str| {
        chunkwise(&[
            "read",
            &url,
            "--path",
            "/t",
            "--columns",
            "id",
            "--select",
            select,
            "--cache",
            "disk",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let want = |version: u64, start: usize, stop: usize| {
        let n =
            read_npy(&std::fs::read(dir.path().join(format!("big_v{version}_id.npy"))).unwrap())
                .unwrap();
        rows(&n, start, stop)
    };
    // Run 1 caches the listing, the chunk index and chunk 0 of version 1.
    let o = run("0:1000");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        read_npy(&std::fs::read(&out).unwrap()).unwrap().data,
        want(1, 0, 1000)
    );
    // Version 2, same size and layout: chunk 0 is cached, chunk 1 is fetched and shows the
    // new version.
    publish(2);
    let o = run("60000:70000");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        read_npy(&std::fs::read(&out).unwrap()).unwrap().data,
        want(2, 60000, 70000),
        "exactly version 2, no cached row of version 1"
    );
    server.shutdown().await;
}
