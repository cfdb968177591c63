//! The `partition` and `resolve` subcommands, called as functions on real files.

use std::path::{Path, PathBuf};

use chunkwise::partition::{Manifest, ResolutionKind};
use native_harness::partition_cli::{partition_command, resolve_command, synthetic_arrays};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/zarr_partition")
        .join(name)
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("chunkwise-partition-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SPEC_ARRAYS: &str = r#"[
  {"path": "time", "shape": [400], "chunks": [400], "itemsize": 8, "is_coordinate": true},
  {"path": "tas", "shape": [400, 4, 4], "chunks": [10, 4, 4], "itemsize": 4,
   "stored_bytes": 429496729600}
]"#;

const GROWN_ARRAYS: &str = r#"[
  {"path": "time", "shape": [800], "chunks": [400], "itemsize": 8, "is_coordinate": true},
  {"path": "tas", "shape": [800, 4, 4], "chunks": [10, 4, 4], "itemsize": 4,
   "stored_bytes": 858993459200, "nobjects_seen": 80, "shards": null,
   "key_encoding": "v3_slash"}
]"#;

const WITH_PR: &str = r#"[
  {"path": "time", "shape": [800], "chunks": [400], "itemsize": 8, "is_coordinate": true},
  {"path": "tas", "shape": [800, 4, 4], "chunks": [10, 4, 4], "itemsize": 4,
   "stored_bytes": 858993459200},
  {"path": "pr", "shape": [100, 4], "chunks": [10, 4], "itemsize": 4,
   "stored_bytes": 214748364800, "key_encoding": "v2_flat"}
]"#;

#[test]
fn arrays_file_first_run_append_and_new_variable() {
    let dir = scratch("arrays");
    let arrays = dir.join("arrays.json");
    let manifest = dir.join("manifest.json");
    std::fs::write(&arrays, SPEC_ARRAYS).unwrap();
    let report = partition_command(
        &arrays,
        Some("cordex/a.zarr"),
        None,
        None,
        false,
        Some(&manifest),
    )
    .unwrap();
    assert_eq!(
        report,
        format!(
            "+ b_tas ['tas/c']\nwrote {} (epoch 1)\n",
            manifest.display()
        )
    );
    let m = Manifest::loads(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(m.scope, "cordex/a.zarr");
    assert_eq!(m.blobs.len(), 1);
    assert_eq!(m.blobs[0].bucket.unwrap().width, 10);
    assert!(m.hot_always.iter().any(|h| h == "time/**"));

    // 400 GiB over 40 objects, width 10: chunk 137 is instance 13.
    assert_eq!(
        resolve_command(&manifest, "tas/c/137/0/0").unwrap(),
        "b_tas_13 blob b_tas bucket 13"
    );
    assert_eq!(resolve_command(&manifest, "tas/zarr.json").unwrap(), "hot");
    assert_eq!(resolve_command(&manifest, "time/c/0").unwrap(), "hot");
    assert_eq!(
        resolve_command(&manifest, "other/c/0").unwrap(),
        "unmanaged"
    );

    // An append changes nothing and writes nothing.
    let before = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&arrays, GROWN_ARRAYS).unwrap();
    let report = partition_command(
        &arrays,
        Some("cordex/a.zarr"),
        Some(&manifest),
        None,
        false,
        None,
    )
    .unwrap();
    assert_eq!(report, "(no change)\nnothing to write\n");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), before);

    // A dry run reports the new blob and leaves the file alone.
    std::fs::write(&arrays, WITH_PR).unwrap();
    let report = partition_command(
        &arrays,
        Some("cordex/a.zarr"),
        Some(&manifest),
        None,
        true,
        None,
    )
    .unwrap();
    assert_eq!(report, "+ b_pr ['pr']\ndry run: epoch 2 not written\n");
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), before);

    // A new variable is an additive change: written back with the epoch bumped.
    let report = partition_command(
        &arrays,
        Some("cordex/a.zarr"),
        Some(&manifest),
        None,
        false,
        None,
    )
    .unwrap();
    assert_eq!(
        report,
        format!("+ b_pr ['pr']\nwrote {} (epoch 2)\n", manifest.display())
    );
    let m2 = Manifest::loads(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(m2.epoch, 2);
    assert_eq!(m2.blobs[0], m.blobs[0]);
    assert_eq!(
        resolve_command(&manifest, "pr/99.3").unwrap(),
        // 200 GiB over 10 objects: ideal 100/20 = 5.
        "b_pr_19 blob b_pr bucket 19"
    );
}

#[test]
fn store_directory_with_policy_file() {
    let dir = scratch("store");
    let manifest = dir.join("m.json");
    let report = partition_command(
        &fixture("v3.zarr"),
        None,
        None,
        Some(&fixture("policy.json")),
        false,
        Some(&manifest),
    )
    .unwrap();
    assert_eq!(
        report,
        format!(
            "+ b_pr ['pr/c']\n+ b_tas ['tas/c']\n+ b_orog_c_sftlf_c ['orog/c', 'sftlf/c']\n\
             wrote {} (epoch 1)\n",
            manifest.display()
        )
    );
    let m = Manifest::loads(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(m.scope, "v3.zarr");
    assert_eq!(m.policy.t_max_bytes, 2048);
    assert_eq!(
        resolve_command(&manifest, "pr/c/9/0/0").unwrap(),
        "b_pr_1 blob b_pr bucket 1"
    );
    // Without --out or --previous the manifest text follows the diff.
    let report = partition_command(
        &fixture("v2.zarr"),
        Some("v2"),
        None,
        Some(&fixture("policy.json")),
        false,
        None,
    )
    .unwrap();
    let (diff, text) = report.split_once("\n{").unwrap();
    assert_eq!(
        diff,
        "+ b_pr ['pr']\n+ b_tas ['tas']\n+ b_orog_sftlf ['orog', 'sftlf']"
    );
    let m = Manifest::loads(&format!("{{{text}")).unwrap();
    assert_eq!(m.scope, "v2");
    assert_eq!(
        chunkwise::partition::resolve(&m, "tas/3.0.0").kind,
        ResolutionKind::Blob
    );
}

#[test]
fn errors_name_the_file_and_field() {
    let dir = scratch("errors");
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"schema_version": 99, "scope": "s", "epoch": 1, "hot_always": [], "blobs": []}"#,
    )
    .unwrap();
    let e = resolve_command(&bad, "x").unwrap_err();
    assert_eq!(
        e,
        format!("{}: schema_version: expected 3, got 99", bad.display())
    );

    let arrays = dir.join("arrays.json");
    std::fs::write(&arrays, SPEC_ARRAYS).unwrap();
    let e = partition_command(&arrays, None, Some(&bad), None, false, None).unwrap_err();
    assert!(e.ends_with("schema_version: expected 3, got 99"), "{e}");

    std::fs::write(
        &arrays,
        r#"[{"path": "a", "shape": [4], "chunks": [4], "itemsize": 4, "stored_bytes": -1}]"#,
    )
    .unwrap();
    let e = partition_command(&arrays, None, None, None, true, None).unwrap_err();
    assert!(e.contains("arrays[0].stored_bytes"), "{e}");

    let missing = dir.join("missing.json");
    assert!(resolve_command(&missing, "x")
        .unwrap_err()
        .starts_with(&missing.display().to_string()));

    let empty = dir.join("empty_store");
    std::fs::create_dir_all(&empty).unwrap();
    let e = partition_command(&empty, None, None, None, true, None).unwrap_err();
    assert!(e.ends_with(".: no zarr metadata found"), "{e}");
}

#[test]
fn synthetic_scope_is_valid_input() {
    let arrays = synthetic_arrays(1000);
    assert_eq!(arrays.len(), 1000);
    let m = chunkwise::partition::partition("s", &arrays, None, None, "t")
        .unwrap()
        .manifest;
    // 100 arrays of 150 GiB are bucketed, 899 of 1 GiB stand alone (no coalescing by default),
    // and v1 is a coordinate.
    assert_eq!(m.blobs.len(), 999);
    assert_eq!(m.hot_always.len(), 6);
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn partition_bench() {
    println!("{}", native_harness::partition_cli::bench());
}
