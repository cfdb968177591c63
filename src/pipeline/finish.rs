//! Finishing steps after assembly: variable-length strings, whose assembled elements are
//! references into HDF5 global heap collections, are resolved into fixed-length strings.

use super::{ArrayData, Reader};
use crate::cache::{CacheKey, Item};
use crate::element::Element;
use crate::error::Result;
use crate::selection::Plan;
use bytes::Bytes;

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
    let (resolved, data) = crate::formats::hdf5::heap::resolve_strings(
        r.source,
        r.source_len,
        element,
        &out,
        &r.coalesce_options(),
        r.limits.max_result_bytes,
        &HeapCache(r),
    )
    .await
    .map_err(|err| err.into_format(r.location))?;
    Ok(ArrayData {
        shape: plan.result_shape.clone(),
        dtype: resolved.storage_dtype(),
        data,
        element: Some(resolved),
        missing_chunks: 0,
    })
}

/// Global heap collections kept in the payload cache, under the array's payload identity.
struct HeapCache<'a>(&'a Reader<'a>);

impl crate::formats::hdf5::heap::CollectionCache for HeapCache<'_> {
    fn get(&self, address: u64) -> Option<Bytes> {
        self.0.coordinator.get_payload(&self.key_of(address))
    }
    fn put(&self, address: u64, bytes: Bytes) {
        self.0.coordinator.put_payload(self.key_of(address), bytes);
    }
}

impl HeapCache<'_> {
    fn key_of(&self, address: u64) -> CacheKey {
        CacheKey {
            source: self.0.identity.clone(),
            item: Item::HeapCollection(address),
        }
    }
}
