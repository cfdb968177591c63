//! Real stores written by zarr-python (tests/fixtures/gen_zarr_partition.py) read from their
//! metadata and a directory listing, then partitioned with the fixture's small policy. The
//! expected arrays and manifests are worked out by hand from the shapes (no compressor, so each
//! chunk is elements × itemsize bytes; a v3 shard adds a 16-byte index entry per inner chunk and a
//! 4-byte checksum).
//!
//! Policy: t_max 2048, t_min 100, t_hot 50. Hot: lat and time (coordinates), mask (16 bytes).
//! pr: 16 objects of 256 bytes = 4096 > t_max, so bucketed; ideal 2048/256 = 8, hard
//! 8·2048/256 = 64, width 8. tas (v3): 4 shards of 1092 bytes = 4368, ideal 2048/1092 = 1, hard
//! 8·2048/1024 = 16, width 1. tas (v2): 4 chunks of 1024 bytes, width 2. orog and sftlf (64 bytes
//! each) reach t_min together and share one blob.
#![cfg(feature = "partition")]

use std::path::PathBuf;

use chunkwise::partition::zarr::{read_arrays, DirStore, DEFAULT_EXCLUDE};
use chunkwise::partition::{
    generated_by, partition, resolve, Array, Json, KeyEncoding, Manifest, Policy, ResolutionKind,
};

const T0: &str = "2026-12-01T00:00:00+00:00";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/zarr_partition")
        .join(name)
}

fn policy() -> Policy {
    let text = std::fs::read_to_string(fixture("policy.json")).unwrap();
    Policy::from_json(&Json::parse(&text).unwrap(), "policy").unwrap()
}

fn array(
    path: &str,
    shape: &[u64],
    chunks: &[u64],
    itemsize: u64,
    stored: u64,
    seen: u64,
    enc: KeyEncoding,
) -> Array {
    let mut a = Array::new(path, shape, chunks, itemsize);
    a.stored_bytes = Some(stored);
    a.nobjects_seen = Some(seen);
    a.key_encoding = enc;
    a
}

#[test]
fn v3_store_arrays_from_metadata() {
    let got = read_arrays(&DirStore::new(fixture("v3.zarr")), "", &DEFAULT_EXCLUDE).unwrap();
    let v3 = KeyEncoding::V3Slash;
    let mut lat = array("lat", &[4], &[4], 8, 32, 1, v3);
    lat.is_coordinate = true;
    let mut time = array("time", &[64], &[64], 8, 512, 1, v3);
    time.is_coordinate = true;
    let mut tas = array("tas", &[64, 4, 4], &[4, 4, 4], 4, 4368, 4, v3);
    tas.shards = Some(vec![16, 4, 4]);
    assert_eq!(
        got.arrays,
        vec![
            lat,
            array("mask", &[4, 4], &[4, 4], 1, 16, 1, v3),
            array("orog", &[4, 4], &[4, 4], 4, 64, 1, v3),
            array("pr", &[64, 4, 4], &[4, 4, 4], 4, 4096, 16, v3),
            array("sftlf", &[4, 4], &[4, 4], 4, 64, 1, v3),
            tas,
            time,
        ]
    );
    assert_eq!(got.warnings, vec![]);
}

#[test]
fn v2_store_arrays_from_metadata() {
    let got = read_arrays(&DirStore::new(fixture("v2.zarr")), "", &DEFAULT_EXCLUDE).unwrap();
    let flat = KeyEncoding::V2Flat;
    let mut lat = array("lat", &[4], &[4], 8, 32, 1, flat);
    lat.is_coordinate = true;
    let mut time = array("time", &[64], &[64], 8, 512, 1, flat);
    time.is_coordinate = true;
    assert_eq!(
        got.arrays,
        vec![
            lat,
            array("mask", &[4, 4], &[4, 4], 1, 16, 1, flat),
            array("orog", &[4, 4], &[4, 4], 4, 64, 1, flat),
            array(
                "pr",
                &[64, 4, 4],
                &[4, 4, 4],
                4,
                4096,
                16,
                KeyEncoding::V2Slash
            ),
            array("sftlf", &[4, 4], &[4, 4], 4, 64, 1, flat),
            array("tas", &[64, 4, 4], &[16, 4, 4], 4, 4096, 4, flat),
            time,
        ]
    );
    assert_eq!(got.warnings, vec![]);
}

const V3_MANIFEST: &str = r#"{
  "schema_version": 3,
  "scope": "zarr_partition/v3.zarr",
  "epoch": 1,
  "generated_at": "2026-12-01T00:00:00+00:00",
  "generated_by": "@BY@",
  "policy": {
    "t_max_bytes": 2048,
    "t_min_bytes": 100,
    "t_hot_bytes": 50,
    "width_clamp": 8,
    "pow2_floor": 64
  },
  "hot_always": [
    "**/zarr.json",
    "**/.zarray",
    "**/.zgroup",
    "**/.zattrs",
    "**/.zmetadata",
    "lat/**",
    "mask/**",
    "time/**"
  ],
  "pinned": [],
  "blobs": [
    {
      "id": "b_pr",
      "prefixes": [
        "pr/c"
      ],
      "bucket": {
        "index": 0,
        "width": 8,
        "key_encoding": "v3_slash"
      }
    },
    {
      "id": "b_tas",
      "prefixes": [
        "tas/c"
      ],
      "bucket": {
        "index": 0,
        "width": 1,
        "key_encoding": "v3_slash"
      }
    },
    {
      "id": "b_orog_c_sftlf_c",
      "prefixes": [
        "orog/c",
        "sftlf/c"
      ],
      "bucket": null
    }
  ],
  "provenance": {
    "lat": {
      "objects": 1,
      "objects_seen": 1,
      "stored_bytes": 32,
      "uncompressed_object_bytes": 32,
      "sharded": false,
      "key_encoding": "v3_slash"
    },
    "mask": {
      "objects": 1,
      "objects_seen": 1,
      "stored_bytes": 16,
      "uncompressed_object_bytes": 16,
      "sharded": false,
      "key_encoding": "v3_slash"
    },
    "orog": {
      "objects": 1,
      "objects_seen": 1,
      "stored_bytes": 64,
      "uncompressed_object_bytes": 64,
      "sharded": false,
      "key_encoding": "v3_slash"
    },
    "pr": {
      "objects": 16,
      "objects_seen": 16,
      "stored_bytes": 4096,
      "uncompressed_object_bytes": 256,
      "sharded": false,
      "key_encoding": "v3_slash"
    },
    "sftlf": {
      "objects": 1,
      "objects_seen": 1,
      "stored_bytes": 64,
      "uncompressed_object_bytes": 64,
      "sharded": false,
      "key_encoding": "v3_slash"
    },
    "tas": {
      "objects": 4,
      "objects_seen": 4,
      "stored_bytes": 4368,
      "uncompressed_object_bytes": 1024,
      "sharded": true,
      "key_encoding": "v3_slash"
    },
    "time": {
      "objects": 1,
      "objects_seen": 1,
      "stored_bytes": 512,
      "uncompressed_object_bytes": 512,
      "sharded": false,
      "key_encoding": "v3_slash"
    }
  }
}"#;

#[test]
fn v3_store_partitioned_end_to_end() {
    let arrays = read_arrays(&DirStore::new(fixture("v3.zarr")), "", &DEFAULT_EXCLUDE)
        .unwrap()
        .arrays;
    let out = partition("zarr_partition/v3.zarr", &arrays, Some(&policy()), None, T0).unwrap();
    assert_eq!(out.warnings, vec![]);
    let expected = V3_MANIFEST.replace("@BY@", &generated_by());
    assert_eq!(out.manifest.dumps(), expected);
    assert_eq!(Manifest::loads(&expected).unwrap(), out.manifest);

    // Every object in the store resolves as its place in the cut says.
    let m = &out.manifest;
    let cases = [
        ("zarr.json", ResolutionKind::Hot, None),
        ("tas/zarr.json", ResolutionKind::Hot, None),
        ("time/c/0", ResolutionKind::Hot, None),
        ("lat/c/0", ResolutionKind::Hot, None),
        ("mask/c/0/0", ResolutionKind::Hot, None),
        ("pr/c/0/0/0", ResolutionKind::Blob, Some("b_pr_0")),
        ("pr/c/7/0/0", ResolutionKind::Blob, Some("b_pr_0")),
        ("pr/c/8/0/0", ResolutionKind::Blob, Some("b_pr_1")),
        ("pr/c/15/0/0", ResolutionKind::Blob, Some("b_pr_1")),
        ("tas/c/3/0/0", ResolutionKind::Blob, Some("b_tas_3")),
        (
            "orog/c/0/0",
            ResolutionKind::Blob,
            Some("b_orog_c_sftlf_c_0"),
        ),
        (
            "sftlf/c/0/0",
            ResolutionKind::Blob,
            Some("b_orog_c_sftlf_c_0"),
        ),
    ];
    for (key, kind, blob) in cases {
        let r = resolve(m, key);
        assert_eq!((r.kind, r.blob_id.as_deref()), (kind, blob), "{key}");
    }
}

#[test]
fn v2_store_partitioned_end_to_end() {
    let arrays = read_arrays(&DirStore::new(fixture("v2.zarr")), "", &DEFAULT_EXCLUDE)
        .unwrap()
        .arrays;
    let m = partition("v2.zarr", &arrays, Some(&policy()), None, T0)
        .unwrap()
        .manifest;
    let blobs: Vec<String> = m
        .blobs
        .iter()
        .map(|b| b.to_json().to_pretty_string())
        .collect();
    assert_eq!(
        blobs.join(",").replace([' ', '\n'], ""),
        concat!(
            r#"{"id":"b_pr","prefixes":["pr"],"bucket":{"index":0,"width":8,"key_encoding":"v2_slash"}},"#,
            r#"{"id":"b_tas","prefixes":["tas"],"bucket":{"index":0,"width":2,"key_encoding":"v2_flat"}},"#,
            r#"{"id":"b_orog_sftlf","prefixes":["orog","sftlf"],"bucket":null}"#
        )
    );
    assert_eq!(&m.hot_always[5..], ["lat/**", "mask/**", "time/**"]);
    let cases = [
        (".zmetadata", ResolutionKind::Hot, None),
        ("pr/.zattrs", ResolutionKind::Hot, None),
        ("time/0", ResolutionKind::Hot, None),
        ("pr/9/0/0", ResolutionKind::Blob, Some("b_pr_1")),
        ("tas/3.0.0", ResolutionKind::Blob, Some("b_tas_1")),
        ("tas/1.0.0", ResolutionKind::Blob, Some("b_tas_0")),
        ("orog/0.0", ResolutionKind::Blob, Some("b_orog_sftlf_0")),
    ];
    for (key, kind, blob) in cases {
        let r = resolve(&m, key);
        assert_eq!((r.kind, r.blob_id.as_deref()), (kind, blob), "{key}");
    }
}

#[test]
fn reading_a_scope_inside_a_larger_tree() {
    // The fixture directory holds both stores; scoped reads see one each, keys relative to it.
    let store = DirStore::new(fixture(""));
    let v3 = read_arrays(&store, "v3.zarr", &DEFAULT_EXCLUDE).unwrap();
    assert_eq!(v3.arrays.len(), 7);
    assert_eq!(v3.arrays[3].path, "pr");
    assert_eq!(v3.arrays[3].stored_bytes, Some(4096));
    // Both stores at once: paths carry the store name.
    let both = read_arrays(&store, "", &DEFAULT_EXCLUDE).unwrap();
    assert_eq!(both.arrays.len(), 14);
    assert_eq!(both.arrays[0].path, "v2.zarr/lat");
    // Excluding a segment hides that whole store.
    let only_v3 = read_arrays(&store, "", &["v2.zarr"]).unwrap();
    assert_eq!(only_v3.arrays.len(), 7);
}
