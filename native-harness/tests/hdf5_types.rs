//! HDF5 datatypes beyond numbers (fixed-length and variable-length strings, compounds, an
//! array datatype, enums, bools) written by h5py (`tests/fixtures/gen_hdf5_types.py`), read
//! through `RemoteArray` over the loopback range server and compared with the values written
//! (`.npy`, `.json` for variable-length strings); `chunkwise read --out` checked by numpy and
//! h5py themselves; unsupported and corrupt input give typed errors.

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::element::{Element, Value};
use chunkwise::formats::FormatError;
use chunkwise::io::memory::MemorySource;
use chunkwise::io::Traffic;
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod common;
use common::{check_selections, SELECTIONS};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn manifest() -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(fixtures().join("hdf5_types/manifest.json")).expect("manifest"),
    )
    .expect("manifest json")
}

fn with_path(path: &str) -> OpenOptions {
    OpenOptions {
        path: Some(path.to_string()),
        ..Default::default()
    }
}

/// The written strings of a `.json` file, flattened in C order.
fn written_strings(file: &Path) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    fn flat(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Array(a) => a.iter().for_each(|x| flat(x, out)),
            serde_json::Value::String(s) => out.push(s.clone()),
            other => panic!("unexpected {other}"),
        }
    }
    let mut out = Vec::new();
    flat(&v, &mut out);
    out
}

/// A value as JSON: numbers, strings (UTF-8), arrays, objects.
fn json(v: &Value) -> serde_json::Value {
    match v {
        Value::Bool(b) => (*b).into(),
        Value::Int(i) | Value::Int64(i) => (*i).into(),
        Value::UInt(u) | Value::UInt64(u) => (*u).into(),
        Value::Float(f) => (*f).into(),
        Value::Complex(re, im) => vec![*re, *im].into(),
        Value::Bytes(b) => String::from_utf8(b.clone()).unwrap().into(),
        Value::Str(s) => s.clone().into(),
        Value::List(items) => items.iter().map(json).collect::<Vec<_>>().into(),
        Value::Record(fields) => {
            serde_json::Value::Object(fields.iter().map(|(k, v)| (k.clone(), json(v))).collect())
        }
    }
}

/// Splits `|S{n}` result bytes into strings (trailing NULs removed, as numpy does).
fn split_strings(data: &[u8], width: usize) -> Vec<String> {
    data.chunks_exact(width)
        .map(|c| {
            let end = c.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            String::from_utf8(c[..end].to_vec()).unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_type_reads_as_h5py_gives_it() {
    check_every_dataset(&fixtures().join("hdf5_types")).await;
}

/// The same files written by a second HDF5 version at test time: Debian's python3-h5py
/// (HDF5 1.10.8) runs the same generator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_of_libhdf5_1_10_read_too() {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("/usr/bin/python3")
        .arg(fixtures().join("gen_hdf5_types.py"))
        .arg(dir.path())
        .status()
        .expect("Debian's python3-h5py (scripts/setup.sh) runs the fixture generator");
    assert!(
        status.success(),
        "gen_hdf5_types.py under /usr/bin/python3 failed"
    );
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    assert!(m["hdf5"].as_str().unwrap().starts_with("1.10"), "{m}");
    check_every_dataset(dir.path()).await;
}

/// Every dataset of the `manifest.json` in `dir`, served over loopback, read whole and by
/// selections, equals the values written.
async fn check_every_dataset(dir: &Path) {
    let server = spawn(ServeOptions {
        root: dir.to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .expect("server starts");
    let url = server.url("types.h5");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut checked = 0;
    for ds in manifest["datasets"].as_array().unwrap() {
        let path = ds["path"].as_str().unwrap();
        let arr = open_array(&url, vec![], with_path(path))
            .await
            .unwrap_or_else(|e| panic!("{path}: open: {e}"));
        let shape: Vec<u64> = ds["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{path}: read: {e}"));
        if let Some(js) = ds["records"].as_str() {
            // Records holding variable-length strings: h5py gives object members; here each
            // becomes `|S{longest}` and the record is laid out again.
            let want: Vec<serde_json::Value> =
                serde_json::from_slice(&std::fs::read(dir.join(js)).unwrap()).unwrap();
            let e = all.element.as_ref().unwrap();
            let got: Vec<serde_json::Value> = e.values(&all.data).iter().map(json).collect();
            assert_eq!(got, want, "{path}");
            let width = |k: &str| {
                want.iter()
                    .flat_map(|r| match &r[k] {
                        serde_json::Value::Array(a) => a.clone(),
                        v => vec![v.clone()],
                    })
                    .map(|v| v.as_str().unwrap().len())
                    .max()
                    .unwrap()
                    .max(1)
            };
            assert_eq!(
                e.descr(),
                format!(
                    "[('n', '<i4'), ('s', '|S{}'), ('x', '<f8'), ('tags', '|S{}', (2,))]",
                    width("s"),
                    width("tags")
                ),
                "{path}"
            );
            assert_eq!(
                arr.dtype_descr(),
                "[('n', '<i4'), ('s', '|S'), ('x', '<f8'), ('tags', '|S', (2,))]"
            );
            let part = arr
                .read(&Selection::parse("1:4").unwrap(), &ReadOptions::default())
                .await
                .unwrap();
            let got: Vec<serde_json::Value> = part
                .element
                .as_ref()
                .unwrap()
                .values(&part.data)
                .iter()
                .map(json)
                .collect();
            assert_eq!(got, want[1..4], "{path}");
            checked += 1;
            continue;
        }
        // h5py's `|O` for variable-length strings is `|S` (unsized bytes) before a read.
        let listed = ds["dtype"].as_str().unwrap().replace("|O", "|S");
        assert_eq!(arr.dtype_descr(), listed, "{path}");
        assert_eq!(arr.info().dtype, listed, "{path}");
        if let Some(js) = ds["json"].as_str() {
            // Variable-length strings: `|S{longest}` bytes equal to the strings written.
            let want = written_strings(&dir.join(js));
            let width = want.iter().map(|s| s.len()).max().unwrap().max(1);
            assert_eq!(all.dtype.to_string(), format!("|S{width}"), "{path}");
            // A scalar reads with shape `[]`, as h5py gives it.
            assert_eq!(all.shape, shape, "{path}");
            assert_eq!(split_strings(&all.data, width), want, "{path}");
            // Values for hosts: bytes of each string.
            let values = all.element.as_ref().unwrap().values(&all.data);
            assert_eq!(values.len(), want.len());
            assert_eq!(
                values[want.len() - 1],
                Value::Bytes(want[want.len() - 1].clone().into_bytes())
            );
            // A selection resolves only its own strings (and their width).
            let sel = Selection::parse("::-2").unwrap();
            if all.shape.len() == 1 {
                let part = arr.read(&sel, &ReadOptions::default()).await.unwrap();
                let mine: Vec<String> = want.iter().rev().step_by(2).cloned().collect();
                let w = mine.iter().map(|s| s.len()).max().unwrap().max(1);
                assert_eq!(part.dtype.itemsize, w, "{path}");
                assert_eq!(split_strings(&part.data, w), mine, "{path}");
            }
        } else {
            let npy = read_npy(
                &std::fs::read(
                    fixtures()
                        .join("hdf5_types")
                        .join(ds["npy"].as_str().unwrap()),
                )
                .unwrap(),
            )
            .unwrap();
            assert_eq!(npy.descr, ds["dtype"].as_str().unwrap(), "{path}");
            assert_eq!(all.shape, npy.shape, "{path}");
            assert_eq!(arr.shape(), &npy.shape[..], "{path}");
            assert!(
                all.data == npy.data,
                "{path}: differs from the written array"
            );
            let itemsize = all.dtype.itemsize;
            check_selections(&arr, &npy.data, &npy.shape, itemsize, SELECTIONS, &path).await;
        }
        checked += 1;
    }
    assert_eq!(checked, 20);
    server.shutdown().await;
}

/// Record values as hosts see them (the JS `read` builds its objects from these).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_values() {
    let bytes = std::fs::read(fixtures().join("hdf5_types/types.h5")).unwrap();
    let arr = RemoteArray::open_source(
        Arc::new(MemorySource::new("mem://types.h5", bytes)),
        Traffic::new(),
        with_path("/compound_chunked"),
    )
    .await
    .unwrap();
    let got = arr
        .read(&Selection::parse("3").unwrap(), &ReadOptions::default())
        .await
        .unwrap();
    let Some(e @ Element::Record { .. }) = &got.element else {
        panic!("not a record: {:?}", got.element)
    };
    // Row 3 as the generator wrote it.
    let f = |x: f64| Value::Float(x);
    assert_eq!(
        e.values(&got.data),
        vec![Value::Record(vec![
            ("id".into(), Value::Int(0)),
            ("x".into(), f(-1.0 + 2.0 / 9.0 * 3.0)),
            ("name".into(), Value::Bytes(b"n3n3n3".to_vec())),
            ("vec".into(), Value::List(vec![f(2.25), f(2.5), f(2.75)])),
            ("be".into(), Value::Int(-900)),
            (
                "pos".into(),
                Value::Record(vec![("lat".into(), f(4.5)), ("lon".into(), f(-6.75))])
            ),
            ("flag".into(), Value::Bool(true)),
            ("big".into(), Value::UInt64(3 << 61)),
        ])]
    );
}

/// Variable-length strings of a file read by range requests (not held whole): one request for
/// the chunks, one for the first 4 KiB of every referenced global heap collection (coalesced),
/// one more for the rest of a collection over 4 KiB (`/vs_long` holds a 6,000-byte string);
/// none when read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vlen_strings_over_range_requests() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5_types/types.h5");
    for (path, js, requests) in [
        ("/vs_ascii_chunked", "types_vs_ascii_chunked.json", 2),
        ("/vs_utf8_contiguous", "types_vs_utf8_contiguous.json", 2),
        ("/vs_long", "types_vs_long.json", 3),
    ] {
        let arr = open_array(
            &url,
            vec![],
            OpenOptions {
                small_source_bytes: 0,
                ..with_path(path)
            },
        )
        .await
        .unwrap();
        let opened = arr.traffic().requests;
        let all = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        let want = written_strings(&fixtures().join("hdf5_types").join(js));
        assert_eq!(split_strings(&all.data, all.dtype.itemsize), want, "{path}");
        let used = arr.traffic().requests - opened;
        assert_eq!(used, requests, "{path}: requests of the read");
        // Again: chunks and heap collections come from the payload cache.
        let again = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(again, all, "{path}");
        assert_eq!(
            arr.traffic().requests - opened,
            requests,
            "{path}: a repeated read made requests"
        );
    }
    server.shutdown().await;
}

/// Under DISK the global heap collections are kept with the chunks: a second process (a new
/// coordinator on the same directory) reads the variable-length strings with no request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vlen_strings_are_kept_on_disk() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5_types/types.h5");
    let tmp = tempfile::tempdir().unwrap();
    for (path, js) in [
        ("/vs_ascii_chunked", "types_vs_ascii_chunked.json"),
        ("/vs_long", "types_vs_long.json"),
    ] {
        let want = written_strings(&fixtures().join("hdf5_types").join(js));
        for run in ["cold", "warm"] {
            let coordinator =
                chunkwise::cache::CacheCoordinator::disk(tmp.path(), Some(64 << 20)).unwrap();
            let options = OpenOptions {
                small_source_bytes: 0,
                ..with_path(path)
            };
            let arr = native_harness::source::open_array_cached(&url, vec![], options, coordinator)
                .await
                .unwrap();
            let all = arr
                .read(&Selection::all(), &ReadOptions::default())
                .await
                .unwrap();
            assert_eq!(
                split_strings(&all.data, all.dtype.itemsize),
                want,
                "{path} {run}"
            );
            if run == "warm" {
                assert_eq!(
                    arr.traffic().requests,
                    0,
                    "{path}: requests of the warm run"
                );
            }
        }
    }
    server.shutdown().await;
}

/// `chunkwise read --out`: the JSON line prints numpy's dtype (descr for records) and numpy
/// loads the `.npy` equal to what h5py reads (variable-length strings as `S` bytes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_npy_loads_equal_to_h5py() {
    let server = spawn(ServeOptions {
        root: fixtures(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("hdf5_types/types.h5");
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_chunkwise");
    let venv = std::env::var("CHUNKWISE_VENV")
        .unwrap_or_else(|_| format!("{}/.cache/chunkwise/venv", std::env::var("HOME").unwrap()));
    let h5 = fixtures().join("hdf5_types/types.h5");
    let mut checked = 0;
    for ds in manifest()["datasets"].as_array().unwrap() {
        let path = ds["path"].as_str().unwrap().to_string();
        let out = dir
            .path()
            .join(format!("{}.npy", path.trim_start_matches('/')));
        let (u, p, o) = (url.clone(), path.clone(), out.clone());
        let run = tokio::task::spawn_blocking(move || {
            std::process::Command::new(bin)
                .args(["read", &u, "--path", &p, "--out"])
                .arg(&o)
                .output()
        })
        .await
        .unwrap()
        .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let line = String::from_utf8(run.stdout).unwrap();
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        let keys: Vec<&str> = line
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|k| ["shape", "dtype", "requests", "bytes"].contains(k))
            .collect();
        assert_eq!(keys, ["shape", "dtype", "requests", "bytes"], "{line}");
        if ds["json"].is_string() {
            assert!(v["dtype"].as_str().unwrap().starts_with("|S"), "{line}");
        } else if ds["records"].is_string() {
            assert!(
                v["dtype"]
                    .as_str()
                    .unwrap()
                    .starts_with("[('n', '<i4'), ('s', '|S"),
                "{line}"
            );
        } else {
            assert_eq!(v["dtype"], ds["dtype"], "{path}");
        }
        let check = format!(
            "import h5py, numpy as np\n\
             a = np.load({o:?})\n\
             b = h5py.File({h:?}, 'r')[{p:?}][()]\n\
             if isinstance(b, bytes) or (isinstance(b, np.ndarray) and b.dtype == object):\n\
             \x20   b = np.array(b, dtype='S') if np.ndim(b) == 0 else np.array(b.tolist(), dtype='S')\n\
             if b.dtype.names and any(b.dtype[n].hasobject for n in b.dtype.names):\n\
             \x20   # Object (variable-length string) members: compared as S bytes, member by member.\n\
             \x20   assert a.dtype.names == b.dtype.names\n\
             \x20   for n in b.dtype.names:\n\
             \x20       y = np.array(b[n].tolist(), dtype='S') if b.dtype[n].hasobject else b[n]\n\
             \x20       assert a[n].shape == y.shape and (a[n] == y).all(), n\n\
             \x20   raise SystemExit(0)\n\
             assert a.dtype == b.dtype, (a.dtype, b.dtype)\n\
             assert a.shape == b.shape, (a.shape, b.shape)\n\
             assert a.tobytes() == b.tobytes()\n",
            o = out.to_str().unwrap(),
            h = h5.to_str().unwrap(),
            p = path,
        );
        let py = std::process::Command::new(format!("{venv}/bin/python"))
            .args(["-c", &check])
            .output()
            .expect("the Python venv (scripts/setup.sh python)");
        assert!(
            py.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&py.stderr)
        );
        checked += 1;
    }
    assert_eq!(checked, 20);
    server.shutdown().await;
}

/// Datatypes not read here are refused at open with `Unsupported`, naming the type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_types_are_named() {
    let bytes = std::fs::read(fixtures().join("hdf5_types/unsupported.h5")).unwrap();
    for (path, needle) in [
        ("/opaque", "opaque"),
        ("/refs", "reference"),
        ("/vlen_ints", "variable-length sequence"),
    ] {
        let err = RemoteArray::open_source(
            Arc::new(MemorySource::new("mem://unsupported.h5", bytes.clone())),
            Traffic::new(),
            with_path(path),
        )
        .await
        .unwrap_err();
        match &err {
            chunkwise::Error::Format(FormatError::Unsupported { detail, .. }) => {
                assert!(detail.contains(needle), "{path}: {detail}")
            }
            other => panic!("{path}: expected Unsupported, got {other:?}"),
        }
    }
}

/// Corrupt variable-length references (a lying length, a heap address past the end, an
/// index not in the collection) and a corrupt collection are typed errors, never a panic or
/// a read past the collection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_vlen_references_are_errors() {
    use chunkwise::formats::hdf5::discover::Layout;
    use chunkwise::formats::hdf5::Hdf5Array;
    let bytes = std::fs::read(fixtures().join("hdf5_types/types.h5")).unwrap();
    let src = MemorySource::new("mem://types.h5", bytes.clone());
    let h = Hdf5Array::open_source(&src, Some("/vs_utf8_contiguous"), 1 << 20)
        .await
        .unwrap();
    let Layout::Contiguous {
        address: Some(at), ..
    } = h.meta().layout
    else {
        panic!("contiguous expected")
    };
    let at = at as usize;
    // Element 1 is "café" (5 bytes) at `at + 16`: length, address, index.
    let gcol = u64::from_le_bytes(bytes[at + 20..at + 28].try_into().unwrap()) as usize;
    assert_eq!(&bytes[gcol..gcol + 4], b"GCOL");
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, Box<dyn Fn(&mut Vec<u8>)>)> = vec![
        (
            "lying length",
            Box::new(move |b: &mut Vec<u8>| {
                b[at + 16..at + 20].copy_from_slice(&0x7fff_ffffu32.to_le_bytes())
            }),
        ),
        (
            "address past the end",
            Box::new(move |b: &mut Vec<u8>| {
                let len = b.len() as u64;
                b[at + 20..at + 28].copy_from_slice(&(len + 100).to_le_bytes())
            }),
        ),
        (
            "address not a collection",
            Box::new(move |b: &mut Vec<u8>| {
                b[at + 20..at + 28].copy_from_slice(&8u64.to_le_bytes())
            }),
        ),
        (
            "missing object",
            Box::new(move |b: &mut Vec<u8>| {
                b[at + 28..at + 32].copy_from_slice(&60000u32.to_le_bytes())
            }),
        ),
        (
            "collection size past the end",
            Box::new(move |b: &mut Vec<u8>| {
                b[gcol + 8..gcol + 16].copy_from_slice(&u64::MAX.to_le_bytes())
            }),
        ),
    ];
    for (what, damage) in cases {
        let mut b = bytes.clone();
        damage(&mut b);
        let arr = RemoteArray::open_source(
            Arc::new(MemorySource::new("mem://bad.h5", b)),
            Traffic::new(),
            with_path("/vs_utf8_contiguous"),
        )
        .await
        .unwrap();
        let err = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err, chunkwise::Error::Format(FormatError::Invalid { .. })),
            "{what}: {err:?}"
        );
    }
}
