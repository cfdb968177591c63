//! Helpers shared by the harness's integration tests.
// Each test binary uses part of these helpers.
#![allow(dead_code)]

use chunkwise::selection::DimSelection;

pub mod caterva2;

/// Elements of `data` (C order, `shape`) picked by `dims`, computed directly per element.
pub fn reference(data: &[u8], shape: &[u64], itemsize: usize, dims: &[DimSelection]) -> Vec<u8> {
    let total: u64 = dims.iter().map(|d| d.count).product();
    let mut out = Vec::with_capacity(total as usize * itemsize);
    let mut ks = vec![0u64; dims.len()];
    for mut lin in 0..total {
        for d in (0..dims.len()).rev() {
            ks[d] = lin % dims[d].count;
            lin /= dims[d].count;
        }
        let mut g = 0u64;
        for d in 0..dims.len() {
            g = g * shape[d] + dims[d].position(ks[d]);
        }
        let g = g as usize * itemsize;
        out.extend_from_slice(&data[g..g + itemsize]);
    }
    out
}

/// Reads each of `selections` (numpy syntax) that applies to `shape` from `arr` and checks it
/// against the same elements of `data` (the array written, C order, `itemsize` bytes an
/// element, computed by [`reference`]); panics naming `what` and the selection when a read
/// fails or differs.
pub async fn check_selections<'s>(
    arr: &chunkwise::array::RemoteArray,
    data: &[u8],
    shape: &[u64],
    itemsize: usize,
    selections: impl IntoIterator<Item = &'s &'static str>,
    what: &str,
) {
    use chunkwise::array::ReadOptions;
    use chunkwise::selection::Selection;
    for s in selections {
        let sel = Selection::parse(s).unwrap();
        let Ok(dims) = sel.resolve(shape) else {
            continue;
        };
        let got = arr
            .read(&sel, &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what} [{s}]: {e}"));
        assert!(
            got.data == reference(data, shape, itemsize, &dims),
            "{what} [{s}] differs"
        );
    }
}

/// Selections every format's read tests run (numpy syntax), chosen to cover integers,
/// negative and stepped slices, ellipsis, and edge chunks.
pub const SELECTIONS: &[&str] = &[
    "0",
    "-1",
    "..., 0",
    "::2",
    "::-1",
    "1:-1:3",
    "..., ::-2",
    "2:3, ...",
    "1, 2:7",
    "..., 1:4, ::3",
];

/// A loopback range server over `root` with test faults, given as `chunkwise serve --fault`
/// specs (`"never-answer"`, `"trickle-ms=200"`, `"etag-per-request"`, `"redirect-loop"`,
/// `"redirect-endless"`, `"status=SUFFIX:CODE"`); `ignore_range` as `--ignore-range`.
pub async fn fault_server(
    root: &std::path::Path,
    faults: &[&str],
    ignore_range: bool,
) -> native_harness::serve::ServerHandle {
    native_harness::serve::spawn(native_harness::serve::ServeOptions {
        root: root.to_path_buf(),
        quiet: true,
        ignore_range,
        faults: faults
            .iter()
            .map(|f| f.parse().unwrap_or_else(|e| panic!("{e}")))
            .collect(),
        ..Default::default()
    })
    .await
    .expect("server starts")
}

/// A directory of this test process for files written at test time, named `PREFIX<pid>` in
/// the temporary directory. Such directories are kept in statics, which are never dropped, so
/// those of earlier runs whose process is gone are removed first.
pub fn process_dir(prefix: &str) -> std::path::PathBuf {
    for e in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some(pid) = name.strip_prefix(prefix) {
            if !std::path::Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("{prefix}{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The versioned fixtures (`tests/fixtures/gen_versions.py`: `.b2nd` frames over 8 MiB and
/// small HDF5 files, each version with the `.npy` of its array), written by the pinned
/// python-blosc2 and h5py once per test binary into a directory of this process.
pub fn versions() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = process_dir("chunkwise-versions-");
        let generator = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/gen_versions.py");
        let status = std::process::Command::new(native_harness::venv_python())
            .arg(generator)
            .arg(&dir)
            .status()
            .expect("the Python venv (scripts/setup.sh python) runs the fixture generator");
        assert!(status.success(), "gen_versions.py failed");
        dir
    })
}

/// Checks an array of shape (2^53, 2^53) in chunks of (5, 4) (the `huge_grid` fixtures of
/// Zarr and HDF5: about 4e30 chunks, more than the u64 the planner numbers chunks with): its
/// info has no chunk count and no byte count (`None`: 2^64 or more; they wrapped or
/// saturated, and overflowed in debug builds), and reading `selection` is refused as
/// UNSUPPORTED naming its chunk grid.
pub async fn assert_uncountable_grid(arr: &chunkwise::array::RemoteArray, selection: &str) {
    assert_eq!(arr.shape(), &[1u64 << 53, 1u64 << 53]);
    let info = arr.info();
    assert_eq!((info.nchunks, info.nbytes), (None, None), "{info:?}");
    let err = arr
        .read(
            &chunkwise::selection::Selection::parse(selection).unwrap(),
            &chunkwise::array::ReadOptions::default(),
        )
        .await
        .expect_err("a read cannot number the chunks");
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("[1801439850948199, 2251799813685248]")
            && message.contains("2^64 chunks or more"),
        "{message}"
    );
}

/// Checks an array of shape (2^40, 2^40, 0) in chunks of (1, 1, 1) (the `empty_beside_huge`
/// Zarr array and the `/e` dataset of `huge_grid.h5`): no element and no chunk, as zarr-python
/// and h5py count them, though its first two axes alone hold 2^80 chunks. Its info says 0
/// chunks and 0 bytes (they said none, as for a grid of 2^64 chunks or more), and reads give
/// empty results of the selected shape.
pub async fn assert_empty_beside_huge(arr: &chunkwise::array::RemoteArray) {
    assert_eq!(arr.shape(), &[1u64 << 40, 1u64 << 40, 0]);
    let info = arr.info();
    assert_eq!((info.nchunks, info.nbytes), (Some(0), Some(0)), "{info:?}");
    for (selection, shape) in [
        ("0:2, 0:3", vec![2, 3, 0]),
        ("...", vec![1u64 << 40, 1u64 << 40, 0]),
    ] {
        let got = arr
            .read(
                &chunkwise::selection::Selection::parse(selection).unwrap(),
                &chunkwise::array::ReadOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{selection}: {e}"));
        assert_eq!(got.shape, shape, "{selection}");
        assert!(got.data.is_empty(), "{selection}");
    }
}

/// Checks `chunkwise info` (the real binary) on such an array at `url` (`args` after it,
/// e.g. `--path /d`): `--json` gives `"nchunks": null` and `"nbytes": null`, the text says
/// "2^64 or more" for both.
pub async fn assert_cli_info_of_uncountable_grid(url: &str, args: &[&str]) {
    let run = |json: bool| {
        let mut a: Vec<String> = vec!["info".into(), url.into()];
        a.extend(args.iter().map(|s| s.to_string()));
        if json {
            a.push("--json".into());
        }
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_chunkwise"))
                .args(&a)
                .output()
                .unwrap()
        })
    };
    let out = run(true).await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["shape"],
        serde_json::json!([1u64 << 53, 1u64 << 53]),
        "{j}"
    );
    assert!(j["nchunks"].is_null() && j["nbytes"].is_null(), "{j}");
    let out = run(false).await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(2^64 or more chunks)")
            && text.contains("bytes:   2^64 or more uncompressed"),
        "{text}"
    );
}

/// A quiet range server (`chunkwise serve`'s code) on 127.0.0.1, a free port, serving `root`.
pub async fn serve_dir(root: std::path::PathBuf) -> native_harness::serve::ServerHandle {
    serve_dir_with_latency(root, 0).await
}

/// [`serve_dir`] with `latency_ms` added before each answer (milliseconds), so that
/// concurrent requests overlap and [`waves`] counts round trips.
pub async fn serve_dir_with_latency(
    root: std::path::PathBuf,
    latency_ms: u64,
) -> native_harness::serve::ServerHandle {
    native_harness::serve::spawn(native_harness::serve::ServeOptions {
        root,
        port: 0,
        quiet: true,
        latency_ms,
        ..Default::default()
    })
    .await
    .expect("server starts")
}

/// Sequential waves in a server's request log (an upper bound of the client's round trips):
/// a request starts a new wave when it arrived after a request of the current wave was
/// answered (it may have waited for that answer); requests that arrived before any of the
/// wave was answered share it. Run the server with added latency so that concurrent
/// requests overlap.
pub fn waves(log: &[native_harness::serve::RequestRecord]) -> usize {
    let mut by_arrival: Vec<_> = log.iter().collect();
    by_arrival.sort_by_key(|r| r.received);
    let mut waves = 0;
    let mut first_answer = None;
    for r in by_arrival {
        match first_answer {
            Some(t) if r.received < t => first_answer = Some(r.answered.min(t)),
            _ => {
                waves += 1;
                first_answer = Some(r.answered);
            }
        }
    }
    waves
}
