//! Checks every [`CacheBackend`] must pass, shared by the tests of each backend (memory and
//! filesystem natively; IndexedDB, OPFS and JS-supplied stores from wasm tests).
//!
//! Compiled under `cfg(test)` and with the cargo feature `conformance`. Free of tokio and
//! `std::fs`, so wasm tests can run it. Each check panics with a message naming the backend and
//! the case on the first difference, like `assert!`.

use super::{Budget, CacheBackend, Entry};
use bytes::Bytes;

/// The budget [`check_backend`] expects its backend to be made with: 2 MiB (room for the
/// 1 MiB blob) and 64 entries.
pub const BUDGET: Budget = Budget {
    bytes: 2 << 20,
    entries: 64,
};

/// Runs every check below on `backend`, which must be empty and made with `budget` (at
/// least 1 MiB + 1 byte and 16 entries; [`BUDGET`] fits). `corrupt`, when the backend keeps
/// its blobs somewhere they can be damaged, damages the stored blob of the key it is given
/// (the filesystem test flips a byte of the file); `None` skips that check.
pub async fn check_backend(
    backend: &dyn CacheBackend,
    budget: Budget,
    corrupt: Option<&dyn Fn(&str)>,
) {
    assert!(
        budget.bytes > 1 << 20 && budget.entries >= 16,
        "budget too small"
    );
    let name = backend.name();
    assert_eq!(list(backend, "").await, vec![], "{name}: starts empty");
    check_round_trip(backend).await;
    check_overwrite_and_delete(backend).await;
    check_list(backend).await;
    check_odd_keys(backend).await;
    if let Some(corrupt) = corrupt {
        check_corruption(backend, corrupt).await;
    }
    check_usage(backend).await;
    check_byte_bound(backend, budget).await;
    check_entry_bound(backend, budget).await;
}

/// A seeded pseudo-random blob of `n` bytes (a 64-bit LCG, so every byte position matters).
pub fn blob(seed: u64, n: usize) -> Bytes {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect::<Vec<u8>>()
        .into()
}

async fn get(backend: &dyn CacheBackend, key: &str) -> Option<Bytes> {
    match backend.get(key).await {
        Ok(b) => b,
        Err(e) => panic!("{}: get {key:?} failed: {e}", backend.name()),
    }
}

async fn put(backend: &dyn CacheBackend, key: &str, bytes: Bytes) {
    if let Err(e) = backend.put(key, bytes).await {
        panic!("{}: put {key:?} failed: {e}", backend.name());
    }
}

async fn delete(backend: &dyn CacheBackend, key: &str) {
    if let Err(e) = backend.delete(key).await {
        panic!("{}: delete {key:?} failed: {e}", backend.name());
    }
}

/// The entries under `prefix`, sorted by key.
async fn list(backend: &dyn CacheBackend, prefix: &str) -> Vec<Entry> {
    let mut v = match backend.list(prefix).await {
        Ok(v) => v,
        Err(e) => panic!("{}: list {prefix:?} failed: {e}", backend.name()),
    };
    v.sort();
    v
}

async fn clear(backend: &dyn CacheBackend, prefix: &str) {
    if let Err(e) = backend.delete_prefix(prefix).await {
        panic!("{}: delete_prefix {prefix:?} failed: {e}", backend.name());
    }
    assert_eq!(
        list(backend, prefix).await,
        vec![],
        "{}: nothing left under {prefix:?}",
        backend.name()
    );
}

fn entry(key: &str, bytes: usize) -> Entry {
    Entry {
        key: key.to_string(),
        bytes: bytes as u64,
    }
}

/// Absent keys are misses; empty, small and 1 MiB blobs come back byte for byte; a blob cut
/// out of a larger buffer is kept as its own bytes.
pub async fn check_round_trip(backend: &dyn CacheBackend) {
    let name = backend.name();
    assert_eq!(get(backend, "rt/absent").await, None, "{name}: absent key");
    let cases = [
        ("rt/empty", Bytes::new()),
        ("rt/small", Bytes::from_static(b"hello world")),
        ("rt/mib", blob(1, 1 << 20)),
    ];
    for (k, b) in &cases {
        put(backend, k, b.clone()).await;
    }
    for (k, b) in &cases {
        let got = get(backend, k).await;
        assert!(
            got.as_ref() == Some(b),
            "{name}: {k} came back as {:?} bytes, not the {} put",
            got.map(|g| g.len()),
            b.len()
        );
    }
    // An entry owns exactly its bytes: not a view into the buffer it was cut from.
    let fetched = blob(2, 256 << 10);
    put(backend, "rt/slice", fetched.slice(1000..5096)).await;
    let kept = get(backend, "rt/slice").await.expect("slice kept");
    assert!(kept[..] == fetched[1000..5096], "{name}: slice bytes");
    let (start, end) = (
        fetched.as_ptr() as usize,
        fetched.as_ptr() as usize + fetched.len(),
    );
    let p = kept.as_ptr() as usize;
    assert!(
        p < start || p >= end,
        "{name}: the entry points into the buffer it was cut from"
    );
    assert_eq!(
        list(backend, "rt/").await,
        vec![
            entry("rt/empty", 0),
            entry("rt/mib", 1 << 20),
            entry("rt/slice", 4096),
            entry("rt/small", 11)
        ],
        "{name}: listed sizes"
    );
    clear(backend, "rt/").await;
}

/// A second put replaces the first (another length too); delete removes; deleting an absent
/// key is not an error.
pub async fn check_overwrite_and_delete(backend: &dyn CacheBackend) {
    let name = backend.name();
    put(backend, "ow", blob(3, 5000)).await;
    put(backend, "ow", blob(4, 300)).await;
    assert_eq!(
        get(backend, "ow").await,
        Some(blob(4, 300)),
        "{name}: overwrite"
    );
    assert_eq!(list(backend, "ow").await, vec![entry("ow", 300)], "{name}");
    delete(backend, "ow").await;
    assert_eq!(get(backend, "ow").await, None, "{name}: deleted");
    delete(backend, "ow").await;
    assert_eq!(
        list(backend, "").await,
        vec![],
        "{name}: empty after delete"
    );
}

/// `list` filters by prefix and reports exact sizes; `delete_prefix` removes exactly the
/// entries under its prefix.
pub async fn check_list(backend: &dyn CacheBackend) {
    let name = backend.name();
    for (k, n) in [("ls/a/1", 3), ("ls/a/2", 5), ("ls/b", 7), ("lsx", 1)] {
        put(backend, k, blob(n as u64, n)).await;
    }
    assert_eq!(
        list(backend, "ls/a/").await,
        vec![entry("ls/a/1", 3), entry("ls/a/2", 5)],
        "{name}: prefix ls/a/"
    );
    assert_eq!(list(backend, "ls/").await.len(), 3, "{name}: prefix ls/");
    assert_eq!(list(backend, "").await.len(), 4, "{name}: all");
    assert_eq!(list(backend, "nothing").await, vec![], "{name}");
    let removed = backend.delete_prefix("ls/a/").await.expect("delete_prefix");
    assert_eq!(removed, 2, "{name}: removed under ls/a/");
    assert_eq!(
        list(backend, "ls").await,
        vec![entry("ls/b", 7), entry("lsx", 1)],
        "{name}: what delete_prefix left"
    );
    clear(backend, "ls").await;
}

/// Keys are opaque: slashes, parent-directory names, newlines, NUL, unicode and a 2 KiB key
/// each name their own entry.
pub async fn check_odd_keys(backend: &dyn CacheBackend) {
    let name = backend.name();
    let long = "k/../".repeat(410);
    let keys: Vec<String> = [
        "odd",
        "odd/a/b/c",
        "odd/../../../../etc/passwd",
        "odd//abs/path/",
        "odd\\win\\path",
        "odd\nline\r\nbreak",
        "odd\ttab\0nul",
        "odd ünïcødé ✓ 𝄞",
        "odd.",
        "odd..",
        "odd%2F%00",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("odd{long}")])
    .collect();
    assert!(keys.last().unwrap().len() > 2048);
    for (i, k) in keys.iter().enumerate() {
        put(backend, k, blob(100 + i as u64, 10 + i)).await;
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(
            get(backend, k).await,
            Some(blob(100 + i as u64, 10 + i)),
            "{name}: key {k:?}"
        );
    }
    let mut want: Vec<Entry> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| entry(k, 10 + i))
        .collect();
    want.sort();
    assert_eq!(list(backend, "odd").await, want, "{name}: odd keys listed");
    for k in &keys {
        delete(backend, k).await;
    }
    assert_eq!(list(backend, "").await, vec![], "{name}: odd keys deleted");
}

/// A blob damaged where it is stored is a miss, and its entry is removed.
pub async fn check_corruption(backend: &dyn CacheBackend, corrupt: &dyn Fn(&str)) {
    let name = backend.name();
    put(backend, "bad", blob(5, 4096)).await;
    put(backend, "good", blob(6, 4096)).await;
    corrupt("bad");
    assert_eq!(get(backend, "bad").await, None, "{name}: damaged blob");
    assert_eq!(
        list(backend, "").await,
        vec![entry("good", 4096)],
        "{name}: the damaged entry is removed"
    );
    assert_eq!(backend.usage().entries, 1, "{name}: usage after damage");
    put(backend, "bad", blob(5, 4096)).await;
    assert_eq!(get(backend, "bad").await, Some(blob(5, 4096)), "{name}");
    clear(backend, "").await;
}

/// `usage` agrees with `list`.
pub async fn check_usage(backend: &dyn CacheBackend) {
    let name = backend.name();
    for i in 0..5u64 {
        put(backend, &format!("u{i}"), blob(i, 1000 + i as usize)).await;
    }
    let u = backend.usage();
    let listed = list(backend, "").await;
    assert_eq!(u.entries, listed.len() as u64, "{name}: usage entries");
    assert_eq!(
        u.bytes,
        listed.iter().map(|e| e.bytes).sum::<u64>(),
        "{name}: usage bytes"
    );
    assert_eq!((u.entries, u.bytes), (5, 5010), "{name}: usage");
    clear(backend, "").await;
    assert_eq!(backend.usage().bytes, 0, "{name}: usage after clear");
}

/// After puts of four times the byte budget, at most the budget is retained; the most
/// recently put entries survive, and so does one kept recent by a `get` after every put.
pub async fn check_byte_bound(backend: &dyn CacheBackend, budget: Budget) {
    let name = backend.name();
    let size = (budget.bytes / 32) as usize;
    put(backend, "bound/keep", blob(7, size)).await;
    let n = 4 * 32;
    for i in 0..n {
        put(backend, &format!("bound/{i:04}"), blob(i, size)).await;
        assert!(
            get(backend, "bound/keep").await.is_some(),
            "{name}: an entry used after every put survives (after put {i})"
        );
    }
    let u = backend.usage();
    let listed = list(backend, "").await;
    let retained: u64 = listed.iter().map(|e| e.bytes).sum();
    assert!(
        retained <= budget.bytes && u.bytes == retained,
        "{name}: retained {retained} (usage {}) > budget {}",
        u.bytes,
        budget.bytes
    );
    assert!(u.evictions > 0, "{name}: evictions counted");
    assert_eq!(
        get(backend, "bound/keep").await,
        Some(blob(7, size)),
        "{name}: kept entry"
    );
    for i in [n - 1, n - 2, n - 10] {
        assert_eq!(
            get(backend, &format!("bound/{i:04}")).await,
            Some(blob(i, size)),
            "{name}: recent entry {i} survives"
        );
    }
    for i in [0, 1, n / 2] {
        assert_eq!(
            get(backend, &format!("bound/{i:04}")).await,
            None,
            "{name}: old entry {i} was evicted"
        );
    }
    // A blob larger than the whole budget is not kept, and does not evict the others.
    let before = list(backend, "").await;
    put(backend, "bound/huge", blob(8, budget.bytes as usize + 1)).await;
    assert_eq!(
        get(backend, "bound/huge").await,
        None,
        "{name}: over budget"
    );
    assert_eq!(
        list(backend, "").await,
        before,
        "{name}: nothing evicted for it"
    );
    clear(backend, "").await;
}

/// Empty blobs add no bytes: after four times the entry budget, at most that many entries
/// are retained, the most recent ones.
pub async fn check_entry_bound(backend: &dyn CacheBackend, budget: Budget) {
    let name = backend.name();
    let n = 4 * budget.entries;
    for i in 0..n {
        put(backend, &format!("e/{i:06}"), Bytes::new()).await;
    }
    let listed = list(backend, "").await;
    assert!(
        listed.len() as u64 <= budget.entries && backend.usage().entries == listed.len() as u64,
        "{name}: {} entries retained (usage {}) > budget {}",
        listed.len(),
        backend.usage().entries,
        budget.entries
    );
    assert_eq!(
        get(backend, &format!("e/{:06}", n - 1)).await,
        Some(Bytes::new()),
        "{name}: the last entry survives"
    );
    assert_eq!(
        get(backend, "e/000000").await,
        None,
        "{name}: the first went"
    );
    clear(backend, "").await;
}
