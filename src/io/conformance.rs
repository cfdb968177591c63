//! Checks every [`RangeSource`] must pass, shared by the tests of each transport and wrapper
//! (memory, file, native HTTP against the range server, fetch in wasm, counting, retries).
//!
//! Compiled under `cfg(test)` and with the cargo feature `conformance`. Each check panics with
//! a message naming the source and the case on the first difference, like `assert!`.

use super::coalesce::{read_coalesced, CoalesceOptions};
use super::{ByteRange, IoError, RangeSource};
use std::ops::Range;

/// Runs every check below on `source`, whose full content is `expected`.
pub async fn check_source(source: &dyn RangeSource, expected: &[u8]) {
    check_reads(source, expected).await;
    check_errors(source, expected).await;
    check_read_many(source, expected).await;
    check_concurrent(source, expected).await;
    check_coalesced(source, expected).await;
}

fn len_of(expected: &[u8]) -> u64 {
    expected.len() as u64
}

async fn read_ok(source: &dyn RangeSource, expected: &[u8], asked: ByteRange, want: Range<u64>) {
    let loc = source.location().to_string();
    let f = match source.read(asked).await {
        Ok(f) => f,
        Err(e) => panic!("{loc}: read {asked} failed: {e}"),
    };
    assert_eq!(f.range, want, "{loc}: range served for {asked}");
    assert_eq!(
        f.bytes.len() as u64,
        want.end - want.start,
        "{loc}: body length for {asked}"
    );
    assert!(
        f.bytes[..] == expected[want.start as usize..want.end as usize],
        "{loc}: bytes of {asked} differ"
    );
    assert_eq!(
        f.info.len,
        len_of(expected),
        "{loc}: object length learned from {asked}"
    );
}

/// Bounded, offset and suffix reads, including ones clamped at the end of the object.
pub async fn check_reads(source: &dyn RangeSource, expected: &[u8]) {
    let n = len_of(expected);
    if n == 0 {
        // The only satisfiable read of an empty object is a suffix, which is empty.
        read_ok(source, expected, ByteRange::Suffix(5), 0..0).await;
        return;
    }
    read_ok(source, expected, ByteRange::bounded(0..1), 0..1).await;
    read_ok(source, expected, ByteRange::bounded(0..n), 0..n).await;
    read_ok(source, expected, ByteRange::bounded(n - 1..n), n - 1..n).await;
    read_ok(
        source,
        expected,
        ByteRange::bounded(n / 3..n / 3 + 1 + n / 3),
        n / 3..n / 3 + 1 + n / 3,
    )
    .await;
    // Clamped: the end lies past the object.
    read_ok(
        source,
        expected,
        ByteRange::bounded(n / 2..n + 100),
        n / 2..n,
    )
    .await;
    read_ok(source, expected, ByteRange::Offset(0), 0..n).await;
    read_ok(source, expected, ByteRange::Offset(n / 2), n / 2..n).await;
    read_ok(source, expected, ByteRange::Offset(n - 1), n - 1..n).await;
    read_ok(source, expected, ByteRange::Suffix(1), n - 1..n).await;
    read_ok(
        source,
        expected,
        ByteRange::Suffix(n.div_ceil(2)),
        n - n.div_ceil(2)..n,
    )
    .await;
    read_ok(source, expected, ByteRange::Suffix(n), 0..n).await;
    // Clamped: more than the whole object.
    read_ok(source, expected, ByteRange::Suffix(n + 1000), 0..n).await;
}

/// Unsatisfiable and invalid ranges fail with the right error.
pub async fn check_errors(source: &dyn RangeSource, expected: &[u8]) {
    let loc = source.location().to_string();
    let n = len_of(expected);
    for asked in [
        ByteRange::bounded(n..n + 10),
        ByteRange::bounded(n + 5..n + 6),
        ByteRange::Offset(n),
    ] {
        match source.read(asked).await {
            Err(IoError::RangeNotSatisfiable { len, .. }) => {
                assert_eq!(len, n, "{loc}: length reported for unsatisfiable {asked}")
            }
            other => panic!("{loc}: {asked} should be not satisfiable, got {other:?}"),
        }
    }
    for asked in [
        ByteRange::bounded(5..5),
        ByteRange::Bounded { start: 7, end: 3 },
        ByteRange::Suffix(0),
    ] {
        match source.read(asked).await {
            Err(IoError::InvalidRange { .. }) => {}
            other => panic!("{loc}: {asked:?} should be invalid, got {other:?}"),
        }
    }
}

/// `read_many` returns each range's bytes in the order asked, whatever the concurrency.
pub async fn check_read_many(source: &dyn RangeSource, expected: &[u8]) {
    let loc = source.location().to_string();
    let ranges = sample_ranges(len_of(expected));
    if ranges.is_empty() {
        return;
    }
    for concurrency in [0, 1, 3, 16] {
        let got = match source.read_many(&ranges, concurrency).await {
            Ok(g) => g,
            Err(e) => panic!("{loc}: read_many (concurrency {concurrency}) failed: {e}"),
        };
        assert_eq!(got.len(), ranges.len(), "{loc}: read_many result count");
        for (r, b) in ranges.iter().zip(&got) {
            assert!(
                b[..] == expected[r.start as usize..r.end as usize],
                "{loc}: read_many (concurrency {concurrency}) bytes of {r:?} differ"
            );
        }
    }
}

/// Many reads in flight at once on one source all return their own bytes.
pub async fn check_concurrent(source: &dyn RangeSource, expected: &[u8]) {
    let loc = source.location().to_string();
    let ranges = sample_ranges(len_of(expected));
    let reads = ranges
        .iter()
        .map(|r| source.read(ByteRange::bounded(r.clone())));
    let results = futures::future::join_all(reads).await;
    for (r, res) in ranges.iter().zip(results) {
        match res {
            Ok(f) => assert!(
                f.range == *r && f.bytes[..] == expected[r.start as usize..r.end as usize],
                "{loc}: concurrent read of {r:?} differs"
            ),
            Err(e) => panic!("{loc}: concurrent read of {r:?} failed: {e}"),
        }
    }
}

/// Coalesced reads (duplicates, overlaps, unordered) slice back the right bytes.
pub async fn check_coalesced(source: &dyn RangeSource, expected: &[u8]) {
    let loc = source.location().to_string();
    let mut ranges = sample_ranges(len_of(expected));
    if ranges.is_empty() {
        return;
    }
    ranges.push(ranges[0].clone());
    for max_gap in [0, 16, u64::MAX] {
        let opts = CoalesceOptions {
            max_gap,
            max_len: None,
            concurrency: 2,
        };
        let got = match read_coalesced(source, &ranges, &opts).await {
            Ok(g) => g,
            Err(e) => panic!("{loc}: coalesced read (gap {max_gap}) failed: {e}"),
        };
        for (r, b) in ranges.iter().zip(&got) {
            assert!(
                b[..] == expected[r.start as usize..r.end as usize],
                "{loc}: coalesced read (gap {max_gap}) of {r:?} differs"
            );
        }
    }
}

/// Non-empty ranges spread over an object of `n` bytes, out of order, with an overlap.
fn sample_ranges(n: u64) -> Vec<Range<u64>> {
    if n == 0 {
        return Vec::new();
    }
    let mut v = vec![n - 1..n, 0..1, n / 2..n, 0..n.div_ceil(3), n / 4..n / 4 + 1];
    if n >= 64 {
        v.extend([40..50, 10..20, 15..25, 63..64, 0..n]);
    }
    v
}
