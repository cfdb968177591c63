//! Listing HDF5 hierarchies over the real range server on loopback: every node of a file
//! written by h5py with a virtual dataset, external storage, an external link, soft links
//! (one dangling) and a dense group of 100 datasets is listed as the generator recorded it;
//! each depth of the hierarchy costs a bounded number of rounds, not one per child; nodes
//! that cannot be read give `Unsupported` naming the node and the feature when opened;
//! opening one dataset reads none of its siblings' headers.

use chunkwise::array::{OpenOptions, ReadOptions};
use chunkwise::formats::hdf5::{list, Hdf5Source};
use chunkwise::formats::{FormatError, Node, NodeKind};
use chunkwise::io::http::HttpSource;
use chunkwise::io::{ByteRange, Counted, RangeSource, Traffic};
use chunkwise::npy::read_npy;
use chunkwise::selection::Selection;
use native_harness::serve::{spawn, ServeOptions};
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5_index")
}

fn hdf5_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/hdf5")
}

fn manifest() -> Vec<serde_json::Value> {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    m["nodes"].as_array().unwrap().clone()
}

fn check(nodes: &[Node]) {
    let want = manifest();
    assert_eq!(nodes.len(), want.len(), "{nodes:#?}");
    for (n, w) in nodes.iter().zip(&want) {
        assert_eq!(n.path, w["path"].as_str().unwrap());
        let kind = match w["kind"].as_str().unwrap() {
            "group" => NodeKind::Group,
            "link" => NodeKind::Link,
            _ => NodeKind::Array,
        };
        assert_eq!(n.kind, kind, "{}", n.path);
        let shape: Option<Vec<u64>> = w["shape"]
            .as_array()
            .map(|s| s.iter().map(|x| x.as_u64().unwrap()).collect());
        if w["error"].is_null() || shape.is_some() {
            assert_eq!(n.shape, shape, "{}", n.path);
            assert_eq!(n.dtype.as_deref(), w["dtype"].as_str(), "{}", n.path);
        }
        match w["error"].as_str() {
            Some(e) => assert!(
                n.error.as_deref().is_some_and(|m| m.contains(e)),
                "{}: {:?} should mention {e}",
                n.path,
                n.error
            ),
            None => assert_eq!(n.error, None, "{}", n.path),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hierarchy_lists_with_unsupported_nodes() {
    let server = spawn(ServeOptions {
        root: dir(),
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
    let url = server.url("links.h5");
    let len = std::fs::metadata(dir().join("links.h5")).unwrap().len();

    // Whole file in hand: no request at all.
    let whole = std::fs::read(dir().join("links.h5")).unwrap();
    let traffic = Traffic::new();
    let src = Counted::new(HttpSource::new(url.clone()).unwrap(), traffic.clone());
    let nodes = list(&src, whole.into(), len).await.unwrap();
    check(&nodes);
    assert_eq!(traffic.snapshot().requests, 0);

    // From a 4 KiB head with 4 KiB readahead: rounds per depth, not per child (the dense
    // group /many has 100 children whose headers are 1 KiB of data apart).
    let traffic = Traffic::new();
    let src = Counted::new(HttpSource::new(url.clone()).unwrap(), traffic.clone());
    let head = src.read(ByteRange::bounded(0..4096)).await.unwrap();
    let mut h = Hdf5Source::new(&src, head.bytes, len).with_readahead(4096);
    let nodes = h.list().await.unwrap();
    check(&nodes);
    let t = traffic.snapshot();
    println!(
        "list links.h5 from a 4 KiB head: {} rounds, {t:?}",
        h.rounds()
    );
    assert!(h.rounds() <= 10, "{} rounds", h.rounds());
    assert_eq!(t.round_trips, 1 + h.rounds() as u64, "{t:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_nodes_are_named_and_datasets_read() {
    let server = spawn(ServeOptions {
        root: dir(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("links.h5");
    let with = |p: &str| OpenOptions {
        path: Some(p.to_string()),
        ..Default::default()
    };
    for (path, feature) in [
        ("/vds", "virtual dataset"),
        ("/ext", "external storage"),
        ("/extlink", "external link"),
        ("/dangling", "dangling soft link"),
    ] {
        let err = open_array(&url, vec![], with(path)).await.unwrap_err();
        match &err {
            chunkwise::Error::Format(FormatError::Unsupported { detail, .. }) => {
                assert!(detail.contains(path), "{path}: {detail}");
                assert!(detail.contains(feature), "{path}: {detail}");
            }
            other => panic!("{path}: expected Unsupported, got {other:?}"),
        }
    }
    for (path, npy) in [
        ("/data", "links_data.npy"),
        ("/soft", "links_data.npy"),
        ("/grp/inner", "links_grp_inner.npy"),
    ] {
        let want = read_npy(&std::fs::read(dir().join(npy)).unwrap()).unwrap();
        let arr = open_array(&url, vec![], with(path)).await.unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(got.shape, want.shape, "{path}");
        assert!(
            got.data == want.data,
            "{path} differs from the array written"
        );
    }
    server.shutdown().await;
}

/// Opening /many/d050 from a small head reads the links of / and /many and that dataset's
/// header, never the other 99 headers: far fewer bytes than listing /many does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selecting_a_dataset_skips_its_siblings() {
    let server = spawn(ServeOptions {
        root: dir(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("links.h5");
    let len = std::fs::metadata(dir().join("links.h5")).unwrap().len();
    let run = |list_all: bool| {
        let url = url.clone();
        async move {
            let traffic = Traffic::new();
            let src = Counted::new(HttpSource::new(url).unwrap(), traffic.clone());
            let head = src.read(ByteRange::bounded(0..2048)).await.unwrap();
            let mut h = Hdf5Source::new(&src, head.bytes, len).with_readahead(2048);
            if list_all {
                h.list().await.unwrap();
            } else {
                let m = h.dataset("/many/d050").await.unwrap();
                assert_eq!(m.shape, vec![256]);
            }
            traffic.snapshot()
        }
    };
    let one = run(false).await;
    let all = run(true).await;
    println!("open /many/d050: {one:?}; list everything: {all:?}");
    // The listing reads the 99 sibling headers too (about 61 KB more here).
    assert!(one.bytes * 3 < all.bytes, "{one:?} vs {all:?}");
    assert!(one.bytes < 40 * 1024, "{one:?}");
    server.shutdown().await;
}

/// `members` of one group: the 100 children of the dense group /many from a 2 KiB head in
/// about ten rounds (their headers fetched as one batch, not one round each); the root's soft link
/// counts as its target's kind, the dangling soft link and the external link are left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_in_a_few_rounds() {
    use chunkwise::formats::hdf5::discover::MemberKind;
    let server = spawn(ServeOptions {
        root: dir(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let src = HttpSource::new(server.url("links.h5")).unwrap();
    let head = src.read(ByteRange::bounded(0..2048)).await.unwrap();
    let mut h = Hdf5Source::new(&src, head.bytes, head.info.len).with_readahead(2048);
    let many = h.members("/many").await.unwrap();
    let names: Vec<String> = many.iter().map(|m| m.name.clone()).collect();
    let want: Vec<String> = (0..100).map(|i| format!("d{i:03}")).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, want);
    assert!(many.iter().all(|m| m.kind == MemberKind::Dataset));
    println!("members of /many from a 2 KiB head: {} rounds", h.rounds());
    // Resolving /many and reading its dense link storage (fractal heap, B-tree) take most
    // of these; the 100 headers come in one or two.
    assert!(h.rounds() <= 12, "{} rounds for 100 children", h.rounds());
    let mut root: Vec<(String, MemberKind)> = h
        .members("/")
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.name, m.kind))
        .collect();
    root.sort_by(|a, b| a.0.cmp(&b.0));
    let d = MemberKind::Dataset;
    let g = MemberKind::Group;
    assert_eq!(
        root,
        [
            ("data", d),
            ("ext", d),
            ("grp", g),
            ("many", g),
            ("soft", d),
            ("vds", d)
        ]
        .map(|(n, k)| (n.to_string(), k))
    );
    server.shutdown().await;
}

/// The listing agrees with the read, on a file the venv's h5py writes here: a scalar is listed
/// and read with shape `[]`; a null dataspace (h5py `Empty`) is listed without a shape and with
/// the reason its open gives; variable-length strings are listed as `|S` (unsized), as `info`
/// shows them, and read as `|S{longest}`; a soft link to a soft link lists what it reaches;
/// external and dangling links are of kind `link` with the reason their open gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_agrees_with_the_read() {
    let home = std::env::var("HOME").unwrap_or_default();
    let venv = std::env::var("CHUNKWISE_VENV").unwrap_or(format!("{home}/.cache/chunkwise/venv"));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("agree.h5");
    let status = std::process::Command::new(format!("{venv}/bin/python"))
        .arg("-c")
        .arg(
            "import sys, h5py, numpy as np\n\
             with h5py.File(sys.argv[1], 'w') as f:\n\
             \x20   f.create_dataset('empty', data=h5py.Empty('<f4'))\n\
             \x20   f['scalar'] = np.float64(3.5)\n\
             \x20   f.create_dataset('vlen', data=['a', 'bcd', 'ef'], dtype=h5py.string_dtype('utf-8'))\n\
             \x20   f['soft1'] = h5py.SoftLink('/scalar')\n\
             \x20   f['chain'] = h5py.SoftLink('/soft1')\n\
             \x20   f['ext'] = h5py.ExternalLink('nowhere.h5', '/x')\n\
             \x20   f['dangling'] = h5py.SoftLink('/missing')\n",
        )
        .arg(&file)
        .status()
        .expect("the venv python runs (scripts/setup.sh)");
    assert!(status.success());
    let server = spawn(ServeOptions {
        root: tmp.path().to_path_buf(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("agree.h5");
    let len = std::fs::metadata(&file).unwrap().len();
    let src = HttpSource::new(url.clone()).unwrap();
    let head = src.read(ByteRange::bounded(0..len)).await.unwrap().bytes;
    let nodes = list(&src, head, len).await.unwrap();
    let node = |p: &str| nodes.iter().find(|n| n.path == p).unwrap().clone();
    let with = |p: &str| OpenOptions {
        path: Some(p.to_string()),
        ..Default::default()
    };

    let empty = node("/empty");
    assert_eq!(
        (empty.kind, empty.shape.clone(), empty.dtype.as_deref()),
        (NodeKind::Array, None, Some("<f4"))
    );
    for (path, kind, reason) in [
        ("/empty", NodeKind::Array, "null dataspace"),
        ("/ext", NodeKind::Link, "external link to nowhere.h5:/x"),
        ("/dangling", NodeKind::Link, "dangling soft link: /missing"),
    ] {
        let n = node(path);
        assert_eq!(n.kind, kind, "{path}");
        let listed = n.error.unwrap_or_else(|| panic!("{path}: no error listed"));
        assert!(listed.contains(reason), "{path}: {listed}");
        match open_array(&url, vec![], with(path)).await {
            Err(chunkwise::Error::Format(FormatError::Unsupported { detail, .. })) => {
                assert!(detail.contains(&listed), "{path}: {detail} vs {listed}")
            }
            other => panic!("{path}: expected Unsupported, got {other:?}"),
        }
    }
    // Every readable array: the listed shape is the read's, the listed dtype is `info`'s and,
    // but for variable-length strings, the read's.
    let mut read = Vec::new();
    for n in nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Array && n.error.is_none())
    {
        let arr = open_array(&url, vec![], with(&n.path)).await.unwrap();
        let got = arr
            .read(&Selection::all(), &ReadOptions::default())
            .await
            .unwrap();
        assert_eq!(n.shape.as_deref(), Some(&got.shape[..]), "{}", n.path);
        assert_eq!(
            n.dtype.as_deref(),
            Some(&arr.info().dtype[..]),
            "{}",
            n.path
        );
        let dtype = got.dtype.to_string();
        read.push((n.path.clone(), got.shape.clone(), dtype.clone(), got.data));
        if n.dtype.as_deref() != Some("|S") {
            assert_eq!(n.dtype.as_deref(), Some(&dtype[..]), "{}", n.path);
        }
    }
    let find = |p: &str| read.iter().find(|r| r.0 == p).unwrap().clone();
    for p in ["/scalar", "/soft1", "/chain"] {
        let (_, shape, dtype, data) = find(p);
        assert_eq!(
            (shape, dtype, data),
            (vec![], "<f8".to_string(), 3.5f64.to_le_bytes().to_vec()),
            "{p}"
        );
    }
    let (_, shape, dtype, data) = find("/vlen");
    assert_eq!(node("/vlen").dtype.as_deref(), Some("|S"));
    assert_eq!((shape, dtype), (vec![3], "|S3".to_string()));
    assert_eq!(data, b"a\0\0bcdef\0".to_vec());
    server.shutdown().await;
}

/// Soft links through another soft link, and values naming `..` (a link name to HDF5, not the
/// parent group), listed as h5py reads them (`gen_hdf5_soft_links.py`): an array where h5py
/// reads the values written, a dangling link where h5py finds nothing, and opening agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soft_links_list_and_open_as_h5py_resolves_them() {
    let server = spawn(ServeOptions {
        root: hdf5_dir(),
        port: 0,
        quiet: true,
        ..Default::default()
    })
    .await
    .unwrap();
    let url = server.url("soft_links.h5");
    let bytes = std::fs::read(hdf5_dir().join("soft_links.h5")).unwrap();
    let len = bytes.len() as u64;
    let src = HttpSource::new(url.clone()).unwrap();
    let nodes = list(&src, bytes.into(), len).await.unwrap();
    let want: serde_json::Value =
        serde_json::from_slice(&std::fs::read(hdf5_dir().join("soft_links.json")).unwrap())
            .unwrap();
    for (path, v) in want.as_object().unwrap() {
        let node = nodes.iter().find(|n| &n.path == path).expect(path);
        let opened = open_array(
            &url,
            vec![],
            OpenOptions {
                path: Some(path.clone()),
                ..Default::default()
            },
        )
        .await;
        if v == "dangling" {
            assert_eq!(node.kind, NodeKind::Link, "{path}: {node:?}");
            assert!(
                node.error.as_deref().unwrap_or("").contains("dangling"),
                "{path}"
            );
            assert!(opened.is_err(), "{path}: opened");
        } else {
            assert_eq!(node.kind, NodeKind::Array, "{path}: {node:?}");
            let got = opened
                .unwrap_or_else(|e| panic!("{path}: {e}"))
                .read(&Selection::all(), &ReadOptions::default())
                .await
                .unwrap();
            let want: Vec<u8> = v
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|x| (x.as_i64().unwrap() as i32).to_le_bytes())
                .collect();
            assert_eq!(got.data, want, "{path}");
        }
    }
    server.shutdown().await;
}
