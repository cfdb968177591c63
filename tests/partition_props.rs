//! Seeded, bounded property checks of the cut: coverage, stability across repartitions, ids,
//! and JSON round trips. A small xorshift generator keeps runs reproducible by seed.
#![cfg(feature = "partition")]

use std::collections::HashSet;

use chunkwise::partition::{
    diff, is_valid_id, partition, resolve, Array, KeyEncoding, Manifest, Policy, ResolutionKind,
};

const T0: &str = "2026-12-01T00:00:00+00:00";
const CASES: u64 = 300;

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn random_policy(rng: &mut Rng) -> Policy {
    Policy {
        t_max_bytes: 1 + rng.below(10_000),
        t_min_bytes: [0, 0, rng.below(5_000)][rng.below(3) as usize],
        t_hot_bytes: rng.below(300),
        width_clamp: 1 + rng.below(10),
        pow2_floor: rng.below(80),
    }
}

/// Leaf arrays only (no array path is an ancestor of another), so prefixes never nest.
fn random_arrays(rng: &mut Rng) -> Vec<Array> {
    let n = 1 + rng.below(12);
    let mut out = Vec::new();
    for i in 0..n {
        let ndim = 1 + rng.below(3) as usize;
        let shape: Vec<u64> = (0..ndim).map(|_| 1 + rng.below(500)).collect();
        let chunks: Vec<u64> = shape.iter().map(|&s| 1 + rng.below(s)).collect();
        // Punctuation that sanitises to the same id exercises collisions.
        let name = match rng.below(4) {
            0 => format!("g{}/v-{}", rng.below(3), i),
            1 => format!("g{}/v_{}", rng.below(3), i),
            _ => format!("v{i}"),
        };
        let mut a = Array::new(&name, &shape, &chunks, [1, 2, 4, 8][rng.below(4) as usize]);
        if rng.below(3) == 0 {
            let shards: Vec<u64> = chunks.iter().map(|&c| c * (1 + rng.below(4))).collect();
            a.shards = Some(shards);
        }
        if rng.below(4) != 0 {
            a.stored_bytes = Some(rng.below(a.total_bytes().max(1) * 2));
        }
        a.is_coordinate = ndim == 1 && rng.below(6) == 0;
        a.key_encoding = [
            KeyEncoding::V3Slash,
            KeyEncoding::V2Slash,
            KeyEncoding::V2Flat,
        ][rng.below(3) as usize];
        out.push(a);
    }
    out
}

/// A chunk key of `a` with index `i` along dimension 0.
fn chunk_key(a: &Array, i: u64) -> String {
    let rest = vec!["0"; a.shape.len() - 1];
    match a.key_encoding {
        KeyEncoding::V3Slash => {
            let mut parts = vec![format!("{}/c/{i}", a.path)];
            parts.extend(rest.iter().map(|s| s.to_string()));
            parts.join("/")
        }
        KeyEncoding::V2Slash => {
            let mut parts = vec![format!("{}/{i}", a.path)];
            parts.extend(rest.iter().map(|s| s.to_string()));
            parts.join("/")
        }
        KeyEncoding::V2Flat => {
            let mut parts = vec![i.to_string()];
            parts.extend(rest.iter().map(|s| s.to_string()));
            format!("{}/{}", a.path, parts.join("."))
        }
    }
}

fn claims(prefix: &str, key: &str) -> bool {
    prefix.is_empty() || key == prefix || key.starts_with(&format!("{prefix}/"))
}

fn is_hot(a: &Array, p: &Policy) -> bool {
    a.is_coordinate || a.total_bytes() < p.t_hot_bytes
}

#[test]
fn every_payload_array_is_covered_exactly_once_and_resolves() {
    for seed in 0..CASES {
        let mut rng = Rng::new(seed);
        let policy = random_policy(&mut rng);
        let arrays = random_arrays(&mut rng);
        let out = partition("s", &arrays, Some(&policy), None, T0).unwrap();
        let m = &out.manifest;
        for a in &arrays {
            let prefix = a.chunk_prefix();
            let n = m
                .blobs
                .iter()
                .filter(|b| b.prefixes.iter().any(|p| claims(p, &prefix)))
                .count();
            let key = chunk_key(a, a.object_grid()[0] - 1);
            let r = resolve(m, &key);
            if is_hot(a, &policy) {
                assert_eq!(r.kind, ResolutionKind::Hot, "seed {seed}: {key}");
                assert!(n <= 1, "seed {seed}: hot {} claimed {n} times", a.path);
            } else {
                assert_eq!(n, 1, "seed {seed}: {} claimed {n} times", a.path);
                assert_eq!(r.kind, ResolutionKind::Blob, "seed {seed}: {key}");
                let blob = m.by_id(r.definition_id.as_deref().unwrap()).unwrap();
                let expected = match blob.bucket {
                    Some(b) => (a.object_grid()[0] - 1) / b.width,
                    None => 0,
                };
                assert_eq!(r.bucket_index, Some(expected), "seed {seed}: {key}");
            }
        }
    }
}

#[test]
fn ids_are_valid_and_unique_and_json_round_trips() {
    for seed in 0..CASES {
        let mut rng = Rng::new(seed + 10_000);
        let policy = random_policy(&mut rng);
        let arrays = random_arrays(&mut rng);
        let m = partition("scope/x.zarr", &arrays, Some(&policy), None, T0)
            .unwrap()
            .manifest;
        let mut seen = HashSet::new();
        for b in &m.blobs {
            assert!(is_valid_id(&b.id), "seed {seed}: {}", b.id);
            assert!(seen.insert(b.id.clone()), "seed {seed}: duplicate {}", b.id);
        }
        let text = m.dumps();
        let back = Manifest::loads(&text).unwrap();
        assert_eq!(back, m, "seed {seed}");
        assert_eq!(back.dumps(), text, "seed {seed}");
    }
}

#[test]
fn previous_blobs_survive_any_repartition() {
    for seed in 0..CASES {
        let mut rng = Rng::new(seed + 20_000);
        let p1 = random_policy(&mut rng);
        let first = random_arrays(&mut rng);
        let m1 = partition("s", &first, Some(&p1), None, T0)
            .unwrap()
            .manifest;
        // Another policy, some arrays dropped, new ones added, sizes changed.
        let p2 = random_policy(&mut rng);
        let mut next: Vec<Array> = Vec::new();
        for a in &first {
            if rng.below(4) != 0 {
                let mut a = a.clone();
                a.stored_bytes = Some(rng.below(100_000));
                next.push(a);
            }
        }
        for mut a in random_arrays(&mut rng) {
            a.path = format!("new/{}", a.path);
            next.push(a);
        }
        let m2 = partition("s", &next, Some(&p2), Some(&m1), T0)
            .unwrap()
            .manifest;
        assert_eq!(m2.blobs[..m1.blobs.len()], m1.blobs[..], "seed {seed}");
        assert!(diff(Some(&m1), &m2).is_additive(), "seed {seed}");
        assert_eq!(m2.epoch, m1.epoch);
    }
}

#[test]
fn growth_along_a_bucketed_dimension_changes_nothing() {
    for seed in 0..CASES {
        let mut rng = Rng::new(seed + 30_000);
        let policy = random_policy(&mut rng);
        let arrays = random_arrays(&mut rng);
        let m1 = partition("s", &arrays, Some(&policy), None, T0)
            .unwrap()
            .manifest;
        // Every array already holding a blob grows along dimension 0, its size with it.
        let grown: Vec<Array> = arrays
            .iter()
            .map(|a| {
                if is_hot(a, &policy) {
                    return a.clone();
                }
                let factor = 2 + rng.below(50);
                let mut g = a.clone();
                g.shape[0] *= factor;
                g.stored_bytes = a.stored_bytes.map(|s| s * factor);
                g
            })
            .collect();
        let m2 = partition("s", &grown, None, Some(&m1), T0)
            .unwrap()
            .manifest;
        let d = diff(Some(&m1), &m2);
        assert!(d.is_empty(), "seed {seed}: {}", d.describe());
        assert_eq!(m2.hot_always, m1.hot_always, "seed {seed}");
    }
}
