//! Stable sorting by a key or a comparison through one instantiation of the standard library's
//! sort for every caller.
//!
//! `slice::sort_by` and `sort_by_key` are generic over the element type and the closure, so
//! each call site compiled its own copy of the sort (driftsort: about 3 KB of wasm code each).
//! Here the standard sort runs once, over indices, with the comparison behind `dyn`; the
//! elements are then moved into place. For the planning lists sorted here (ranges, chunks,
//! fields, entries: at most a few thousand items per read) the indirect call costs far less
//! than a request. Sorts of primitive values (`sort_unstable` on `u64`) share one instance
//! anyway and stay as they are.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp` (as `slice::sort_by`).
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = sorted_order(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, order);
}

/// Sorts `v` stably by the key `key` gives each element (as `slice::sort_by_key`).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// The indices `0..n` in the stable order `cmp` gives them: the one instance of the standard
/// sort in this module.
fn sorted_order(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves the elements of `v` so that position `i` holds what was at `order[i]` (a permutation
/// of `0..v.len()`), in place, one cycle at a time.
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..v.len() {
        let mut at = start;
        while order[at] != DONE {
            let from = order[at];
            order[at] = DONE;
            if from == start {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_library_and_stays_stable() {
        // Pairs (key, original position) from a fixed sequence with many equal keys.
        let mut x = 12345u64;
        for n in [0usize, 1, 2, 3, 10, 100, 1000] {
            let v: Vec<(u64, usize)> = (0..n)
                .map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((x >> 33) % 7, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|p| p.0);
            let mut got = v.clone();
            sort_by_key(&mut got, |p| p.0);
            assert_eq!(got, want, "n {n}");
            let mut got = v.clone();
            sort_by(&mut got, |a, b| b.0.cmp(&a.0));
            let mut want = v;
            want.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(got, want, "n {n}, descending");
        }
    }

    #[test]
    fn moves_owned_values_without_losing_any() {
        let mut v: Vec<String> = ["d", "a", "c", "b", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        sort_by(&mut v, |a, b| a.cmp(b));
        assert_eq!(v, ["a", "a", "b", "c", "d"]);
    }
}
