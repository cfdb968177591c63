//! The raw-data chunk cache of one dataset, step for step as `H5Dchunk.c` runs it for reads.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::geometry::Grid;
use super::ChunkTraceError;

/// Cache parameters of one dataset (`H5Pset_chunk_cache`): `rdcc_nslots`, `rdcc_nbytes`,
/// `rdcc_w0`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheConfig {
    /// Hash-table slots (`rdcc_nslots`).
    pub nslots: u64,
    /// Byte budget for decoded chunks (`rdcc_nbytes`).
    pub nbytes: u64,
    /// Preemption weight in [0, 1] (`rdcc_w0`).
    pub w0: f64,
}

impl CacheConfig {
    /// Defaults of HDF5 before 2.0: 521 slots, 1 MiB, w0 0.75.
    pub const HDF5_1_DEFAULT: CacheConfig = CacheConfig {
        nslots: 521,
        nbytes: 1 << 20,
        w0: 0.75,
    };
    /// Defaults from HDF5 2.0: 8191 slots, 8 MiB, w0 0.75.
    pub const HDF5_2_DEFAULT: CacheConfig = CacheConfig {
        nslots: 8191,
        nbytes: 8 << 20,
        w0: 0.75,
    };

    /// Checks `w0` is within [0, 1] (as `H5Pset_chunk_cache` requires).
    pub fn validate(&self) -> Result<(), ChunkTraceError> {
        if !(0.0..=1.0).contains(&self.w0) {
            return Err(ChunkTraceError::InvalidConfig(format!(
                "w0 {} outside [0, 1]",
                self.w0
            )));
        }
        Ok(())
    }

    /// The settings a dataset really runs with: when either `nslots` or `nbytes` is 0 both become
    /// 0 and the cache is disabled (`H5D__chunk_init`); `w0` is kept.
    pub fn effective(&self) -> CacheConfig {
        if self.nslots == 0 || self.nbytes == 0 {
            CacheConfig {
                nslots: 0,
                nbytes: 0,
                w0: self.w0,
            }
        } else {
            *self
        }
    }
}

/// How a chunk's scaled coordinates map to a slot (`H5D__chunk_hash_val`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum HashForm {
    /// HDF5 1.10.5 and later: always fold all dimensions,
    /// `val = s[0]; val = (val << bits[u]) ^ s[u]` with `bits[u] = log2(next_pow2(ceil(dim/chunk)))`.
    #[default]
    Current,
    /// Up to 1.10.4: fold only when rank > 1 and the chunk count of the last dimension is at most
    /// `nslots`, else use `s[last]`; chunk counts ignore a partial edge chunk (`floor(dim/chunk)`).
    Pre1_10_5,
}

impl std::str::FromStr for HashForm {
    type Err = ChunkTraceError;

    /// `current` (or `1.10.5`) and `pre-1.10.5` (or `1.10.4`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "current" | "1.10.5" => Ok(HashForm::Current),
            "pre-1.10.5" | "pre1_10_5" | "1.10.4" => Ok(HashForm::Pre1_10_5),
            other => Err(ChunkTraceError::InvalidConfig(format!(
                "hash form {other:?}: expected current or pre-1.10.5"
            ))),
        }
    }
}

/// What one chunk access did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessOutcome {
    /// Found in its slot: no file read.
    Hit,
    /// Not cached: the chunk was read whole (if allocated) and, for filtered data, decoded.
    Miss {
        /// Stored bytes read from the file (0 when the chunk is not allocated: fill value).
        raw_bytes: u64,
        /// Whether the chunk now sits in the cache.
        cached: bool,
        /// Entries preempted to make room (slot occupant plus pruned entries).
        evicted: u32,
    },
    /// Unfiltered chunk too large for the cache: HDF5 reads only the selected elements straight
    /// from the file (`H5D__chunk_cacheable` is false), no whole-chunk read.
    Direct {
        /// Selected bytes read.
        bytes: u64,
    },
}

const NIL: usize = usize::MAX;

/// Hasher for slot numbers: one multiply (Fibonacci hashing). Slot numbers come from the C hash,
/// not from an adversary, and SipHash dominated the simulator's time.
#[derive(Debug, Clone, Copy, Default)]
struct SlotHasher(u64);

impl std::hash::Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type SlotMap = HashMap<u64, usize, std::hash::BuildHasherDefault<SlotHasher>>;

#[derive(Debug, Clone)]
struct Entry {
    linear: u64,
    slot: u64,
    /// Bytes remaining to be read (`rd_count`); 0 means "fully read".
    rd_count: u64,
    /// Order key: ascending along the list from least to most recent (see [`OrderIndex`]).
    key: usize,
    prev: usize,
    next: usize,
}

/// Positions of cache entries along the list, so pruning need not walk it.
///
/// Every entry carries a key; keys ascend from the least- to the most-recent end because the list
/// only ever changes by appending at the tail (next key), swapping two neighbours (swap their
/// keys) and unlinking. A Fenwick tree over keys answers "which entry is k-th from the head", and
/// the keys of fully read entries are kept sorted. Keys are renumbered when they run out.
#[derive(Debug, Clone, Default)]
struct OrderIndex {
    /// Fenwick tree (1-based) of live keys.
    bit: Vec<u32>,
    /// Entry holding each key, or `NIL`.
    key_entry: Vec<usize>,
    next_key: usize,
    /// Keys of fully read entries.
    fully: BTreeSet<usize>,
}

impl OrderIndex {
    fn cap(&self) -> usize {
        self.key_entry.len()
    }

    fn add(&mut self, key: usize, delta: i32) {
        let mut i = key + 1;
        while i < self.bit.len() {
            self.bit[i] = self.bit[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Key of the entry at 0-based position `k` from the head (`k` < live entries).
    fn select(&self, k: u64) -> usize {
        let cap = self.cap();
        let mut pos = 0usize;
        let mut remaining = k + 1;
        let mut step = if cap == 0 {
            0
        } else {
            1usize << (usize::BITS - 1 - cap.leading_zeros())
        };
        while step > 0 {
            if pos + step <= cap && u64::from(self.bit[pos + step]) < remaining {
                pos += step;
                remaining -= u64::from(self.bit[pos]);
            }
            step >>= 1;
        }
        pos
    }
}

/// Counters since creation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Cache hits.
    pub hits: u64,
    /// Whole-chunk reads from the file.
    pub reads: u64,
    /// Stored bytes of those reads.
    pub raw_bytes: u64,
    /// Entries preempted.
    pub evictions: u64,
    /// Direct element reads (unfiltered chunk too large for the cache).
    pub direct_reads: u64,
}

/// The chunk cache of one dataset. Entries sit in a doubly linked list from least recent
/// (`head`) to most recent (`tail`) and in a hash table of `nslots` slots.
///
/// Follows `H5D__chunk_lookup`, `H5D__chunk_lock`, `H5D__chunk_unlock`, `H5D__chunk_cache_prune`,
/// `H5D__chunk_cache_evict` and `H5D__chunk_cacheable` for read-only access with one chunk locked
/// at a time (serial `H5Dread`). Memory grows with the number of distinct chunks cached, never with
/// `nslots` (the slot table is a hash map).
#[derive(Debug, Clone)]
pub struct ChunkCache {
    config: CacheConfig,
    form: HashForm,
    rank: usize,
    chunks_per_dim: Vec<u64>,
    down: Vec<u64>,
    encode_bits: Vec<u32>,
    /// Chunk count of the last dimension as the pre-1.10.5 hash saw it.
    old_last_dim_chunks: u64,
    chunk_bytes: u64,
    element_size: u64,
    filtered: bool,
    entries: Vec<Entry>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    slots: SlotMap,
    nused: u64,
    nbytes_used: u64,
    stats: CacheStats,
    order: OrderIndex,
    /// Prune by walking the list exactly as the C loop does (reference for tests).
    walk_prune: bool,
}

/// `H5VM_power2up`: the smallest power of two >= n (1 for n = 0).
fn power2up(n: u64) -> u64 {
    n.checked_next_power_of_two().unwrap_or(0).max(1)
}

impl ChunkCache {
    /// An empty cache for a dataset of geometry `grid`, with `config` (made effective, see
    /// [`CacheConfig::effective`]) and slot hashing `form`.
    pub fn new(grid: &Grid, config: CacheConfig, form: HashForm) -> Result<Self, ChunkTraceError> {
        config.validate()?;
        let config = config.effective();
        let rank = grid.rank();
        // Per-dimension encode bits; the C code computes them only for rank > 1, and rank 1 never
        // uses them.
        let counts: Vec<u64> = match form {
            HashForm::Current => grid.chunks_per_dim.clone(),
            HashForm::Pre1_10_5 => grid
                .shape
                .iter()
                .zip(&grid.chunk_shape)
                .map(|(&s, &c)| s / c)
                .collect(),
        };
        let encode_bits = counts
            .iter()
            .map(|&n| power2up(n).trailing_zeros())
            .collect();
        Ok(ChunkCache {
            config,
            form,
            rank,
            chunks_per_dim: grid.chunks_per_dim.clone(),
            down: grid.down.clone(),
            encode_bits,
            old_last_dim_chunks: counts[rank - 1],
            chunk_bytes: grid.chunk_bytes,
            element_size: grid.element_size,
            filtered: grid.filtered,
            entries: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            slots: SlotMap::default(),
            nused: 0,
            nbytes_used: 0,
            stats: CacheStats::default(),
            order: OrderIndex::default(),
            walk_prune: false,
        })
    }

    /// The effective settings.
    pub fn config(&self) -> CacheConfig {
        self.config
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Entries held now.
    pub fn len(&self) -> u64 {
        self.nused
    }

    /// Whether the cache holds nothing.
    pub fn is_empty(&self) -> bool {
        self.nused == 0
    }

    /// Decoded bytes held now (`nbytes_used`).
    pub fn bytes_used(&self) -> u64 {
        self.nbytes_used
    }

    /// Linear chunk indices held, least recent first.
    pub fn contents(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.nused as usize);
        let mut p = self.head;
        while p != NIL {
            out.push(self.entries[p].linear);
            p = self.entries[p].next;
        }
        out
    }

    /// Slot of a chunk (`H5D__chunk_hash_val`), or `None` when the cache is disabled or `scaled`
    /// has the wrong rank.
    pub fn slot_of(&self, scaled: &[u64]) -> Option<u64> {
        if self.config.nslots == 0 || scaled.len() != self.rank {
            return None;
        }
        Some(self.slot_unchecked(scaled))
    }

    fn slot_unchecked(&self, scaled: &[u64]) -> u64 {
        let fold = match self.form {
            HashForm::Current => true,
            HashForm::Pre1_10_5 => self.rank > 1 && self.old_last_dim_chunks <= self.config.nslots,
        };
        let val = if fold {
            let mut v = scaled[0];
            for (&s, &bits) in scaled.iter().zip(&self.encode_bits).skip(1) {
                // hsize_t shift: bits past 64 fall off.
                v = v.checked_shl(bits).unwrap_or(0) ^ s;
            }
            v
        } else {
            scaled[self.rank - 1]
        };
        val % self.config.nslots
    }

    /// One chunk access of one `H5Dread`: `scaled` chunk coordinates, `points` selected elements
    /// in the chunk, `stored_size` its stored bytes (0 = not allocated).
    ///
    /// Errors with [`ChunkTraceError::InvalidSelection`] when `scaled` has the wrong rank or lies
    /// outside the chunk grid.
    pub fn access(
        &mut self,
        scaled: &[u64],
        points: u64,
        stored_size: u64,
    ) -> Result<AccessOutcome, ChunkTraceError> {
        if scaled.len() != self.rank
            || scaled
                .iter()
                .zip(&self.chunks_per_dim)
                .any(|(&s, &n)| s >= n)
        {
            return Err(ChunkTraceError::InvalidSelection(format!(
                "chunk {scaled:?} outside the chunk grid {:?}",
                self.chunks_per_dim
            )));
        }
        let linear: u64 = scaled.iter().zip(&self.down).map(|(&s, &d)| s * d).sum();
        Ok(self.access_unchecked(scaled, linear, points, stored_size))
    }

    fn access_unchecked(
        &mut self,
        scaled: &[u64],
        linear: u64,
        points: u64,
        stored_size: u64,
    ) -> AccessOutcome {
        let accessed = points.saturating_mul(self.element_size);
        // H5D__chunk_lookup
        let mut slot = None;
        if self.config.nslots > 0 {
            let s = self.slot_unchecked(scaled);
            slot = Some(s);
            if let Some(&e) = self.slots.get(&s) {
                if self.entries[e].linear == linear {
                    self.stats.hits += 1;
                    self.promote(e);
                    self.unlock(e, accessed);
                    return AccessOutcome::Hit;
                }
            }
        }
        // H5D__chunk_cacheable (read): filtered chunks always go through the cache code; an
        // unfiltered chunk larger than nbytes is read element-wise, straight from the file.
        if !self.filtered && self.chunk_bytes > self.config.nbytes {
            if stored_size > 0 {
                self.stats.direct_reads += 1;
                return AccessOutcome::Direct { bytes: accessed };
            }
            return AccessOutcome::Miss {
                raw_bytes: 0,
                cached: false,
                evicted: 0,
            };
        }
        // H5D__chunk_lock, miss path: read (and decode) the whole chunk.
        if stored_size > 0 {
            self.stats.reads += 1;
            self.stats.raw_bytes = self.stats.raw_bytes.saturating_add(stored_size);
        }
        let mut evicted = 0u32;
        let cached = match slot {
            Some(s) if self.chunk_bytes <= self.config.nbytes => {
                if let Some(&occupant) = self.slots.get(&s) {
                    self.evict(occupant);
                    evicted += 1;
                }
                evicted += self.prune(self.chunk_bytes);
                let e = self.insert(linear, s);
                self.unlock(e, accessed);
                true
            }
            _ => false,
        };
        self.stats.evictions += u64::from(evicted);
        AccessOutcome::Miss {
            raw_bytes: stored_size,
            cached,
            evicted,
        }
    }

    /// Moves an entry one place toward the most-recent end (a swap with its successor).
    fn promote(&mut self, e: usize) {
        let nx = self.entries[e].next;
        if nx == NIL {
            return;
        }
        let pv = self.entries[e].prev;
        let nn = self.entries[nx].next;
        // pv <-> e <-> nx <-> nn  becomes  pv <-> nx <-> e <-> nn
        if pv != NIL {
            self.entries[pv].next = nx;
        } else {
            self.head = nx;
        }
        self.entries[nx].prev = pv;
        self.entries[nx].next = e;
        self.entries[e].prev = nx;
        self.entries[e].next = nn;
        if nn != NIL {
            self.entries[nn].prev = e;
        } else {
            self.tail = e;
        }
        let (ke, kn) = (self.entries[e].key, self.entries[nx].key);
        self.entries[e].key = kn;
        self.entries[nx].key = ke;
        self.order.key_entry[kn] = e;
        self.order.key_entry[ke] = nx;
        let (fe, fn_) = (self.fully_accessed(e), self.fully_accessed(nx));
        if fe != fn_ {
            let (from, to) = if fe { (ke, kn) } else { (kn, ke) };
            self.order.fully.remove(&from);
            self.order.fully.insert(to);
        }
    }

    /// `H5D__chunk_unlock` after a read: `rd_count` drops by the bytes accessed.
    fn unlock(&mut self, e: usize, accessed: u64) {
        let ent = &mut self.entries[e];
        if ent.rd_count > 0 {
            ent.rd_count -= ent.rd_count.min(accessed);
            if ent.rd_count == 0 {
                self.order.fully.insert(ent.key);
            }
        }
    }

    /// Renumbers keys 0.. along the list and rebuilds the index with room to grow.
    fn renumber(&mut self) {
        let n = self.nused as usize;
        let cap = (4 * n).max(1024);
        self.order.key_entry = vec![NIL; cap];
        self.order.bit = vec![0; cap + 1];
        self.order.fully.clear();
        let mut p = self.head;
        let mut k = 0;
        while p != NIL {
            self.entries[p].key = k;
            self.order.key_entry[k] = p;
            self.order.bit[k + 1] = 1;
            if self.entries[p].rd_count == 0 {
                self.order.fully.insert(k);
            }
            k += 1;
            p = self.entries[p].next;
        }
        for i in 1..=cap {
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                self.order.bit[j] += self.order.bit[i];
            }
        }
        self.order.next_key = n;
    }

    fn insert(&mut self, linear: u64, slot: u64) -> usize {
        if self.order.next_key >= self.order.cap() {
            self.renumber();
        }
        let key = self.order.next_key;
        self.order.next_key += 1;
        let ent = Entry {
            linear,
            slot,
            rd_count: self.chunk_bytes,
            key,
            prev: self.tail,
            next: NIL,
        };
        let e = match self.free.pop() {
            Some(i) => {
                self.entries[i] = ent;
                i
            }
            None => {
                self.entries.push(ent);
                self.entries.len() - 1
            }
        };
        if self.tail != NIL {
            self.entries[self.tail].next = e;
        } else {
            self.head = e;
        }
        self.tail = e;
        self.order.key_entry[key] = e;
        self.order.add(key, 1);
        self.slots.insert(slot, e);
        self.nused += 1;
        self.nbytes_used += self.chunk_bytes;
        e
    }

    fn evict(&mut self, e: usize) {
        let Entry {
            prev,
            next,
            slot,
            key,
            ..
        } = self.entries[e];
        self.order.add(key, -1);
        self.order.key_entry[key] = NIL;
        self.order.fully.remove(&key);
        if prev != NIL {
            self.entries[prev].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.entries[next].prev = prev;
        } else {
            self.tail = prev;
        }
        self.slots.remove(&slot);
        self.free.push(e);
        self.nused -= 1;
        self.nbytes_used -= self.chunk_bytes;
    }

    /// Fully read (or fully written) test of `H5D__chunk_cache_prune` method 0. Reads never change
    /// `wr_count`, which stays at the chunk size, so only `rd_count == 0` qualifies.
    fn fully_accessed(&self, e: usize) -> bool {
        self.entries[e].rd_count == 0
    }

    /// `H5D__chunk_cache_prune`: two pointers walk from the least-recent end. Pointer 0 (method 0)
    /// starts at once and preempts only fully read entries; pointer 1 (method 1, any unlocked
    /// entry) starts from the head after `(int)(nused * w0)` steps. The walk stops when the new
    /// chunk fits or both pointers ran off the list, so with `w0` near 1 the cache may end above
    /// `nbytes`. Returns the number of entries preempted.
    ///
    /// The first `(int)(nused * w0)` steps only preempt fully read entries among the first that
    /// many positions, so they are taken from the sorted set of fully read keys instead of walking;
    /// from the step where pointer 1 starts, the C loop runs as written (each of its iterations
    /// preempts an entry until the new chunk fits, so it is short).
    fn prune(&mut self, size: u64) -> u32 {
        let total = self.config.nbytes;
        if self.nbytes_used + size <= total {
            return 0;
        }
        // C: (int)(size_t * double), truncation toward zero.
        let w = (self.nused as f64 * self.config.w0) as i64;
        if self.walk_prune {
            return self.prune_walk(self.head, w, size);
        }
        // Key of the entry where pointer 0 stands when pointer 1 starts; none when pointer 0
        // runs off the list first (then pointer 1 never starts).
        let threshold = ((w as u64) < self.nused).then(|| self.order.select(w as u64));
        let mut evicted = 0;
        while self.nbytes_used + size > total {
            let Some(&first) = self.order.fully.iter().next() else {
                break;
            };
            if threshold.is_some_and(|t| first >= t) {
                break;
            }
            self.evict(self.order.key_entry[first]);
            evicted += 1;
        }
        match threshold {
            Some(t) if self.nbytes_used + size > total => {
                evicted + self.prune_walk(self.order.key_entry[t], 0, size)
            }
            _ => evicted,
        }
    }

    /// The loop of `H5D__chunk_cache_prune` from pointer 0 at `p0` with `w` steps left before
    /// pointer 1 starts at the head.
    fn prune_walk(&mut self, p0: usize, mut w: i64, size: u64) -> u32 {
        let total = self.config.nbytes;
        let mut p = [p0, NIL];
        let mut n = [NIL, NIL];
        let mut evicted = 0;
        while (p[0] != NIL || p[1] != NIL) && self.nbytes_used + size > total {
            if w == 0 {
                p[1] = self.head;
            }
            for i in 0..2 {
                n[i] = if p[i] != NIL {
                    self.entries[p[i]].next
                } else {
                    NIL
                };
            }
            for i in 0..2 {
                if self.nbytes_used + size <= total {
                    break;
                }
                let cur = if i == 0 && p[0] != NIL && self.fully_accessed(p[0]) {
                    p[0]
                } else if i == 1 && p[1] != NIL {
                    p[1]
                } else {
                    NIL
                };
                if cur != NIL {
                    let cur_next = self.entries[cur].next;
                    for j in 0..2 {
                        if p[j] == cur {
                            p[j] = NIL;
                        }
                        if n[j] == cur {
                            n[j] = cur_next;
                        }
                    }
                    self.evict(cur);
                    evicted += 1;
                }
            }
            p = n;
            w -= 1;
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_trace::geometry::ChunkGeometry;

    fn grid(shape: &[u64], chunk: &[u64], filtered: bool) -> Grid {
        ChunkGeometry {
            shape: shape.to_vec(),
            chunk_shape: chunk.to_vec(),
            element_size: 1,
            filtered,
            chunks: vec![],
            default_stored_size: Some(10),
        }
        .validate()
        .unwrap()
    }

    fn cfg(nslots: u64, nbytes: u64, w0: f64) -> CacheConfig {
        CacheConfig { nslots, nbytes, w0 }
    }

    #[test]
    fn hash_form_names() {
        assert_eq!("current".parse::<HashForm>(), Ok(HashForm::Current));
        assert_eq!("pre-1.10.5".parse::<HashForm>(), Ok(HashForm::Pre1_10_5));
        assert!("1.8".parse::<HashForm>().is_err());
    }

    #[test]
    fn current_hash_folds_all_dimensions() {
        // 5 x 3 chunks: bits = [3, 2]; (4, 2) -> (4 << 2) ^ 2 = 18.
        let g = grid(&[10, 6], &[2, 2], true);
        let c = ChunkCache::new(&g, cfg(7, 100, 0.0), HashForm::Current).unwrap();
        assert_eq!(c.slot_of(&[4, 2]).unwrap(), 18 % 7);
        // 3-D: 2 x 3 x 5 chunks, bits [1, 2, 3]: ((1 << 2) ^ 2) << 3 ^ 4 = 52.
        let g = grid(&[2, 3, 5], &[1, 1, 1], true);
        let c = ChunkCache::new(&g, cfg(1000, 100, 0.0), HashForm::Current).unwrap();
        assert_eq!(c.slot_of(&[1, 2, 4]).unwrap(), 52);
    }

    #[test]
    fn old_hash_uses_last_dimension_when_it_has_many_chunks() {
        // Last dimension 3 full chunks (edge chunk ignored: 7 / 2 = 3) > nslots 2: val = s[last].
        let g = grid(&[10, 7], &[2, 2], true);
        let c = ChunkCache::new(&g, cfg(2, 100, 0.0), HashForm::Pre1_10_5).unwrap();
        assert_eq!(c.slot_of(&[4, 3]).unwrap(), 1);
        assert_eq!(c.slot_of(&[1, 2]).unwrap(), 0);
        // nslots 3 >= 3: fold; dimension 1 has 3 full chunks, so 2 bits.
        let c = ChunkCache::new(&g, cfg(3, 100, 0.0), HashForm::Pre1_10_5).unwrap();
        assert_eq!(c.slot_of(&[1, 2]).unwrap(), ((1 << 2) ^ 2) % 3);
        // Rank 1 never folds.
        let g = grid(&[10], &[2], true);
        let c = ChunkCache::new(&g, cfg(3, 100, 0.0), HashForm::Pre1_10_5).unwrap();
        assert_eq!(c.slot_of(&[4]).unwrap(), 1);
    }

    #[test]
    fn hit_promotes_by_one_place() {
        // 1-D, 6 chunks of 1 byte, 8 slots: no collisions.
        let g = grid(&[6], &[1], true);
        let mut c = ChunkCache::new(&g, cfg(8, 100, 0.0), HashForm::Current).unwrap();
        for i in 0..4 {
            c.access(&[i], 1, 10).unwrap();
        }
        assert_eq!(c.contents(), vec![0, 1, 2, 3]);
        assert_eq!(c.access(&[0], 0, 10).unwrap(), AccessOutcome::Hit);
        assert_eq!(c.contents(), vec![1, 0, 2, 3]);
        c.access(&[3], 0, 10).unwrap();
        assert_eq!(c.contents(), vec![1, 0, 2, 3]);
        c.access(&[1], 0, 10).unwrap();
        assert_eq!(c.contents(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn slot_collision_evicts_occupant_however_recent() {
        let g = grid(&[6], &[1], true);
        let mut c = ChunkCache::new(&g, cfg(2, 100, 0.0), HashForm::Current).unwrap();
        c.access(&[0], 0, 10).unwrap();
        c.access(&[1], 0, 10).unwrap();
        let out = c.access(&[2], 0, 10).unwrap(); // slot 0, evicts chunk 0
        assert_eq!(
            out,
            AccessOutcome::Miss {
                raw_bytes: 10,
                cached: true,
                evicted: 1
            }
        );
        assert_eq!(c.contents(), vec![1, 2]);
    }

    #[test]
    fn prune_with_w0_skips_partially_read_entries_first() {
        // 4 chunks of 2 bytes, budget 6 bytes (3 chunks), 16 slots.
        let g = grid(&[8], &[2], true);
        let mk = |w0| ChunkCache::new(&g, cfg(16, 6, w0), HashForm::Current).unwrap();
        // Chunk 1 fully read (2 points), chunks 0 and 2 partially (1 point).
        let run = |c: &mut ChunkCache| {
            c.access(&[0], 1, 10).unwrap();
            c.access(&[1], 2, 10).unwrap();
            c.access(&[2], 1, 10).unwrap();
            c.access(&[3], 1, 10).unwrap();
            c.contents()
        };
        // w0 = 0: method 1 starts at once and takes the head.
        assert_eq!(run(&mut mk(0.0)), vec![1, 2, 3]);
        // w0 = 0.75: (int)(3 * 0.75) = 2 steps of method 0 alone; it finds chunk 1 fully read.
        assert_eq!(run(&mut mk(0.75)), vec![0, 2, 3]);
        // w0 = 1: method 0 walks the whole list first; it still finds chunk 1.
        assert_eq!(run(&mut mk(1.0)), vec![0, 2, 3]);
    }

    #[test]
    fn w0_one_with_nothing_fully_read_overfills() {
        let g = grid(&[8], &[2], true);
        let mut c = ChunkCache::new(&g, cfg(16, 6, 1.0), HashForm::Current).unwrap();
        for i in 0..4 {
            c.access(&[i], 1, 10).unwrap();
        }
        // Pointer 0 runs off the list before pointer 1 starts: nothing is preempted.
        assert_eq!(c.contents(), vec![0, 1, 2, 3]);
        assert_eq!(c.bytes_used(), 8);
    }

    /// The indexed prune gives the same cache, step for step, as walking the list like the C loop.
    #[test]
    fn indexed_prune_equals_the_walk() {
        let mut rng = crate::chunk_trace::SplitMix64::new(3);
        for case in 0..300 {
            let n = 1 + rng.below(40);
            let g = grid(&[n * 2], &[2], true);
            let config = cfg(
                1 + rng.below(2 * n),
                2 * (1 + rng.below(n + 2)),
                [0.0, 0.3, 0.5, 0.75, 0.9, 1.0][rng.below(6) as usize],
            );
            let mut fast = ChunkCache::new(&g, config, HashForm::Current).unwrap();
            let mut walk = fast.clone();
            walk.walk_prune = true;
            for step in 0..(50 + rng.below(3000)) {
                let c = rng.below(n);
                let points = rng.below(3);
                let a = fast.access(&[c], points, 10).unwrap();
                let b = walk.access(&[c], points, 10).unwrap();
                assert_eq!(a, b, "case {case} step {step} {config:?}");
                assert_eq!(fast.contents(), walk.contents(), "case {case} step {step}");
            }
        }
    }

    #[test]
    fn oversize_and_disabled() {
        // Filtered chunk of 4 bytes, budget 3: read every time, never cached.
        let g = grid(&[8], &[4], true);
        let mut c = ChunkCache::new(&g, cfg(16, 3, 0.0), HashForm::Current).unwrap();
        for _ in 0..3 {
            assert_eq!(
                c.access(&[0], 1, 10).unwrap(),
                AccessOutcome::Miss {
                    raw_bytes: 10,
                    cached: false,
                    evicted: 0
                }
            );
        }
        // Unfiltered: element-wise direct reads.
        let g = grid(&[8], &[4], false);
        let mut c = ChunkCache::new(&g, cfg(16, 3, 0.0), HashForm::Current).unwrap();
        assert_eq!(
            c.access(&[0], 2, 10).unwrap(),
            AccessOutcome::Direct { bytes: 2 }
        );
        // nslots = 0 disables both.
        let c = ChunkCache::new(&g, cfg(0, 1 << 20, 0.5), HashForm::Current).unwrap();
        assert_eq!(c.config(), cfg(0, 0, 0.5));
        assert!(ChunkCache::new(&g, cfg(1, 1, 1.5), HashForm::Current).is_err());
    }
}
