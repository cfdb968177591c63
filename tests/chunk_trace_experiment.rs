//! The chunk-cache experiment's table, simulated.
#![cfg(feature = "chunk-trace")]

use chunkwise::chunk_trace::{
    experiment_geometry, experiment_trace, simulate, CacheConfig, ExperimentOrder, HashForm,
    EXPERIMENT_CASES, EXPERIMENT_STORED_SIZES,
};

#[test]
fn six_cases_match_the_table() {
    let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    let got: Vec<(u64, u64)> = EXPERIMENT_CASES
        .iter()
        .map(|c| {
            let r = simulate(&g, &experiment_trace(c.order), c.config, HashForm::Current).unwrap();
            (r.total.reads, r.total.raw_bytes)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (4, 5328),
            (32, 42624),
            (4, 5328),
            (32, 42624),
            (32, 42624),
            (32, 42624)
        ]
    );
    for c in EXPERIMENT_CASES {
        let r = simulate(
            &g,
            &experiment_trace(c.order),
            c.config,
            HashForm::Pre1_10_5,
        )
        .unwrap();
        assert_eq!(r.total.reads, c.expected_reads, "pre-1.10.5 hashing, {c:?}");
    }
}

#[test]
fn decode_volume_and_ratio() {
    let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    let friendly = simulate(
        &g,
        &experiment_trace(ExperimentOrder::RoundRobin),
        EXPERIMENT_CASES[0].config,
        HashForm::Current,
    )
    .unwrap();
    let hostile = simulate(
        &g,
        &experiment_trace(ExperimentOrder::RoundRobin),
        EXPERIMENT_CASES[1].config,
        HashForm::Current,
    )
    .unwrap();
    assert_eq!(friendly.total.selected_bytes, 128);
    assert_eq!(friendly.total.decoded_bytes, 16384);
    assert_eq!(hostile.total.decoded_bytes, 131072);
    assert_eq!(friendly.decode_ratio, 128.0);
    assert_eq!(hostile.decode_ratio, 1024.0);
    assert_eq!(friendly.total.hits, 28);
    // Per selection: the first round reads A, B, C, D, in that order.
    let first: Vec<Vec<u64>> = friendly.selections[..4]
        .iter()
        .flat_map(|s| s.read_chunks.clone())
        .collect();
    assert_eq!(first, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
}

#[test]
fn round_robin_needs_exactly_four_decoded_chunks() {
    let g = experiment_geometry(EXPERIMENT_STORED_SIZES);
    let t = experiment_trace(ExperimentOrder::RoundRobin);
    let reads = |nbytes| {
        let c = CacheConfig {
            nslots: 17,
            nbytes,
            w0: 0.0,
        };
        simulate(&g, &t, c, HashForm::Current).unwrap().total.reads
    };
    assert_eq!(reads(16384), 4);
    assert_eq!(reads(16383), 32);
    assert_eq!(reads(12288), 32);
}
