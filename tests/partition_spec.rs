//! Every example of blobmap-partition.md and of blobmap's model and resolve documentation, with
//! its exact expected value, plus the cut rules of facts.md ("blobmap partition").
#![cfg(feature = "partition")]

use chunkwise::partition::{
    bucket_width, diff, partition, resolve, Array, Blob, Bucket, KeyEncoding, Manifest,
    ManifestFields, PartitionError, Pin, Policy, ResolutionKind, Resolver, Warning, GIB,
};

const T0: &str = "2026-12-01T00:00:00+00:00";

fn stored(mut a: Array, bytes: u64) -> Array {
    a.stored_bytes = Some(bytes);
    a
}

fn manifest(scope: &str, blobs: Vec<Blob>, hot: &[&str]) -> Manifest {
    Manifest::new(ManifestFields::new(
        scope,
        blobs,
        hot.iter().map(|s| (*s).to_owned()).collect(),
    ))
    .unwrap()
}

fn bucketed(id: &str, prefix: &str, width: u64, enc: KeyEncoding) -> Blob {
    Blob {
        id: id.into(),
        prefixes: vec![prefix.into()],
        bucket: Some(Bucket {
            index: 0,
            width,
            key_encoding: enc,
        }),
    }
}

fn ids(m: &Manifest) -> Vec<&str> {
    m.blobs.iter().map(|b| b.id.as_str()).collect()
}

// --- partition module example -------------------------------------------------------------

#[test]
fn module_example_coordinate_hot_and_one_bucketed_blob() {
    let mut time = Array::new("time", &[400], &[400], 8);
    time.is_coordinate = true;
    let tas = stored(Array::new("tas", &[400, 4, 4], &[10, 4, 4], 4), 400 * GIB);
    let m = partition("cordex/a.zarr", &[time, tas], None, None, T0)
        .unwrap()
        .manifest;
    let mut got = ids(&m);
    got.sort();
    assert_eq!(got, vec!["b_tas"]);
    assert!(m.hot_always.iter().any(|h| h == "time/**"));
    assert_eq!(
        m.hot_always,
        vec![
            "**/zarr.json",
            "**/.zarray",
            "**/.zgroup",
            "**/.zattrs",
            "**/.zmetadata",
            "time/**"
        ]
    );
    // 400 GiB over 40 objects: ideal 100 GiB / 10 GiB = 10, below pow2_floor, so unrounded.
    assert_eq!(
        m.blobs[0],
        bucketed("b_tas", "tas/c", 10, KeyEncoding::V3Slash)
    );
    assert_eq!(m.epoch, 1);
    assert_eq!(m.generated_at, T0);
}

// --- bucket_width examples ----------------------------------------------------------------

#[test]
fn bucket_width_plain_is_2048() {
    let plain = stored(
        Array::new("tas", &[1_314_000, 412, 424], &[128, 412, 424], 4),
        459 * GIB,
    );
    assert_eq!(bucket_width(&plain, &Policy::default()), 2048);
}

#[test]
fn bucket_width_sharded_is_128() {
    let mut sharded = stored(
        Array::new("tas", &[1_314_000, 412, 424], &[128, 412, 424], 4),
        459 * GIB,
    );
    sharded.shards = Some(vec![1280, 412, 424]);
    assert_eq!(bucket_width(&sharded, &Policy::default()), 128);
}

#[test]
fn bucket_width_hard_bound_and_oversized_object_warning() {
    // No stored size: avg = uncompressed = 4000 bytes; ideal 1000/4000 -> 1; warns.
    let a = Array::new("big", &[10], &[1000], 4);
    let p = Policy {
        t_max_bytes: 1000,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    assert_eq!(bucket_width(&a, &p), 1);
    let arrays = [stored(Array::new("big", &[10_000], &[1000], 4), 40_000)];
    let out = partition("s", &arrays, Some(&p), None, T0).unwrap();
    assert_eq!(
        out.warnings,
        vec![Warning::ObjectAboveMax {
            path: "big".into(),
            object_bytes: 4000
        }]
    );
    // The hard bound binds when compression is excellent: 1 byte stored per 1000-byte object.
    let p = Policy {
        t_max_bytes: 10_000,
        width_clamp: 2,
        pow2_floor: 1_000_000,
        ..Policy::default()
    };
    let a = stored(Array::new("x", &[100_000], &[250], 4), 400);
    assert_eq!(bucket_width(&a, &p), 20);
}

// --- partition: append example ------------------------------------------------------------

#[test]
fn append_changes_nothing() {
    let first = partition(
        "s",
        &[stored(
            Array::new("tas", &[400, 4, 4], &[10, 4, 4], 4),
            400 * GIB,
        )],
        None,
        None,
        T0,
    )
    .unwrap()
    .manifest;
    let grown = partition(
        "s",
        &[stored(
            Array::new("tas", &[800, 4, 4], &[10, 4, 4], 4),
            800 * GIB,
        )],
        None,
        Some(&first),
        "2026-12-02T00:00:00+00:00",
    )
    .unwrap()
    .manifest;
    let d = diff(Some(&first), &grown);
    assert!(d.is_empty());
    assert_eq!(d.describe(), "(no change)");
    assert_eq!(grown.blobs, first.blobs);
    assert_eq!(grown.epoch, 1);
}

// --- Diff example ---------------------------------------------------------------------------

#[test]
fn diff_example_is_additive() {
    let old = manifest("s", vec![Blob::new("a", &["a"])], &[]);
    let new = manifest(
        "s",
        vec![Blob::new("a", &["a"]), Blob::new("b", &["b"])],
        &[],
    );
    let d = diff(Some(&old), &new);
    assert!(d.is_additive());
    assert!(!d.is_empty());
    assert_eq!(d.added, vec![Blob::new("b", &["b"])]);
    assert_eq!(d.describe(), "+ b ['b']");
}

#[test]
fn diff_describes_removed_and_modified_in_python_notation() {
    let old = manifest(
        "s",
        vec![
            Blob::new("a", &["a"]),
            bucketed("b_tas", "tas/c", 2048, KeyEncoding::V3Slash),
        ],
        &[],
    );
    let new = manifest(
        "s",
        vec![bucketed("b_tas", "tas/c", 1024, KeyEncoding::V3Slash)],
        &[],
    );
    let d = diff(Some(&old), &new);
    assert!(!d.is_additive());
    assert_eq!(
        d.describe(),
        "- a ['a']\n~ b_tas: {'id': 'b_tas', 'prefixes': ['tas/c'], 'bucket': {'index': 0, \
         'width': 2048, 'key_encoding': 'v3_slash'}} -> {'id': 'b_tas', 'prefixes': ['tas/c'], \
         'bucket': {'index': 0, 'width': 1024, 'key_encoding': 'v3_slash'}}"
    );
    let first = diff(None, &old);
    assert_eq!(first.added, old.blobs);
    assert!(first.is_additive());
}

// --- the cut ------------------------------------------------------------------------------------

#[test]
fn small_fresh_scope_is_one_root_blob() {
    let arrays = [
        stored(Array::new("pr", &[100, 10], &[10, 10], 4), 20 * GIB),
        stored(Array::new("tas", &[100, 10], &[10, 10], 4), 30 * GIB),
        stored(Array::new("tiny", &[3], &[3], 4), 12),
    ];
    let m = partition("s", &arrays, None, None, T0).unwrap().manifest;
    assert_eq!(m.blobs, vec![Blob::new("b_root", &[""])]);
    assert_eq!(m.hot_always.last().unwrap(), "tiny/**");
}

#[test]
fn no_coalescing_by_default_one_blob_per_small_array() {
    let p = Policy {
        t_max_bytes: 100,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let mut flat = stored(Array::new("pr", &[10], &[10], 1), 60);
    flat.key_encoding = KeyEncoding::V2Flat;
    let arrays = [
        stored(Array::new("huss", &[10], &[10], 1), 50),
        flat,
        stored(Array::new("tas", &[1000], &[10], 1), 1000),
    ];
    let m = partition("s", &arrays, Some(&p), None, T0)
        .unwrap()
        .manifest;
    assert_eq!(
        m.blobs,
        vec![
            bucketed("b_tas", "tas/c", 10, KeyEncoding::V3Slash),
            Blob::new("b_huss_c", &["huss/c"]),
            Blob::new("b_pr", &["pr"]),
        ]
    );
}

#[test]
fn coalescing_groups_until_t_min_and_folds_the_tail() {
    let p = Policy {
        t_max_bytes: 100,
        t_min_bytes: 50,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let arrays = [
        stored(Array::new("a", &[10], &[10], 1), 30),
        stored(Array::new("b", &[10], &[10], 1), 30),
        stored(Array::new("c", &[10], &[10], 1), 60),
        stored(Array::new("d", &[10], &[10], 1), 10),
        stored(Array::new("big", &[1000], &[10], 1), 1000),
    ];
    let m = partition("s", &arrays, Some(&p), None, T0)
        .unwrap()
        .manifest;
    assert_eq!(
        m.blobs,
        vec![
            bucketed("b_big", "big/c", 10, KeyEncoding::V3Slash),
            Blob::new("b_a_c_b_c", &["a/c", "b/c"]),
            Blob::new("b_c_c_d_c", &["c/c", "d/c"]),
        ]
    );
}

#[test]
fn lone_small_tail_stands_alone() {
    let p = Policy {
        t_max_bytes: 100,
        t_min_bytes: 500,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let arrays = [
        stored(Array::new("a", &[10], &[10], 1), 30),
        stored(Array::new("big", &[1000], &[10], 1), 1000),
    ];
    let m = partition("s", &arrays, Some(&p), None, T0)
        .unwrap()
        .manifest;
    assert_eq!(ids(&m), vec!["b_big", "b_a_c"]);
}

#[test]
fn colliding_ids_get_suffixes_with_a_warning() {
    let p = Policy {
        t_max_bytes: 100,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let arrays = [
        stored(Array::new("a-b", &[1000], &[10], 1), 1000),
        stored(Array::new("a_b", &[1000], &[10], 1), 1000),
        stored(Array::new("A.b", &[1000], &[10], 1), 1000),
    ];
    let out = partition("s", &arrays, Some(&p), None, T0).unwrap();
    assert_eq!(ids(&out.manifest), vec!["b_a_b", "b_a_b_2", "b_a_b_3"]);
    assert_eq!(
        out.warnings,
        vec![
            Warning::IdCollision {
                wanted: "b_a_b".into(),
                used: "b_a_b_2".into()
            },
            Warning::IdCollision {
                wanted: "b_a_b".into(),
                used: "b_a_b_3".into()
            },
        ]
    );
}

#[test]
fn pins_are_carried_and_hold_arrays_hot() {
    let p = Policy {
        t_max_bytes: 100,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let mut fields = ManifestFields::new("s", vec![], vec![]);
    fields.pinned = vec![Pin::new("pr", "active analysis")];
    fields.policy = p;
    fields.epoch = 4;
    let prev = Manifest::new(fields).unwrap();
    let arrays = [
        stored(Array::new("pr", &[1000], &[10], 1), 1000),
        stored(Array::new("tas", &[1000], &[10], 1), 1000),
    ];
    let m = partition("s", &arrays, None, Some(&prev), T0)
        .unwrap()
        .manifest;
    assert_eq!(m.pinned, prev.pinned);
    assert_eq!(m.policy, p);
    assert_eq!(m.epoch, 4);
    assert!(m.hot_always.iter().any(|h| h == "pr/**"));
    assert_eq!(ids(&m), vec!["b_tas"]);
    assert_eq!(m.bumped("later").epoch, 5);
}

#[test]
fn new_array_beside_carried_blobs_is_added_never_root() {
    let p = Policy {
        t_max_bytes: 100,
        t_hot_bytes: 1,
        ..Policy::default()
    };
    let prev = partition(
        "s",
        &[stored(Array::new("tas", &[1000], &[10], 1), 1000)],
        Some(&p),
        None,
        T0,
    )
    .unwrap()
    .manifest;
    let next = partition(
        "s",
        &[
            stored(Array::new("tas", &[1000], &[10], 1), 1000),
            stored(Array::new("pr", &[10], &[10], 1), 50),
        ],
        None,
        Some(&prev),
        T0,
    )
    .unwrap()
    .manifest;
    let d = diff(Some(&prev), &next);
    assert!(d.is_additive());
    assert_eq!(d.describe(), "+ b_pr_c ['pr/c']");
}

#[test]
fn provenance_records_each_array() {
    let mut a = stored(Array::new("tas", &[400, 4, 4], &[10, 4, 4], 4), 400 * GIB);
    a.nobjects_seen = Some(40);
    let root = Array::new("", &[4], &[4], 1);
    let m = partition("s", &[a, root], None, None, T0).unwrap().manifest;
    let text = m.dumps();
    assert!(text.contains(
        "\"tas\": {\n      \"objects\": 40,\n      \"objects_seen\": 40,\n      \"stored_bytes\": \
         429496729600,\n      \"uncompressed_object_bytes\": 640,\n      \"sharded\": false,\n      \
         \"key_encoding\": \"v3_slash\"\n    }"
    ));
    assert!(text.contains("\".\": {\n      \"objects\": 1,\n      \"objects_seen\": null"));
    assert_eq!(m.hot_always.last().unwrap(), "**");
}

// --- model examples -------------------------------------------------------------------------

#[test]
fn array_derived_sizes() {
    let tas = stored(Array::new("tas", &[400, 4, 4], &[10, 4, 4], 4), 2560);
    assert_eq!(tas.nobjects(), 40);
    assert_eq!(tas.chunk_prefix(), "tas/c");
    assert_eq!(tas.avg_object_bytes(), 64);
    let plain = Array::new("tas", &[400, 4, 4], &[10, 4, 4], 4);
    assert_eq!(plain.object_grid(), vec![40, 1, 1]);
    assert_eq!(plain.uncompressed_object_bytes(), 640);
    assert_eq!(plain.total_bytes(), 25600);
    assert_eq!(stored(plain.clone(), 99).total_bytes(), 99);
    let mut seen = plain.clone();
    seen.nobjects_seen = Some(3);
    assert_eq!(seen.nobjects(), 40);
    assert_eq!(
        Array::new("tas", &[400, 4], &[10, 4], 4).object_shape(),
        &[10, 4]
    );
    let mut sh = Array::new("tas", &[400, 4], &[10, 4], 4);
    sh.shards = Some(vec![50, 4]);
    assert_eq!(sh.object_shape(), &[50, 4]);
    let mut flat = Array::new("tas", &[1], &[1], 4);
    flat.key_encoding = KeyEncoding::V2Flat;
    assert_eq!(flat.chunk_prefix(), "tas");
    assert_eq!(Array::new("", &[1], &[1], 4).chunk_prefix(), "c");
}

#[test]
fn policy_defaults_and_unknown_fields() {
    let p = Policy::default();
    assert_eq!(p.t_max_bytes, 100 * GIB);
    assert_eq!(p.t_min_bytes, 0);
    assert_eq!(p.t_hot_bytes, 16_777_216);
    assert_eq!(p.width_clamp, 8);
    assert_eq!(p.pow2_floor, 64);
    let j =
        chunkwise::partition::Json::parse(r#"{"t_max_bytes": 5, "added_in_future": 9}"#).unwrap();
    assert_eq!(
        Policy::from_json(&j, "policy").unwrap(),
        Policy {
            t_max_bytes: 5,
            ..Policy::default()
        }
    );
}

#[test]
fn pin_blob_and_manifest_examples() {
    let mut pin = Pin::new("multiscales/zoom_9", "active ICON analysis");
    pin.until = Some("2026-12-01T00:00:00+00:00".into());
    assert!(pin.covers("multiscales/zoom_9/tas/c/0"));
    assert!(!pin.covers("multiscales/zoom_8/tas/c/0"));
    assert!(!pin.covers("multiscales/zoom_9x"));
    let mut old = Pin::new("x", "why");
    old.until = Some("2020-01-01T00:00:00+00:00".into());
    assert!(old.expired(T0));
    assert!(!Pin::new("x", "why").expired(T0));
    assert_eq!(Blob::new("b_pr", &["pr/c"]).instance(0), "b_pr_0");
    assert_eq!(
        bucketed("b_tas", "tas/c", 2048, KeyEncoding::V3Slash).instance(2),
        "b_tas_2"
    );
    let m = manifest(
        "cordex/a.zarr",
        vec![Blob::new("b_pr", &["pr/c"])],
        &["**/zarr.json"],
    );
    assert_eq!(m.epoch, 1);
    assert_eq!(m.bumped(T0).epoch, 2);
    let mut f = ManifestFields::new("s", vec![Blob::new("b_tas", &["tas/c"])], vec![]);
    f.pinned = vec![Pin::new("tas", "under analysis")];
    assert_eq!(Manifest::new(f).unwrap().pinned_blob_ids(), vec!["b_tas"]);
}

#[test]
fn manifest_text_is_blobmaps_layout_and_round_trips() {
    let mut f = ManifestFields::new(
        "s",
        vec![
            Blob::new("b", &["x"]),
            bucketed("b_tas", "tas/c", 2048, KeyEncoding::V2Flat),
        ],
        vec!["**/zarr.json".into()],
    );
    f.pinned = vec![Pin::new("x", "under active analysis")];
    f.generated_at = "2026-01-01T00:00:00+00:00".into();
    f.generated_by = "blobmap 0.5.0".into();
    let m = Manifest::new(f).unwrap();
    // Written by hand in the layout of Python's json.dumps(manifest.to_json(), indent=2).
    let expected = r#"{
  "schema_version": 3,
  "scope": "s",
  "epoch": 1,
  "generated_at": "2026-01-01T00:00:00+00:00",
  "generated_by": "blobmap 0.5.0",
  "policy": {
    "t_max_bytes": 107374182400,
    "t_min_bytes": 0,
    "t_hot_bytes": 16777216,
    "width_clamp": 8,
    "pow2_floor": 64
  },
  "hot_always": [
    "**/zarr.json"
  ],
  "pinned": [
    {
      "prefix": "x",
      "reason": "under active analysis",
      "by": "",
      "at": "",
      "until": null
    }
  ],
  "blobs": [
    {
      "id": "b",
      "prefixes": [
        "x"
      ],
      "bucket": null
    },
    {
      "id": "b_tas",
      "prefixes": [
        "tas/c"
      ],
      "bucket": {
        "index": 0,
        "width": 2048,
        "key_encoding": "v2_flat"
      }
    }
  ],
  "provenance": {}
}"#;
    assert_eq!(m.dumps(), expected);
    let back = Manifest::loads(expected).unwrap();
    assert_eq!(back, m);
    assert_eq!(back.dumps(), expected);
}

// --- bad input --------------------------------------------------------------------------------

fn schema_err(text: &str) -> (String, String) {
    match Manifest::loads(text) {
        Err(PartitionError::Schema { field, message }) => (field, message),
        other => panic!("expected a schema error, got {other:?}"),
    }
}

fn invalid_err(r: Result<impl std::fmt::Debug, PartitionError>) -> (String, String) {
    match r {
        Err(PartitionError::Invalid { field, message }) => (field, message),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

#[test]
fn another_schema_version_is_refused() {
    let e = schema_err(
        r#"{"schema_version": 99, "scope": "s", "epoch": 1, "hot_always": [], "blobs": []}"#,
    );
    assert_eq!(e, ("schema_version".into(), "expected 3, got 99".into()));
    let e = schema_err(
        r#"{"schema_version": 2, "scope": "s", "epoch": 1, "hot_always": [], "blobs": []}"#,
    );
    assert_eq!(e.0, "schema_version");
}

#[test]
fn schema_rules_name_the_field() {
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 0, "hot_always": [], "blobs": []}"#,
    );
    assert_eq!(e, ("epoch".into(), "0 is less than the minimum 1".into()));
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [],
            "blobs": [{"id": "b!", "prefixes": ["x"], "bucket": null}]}"#,
    );
    assert_eq!(e.0, "blobs[0].id");
    assert!(e.1.contains("does not match ^[a-z0-9_]+$"), "{}", e.1);
    let e = schema_err(r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": []}"#);
    assert_eq!(
        e,
        ("document".into(), "missing required field \"blobs\"".into())
    );
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [], "x": 1}"#,
    );
    assert_eq!(e, ("document".into(), "unexpected field \"x\"".into()));
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [],
            "blobs": [{"id": "b", "prefixes": ["x"], "bucket": {"index": 0, "width": 0, "key_encoding": "v3_slash"}}]}"#,
    );
    assert_eq!(
        e,
        (
            "blobs[0].bucket.width".into(),
            "0 is less than the minimum 1".into()
        )
    );
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [],
            "blobs": [{"id": "b", "prefixes": ["x"], "bucket": {"index": 0, "width": 1, "key_encoding": "v4"}}]}"#,
    );
    assert_eq!(e.0, "blobs[0].bucket.key_encoding");
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
            "pinned": [{"prefix": "x", "reason": ""}]}"#,
    );
    assert_eq!(e, ("pinned[0].reason".into(), "must not be empty".into()));
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
            "pinned": [{"prefix": "x"}]}"#,
    );
    assert_eq!(
        e,
        (
            "pinned[0]".into(),
            "missing required field \"reason\"".into()
        )
    );
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
            "policy": {"t_max_bytes": 1.5}}"#,
    );
    assert_eq!(
        e,
        (
            "policy.t_max_bytes".into(),
            "expected integer, got number".into()
        )
    );
    let e = schema_err(
        r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
            "policy": {"t_max_bytes": -1}}"#,
    );
    assert_eq!(e.0, "policy.t_max_bytes");
    assert!(matches!(
        Manifest::loads("{\"schema_version\": 3"),
        Err(PartitionError::Json { .. })
    ));
}

#[test]
fn cross_field_rules_name_the_field() {
    let dup = r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [],
        "blobs": [{"id": "b", "prefixes": ["x"], "bucket": null},
                  {"id": "b", "prefixes": ["y"], "bucket": null}]}"#;
    assert_eq!(
        invalid_err(Manifest::loads(dup)),
        ("blobs[1].id".into(), "duplicate blob id \"b\"".into())
    );
    let several = r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [],
        "blobs": [{"id": "b", "prefixes": ["x", "y"],
                   "bucket": {"index": 0, "width": 4, "key_encoding": "v3_slash"}}]}"#;
    assert_eq!(
        invalid_err(Manifest::loads(several)),
        (
            "blobs[0].prefixes".into(),
            "b: a bucketed blob needs exactly one prefix, got 2".into()
        )
    );
    let pins = r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
        "pinned": [{"prefix": "x", "reason": "a"}, {"prefix": "x", "reason": "b"}]}"#;
    assert_eq!(
        invalid_err(Manifest::loads(pins)),
        ("pinned[1].prefix".into(), "duplicate pin on \"x\"".into())
    );
    let blank = r#"{"schema_version": 3, "scope": "s", "epoch": 1, "hot_always": [], "blobs": [],
        "pinned": [{"prefix": "x", "reason": "   "}]}"#;
    assert_eq!(invalid_err(Manifest::loads(blank)).0, "pinned[0].reason");
    // Built in code, the same rules hold.
    let mut f = ManifestFields::new(
        "s",
        vec![bucketed("b", "x", 0, KeyEncoding::V3Slash)],
        vec![],
    );
    assert_eq!(
        invalid_err(Manifest::new(f.clone())).0,
        "blobs[0].bucket.width"
    );
    f.blobs = vec![Blob::new("b", &[])];
    assert_eq!(invalid_err(Manifest::new(f.clone())).0, "blobs[0].prefixes");
    f.blobs = vec![Blob::new("B", &["x"])];
    assert_eq!(invalid_err(Manifest::new(f.clone())).0, "blobs[0].id");
    f.blobs = vec![];
    f.pinned = vec![Pin::new("x", "")];
    assert_eq!(invalid_err(Manifest::new(f)).0, "pinned[0].reason");
}

#[test]
fn bad_arrays_name_the_field() {
    use chunkwise::partition::arrays_from_json_text;
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4, "stored_bytes": -5}]"#,
    ));
    assert_eq!(e.0, "arrays[0].stored_bytes");
    assert!(e.1.contains("negative"), "{}", e.1);
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4},
            {"path": "b", "shape": [4], "chunks": [0], "itemsize": 4}]"#,
    ));
    assert_eq!(
        e,
        ("arrays[1].chunks".into(), "extents must be >= 1".into())
    );
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4, 4], "chunks": [4], "itemsize": 4}]"#,
    ));
    assert_eq!(e.0, "arrays[0].chunks");
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 0}]"#,
    ));
    assert_eq!(e.0, "arrays[0].itemsize");
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4, "shards": [2, 2]}]"#,
    ));
    assert_eq!(e.0, "arrays[0].shards");
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4, "key_encoding": "v9"}]"#,
    ));
    assert_eq!(e.0, "arrays[0].key_encoding");
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4]}]"#,
    ));
    assert_eq!(
        e,
        (
            "arrays[0]".into(),
            "missing required field \"itemsize\"".into()
        )
    );
    let e = invalid_err(arrays_from_json_text(
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4, "stored_byte": 1}]"#,
    ));
    assert_eq!(
        e,
        (
            "arrays[0]".into(),
            "unexpected field \"stored_byte\"".into()
        )
    );
    // Arrays built in code are checked by partition too.
    let bad = Array::new("a", &[4], &[0], 4);
    assert_eq!(
        invalid_err(partition("s", &[bad], None, None, T0)).0,
        "arrays[0].chunks"
    );
}

// --- resolution -------------------------------------------------------------------------------

#[test]
fn resolve_module_examples() {
    let m = manifest(
        "cordex/a.zarr",
        vec![bucketed("b_tas", "tas/c", 2048, KeyEncoding::V3Slash)],
        &["**/zarr.json"],
    );
    let mut r = Resolver::new();
    r.add(&m);
    let hit = r.lookup("cordex/a.zarr/tas/c/5000/0/0");
    assert_eq!(hit.blob_id.as_deref(), Some("b_tas_2"));
    assert_eq!(hit.definition_id.as_deref(), Some("b_tas"));
    assert_eq!(hit.bucket_index, Some(2));
    assert_eq!(
        r.lookup("cordex/a.zarr/zarr.json").kind,
        ResolutionKind::Hot
    );
    assert_eq!(
        r.lookup("somewhere/else/entirely").kind,
        ResolutionKind::Unmanaged
    );

    let mut r = Resolver::new();
    r.add(&manifest("a", vec![Blob::new("b_a", &["x"])], &[]));
    r.add(&manifest("a/x", vec![Blob::new("b_deep", &["y"])], &[]));
    assert_eq!(r.lookup("a/x/y/0").blob_id.as_deref(), Some("b_deep_0"));
    assert_eq!(r.lookup("a/x/z/0").blob_id.as_deref(), Some("b_a_0"));

    let m = manifest(
        "s",
        vec![bucketed("b_tas", "tas/c", 100, KeyEncoding::V3Slash)],
        &[],
    );
    let mut r = Resolver::new();
    r.add(&m);
    assert_eq!(r.lookup("s/tas/c/250/0/0").bucket_index, Some(2));
    assert_eq!(
        r.lookup("s/tas/c/notanumber/0").kind,
        ResolutionKind::Unmanaged
    );
    assert_eq!(r.lookup("s/tas/c/-1/0").kind, ResolutionKind::Unmanaged);
    assert_eq!(r.lookup("s/tas/c").kind, ResolutionKind::Unmanaged);

    let pr = manifest("s", vec![Blob::new("b_pr", &["pr/c"])], &[]);
    assert_eq!(
        resolve(&pr, "pr/c/7/0/0").blob_id.as_deref(),
        Some("b_pr_0")
    );
}

#[test]
fn resolve_each_key_encoding() {
    let m = manifest(
        "store.zarr",
        vec![
            bucketed("b_tas", "tas/c", 64, KeyEncoding::V3Slash),
            bucketed("b_pr", "pr", 64, KeyEncoding::V2Slash),
            bucketed("b_hurs", "hurs", 64, KeyEncoding::V2Flat),
        ],
        &[],
    );
    assert_eq!(
        resolve(&m, "tas/c/137/0/0").blob_id.as_deref(),
        Some("b_tas_2")
    );
    assert_eq!(resolve(&m, "pr/137/0/0").blob_id.as_deref(), Some("b_pr_2"));
    assert_eq!(
        resolve(&m, "hurs/137.0.0").blob_id.as_deref(),
        Some("b_hurs_2")
    );
    assert_eq!(
        resolve(&m, "hurs/63.5.0").blob_id.as_deref(),
        Some("b_hurs_0")
    );
    assert_eq!(resolve(&m, "hurs/x.0.0").kind, ResolutionKind::Unmanaged);
    assert_eq!(
        resolve(&m, "/tas//c/64/0/0/").blob_id.as_deref(),
        Some("b_tas_1")
    );
}

#[test]
fn metadata_is_always_hot_and_pins_win_regardless_of_depth() {
    let mut f = ManifestFields::new(
        "s",
        vec![
            Blob::new("b_root", &[""]),
            bucketed("b_tas", "tas/c", 10, KeyEncoding::V3Slash),
        ],
        vec!["time/**".into()],
    );
    f.pinned = vec![Pin::new("tas", "under analysis")];
    let m = Manifest::new(f).unwrap();
    for key in [
        "tas/zarr.json",
        "tas/c/.zarray",
        "pr/.zattrs",
        ".zgroup",
        "a/b/.zmetadata",
    ] {
        assert_eq!(resolve(&m, key).kind, ResolutionKind::Hot, "{key}");
    }
    assert_eq!(resolve(&m, "tas/c/5/0/0").kind, ResolutionKind::Pinned);
    assert_eq!(resolve(&m, "time/c/0").kind, ResolutionKind::Hot);
    let hit = resolve(&m, "pr/c/0/0");
    assert_eq!(hit.blob_id.as_deref(), Some("b_root_0"));
    assert!(hit.archivable());
}

#[test]
fn empty_scope_root_blob_claims_every_key() {
    let m = manifest("", vec![Blob::new("b_root", &[""])], &[]);
    assert_eq!(resolve(&m, "pr/c/0").blob_id.as_deref(), Some("b_root_0"));
    assert_eq!(resolve(&m, "").kind, ResolutionKind::Unmanaged);
}
