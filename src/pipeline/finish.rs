//! Finishing steps after assembly: variable-length strings, whose assembled elements are
//! references into HDF5 global heap collections, are resolved into fixed-length strings.

use super::{ArrayData, Reader};
use crate::cache::{CacheKey, Item};
use crate::element::Element;
use crate::error::Result;
use crate::selection::Plan;
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// Resolves the variable-length strings (alone or in records) of the assembled `out`: the
/// collections its references point into are fetched as one coalesced batch, or taken from
/// the payload cache ([`Item::HeapCollection`]).
///
/// # Errors
/// As [`crate::formats::hdf5::heap::resolve_strings`], as format errors of this source.
pub(crate) async fn resolve_vlen(
    r: &Reader<'_>,
    plan: &Plan,
    element: &Element,
    out: Vec<u8>,
) -> Result<ArrayData> {
    let heap = HeapCache::load(r, element, &out).await;
    let resolved = crate::formats::hdf5::heap::resolve_strings(
        r.source,
        r.source_len,
        element,
        &out,
        &r.coalesce_options(),
        r.limits.max_result_bytes,
        &heap,
    )
    .await;
    heap.keep().await;
    let (resolved, data) = resolved.map_err(|err| err.into_error(r.location))?;
    Ok(ArrayData {
        shape: plan.result_shape.clone(),
        dtype: resolved.storage_dtype(),
        data,
        element: Some(resolved),
        missing_chunks: 0,
    })
}

/// Global heap collections kept in the payload cache, under the array's payload identity.
/// The resolver's cache hook is synchronous and a cache backend may have to wait, so the
/// collections a read references are looked up before it ([`HeapCache::load`]) and those it
/// fetched are stored after it ([`HeapCache::keep`]).
struct HeapCache<'a> {
    r: &'a Reader<'a>,
    /// Collections found in the payload cache, by address.
    held: HashMap<u64, Bytes>,
    /// Collections the read fetched, to store.
    fetched: Mutex<Vec<(u64, Bytes)>>,
}

impl crate::formats::hdf5::heap::CollectionCache for HeapCache<'_> {
    fn get(&self, address: u64) -> Option<Bytes> {
        self.held.get(&address).cloned()
    }
    fn put(&self, address: u64, bytes: Bytes) {
        self.fetched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((address, bytes));
    }
}

impl<'a> HeapCache<'a> {
    /// Looks up the collections that the references in `data` (elements of `element`) point
    /// to. References that do not decode are left to the resolver, which reports them.
    async fn load(r: &'a Reader<'a>, element: &Element, data: &[u8]) -> HeapCache<'a> {
        let mut held = HashMap::new();
        if r.coordinator.retains_payload() {
            let refs = crate::formats::hdf5::heap::references(element, data).unwrap_or_default();
            let addrs: BTreeSet<u64> = refs
                .iter()
                .filter(|x| x.len > 0)
                .map(|x| x.collection)
                .collect();
            for a in addrs {
                if let Some(b) = r.coordinator.get_payload(&key_of(r, a)).await {
                    held.insert(a, b);
                }
            }
        }
        HeapCache {
            r,
            held,
            fetched: Mutex::new(Vec::new()),
        }
    }

    /// Stores the collections the read fetched.
    async fn keep(self) {
        let fetched = self.fetched.into_inner().unwrap_or_else(|e| e.into_inner());
        for (a, b) in fetched {
            self.r.coordinator.put_payload(key_of(self.r, a), b).await;
        }
    }
}

fn key_of(r: &Reader<'_>, address: u64) -> CacheKey {
    CacheKey {
        source: r.identity.clone(),
        item: Item::HeapCollection(address),
    }
}
