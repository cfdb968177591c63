//! `chunkwise chunk-trace` through its library functions, simulated and against both real builds.

use std::path::PathBuf;

use native_harness::chunk_trace_cli::{run, ChunkTraceArgs};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/chunk_trace")
        .join(name)
}

fn trace_args(trace: &str, nslots: u64, nbytes: u64) -> ChunkTraceArgs {
    ChunkTraceArgs {
        geometry: Some(fixture("experiment_geometry.json")),
        trace: Some(fixture(trace)),
        nslots: Some(nslots),
        nbytes: Some(nbytes),
        w0: Some(0.0),
        ..Default::default()
    }
}

fn json(args: &ChunkTraceArgs) -> serde_json::Value {
    let out = run(&ChunkTraceArgs {
        json: true,
        ..args.clone()
    })
    .unwrap();
    serde_json::from_str(&out).unwrap()
}

#[test]
fn geometry_and_trace_files() {
    let v = json(&trace_args("round_robin_trace.json", 17, 16384));
    assert_eq!(v[0]["reads"], 4);
    assert_eq!(v[0]["raw_bytes"], 5328);
    assert_eq!(v[0]["nslots"], 17);
    let v = json(&trace_args("round_robin_trace.json", 1, 16384));
    assert_eq!(
        (v[0]["reads"].as_u64(), v[0]["raw_bytes"].as_u64()),
        (Some(32), Some(42624))
    );
    let v = json(&trace_args("grouped_trace.json", 1, 4096));
    assert_eq!(v[0]["reads"], 4);
}

#[test]
fn text_output_carries_the_advice() {
    let text = run(&trace_args("round_robin_trace.json", 1, 16384)).unwrap();
    assert!(
        text.contains("reuse set: 4 chunks revisited, at most 4 needed at once"),
        "{text}"
    );
    assert!(
        text.contains("smallest nslots reaching it 4; smallest nbytes 16384"),
        "{text}"
    );
    assert!(
        text.contains("grouping accesses by chunk: 4 reads (28 fewer)"),
        "{text}"
    );
    assert!(text.contains("decoded/selected 1024.0"), "{text}");
}

#[test]
fn errors_are_messages() {
    let mut a = trace_args("round_robin_trace.json", 17, 16384);
    a.trace = None;
    assert!(run(&a).unwrap_err().contains("--trace"));
    let mut a = trace_args("missing.json", 17, 16384);
    a.json = true;
    assert!(run(&a).unwrap_err().contains("missing.json"));
    let mut a = trace_args("round_robin_trace.json", 17, 16384);
    a.w0 = Some(2.0);
    assert!(run(&a).unwrap_err().contains("w0"));
}

#[test]
fn experiment_real_side_by_side() {
    let v = json(&ChunkTraceArgs {
        experiment: true,
        real: true,
        ..Default::default()
    });
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        for build in ["hdf5_1_10_8", "hdf5_2_0_0"] {
            assert_eq!(r[build]["reads"], r["reads"], "{build}: {r}");
            assert_eq!(r[build]["raw_bytes"], r["raw_bytes"], "{build}: {r}");
        }
    }
}

#[test]
fn trace_real_side_by_side() {
    let mut a = trace_args("round_robin_trace.json", 17, 16383);
    a.real = true;
    let v = json(&a);
    for build in ["hdf5_1_10_8", "hdf5_2_0_0"] {
        assert_eq!(v[0][build]["reads"], 32, "{build}: {v}");
    }
    assert_eq!(v[0]["reads"], 32);
}
