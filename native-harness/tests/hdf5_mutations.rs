//! Damaged HDF5 files never panic: 2,000 seeded mutations of the committed fixtures (bytes
//! changed, bits flipped, runs overwritten, files cut short), each listed and each listed
//! dataset discovered and read, from the whole file in memory and from a 512-byte head
//! fetched in rounds. Every outcome must be a value or a typed error; a panic fails the test
//! with the seed that caused it. Rounds, node counts and reads are bounded by discovery, so
//! a hang would show as a test that does not finish.

use bytes::Bytes;
use chunkwise::formats::hdf5::{Hdf5Array, Hdf5Source};
use chunkwise::formats::{ArrayFormat, ChunkPlace, NodeKind};
use chunkwise::io::memory::MemorySource;
use std::path::Path;

const MUTATIONS: u64 = 2_000;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn mutate(good: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut d = good.to_vec();
    // Metadata sits mostly in the first few KiB; aim there three times in four.
    let pos = |rng: &mut Rng, len: usize| {
        if rng.below(4) < 3 {
            rng.below(len.min(8192) as u64) as usize
        } else {
            rng.below(len as u64) as usize
        }
    };
    for _ in 0..1 + rng.below(4) {
        let len = d.len();
        if len == 0 {
            break;
        }
        match rng.below(10) {
            0..=3 => {
                let p = pos(rng, len);
                d[p] = rng.next() as u8;
            }
            4..=5 => {
                let p = pos(rng, len);
                d[p] ^= 1 << rng.below(8);
            }
            6 => {
                let p = pos(rng, len);
                let v = if rng.below(2) == 0 { 0xff } else { 0 };
                let n = (1 + rng.below(8) as usize).min(len - p);
                d[p..p + n].fill(v);
            }
            7 => {
                // A plausible small integer, as in a size or count field.
                let p = pos(rng, len);
                let n = 4.min(len - p);
                let v = (rng.below(1 << 16) as u32).to_le_bytes();
                d[p..p + n].copy_from_slice(&v[..n]);
            }
            _ => {
                let keep = pos(rng, len).max(8);
                d.truncate(keep);
            }
        }
    }
    d
}

/// Lists `bytes`, then discovers and reads (up to 4 chunks of) up to 6 listed datasets.
/// Returns whether a dataset opened.
async fn exercise(bytes: Bytes, head: usize) -> bool {
    let len = bytes.len() as u64;
    let src = MemorySource::new("mem://mutated.h5", bytes.clone());
    let head_bytes = bytes.slice(..head.min(bytes.len()));
    let mut h = Hdf5Source::new(&src, head_bytes.clone(), len).with_readahead(512);
    let Ok(nodes) = h.list().await else {
        return false;
    };
    let mut opened = false;
    for n in nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Array && n.error.is_none())
        .take(6)
    {
        let Ok(arr) = Hdf5Array::open(&src, head_bytes.clone(), len, Some(&n.path)).await else {
            continue;
        };
        opened = true;
        let _ = arr.info();
        let nchunks = arr.grid().nchunks().unwrap_or(0);
        for c in 0..nchunks.min(4) {
            if let Ok(ChunkPlace::Stored(r)) = arr.locate(c) {
                if let Some(stored) = bytes.get(r.start as usize..r.end as usize) {
                    let _ = arr.decode(c, stored);
                }
            }
        }
    }
    opened
}

#[test]
fn mutated_fixtures_give_values_or_errors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let seeds: Vec<Vec<u8>> = [
        "hdf5_index/indexes_btree_v1.h5",
        "hdf5_index/indexes_btree_v2.h5",
        "hdf5_index/indexes_earray.h5",
        "hdf5_index/indexes_farray.h5",
        "hdf5_index/links.h5",
        "hdf5/groups.h5",
        "hdf5/gzip_shuffle.h5",
        "hdf5/sparse_fill.h5",
    ]
    .iter()
    .map(|f| std::fs::read(dir.join(f)).unwrap())
    .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // Unmutated, every seed lists.
    for s in &seeds {
        rt.block_on(async {
            let src = MemorySource::new("mem://seed.h5", s.clone());
            let b = Bytes::from(s.clone());
            let nodes = Hdf5Source::new(&src, b, s.len() as u64)
                .list()
                .await
                .unwrap();
            assert!(nodes.len() > 1);
        });
    }
    let mut failures = Vec::new();
    let mut opened = 0;
    for i in 0..MUTATIONS {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (i + 1).wrapping_mul(0x1000_0000_01b3));
        let seed = &seeds[(i % seeds.len() as u64) as usize];
        let bad = Bytes::from(mutate(seed, &mut rng));
        let head = if i % 2 == 0 { usize::MAX } else { 512 };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(exercise(bad, head))
        }));
        match r {
            Err(_) => failures.push(i),
            Ok(true) => opened += 1,
            Ok(false) => {}
        }
    }
    assert!(failures.is_empty(), "mutations that panicked: {failures:?}");
    // Most mutations leave some dataset openable, so discovery past the damage is exercised.
    println!("{opened} of {MUTATIONS} mutated files still opened a dataset");
    assert!(
        opened > MUTATIONS / 4,
        "only {opened} mutated files opened a dataset"
    );
}
