//! The chunk-cache simulator against two real HDF5 builds, read for read.
//!
//! Every case is written with h5py (libver v110) and read through a logging file object under
//! HDF5 1.10.8 (Debian's python3-h5py) and HDF5 2.0.0 (h5py 3.16 in the venv); the simulator
//! replays the same trace with the chunk sizes the real file stores. Both builds must be installed
//! (`scripts/setup.sh`); a missing one fails the test.

use chunkwise::chunk_trace::{
    random_trace, simulate, CacheConfig, HashForm, Selection, SplitMix64, Trace, EXPERIMENT_CASES,
    EXPERIMENT_STORED_SIZES,
};
use native_harness::chunk_trace_cli::{
    check_build, experiment_oracle_cases, geometry_from_oracle, real_builds, run_all_builds,
    OracleCase, OracleOutput,
};

const RANDOM_CASES: usize = 240;

fn pick<T: Copy>(rng: &mut SplitMix64, xs: &[T]) -> T {
    xs[rng.below(xs.len() as u64) as usize]
}

/// Seeded random cases: 1-D, 2-D and 3-D, several chunk shapes (edge chunks included), four element
/// sizes, gzip on and off, some with unallocated chunks, nslots and nbytes around the
/// thresholds, w0 in {0, 0.5, 0.75, 1}.
///
/// Unfiltered datasets get `nbytes >= chunk size` and `nslots > 0`: otherwise HDF5 reads the
/// selected elements straight from the file, which are not whole-chunk reads.
fn random_cases(seed: u64, n: usize) -> Vec<OracleCase> {
    let mut rng = SplitMix64::new(seed);
    let mut cases = Vec::with_capacity(n);
    for i in 0..n {
        let rank = match rng.below(10) {
            0 => 1,
            1..=5 => 2,
            _ => 3,
        };
        let shape: Vec<u64> = (0..rank)
            .map(|_| match rank {
                1 => 4 + rng.below(200),
                2 => 4 + rng.below(45),
                _ => 2 + rng.below(13),
            })
            .collect();
        let chunks: Vec<u64> = shape.iter().map(|&d| 1 + rng.below(d.min(16))).collect();
        let (dtype, size) = pick(
            &mut rng,
            &[("<u1", 1u64), ("<u2", 2), ("<u4", 4), ("<f8", 8)],
        );
        let gzip = if rng.below(2) == 0 {
            Some(1 + rng.below(9) as u32)
        } else {
            None
        };
        let c: u64 = chunks.iter().product::<u64>() * size;
        let nchunks: u64 = shape
            .iter()
            .zip(&chunks)
            .map(|(&s, &k)| s.div_ceil(k))
            .product();
        let all = nchunks * c;
        let (nbytes, nslots) = if gzip.is_some() {
            (
                pick(
                    &mut rng,
                    &[
                        0,
                        c - 1,
                        c,
                        c + 1,
                        2 * c - 1,
                        2 * c,
                        3 * c,
                        4 * c,
                        all - 1,
                        all,
                        1 << 20,
                    ],
                ),
                pick(
                    &mut rng,
                    &[0, 1, 2, 3, 5, 8, 13, 17, nchunks, nchunks + 1, 521, 8191],
                ),
            )
        } else {
            (
                pick(
                    &mut rng,
                    &[
                        c,
                        c + 1,
                        2 * c - 1,
                        2 * c,
                        3 * c,
                        4 * c,
                        all.max(c),
                        all.max(c + 1) - 1,
                        1 << 20,
                    ],
                )
                .max(c),
                pick(
                    &mut rng,
                    &[1, 2, 3, 5, 8, 13, 17, nchunks, nchunks + 1, 521, 8191],
                ),
            )
        };
        let w0 = pick(&mut rng, &[0.0, 0.5, 0.75, 1.0]);
        let len = 10 + rng.below(30) as usize;
        let trace = random_trace(&shape, &chunks, seed ^ (i as u64) << 20, len);
        cases.push(OracleCase {
            id: format!("random-{i}"),
            shape,
            chunks,
            dtype: dtype.into(),
            gzip,
            holes: rng.below(5) == 0,
            data: if rng.below(2) == 0 {
                "arange".into()
            } else {
                "mod251".into()
            },
            nslots,
            nbytes,
            w0,
            trace,
        });
    }
    cases
}

/// Compares one build's results with the simulator; returns a description per disagreement.
fn compare(cases: &[OracleCase], out: &OracleOutput) -> Vec<String> {
    let label = out.label();
    let mut failures = Vec::new();
    for (case, res) in cases.iter().zip(&out.results) {
        let describe = |what: String| {
            format!(
                "{label} {}: {what}\n  case: {}",
                case.id,
                serde_json::to_string(case).unwrap_or_default()
            )
        };
        if !res.ok {
            failures.push(describe(format!(
                "oracle error: {}",
                res.error.clone().unwrap_or_default()
            )));
            continue;
        }
        let geometry = match geometry_from_oracle(case, res) {
            Ok(g) => g,
            Err(e) => {
                failures.push(describe(e));
                continue;
            }
        };
        let sim = match simulate(&geometry, &case.trace, case.config(), HashForm::Current) {
            Ok(s) => s,
            Err(e) => {
                failures.push(describe(format!("simulator error: {e}")));
                continue;
            }
        };
        let real = res.selections.as_deref().unwrap_or(&[]);
        if real.len() != sim.selections.len() {
            failures.push(describe(format!(
                "{} selections measured, {} simulated",
                real.len(),
                sim.selections.len()
            )));
            continue;
        }
        for (k, (r, s)) in real.iter().zip(&sim.selections).enumerate() {
            if r.reads != s.read_chunks || r.raw_bytes != s.counts.raw_bytes {
                failures.push(describe(format!(
                    "selection {k} {:?}: real reads {:?} ({} bytes), simulated {:?} ({} bytes)",
                    case.trace.selections[k],
                    r.reads,
                    r.raw_bytes,
                    s.read_chunks,
                    s.counts.raw_bytes
                )));
                break;
            }
        }
        if sim.total.direct_reads > 0 {
            failures.push(describe("case exercises direct element reads".into()));
        }
    }
    failures
}

#[test]
fn simulator_matches_hdf5_1_10_8_and_2_0_0() {
    let mut cases = experiment_oracle_cases();
    let n_exp = cases.len();
    // The byte boundary: 16,383 bytes cannot hold the four decoded chunks.
    let mut boundary = cases[0].clone();
    boundary.id = "experiment-boundary-16383".into();
    boundary.nbytes = 16383;
    cases.push(boundary);
    // One-step promotion: chunks A..E of 16 bytes, room for three, no collisions. After
    // A B C A D E, a hit promoted only one place leaves A least recent when E arrives, so the last
    // A is read again: 6 reads (a move-to-end LRU would keep A: 5 reads).
    let scalar = |i: u64| Selection::Points(vec![vec![i * 4]]);
    cases.push(OracleCase {
        id: "one-step-promotion".into(),
        shape: vec![20],
        chunks: vec![4],
        dtype: "<u4".into(),
        gzip: Some(1),
        data: "arange".into(),
        holes: false,
        nslots: 16,
        nbytes: 48,
        w0: 0.0,
        trace: Trace {
            selections: [0, 1, 2, 0, 3, 4, 0].map(scalar).to_vec(),
        },
    });
    // CHUNKWISE_PARITY_CASES / CHUNKWISE_PARITY_SEED widen a run by hand; the default is fixed.
    let n = std::env::var("CHUNKWISE_PARITY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RANDOM_CASES);
    let seed = std::env::var("CHUNKWISE_PARITY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_C4C7);
    cases.extend(random_cases(seed, n));

    let outs = run_all_builds(&cases).unwrap_or_else(|e| panic!("real HDF5 builds: {e}"));
    assert_eq!(outs.len(), 2);
    let mut versions: Vec<String> = outs.iter().map(|o| o.hdf5_version.clone()).collect();
    versions.sort();
    assert_eq!(versions, vec!["1.10.8".to_string(), "2.0.0".to_string()]);

    let mut failures = Vec::new();
    for out in &outs {
        // The experiment table: counts as published, bytes equal to this build's stored sizes.
        let mut reads = Vec::new();
        let promo = &out.results[n_exp + 1];
        assert_eq!(promo.reads, Some(6), "{}: {promo:?}", out.label());
        for (case, res) in cases[..n_exp + 1].iter().zip(&out.results) {
            assert!(res.ok, "{} {}: {:?}", out.label(), case.id, res.error);
            let stored: u64 = res
                .chunks
                .as_ref()
                .unwrap()
                .iter()
                .map(|c| c.stored_size)
                .sum();
            let r = res.reads.unwrap();
            assert_eq!(
                res.raw_bytes.unwrap(),
                stored * r / 4,
                "{} {}",
                out.label(),
                case.id
            );
            reads.push(r);
        }
        assert_eq!(reads, vec![4, 32, 4, 32, 32, 32, 32], "{}", out.label());
        let sizes: Vec<u64> = out.results[0]
            .chunks
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c.stored_size)
            .collect();
        println!(
            "{}: experiment reads {:?}, raw bytes {:?}; stored sizes {:?} {} the experiment's {:?}",
            out.label(),
            &reads[..6],
            out.results[..6]
                .iter()
                .map(|r| r.raw_bytes.unwrap())
                .collect::<Vec<_>>(),
            sizes,
            if sizes == EXPERIMENT_STORED_SIZES {
                "equal"
            } else {
                "differ from"
            },
            EXPERIMENT_STORED_SIZES
        );
        for (c, r) in EXPERIMENT_CASES.iter().zip(&reads) {
            assert_eq!(c.expected_reads, *r);
        }
        let f = compare(&cases, out);
        let total_reads: u64 = out.results.iter().filter_map(|r| r.reads).sum();
        println!(
            "{}: {} cases, {} raw chunk reads measured, {} disagreements",
            out.label(),
            cases.len(),
            total_reads,
            f.len()
        );
        failures.extend(f);
    }
    // The cases must be able to tell wrong models apart: count cases where a variant of the
    // model disagrees with HDF5 2.0.0.
    let out = outs.iter().find(|o| o.hdf5_version == "2.0.0").unwrap();
    let variant_misses = |f: &dyn Fn(&OracleCase) -> (CacheConfig, HashForm)| -> usize {
        cases
            .iter()
            .zip(&out.results)
            .filter(|(case, res)| {
                let (config, form) = f(case);
                let g = geometry_from_oracle(case, res).unwrap();
                let sim = simulate(&g, &case.trace, config, form).unwrap();
                let real = res.selections.as_ref().unwrap();
                real.iter()
                    .zip(&sim.selections)
                    .any(|(r, s)| r.reads != s.read_chunks)
            })
            .count()
    };
    let old_hash = variant_misses(&|c| (c.config(), HashForm::Pre1_10_5));
    let no_w0 = variant_misses(&|c| {
        (
            CacheConfig {
                w0: 0.0,
                ..c.config()
            },
            HashForm::Current,
        )
    });
    let all_w0 = variant_misses(&|c| {
        (
            CacheConfig {
                w0: 1.0,
                ..c.config()
            },
            HashForm::Current,
        )
    });
    let no_slots = variant_misses(&|c| {
        let n = if c.nslots == 0 { 0 } else { 1_000_003 };
        (
            CacheConfig {
                nslots: n,
                ..c.config()
            },
            HashForm::Current,
        )
    });
    println!(
        "cases that reject a wrong model: pre-1.10.5 hashing {old_hash}, w0 forced to 0 {no_w0}, \
         w0 forced to 1 {all_w0}, no slot collisions {no_slots}"
    );
    assert!(old_hash > 0 && no_w0 > 0 && all_w0 > 0 && no_slots > 0);
    assert!(
        failures.is_empty(),
        "{} disagreements between the simulator and real HDF5:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn default_cache_settings_of_each_build() {
    const SNIPPET: &str = "import h5py, io, numpy as np\n\
        b = io.BytesIO()\n\
        with h5py.File(b, 'w', libver=('v110', 'v110')) as f:\n    f.create_dataset('x', data=np.arange(10), chunks=(2,))\n\
        with h5py.File(io.BytesIO(b.getvalue()), 'r') as f:\n    print(h5py.version.hdf5_version, *f['x'].id.get_access_plist().get_chunk_cache())\n";
    for build in real_builds() {
        check_build(&build).unwrap_or_else(|e| panic!("{e}"));
        let out = std::process::Command::new(&build.python)
            .args(["-c", SNIPPET])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            build.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = text.split_whitespace().collect();
        let expected = if f[0].starts_with("1.") {
            CacheConfig::HDF5_1_DEFAULT
        } else {
            CacheConfig::HDF5_2_DEFAULT
        };
        let got = CacheConfig {
            nslots: f[1].parse().unwrap(),
            nbytes: f[2].parse().unwrap(),
            w0: f[3].parse().unwrap(),
        };
        assert_eq!(got, expected, "{}: {text}", build.name);
    }
}
