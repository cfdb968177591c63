//! Variable-length strings: resolving global heap references after a chunk is decoded.
//!
//! A stored variable-length string is a reference of `4 + offset_size + 4` bytes: the string's
//! length in bytes (u32), the address of a global heap collection, and the object's index in it
//! (u32), all little-endian (HDF5 File Format Specification, "Global Heap" and "Disk Format:
//! Level 2A2 Datatype Message", variable-length class). [`resolve_strings`] fetches the
//! collections a selection references in one coalesced batch (a second one only for
//! collections larger than [`COLLECTION_PREFIX`]), parses them with `hdf5-reader`'s
//! [`GlobalHeapCollection`] and writes the strings as fixed-width `|S{n}` bytes, `n` being the
//! longest string, so no value is truncated. Like h5py (which builds each value with
//! `PyBytes_FromString`), a string ends at its first NUL. Variable-length strings inside
//! compounds (and their array members) resolve the same way, each member getting its own
//! width; the record is laid out again with its members in order, gaps kept.
//!
//! Allocation is bounded: a collection is at most the file's size and is fetched only when its
//! header says so; a reference whose length exceeds its heap object is an error, not a read
//! past it; the result is limited by the caller's `max_result_bytes`.

use super::Hdf5Error;
use crate::element::Element;
use crate::io::{read_coalesced, CoalesceOptions, RangeSource};
use bytes::Bytes;
use hdf5_reader::global_heap::GlobalHeapCollection;
use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

/// Bytes fetched first at each collection: the smallest collection HDF5 writes (4 KiB,
/// `H5HG_MINSIZE` in H5HGprivate.h), so most collections arrive in the first batch.
pub const COLLECTION_PREFIX: u64 = 4096;

/// One decoded variable-length reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapRef {
    /// String length in bytes.
    pub len: u32,
    /// Absolute address of the collection (base address added).
    pub collection: u64,
    /// Object index inside the collection.
    pub index: u32,
}

/// Reads one reference at `e` (`4 + offset_size + 4` bytes).
fn read_ref(e: &[u8], offset_size: u8, base_address: u64) -> Result<HeapRef, Hdf5Error> {
    let os = offset_size as usize;
    let mut a = [0u8; 8];
    a[..os].copy_from_slice(&e[4..4 + os]);
    let addr = u64::from_le_bytes(a);
    Ok(HeapRef {
        len: u32::from_le_bytes(e[0..4].try_into().expect("4 bytes")),
        collection: addr
            .checked_add(base_address)
            .ok_or_else(|| Hdf5Error::Invalid(format!("global heap address {addr} overflows")))?,
        index: u32::from_le_bytes(e[4 + os..8 + os].try_into().expect("4 bytes")),
    })
}

/// Calls `f(node, offset)` for every variable-length string inside one element of type `e`
/// at byte `at`, in a fixed order (record members in declaration order, sub-array items in
/// C order); `node` numbers the [`Element::VlenString`] nodes of the type tree in the same
/// order, so all items of one sub-array share a node.
fn walk_vlen(e: &Element, at: usize, node: &mut usize, f: &mut dyn FnMut(usize, usize, &Element)) {
    match e {
        Element::VlenString { .. } => {
            f(*node, at, e);
            *node += 1;
        }
        Element::Record { fields, .. } => {
            for fl in fields {
                walk_vlen(&fl.element, at + fl.offset, node, f);
            }
        }
        Element::SubArray { base, shape } => {
            if !base.has_vlen() {
                return;
            }
            let n = shape.iter().product::<u64>() as usize;
            let size = base.stored_size();
            let first = *node;
            for i in 0..n {
                *node = first;
                walk_vlen(base, at + i * size, node, f);
            }
        }
        _ => {}
    }
}

/// The references in `data` (whole stored elements of `element`), element by element; inside
/// an element, record members in declaration order and sub-array items in C order.
///
/// # Errors
/// [`Hdf5Error::Invalid`] when an address overflows.
pub fn references(element: &Element, data: &[u8]) -> Result<Vec<HeapRef>, Hdf5Error> {
    Ok(references_with_nodes(element, data)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

fn references_with_nodes(
    element: &Element,
    data: &[u8],
) -> Result<Vec<(usize, HeapRef)>, Hdf5Error> {
    let n = element.stored_size();
    let mut out = Vec::new();
    let mut err = None;
    if n == 0 {
        return Ok(out);
    }
    for e in data.chunks_exact(n) {
        let mut node = 0;
        walk_vlen(element, 0, &mut node, &mut |k, at, v| {
            if let Element::VlenString {
                offset_size,
                base_address,
                ..
            } = v
            {
                let size = 8 + *offset_size as usize;
                match e
                    .get(at..at + size)
                    .map(|s| read_ref(s, *offset_size, *base_address))
                {
                    Some(Ok(r)) => out.push((k, r)),
                    Some(Err(x)) => err = Some(x),
                    None => err = Some(Hdf5Error::Invalid("reference outside its element".into())),
                }
            }
        });
        if let Some(x) = err.take() {
            return Err(x);
        }
    }
    Ok(out)
}

/// The size in bytes of the collection whose first bytes are `head` (signature `GCOL`,
/// version 1, three reserved bytes, then the size in `length_size` bytes).
///
/// # Errors
/// [`Hdf5Error::Invalid`] for a bad signature, version or size.
pub fn collection_size(head: &[u8], length_size: u8) -> Result<u64, Hdf5Error> {
    let ls = length_size as usize;
    if head.len() < 8 + ls || &head[..4] != b"GCOL" || head[4] != 1 || ls > 8 {
        return Err(Hdf5Error::Invalid(
            "a variable-length reference does not point at a global heap collection".into(),
        ));
    }
    let mut a = [0u8; 8];
    a[..ls].copy_from_slice(&head[8..8 + ls]);
    let size = u64::from_le_bytes(a);
    if size < (8 + ls) as u64 {
        return Err(Hdf5Error::Invalid(format!(
            "global heap collection of {size} bytes"
        )));
    }
    Ok(size)
}

/// Replaces each variable-length string node of `e` by a fixed-length string of its width and
/// lays records out again: members keep their order and the gaps between them, and move by
/// the growth of the members before them.
fn resolved_type(e: &Element, node: &mut usize, widths: &[usize]) -> Element {
    match e {
        Element::VlenString { utf8, .. } => {
            let w = widths.get(*node).copied().unwrap_or(1);
            *node += 1;
            Element::String {
                size: w,
                padding: crate::element::Padding::NullPad,
                utf8: *utf8,
            }
        }
        Element::Record { size, fields } => {
            let mut order: Vec<usize> = (0..fields.len()).collect();
            crate::sort::sort_by_key(&mut order, |&i| fields[i].offset);
            let mut new_fields = fields.clone();
            // Bytes gained (or lost: a string shorter than its 16-byte reference) so far.
            let mut grow = 0i64;
            // Nodes are numbered in declaration order: resolve members in that order.
            let resolved: Vec<Element> = fields
                .iter()
                .map(|f| resolved_type(&f.element, node, widths))
                .collect();
            for i in order {
                new_fields[i].offset = (fields[i].offset as i64 + grow) as usize;
                grow += resolved[i].stored_size() as i64 - fields[i].element.stored_size() as i64;
                new_fields[i].element = resolved[i].clone();
            }
            Element::Record {
                size: (*size as i64 + grow) as usize,
                fields: new_fields,
            }
        }
        Element::SubArray { base, shape } => Element::SubArray {
            base: Box::new(resolved_type(base, node, widths)),
            shape: shape.clone(),
        },
        other => other.clone(),
    }
}

/// Copies one element from its stored type `old` into the resolved type `new`, taking the
/// strings of its variable-length members from `next` in [`walk_vlen`] order.
fn transcode(
    old: &Element,
    new: &Element,
    src: &[u8],
    dst: &mut [u8],
    next: &mut dyn FnMut() -> Vec<u8>,
) {
    match (old, new) {
        (Element::VlenString { .. }, _) => {
            let v = next();
            let n = v.len().min(dst.len());
            dst[..n].copy_from_slice(&v[..n]);
        }
        (Element::Record { fields, .. }, Element::Record { fields: nf, .. }) => {
            // Gaps and members without strings copy as stored, member by member.
            for (f, g) in fields.iter().zip(nf) {
                let (os, ns) = (f.element.stored_size(), g.element.stored_size());
                transcode(
                    &f.element,
                    &g.element,
                    &src[f.offset..f.offset + os],
                    &mut dst[g.offset..g.offset + ns],
                    next,
                );
            }
        }
        (Element::SubArray { base, .. }, Element::SubArray { base: nb, .. }) => {
            let (os, ns) = (base.stored_size(), nb.stored_size());
            for (s, d) in src.chunks_exact(os).zip(dst.chunks_exact_mut(ns)) {
                transcode(base, nb, s, d, next);
            }
        }
        _ => dst.copy_from_slice(src),
    }
}

/// Resolves the variable-length strings of `data` (whole stored elements of `element`)
/// from the parsed `collections` (address -> whole collection bytes). Each variable-length
/// string becomes `|S{n}` bytes, `n` the longest string of its member (at least 1); records
/// holding them are laid out again. Returns the resolved element type and bytes.
///
/// # Errors
/// [`Hdf5Error::Invalid`] for a missing object, a length past its object, or a result over
/// `max_result_bytes`.
pub fn resolve(
    element: &Element,
    data: &[u8],
    collections: &HashMap<u64, Bytes>,
    offset_size: u8,
    length_size: u8,
    max_result_bytes: u64,
) -> Result<(Element, Vec<u8>), Hdf5Error> {
    let mut objects: HashMap<u64, HashMap<u32, Vec<u8>>> = HashMap::new();
    for (&addr, bytes) in collections {
        let mut cursor = hdf5_reader::io::Cursor::new(bytes);
        let c = GlobalHeapCollection::parse(&mut cursor, offset_size, length_size)
            .map_err(|e| Hdf5Error::Invalid(format!("global heap collection at {addr}: {e}")))?;
        objects.insert(
            addr,
            c.objects
                .into_iter()
                .map(|o| (o.index as u32, o.data))
                .collect(),
        );
    }
    let refs = references_with_nodes(element, data)?;
    let mut widths: Vec<usize> = Vec::new();
    let mut values: Vec<&[u8]> = Vec::with_capacity(refs.len());
    for (node, r) in &refs {
        let v: &[u8] = if r.len == 0 {
            &[]
        } else {
            let obj = objects
                .get(&r.collection)
                .and_then(|c| c.get(&r.index))
                .ok_or_else(|| {
                    Hdf5Error::Invalid(format!(
                        "global heap object {} not found in the collection at {}",
                        r.index, r.collection
                    ))
                })?;
            let v = obj.get(..r.len as usize).ok_or_else(|| {
                Hdf5Error::Invalid(format!(
                    "a {}-byte variable-length string in a {}-byte heap object",
                    r.len,
                    obj.len()
                ))
            })?;
            // h5py builds each value with PyBytes_FromString: it ends at the first NUL.
            &v[..v.iter().position(|&b| b == 0).unwrap_or(v.len())]
        };
        if widths.len() <= *node {
            widths.resize(node + 1, 1);
        }
        widths[*node] = widths[*node].max(v.len());
        values.push(v);
    }
    let new = resolved_type(element, &mut 0, &widths);
    let (old_size, new_size) = (element.stored_size(), new.stored_size());
    if old_size == 0 {
        return Ok((new, Vec::new()));
    }
    let count = data.len() / old_size;
    let total = (new_size as u64)
        .checked_mul(count as u64)
        .filter(|&t| t <= max_result_bytes)
        .ok_or_else(|| {
            Hdf5Error::Invalid(format!(
                "{count} elements of {new_size} bytes with their strings exceed the result limit of {max_result_bytes} bytes"
            ))
        })?;
    let mut out = vec![0u8; total as usize];
    let mut it = values.into_iter();
    let mut next = || it.next().map(|v| v.to_vec()).unwrap_or_default();
    for (s, d) in data
        .chunks_exact(old_size)
        .zip(out.chunks_exact_mut(new_size))
    {
        transcode(element, &new, s, d, &mut next);
    }
    Ok((new, out))
}

/// Where whole global heap collections are kept between reads (the payload cache).
pub trait CollectionCache {
    /// The collection at absolute address `address`, if held.
    fn get(&self, address: u64) -> Option<Bytes>;
    /// Keeps the whole collection at `address`.
    fn put(&self, address: u64, bytes: Bytes);
}

/// No cache: every read fetches its collections.
pub struct NoCollectionCache;

impl CollectionCache for NoCollectionCache {
    fn get(&self, _: u64) -> Option<Bytes> {
        None
    }
    fn put(&self, _: u64, _: Bytes) {}
}

/// Resolves the variable-length strings in `data` (stored elements of `element`: a
/// variable-length string, or a record or sub-array holding some) by fetching the global heap collections they reference from
/// `source` (`source_len` bytes): one coalesced batch of [`COLLECTION_PREFIX`] bytes per
/// collection not in `cache`, a second for the rest of larger collections. Fetched
/// collections are put in `cache`; a cached one that is not a whole collection counts as a
/// miss. Valid collections never overlap, so collections adding up to more than the file are
/// refused before they are parsed (bounded work for references a corrupt file multiplies).
///
/// # Errors
/// [`Hdf5Error::Invalid`] for references outside the file, malformed collections, lying
/// lengths, or a result over `max_result_bytes`; [`Hdf5Error::Io`].
pub async fn resolve_strings(
    source: &dyn RangeSource,
    source_len: u64,
    element: &Element,
    data: &[u8],
    options: &CoalesceOptions,
    max_result_bytes: u64,
    cache: &dyn CollectionCache,
) -> Result<(Element, Vec<u8>), Hdf5Error> {
    let Some((offset_size, length_size)) = vlen_sizes(element) else {
        return Err(Hdf5Error::Invalid(
            "no variable-length strings to resolve".into(),
        ));
    };
    let (offset_size, length_size) = (&offset_size, &length_size);
    let refs = references(element, data)?;
    let addrs: BTreeSet<u64> = refs
        .iter()
        .filter(|r| r.len > 0)
        .map(|r| r.collection)
        .collect();
    let header = 8 + *length_size as u64;
    if let Some(bad) = addrs
        .iter()
        .find(|&&a| a.saturating_add(header) > source_len)
    {
        return Err(Hdf5Error::Invalid(format!(
            "global heap collection at {bad} is outside the file ({source_len} bytes)"
        )));
    }
    let mut collections: HashMap<u64, Bytes> = HashMap::new();
    let mut addrs_missing = Vec::new();
    for a in addrs {
        match cache.get(a) {
            Some(b) if collection_size(&b, *length_size).is_ok_and(|s| s == b.len() as u64) => {
                collections.insert(a, b);
            }
            _ => addrs_missing.push(a),
        }
    }
    let addrs = addrs_missing;
    let first: Vec<Range<u64>> = addrs
        .iter()
        .map(|&a| a..(a + COLLECTION_PREFIX).min(source_len))
        .collect();
    let heads = if first.is_empty() {
        Vec::new()
    } else {
        read_coalesced(source, &first, options).await?
    };
    let mut more: Vec<(u64, u64)> = Vec::new();
    let mut total = 0u64;
    for (&a, head) in addrs.iter().zip(heads) {
        let size = collection_size(&head, *length_size)?;
        if a.checked_add(size).is_none_or(|e| e > source_len) {
            return Err(Hdf5Error::Invalid(format!(
                "global heap collection at {a} of {size} bytes passes the end of the file ({source_len} bytes)"
            )));
        }
        total += size;
        if total > source_len {
            return Err(Hdf5Error::Invalid(format!(
                "global heap collections overlap: {total} bytes in a {source_len}-byte file"
            )));
        }
        if size as usize <= head.len() {
            collections.insert(a, head.slice(..size as usize));
        } else {
            more.push((a, size));
            collections.insert(a, head);
        }
    }
    if !more.is_empty() {
        let ranges: Vec<Range<u64>> = more
            .iter()
            .map(|&(a, size)| a + COLLECTION_PREFIX..a + size)
            .collect();
        let rest = read_coalesced(source, &ranges, options).await?;
        for ((a, size), tail) in more.into_iter().zip(rest) {
            let mut whole = Vec::with_capacity(size as usize);
            whole.extend_from_slice(&collections[&a]);
            whole.extend_from_slice(&tail);
            collections.insert(a, Bytes::from(whole));
        }
    }
    for a in &addrs {
        cache.put(*a, collections[a].clone());
    }
    resolve(
        element,
        data,
        &collections,
        *offset_size,
        *length_size,
        max_result_bytes,
    )
}

/// The address and length sizes of the first variable-length string inside `e`.
fn vlen_sizes(e: &Element) -> Option<(u8, u8)> {
    match e {
        Element::VlenString {
            offset_size,
            length_size,
            ..
        } => Some((*offset_size, *length_size)),
        Element::Record { fields, .. } => fields.iter().find_map(|f| vlen_sizes(&f.element)),
        Element::SubArray { base, .. } => vlen_sizes(base),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collection holding `objs` (index, data), 8-byte lengths, padded to `size`.
    fn collection(objs: &[(u16, &[u8])], size: usize) -> Vec<u8> {
        let mut v = b"GCOL\x01\0\0\0".to_vec();
        v.extend_from_slice(&(size as u64).to_le_bytes());
        for (i, d) in objs {
            v.extend_from_slice(&i.to_le_bytes());
            v.extend_from_slice(&1u16.to_le_bytes());
            v.extend_from_slice(&[0; 4]);
            v.extend_from_slice(&(d.len() as u64).to_le_bytes());
            v.extend_from_slice(d);
            v.resize(v.len().next_multiple_of(8), 0);
        }
        v.resize(size, 0);
        v
    }

    fn refs(list: &[(u32, u64, u32)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (len, addr, idx) in list {
            v.extend_from_slice(&len.to_le_bytes());
            v.extend_from_slice(&addr.to_le_bytes());
            v.extend_from_slice(&idx.to_le_bytes());
        }
        v
    }

    const VLEN: Element = Element::VlenString {
        offset_size: 8,
        length_size: 8,
        base_address: 0,
        utf8: true,
    };

    #[test]
    fn strings_resolve_to_the_longest_width() {
        let c = collection(&[(1, b"alpha"), (2, "d\u{e9}j\u{e0}".as_bytes())], 4096);
        let data = refs(&[(5, 100, 1), (0, 0, 0), (6, 100, 2)]);
        let mut cols = HashMap::new();
        cols.insert(100u64, Bytes::from(c));
        let (e, out) = resolve(&VLEN, &data, &cols, 8, 8, 1 << 20).unwrap();
        assert_eq!(e.descr(), "|S6");
        assert_eq!(&out[..6], b"alpha\0");
        assert_eq!(&out[6..12], &[0; 6]);
        assert_eq!(&out[12..18], "d\u{e9}j\u{e0}".as_bytes());
    }

    #[test]
    fn lying_lengths_and_missing_objects_are_errors() {
        let c = collection(&[(1, b"abc")], 4096);
        let mut cols = HashMap::new();
        cols.insert(0u64, Bytes::from(c));
        // A length past the object (the object is padded to 8 bytes in the collection).
        let r = refs(&[(1_000_000, 0, 1)]);
        assert!(matches!(
            resolve(&VLEN, &r, &cols, 8, 8, 1 << 20),
            Err(Hdf5Error::Invalid(_))
        ));
        let r = refs(&[(3, 0, 7)]);
        assert!(resolve(&VLEN, &r, &cols, 8, 8, 1 << 20).is_err());
        // Result over the limit.
        let r = refs(&[(3, 0, 1), (3, 0, 1)]);
        assert!(resolve(&VLEN, &r, &cols, 8, 8, 5).is_err());
        // A collection whose size lies about its objects.
        let mut bad = collection(&[(1, b"abc")], 4096);
        bad[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut cols = HashMap::new();
        cols.insert(0u64, Bytes::from(bad));
        let r = refs(&[(3, 0, 1)]);
        assert!(resolve(&VLEN, &r, &cols, 8, 8, 1 << 20).is_err());
        assert!(collection_size(b"GCOL\x02\0\0\0\0\x10\0\0\0\0\0\0", 8).is_err());
        assert!(collection_size(b"XXXX\x01\0\0\0\0\x10\0\0\0\0\0\0", 8).is_err());
        assert_eq!(
            collection_size(b"GCOL\x01\0\0\0\0\x10\0\0\0\0\0\0", 8).unwrap(),
            4096
        );
    }

    #[test]
    fn records_with_strings_are_laid_out_again() {
        use crate::dtype::DType;
        use crate::element::{Field, Value};
        // { id: <i2 at 0, s: vlen at 2, tail: <i2 at 18 } in a 24-byte record (4 bytes pad).
        let rec = Element::Record {
            size: 24,
            fields: vec![
                Field {
                    name: "id".into(),
                    offset: 0,
                    element: Element::Number(DType::parse("<i2").unwrap()),
                },
                Field {
                    name: "s".into(),
                    offset: 2,
                    element: VLEN,
                },
                Field {
                    name: "tail".into(),
                    offset: 18,
                    element: Element::Number(DType::parse("<i2").unwrap()),
                },
            ],
        };
        let c = collection(&[(1, b"abc"), (2, b"z")], 4096);
        let mut cols = HashMap::new();
        cols.insert(8u64, Bytes::from(c));
        let mut data = Vec::new();
        for (id, r, tail) in [(7i16, (3u32, 8u64, 1u32), -1i16), (8, (1, 8, 2), -2)] {
            data.extend_from_slice(&id.to_le_bytes());
            data.extend_from_slice(&refs(&[r]));
            data.extend_from_slice(&tail.to_le_bytes());
            data.extend_from_slice(&[0; 4]);
        }
        let (e, out) = resolve(&rec, &data, &cols, 8, 8, 1 << 20).unwrap();
        assert_eq!(
            e.descr(),
            "[('id', '<i2'), ('s', '|S3'), ('tail', '<i2'), ('', '|V4')]"
        );
        assert_eq!(out.len(), 2 * 11);
        assert_eq!(
            e.values(&out),
            vec![
                Value::Record(vec![
                    ("id".into(), Value::Int(7)),
                    ("s".into(), Value::Bytes(b"abc".to_vec())),
                    ("tail".into(), Value::Int(-1)),
                ]),
                Value::Record(vec![
                    ("id".into(), Value::Int(8)),
                    ("s".into(), Value::Bytes(b"z".to_vec())),
                    ("tail".into(), Value::Int(-2)),
                ]),
            ]
        );
    }

    #[tokio::test]
    async fn fetches_large_collections_in_a_second_batch() {
        use crate::io::memory::MemorySource;
        let mut file = vec![0u8; 64];
        let big = vec![b'x'; 5000];
        file.extend(collection(&[(1, b"hi"), (2, &big)], 5064));
        let len = file.len() as u64;
        let src = MemorySource::new("mem://t", Bytes::from(file));
        let data = refs(&[(2, 64, 1), (5000, 64, 2)]);
        let opts = CoalesceOptions {
            max_gap: 0,
            max_len: None,
            concurrency: 2,
        };
        let (e, out) = resolve_strings(&src, len, &VLEN, &data, &opts, 1 << 20, &NoCollectionCache)
            .await
            .unwrap();
        assert_eq!(e.stored_size(), 5000);
        assert_eq!(&out[..3], b"hi\0");
        assert!(out[5000..].iter().all(|&b| b == b'x'));
        // An address outside the file.
        let data = refs(&[(2, len + 10, 1)]);
        assert!(
            resolve_strings(&src, len, &VLEN, &data, &opts, 1 << 20, &NoCollectionCache)
                .await
                .is_err()
        );
    }
}
