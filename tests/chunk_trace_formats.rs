//! JSON inputs of the chunk-cache simulator: the committed fixtures, and what bad input yields.
#![cfg(feature = "chunk-trace")]

use chunkwise::chunk_trace::{
    experiment_geometry, experiment_trace, simulate, CacheConfig, ChunkGeometry, ChunkTraceError,
    ExperimentOrder, HashForm, Trace, EXPERIMENT_STORED_SIZES,
};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/chunk_trace/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn fixtures_equal_the_experiment_definitions() {
    let g: ChunkGeometry = serde_json::from_str(&fixture("experiment_geometry.json")).unwrap();
    assert_eq!(g, experiment_geometry(EXPERIMENT_STORED_SIZES));
    let rr: Trace = serde_json::from_str(&fixture("round_robin_trace.json")).unwrap();
    assert_eq!(rr, experiment_trace(ExperimentOrder::RoundRobin));
    let gr: Trace = serde_json::from_str(&fixture("grouped_trace.json")).unwrap();
    assert_eq!(gr, experiment_trace(ExperimentOrder::Grouped));
}

#[test]
fn bad_input_is_an_error() {
    let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    let cfg = CacheConfig {
        nslots: 17,
        nbytes: 16384,
        w0: 0.0,
    };
    let t: Trace = serde_json::from_str(r#"{"selections":[{"points":[[64,0]]}]}"#).unwrap();
    let e = simulate(&g, &t, cfg, HashForm::Current).unwrap_err();
    assert!(
        matches!(e, ChunkTraceError::InvalidSelection(ref m) if m.starts_with("selection 0")),
        "{e}"
    );
    let t: Trace = serde_json::from_str(r#"{"selections":[{"points":[[1,2,3]]}]}"#).unwrap();
    assert!(simulate(&g, &t, cfg, HashForm::Current).is_err());
    let huge = r#"{"selections":[{"hyperslab":{"start":[0,0],"count":[64,64],"stride":[1,1],"block":[1,1]}}]}"#;
    let t: Trace = serde_json::from_str(huge).unwrap();
    assert_eq!(
        simulate(&g, &t, cfg, HashForm::Current)
            .unwrap()
            .total
            .reads,
        4
    );
    let bad_w0 = CacheConfig { w0: -0.5, ..cfg };
    assert!(matches!(
        simulate(&g, &t, bad_w0, HashForm::Current),
        Err(ChunkTraceError::InvalidConfig(_))
    ));
    let mut bad = g.clone();
    bad.element_size = 0;
    assert!(matches!(
        simulate(&bad, &t, cfg, HashForm::Current),
        Err(ChunkTraceError::InvalidGeometry(_))
    ));
    // A selection touching more chunks than the bound is refused, not walked.
    let wide = ChunkGeometry {
        shape: vec![1 << 40, 1 << 20],
        chunk_shape: vec![1, 1],
        element_size: 1,
        filtered: true,
        chunks: vec![],
        default_stored_size: None,
    };
    let all = Trace {
        selections: vec![chunkwise::chunk_trace::Selection::Hyperslab(
            chunkwise::chunk_trace::Hyperslab::boxed(vec![0, 0], vec![1 << 40, 1 << 20]),
        )],
    };
    assert!(simulate(&wide, &all, cfg, HashForm::Current).is_err());
}

#[test]
fn unallocated_chunks_are_not_read_but_cached() {
    // Chunk (0, 1) is not allocated: HDF5 fills it from the fill value and caches that.
    let mut g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    g.chunks[1].stored_size = 0;
    let cfg = CacheConfig {
        nslots: 17,
        nbytes: 16384,
        w0: 0.0,
    };
    let r = simulate(
        &g,
        &experiment_trace(ExperimentOrder::RoundRobin),
        cfg,
        HashForm::Current,
    )
    .unwrap();
    assert_eq!(
        (r.total.reads, r.total.raw_bytes, r.total.hits),
        (3, 3994, 28)
    );
}

#[test]
fn unfiltered_oversize_chunks_bypass_the_cache() {
    // Unfiltered 4 KiB chunks with a 2 KiB budget: element-wise reads, no chunk reads.
    let mut g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    g.filtered = false;
    g.chunks.clear();
    let cfg = CacheConfig {
        nslots: 17,
        nbytes: 2048,
        w0: 0.0,
    };
    let r = simulate(
        &g,
        &experiment_trace(ExperimentOrder::RoundRobin),
        cfg,
        HashForm::Current,
    )
    .unwrap();
    assert_eq!(
        (r.total.reads, r.total.direct_reads, r.total.decoded_bytes),
        (0, 32, 0)
    );
    // Fitting the budget, they are read whole at their decoded size and cached.
    let cfg = CacheConfig {
        nbytes: 16384,
        ..cfg
    };
    let r = simulate(
        &g,
        &experiment_trace(ExperimentOrder::RoundRobin),
        cfg,
        HashForm::Current,
    )
    .unwrap();
    assert_eq!((r.total.reads, r.total.raw_bytes), (4, 16384));
}
