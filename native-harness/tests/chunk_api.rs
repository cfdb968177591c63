//! The chunk-level API of `RemoteArray` over the real range server on loopback, on fixtures
//! written by python-blosc2, h5py and zarr-python: `read_chunk` gives every chunk of the grid
//! decoded in the full chunk shape (edge chunks too, as zarrita's `getChunk`), whose part
//! inside the array equals the `.npy` written; `chunk_bytes` gives the stored bytes exactly as
//! the file holds them (a Blosc2 chunk of the frame, an HDF5 chunk at the address h5py
//! reported, a Zarr chunk object or an inner chunk inside its shard), `None` for chunks not
//! stored; coordinates outside the grid are `INVALID_ARGUMENT`.

use chunkwise::array::{OpenOptions, ReadOptions, RemoteArray};
use chunkwise::npy::read_npy;
use chunkwise::selection::DimSelection;
use native_harness::source::open_array;
use std::path::{Path, PathBuf};

mod common;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

fn json(path: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixtures().join(path)).unwrap()).unwrap()
}

/// Every chunk coordinate of a grid with `counts` chunks per dimension, in C order.
fn all_coords(counts: &[u64]) -> Vec<Vec<u64>> {
    let mut out = vec![vec![]];
    for &n in counts {
        out = out
            .into_iter()
            .flat_map(|c| {
                (0..n).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// What one array's chunks were checked for.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    chunks: usize,
    edge: usize,
    stored: usize,
    not_stored: usize,
}

/// Checks every chunk of `arr` against `npy` (the array written): `read_chunk` has the full
/// chunk shape and the written values inside the array; `chunk_bytes` is `None` exactly for
/// the chunks `stored(coords)` says are not stored (`None`: not known here), and otherwise
/// passes `check(coords, bytes)`.
async fn check_chunks(
    what: &str,
    arr: &RemoteArray,
    npy_file: &Path,
    stored: &dyn Fn(&[u64]) -> Option<bool>,
    check: &dyn Fn(&[u64], &[u8]),
) -> Seen {
    let npy = read_npy(&std::fs::read(npy_file).unwrap()).unwrap();
    let itemsize = arr.dtype().itemsize;
    let chunks = arr.chunks().to_vec();
    let counts: Vec<u64> = arr
        .shape()
        .iter()
        .zip(&chunks)
        .map(|(s, c)| s.div_ceil(*c))
        .collect();
    let mut seen = Seen::default();
    for coords in all_coords(&counts) {
        let got = arr
            .read_chunk(&coords, &ReadOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{what} {coords:?}: {e}"));
        assert_eq!(got.shape, chunks, "{what} {coords:?}: full chunk shape");
        assert_eq!(
            got.data.len() as u64,
            chunks.iter().product::<u64>() * itemsize as u64
        );
        // The part inside the array, from the chunk and from the array written.
        let inside: Vec<u64> = (0..chunks.len())
            .map(|d| chunks[d].min(arr.shape()[d] - coords[d] * chunks[d]))
            .collect();
        if inside != chunks {
            seen.edge += 1;
        }
        let local: Vec<DimSelection> = inside
            .iter()
            .map(|&n| DimSelection {
                start: 0,
                step: 1,
                count: n,
                keep: true,
            })
            .collect();
        let global: Vec<DimSelection> = (0..chunks.len())
            .map(|d| DimSelection {
                start: coords[d] * chunks[d],
                step: 1,
                count: inside[d],
                keep: true,
            })
            .collect();
        assert_eq!(
            common::reference(&got.data, &chunks, itemsize, &local),
            common::reference(&npy.data, &npy.shape, itemsize, &global),
            "{what} {coords:?}: values"
        );
        seen.chunks += 1;
        let bytes = arr
            .chunk_bytes(&coords)
            .await
            .unwrap_or_else(|e| panic!("{what} {coords:?}: chunk_bytes: {e}"));
        match bytes {
            Some(b) => {
                assert_ne!(
                    stored(&coords),
                    Some(false),
                    "{what} {coords:?}: bytes of a chunk not stored"
                );
                check(&coords, &b);
                seen.stored += 1;
            }
            None => {
                assert_ne!(
                    stored(&coords),
                    Some(true),
                    "{what} {coords:?}: no bytes for a stored chunk"
                );
                seen.not_stored += 1;
            }
        }
    }
    // Outside the grid, and of another rank.
    for bad in [counts.clone(), vec![0; counts.len() + 1]] {
        let e = arr
            .read_chunk(&bad, &ReadOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{what} {bad:?}: {e}");
        let e = arr.chunk_bytes(&bad).await.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{what} {bad:?}: {e}");
    }
    seen
}

async fn open(url: &str, path: Option<&str>) -> RemoteArray {
    let options = OpenOptions {
        path: path.map(String::from),
        // Every chunk over the network (no copy of a small file held from open), so the
        // stored bytes come from range reads.
        small_source_bytes: 0,
        ..Default::default()
    };
    open_array(url, vec![], options)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b2nd_chunks_decoded_and_as_stored() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    for (name, special) in [
        ("nd3_u2", false),
        ("cf_zstd_shuffle", false),
        ("zero_chunk_inside", true),
    ] {
        let file = fixtures().join(format!("blosc2/{name}.b2nd"));
        let frame = std::fs::read(&file).unwrap();
        let arr = open(&server.url(&format!("blosc2/{name}.b2nd")), None).await;
        let check = |coords: &[u64], b: &[u8]| {
            // A whole Blosc2 chunk as the frame holds it: found verbatim, its header's
            // cbytes its length, and it decodes to a full chunk.
            assert!(
                find(&frame, b).is_some(),
                "{name} {coords:?}: not in the frame"
            );
            assert_eq!(
                i32::from_le_bytes(b[12..16].try_into().unwrap()) as usize,
                b.len(),
                "{name} {coords:?}: cbytes"
            );
            let n = chunkwise::codec::blosc2::decode_chunk(b).unwrap().len();
            assert_eq!(
                n,
                i32::from_le_bytes(b[4..8].try_into().unwrap()) as usize,
                "{name} {coords:?}: nbytes"
            );
            assert!(n as u64 >= arr.chunks().iter().product::<u64>() * arr.dtype().itemsize as u64);
        };
        // Special-value chunks are stored as an offset only: no bytes. In
        // zero_chunk_inside the all-zero chunks are those.
        let npy = read_npy(&std::fs::read(fixtures().join(format!("blosc2/{name}.npy"))).unwrap())
            .unwrap();
        let chunks = arr.chunks().to_vec();
        let zero = |coords: &[u64]| {
            let dims: Vec<DimSelection> = (0..chunks.len())
                .map(|d| DimSelection {
                    start: coords[d] * chunks[d],
                    step: 1,
                    count: chunks[d].min(npy.shape[d] - coords[d] * chunks[d]),
                    keep: true,
                })
                .collect();
            common::reference(&npy.data, &npy.shape, arr.dtype().itemsize, &dims)
                .iter()
                .all(|&b| b == 0)
        };
        let stored = |coords: &[u64]| Some(!(special && zero(coords)));
        let seen = check_chunks(
            name,
            &arr,
            &fixtures().join(format!("blosc2/{name}.npy")),
            &stored,
            &check,
        )
        .await;
        assert!(seen.stored > 0, "{name}: {seen:?}");
        if special {
            assert!(seen.not_stored > 0, "{name}: {seen:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hdf5_chunks_decoded_and_as_stored() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let manifest = json("hdf5/manifest.json");
    let mut edge = 0;
    let mut unallocated = 0;
    for (file, path) in [
        ("gzip_shuffle.h5", "/ints"),
        ("gzip_shuffle.h5", "/f32_fletcher"),
        ("sparse_fill.h5", "/s"),
    ] {
        let entry = manifest["datasets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["file"] == file && d["path"] == path)
            .unwrap()
            .clone();
        let bytes = std::fs::read(fixtures().join("hdf5").join(file)).unwrap();
        let map: Vec<(Vec<u64>, usize, usize)> = entry["chunk_map"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["offset"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_u64().unwrap())
                        .collect(),
                    c["address"].as_u64().unwrap() as usize,
                    c["size"].as_u64().unwrap() as usize,
                )
            })
            .collect();
        let arr = open(&server.url(&format!("hdf5/{file}")), Some(path)).await;
        let chunks = arr.chunks().to_vec();
        let at = |coords: &[u64]| {
            let offset: Vec<u64> = coords.iter().zip(&chunks).map(|(c, n)| c * n).collect();
            map.iter().find(|(o, _, _)| *o == offset).cloned()
        };
        let what = format!("{file}:{path}");
        let seen = check_chunks(
            &what,
            &arr,
            &fixtures().join("hdf5").join(entry["npy"].as_str().unwrap()),
            &|c| Some(at(c).is_some()),
            &|c, b| {
                // The filtered chunk at the address and of the size h5py's get_chunk_info
                // reported.
                let (_, addr, size) = at(c).unwrap();
                assert_eq!(b, &bytes[addr..addr + size], "{what} {c:?}");
            },
        )
        .await;
        edge += seen.edge;
        unallocated += seen.not_stored;
    }
    assert!(
        edge > 0 && unallocated > 0,
        "edge {edge}, unallocated {unallocated}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zarr_chunks_decoded_and_as_stored() {
    let server = common::fault_server(&fixtures(), &[], false).await;
    let mut missing = 0;
    for (store, path, npy, sharded) in [
        ("v3.zarr", "/temperature", "v3_temperature.npy", false),
        ("v3.zarr", "/partial", "v3_partial.npy", false),
        ("v3.zarr", "/sharded_edge", "v3_sharded_edge.npy", true),
        (
            "v3.zarr",
            "/sharded_partial",
            "v3_sharded_partial.npy",
            true,
        ),
        ("v2.zarr", "/blosc", "v2_blosc.npy", false),
        ("v2.zarr", "/partial", "v2_partial.npy", false),
    ] {
        let dir = fixtures().join("zarr").join(store).join(&path[1..]);
        // Every stored chunk object (or shard) of the array.
        let mut objects = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                if p.is_dir() {
                    stack.push(p);
                } else if !name.starts_with('.') && name != "zarr.json" {
                    objects.push(std::fs::read(&p).unwrap());
                }
            }
        }
        let arr = open(&server.url(&format!("zarr/{store}")), Some(path)).await;
        let what = format!("{store}:{path}");
        let found = |b: &[u8]| {
            if sharded {
                objects.iter().any(|o| find(o, b).is_some())
            } else {
                objects.iter().any(|o| o == b)
            }
        };
        let seen = check_chunks(
            &what,
            &arr,
            &fixtures().join("zarr").join(npy),
            // Which chunks are absent is checked below, against read_chunk's count.
            &|_| None,
            &|c, b| assert!(found(b), "{what} {c:?}: not the stored object's bytes"),
        )
        .await;
        // Absent chunks: read_chunk counts them missing (and gives the fill value, checked
        // against the .npy above), chunk_bytes gives None.
        let counts: Vec<u64> = arr
            .shape()
            .iter()
            .zip(arr.chunks())
            .map(|(s, c)| s.div_ceil(*c))
            .collect();
        let mut none = 0;
        for coords in all_coords(&counts) {
            let read = arr
                .read_chunk(&coords, &ReadOptions::default())
                .await
                .unwrap();
            let bytes = arr.chunk_bytes(&coords).await.unwrap();
            // Absent from the store: no bytes. An inner chunk its stored shard's index
            // marks empty has no bytes either, but was written so: not missing.
            let expected_none = read.missing_chunks == 1 || (sharded && bytes.is_none());
            assert_eq!(
                expected_none,
                bytes.is_none(),
                "{what} {coords:?}: missing {} but bytes {:?}",
                read.missing_chunks,
                bytes.as_ref().map(|b| b.len())
            );
            none += bytes.is_none() as usize;
        }
        if path.contains("partial") {
            assert!(none > 0, "{what}: no absent chunk seen");
        }
        missing += none;
        assert_eq!(seen.chunks, counts.iter().product::<u64>() as usize);
    }
    assert!(missing > 0);
}
