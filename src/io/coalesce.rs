//! Range coalescing: the one place where wanted ranges are merged into fewer requests.
//!
//! [`coalesce_ranges`] is pure: it sorts the wanted ranges, merges those whose gap is at most
//! `max_gap` bytes (overlapping and duplicate ranges always merge, unless a size cap forbids
//! it), and says for each wanted range which merged fetch holds its bytes and where.
//! [`read_coalesced`] fetches the merged ranges with [`RangeSource::read_many`] and hands back
//! each wanted range's bytes as a slice of the fetched buffer (no copies), in the order asked.
//!
//! Choosing the gap: a merged fetch pays for the gap bytes, a separate request may pay a
//! round trip. Requests run [`DEFAULT_CONCURRENCY`] at a time, so a separate request costs a
//! round trip only when the read has more requests than that: see [`DEFAULT_MAX_GAP`] for
//! the measurements behind the default. For comparison, Apache Arrow's `object_store` merges
//! gaps up to 1 MiB and zarrita up to 32 KiB.

use super::{IoError, RangeSource};
use bytes::Bytes;
use std::ops::Range;

/// Default largest gap (bytes) bridged by a merge: 32 KiB.
///
/// Measured with `chunkwise bench coalesce` (reads of the `bench remote` files: a Zarr
/// sharded band and every second inner chunk, every second chunk of a large `.b2nd` (4 and
/// 32 chunks) and of a large HDF5 file, a `.b2nd` column; latencies 5/40/100 ms x shared
/// links of 2.5/12.5/125 MB/s; six requests at a time). Most reads of a preview or a band
/// need six requests or fewer: they are one wave whatever the gap, so merging saves no round
/// trip and only adds bytes. The earlier 512 KiB (latency x bandwidth at 40 ms and
/// 100 Mbit/s, which ignores that requests run in parallel) made the sharded band move
/// 734,399 bytes instead of 489,802 (+50%, in 4 requests instead of 6), every second `.b2nd`
/// chunk 1,488,372 instead of 850,583 (+75%) and every second HDF5 chunk 3,352,340 instead
/// of 1,862,483 (+80%), taking up to twice as long at 2.5 and 12.5 MB/s. Even the read of 32
/// chunks (six waves) became one request of 13.4 MB instead of 32 of 6.8 MB: 2.1 to 2.7
/// times as long at 2.5 and 12.5 MB/s, a tie at best (100 ms, 125 MB/s). A request beyond
/// the first wave costs a round trip shared by six, so merging pays while the gap is under
/// latency x bandwidth / 6: 17 KB at 40 ms and 20 Mbit/s, 83 KB at 40 ms and 100 Mbit/s.
/// 32 KiB (zarrita's choice) sits between: it bridges the small gaps between inner chunks of
/// a shard (8 requests to 6 for every second inner chunk) and added at most 33% to any read
/// measured. Larger gaps pay only for reads of many waves at a high bandwidth x latency: set
/// [`CoalesceOptions::max_gap`] (open option `coalesce_gap`) for those.
pub const DEFAULT_MAX_GAP: u64 = 32 * 1024;

/// Largest [`CoalesceOptions::max_gap`] an open option may ask for (1 GiB): a larger gap
/// would merge requests across unrelated data without bound.
pub const MAX_GAP_OPTION: u64 = 1 << 30;

/// Checks the coalescing open options (CLI `--coalesce-gap` / `--max-merged-bytes`, JS
/// `coalesceGap` / `maxMergedBytes`): a gap of at most [`MAX_GAP_OPTION`] bytes and a
/// positive merged-request bound. `names` are the two options' names as the caller spells
/// them, for the message.
///
/// # Errors
/// The message naming the option that is out of range.
pub fn check_options(
    max_gap: u64,
    max_len: Option<u64>,
    names: (&str, &str),
) -> Result<(), String> {
    if max_gap > MAX_GAP_OPTION {
        return Err(format!(
            "{} must be at most {MAX_GAP_OPTION} bytes (1 GiB), not {max_gap}",
            names.0
        ));
    }
    if max_len == Some(0) {
        return Err(format!("{} must be a positive number of bytes", names.1));
    }
    Ok(())
}

/// Default number of merged fetches in flight at once: 6, the connections a browser keeps per
/// origin over HTTP/1.1.
pub const DEFAULT_CONCURRENCY: usize = 6;

/// Where one wanted range's bytes lie in the merged fetches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Index into [`CoalescePlan::fetches`].
    pub fetch: usize,
    /// Byte offsets relative to the start of that fetch.
    pub within: Range<u64>,
}

/// The result of [`coalesce_ranges`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CoalescePlan {
    /// Ranges to fetch, sorted by start, non-empty. They do not overlap unless `max_len` forced
    /// a split between overlapping wanted ranges.
    pub fetches: Vec<Range<u64>>,
    /// For each wanted range, in the order given, where its bytes lie.
    pub placements: Vec<Placement>,
}

/// Merges `wanted` byte ranges (absolute, end exclusive) into fewer fetches.
///
/// Two ranges are fetched together when the gap between them is at most `max_gap` bytes
/// (overlapping or touching ranges have no gap). With `max_len = Some(m)`, a merge that would
/// make a fetch longer than `m` bytes starts a new fetch instead; a single wanted range longer
/// than `m` is still fetched whole (it is never split).
///
/// # Errors
/// [`IoError::InvalidRange`] for an empty or reversed range (`end <= start`).
pub fn coalesce_ranges(
    wanted: &[Range<u64>],
    max_gap: u64,
    max_len: Option<u64>,
) -> Result<CoalescePlan, IoError> {
    if let Some(r) = wanted.iter().find(|r| r.end <= r.start) {
        return Err(IoError::InvalidRange {
            range: format!("{r:?}"),
        });
    }
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    crate::sort::sort_by_key(&mut order, |&i| (wanted[i].start, wanted[i].end));
    let mut fetches: Vec<Range<u64>> = Vec::new();
    let mut placements = vec![
        Placement {
            fetch: 0,
            within: 0..0
        };
        wanted.len()
    ];
    for i in order {
        let r = &wanted[i];
        let merge = fetches.last().is_some_and(|cur| {
            let within_gap = r.start <= cur.end.saturating_add(max_gap);
            let new_len = r.end.max(cur.end) - cur.start;
            within_gap && max_len.is_none_or(|m| new_len <= m)
        });
        if merge {
            let cur = fetches.last_mut().expect("merge implies a current fetch");
            cur.end = cur.end.max(r.end);
        } else {
            fetches.push(r.clone());
        }
        let f = fetches.len() - 1;
        let start = fetches[f].start;
        placements[i] = Placement {
            fetch: f,
            within: r.start - start..r.end - start,
        };
    }
    Ok(CoalescePlan {
        fetches,
        placements,
    })
}

/// Options of [`read_coalesced`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoalesceOptions {
    /// Largest gap (bytes) bridged by a merge; default [`DEFAULT_MAX_GAP`].
    pub max_gap: u64,
    /// Largest merged fetch (bytes), if capped; default `None`.
    pub max_len: Option<u64>,
    /// Merged fetches in flight at once; default [`DEFAULT_CONCURRENCY`].
    pub concurrency: usize,
}

impl Default for CoalesceOptions {
    fn default() -> Self {
        Self {
            max_gap: DEFAULT_MAX_GAP,
            max_len: None,
            concurrency: DEFAULT_CONCURRENCY,
        }
    }
}

/// Reads the `wanted` ranges from `source` through as few requests as `options` allow and
/// returns each range's bytes, in the order asked (slices of the fetched buffers).
///
/// # Errors
/// [`IoError::InvalidRange`] for an empty or reversed range; any error of the source;
/// [`IoError::BadContentRange`] if the source serves fewer bytes than a fetch asked (a range
/// past the end of the object).
pub async fn read_coalesced<S: RangeSource + ?Sized>(
    source: &S,
    wanted: &[Range<u64>],
    options: &CoalesceOptions,
) -> Result<Vec<Bytes>, IoError> {
    let plan = coalesce_ranges(wanted, options.max_gap, options.max_len)?;
    let fetched = source.read_many(&plan.fetches, options.concurrency).await?;
    Ok(plan
        .placements
        .iter()
        .map(|p| fetched[p.fetch].slice(p.within.start as usize..p.within.end as usize))
        .collect())
}

/// Fetches the merged ranges of `plan` from `source`, at most `concurrency` at a time, and
/// yields each as it arrives: `(index into plan.fetches, bytes)`, in completion order. A
/// reader that handles each fetch as it comes and then drops it holds at most `concurrency`
/// merged buffers, where [`read_coalesced`] holds them all until the last arrives.
///
/// Yields [`IoError::BadContentRange`] when the source serves other bytes than a fetch
/// asked, and any error of the source.
pub fn fetch_stream<'a, S: RangeSource + ?Sized>(
    source: &'a S,
    plan: &'a CoalescePlan,
    concurrency: usize,
) -> impl futures::Stream<Item = Result<(usize, Bytes), IoError>> + 'a {
    use futures::StreamExt;
    let jobs =
        plan.fetches
            .iter()
            .enumerate()
            .map(move |(i, r)| async move {
                Ok((i, super::source::read_exact(source, r.clone()).await?))
            });
    futures::stream::iter(jobs).buffer_unordered(concurrency.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::memory::MemorySource;

    fn p(fetch: usize, within: Range<u64>) -> Placement {
        Placement { fetch, within }
    }

    #[test]
    fn merges_within_gap() {
        let plan = coalesce_ranges(&[0..10, 15..20, 100..110], 5, None).unwrap();
        assert_eq!(plan.fetches, vec![0..20, 100..110]);
        assert_eq!(
            plan.placements,
            vec![p(0, 0..10), p(0, 15..20), p(1, 0..10)]
        );
        let plan = coalesce_ranges(&[0..10, 16..20], 5, None).unwrap();
        assert_eq!(plan.fetches, vec![0..10, 16..20]);
    }

    #[test]
    fn keeps_asked_order_and_handles_overlaps_and_duplicates() {
        let plan = coalesce_ranges(&[50..60, 0..10, 5..8, 0..10, 8..30], 0, None).unwrap();
        assert_eq!(plan.fetches, vec![0..30, 50..60]);
        assert_eq!(
            plan.placements,
            vec![
                p(1, 0..10),
                p(0, 0..10),
                p(0, 5..8),
                p(0, 0..10),
                p(0, 8..30)
            ]
        );
        // Touching ranges have no gap.
        assert_eq!(
            coalesce_ranges(&[0..10, 10..20], 0, None).unwrap().fetches,
            vec![0..20]
        );
    }

    #[test]
    fn caps_merged_length() {
        let plan = coalesce_ranges(&[0..10, 12..20, 22..30, 30..100], 10, Some(20)).unwrap();
        assert_eq!(plan.fetches, vec![0..20, 22..30, 30..100]);
        assert_eq!(plan.placements[3], p(2, 0..70));
    }

    #[test]
    fn rejects_empty_ranges_and_accepts_none() {
        assert!(matches!(
            coalesce_ranges(&[0..10, 5..5], 0, None),
            Err(IoError::InvalidRange { .. })
        ));
        let reversed = Range { start: 9, end: 3 };
        assert!(coalesce_ranges(&[0..1, reversed], 0, None).is_err());
        assert_eq!(
            coalesce_ranges(&[], 0, None).unwrap(),
            CoalescePlan::default()
        );
        // Ranges near u64::MAX do not overflow the gap arithmetic.
        let plan = coalesce_ranges(
            &[u64::MAX - 10..u64::MAX - 5, u64::MAX - 2..u64::MAX],
            u64::MAX,
            None,
        )
        .unwrap();
        assert_eq!(plan.fetches, vec![u64::MAX - 10..u64::MAX]);
    }

    /// A small seedable generator (SplitMix64) so the randomized test is reproducible.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[tokio::test]
    async fn randomized_byte_for_byte() {
        let data: Vec<u8> = (0..10_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let src = crate::io::Counted::new(
            MemorySource::new("mem", data.clone()),
            crate::io::Traffic::new(),
        );
        let mut rng = Rng(42);
        for round in 0..300 {
            let count = 1 + rng.below(20) as usize;
            let wanted: Vec<Range<u64>> = (0..count)
                .map(|_| {
                    let start = rng.below(data.len() as u64);
                    let len = 1 + rng.below(200.min(data.len() as u64 - start));
                    start..start + len
                })
                .collect();
            let options = CoalesceOptions {
                max_gap: [0, 1, 50, 1000, u64::MAX][rng.below(5) as usize],
                max_len: [None, Some(1), Some(300)][rng.below(3) as usize],
                concurrency: 1 + rng.below(4) as usize,
            };
            let before = src.traffic().snapshot();
            let got = read_coalesced(&src, &wanted, &options).await.unwrap();
            let plan = coalesce_ranges(&wanted, options.max_gap, options.max_len).unwrap();
            let used = src.traffic().snapshot().since(before);
            assert_eq!(used.requests as usize, plan.fetches.len(), "round {round}");
            assert!(plan.fetches.len() <= wanted.len(), "round {round}");
            for (r, b) in wanted.iter().zip(&got) {
                assert_eq!(
                    &b[..],
                    &data[r.start as usize..r.end as usize],
                    "round {round}: {r:?}"
                );
            }
            // Fetches are sorted; gaps bridged never exceed max_gap; caps hold unless a single
            // wanted range is itself longer.
            for w in plan.fetches.windows(2) {
                assert!(w[0].start <= w[1].start, "round {round}");
            }
            if let Some(m) = options.max_len {
                let longest = wanted.iter().map(|r| r.end - r.start).max().unwrap();
                for f in &plan.fetches {
                    assert!(f.end - f.start <= m.max(longest), "round {round}");
                }
            }
        }
    }

    #[tokio::test]
    async fn memory_source_passes_conformance() {
        for n in [0usize, 1, 7, 1000] {
            let data: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
            let src = MemorySource::new(format!("mem{n}"), data.clone());
            crate::io::conformance::check_source(&src, &data).await;
            let traffic = crate::io::Traffic::new();
            let counted = crate::io::Counted::new(src, traffic.clone());
            crate::io::conformance::check_source(&counted, &data).await;
            assert!(
                n == 0 || traffic.snapshot().requests > 20,
                "{:?}",
                traffic.snapshot()
            );
        }
    }
}
