//! [`RemoteTable`]: one row-oriented view over column arrays, for three layouts:
//!
//! - a python-blosc2 `CTable`: each column a 1-D array (`_cols/<name>.b2nd`) of one physical
//!   length, plus the valid-rows mask `_valid_rows.b2nd` (`|b1`, false = a deleted row or
//!   unused capacity), as `blosc2/ctable.py` keeps them: the table's rows are the live ones,
//!   in physical order (`CTable.__len__` counts the mask's true values, row `i` is the
//!   position of the i-th true value, `_find_physical_index`);
//! - an HDF5 (or `.b2nd`) 1-D array of a record dtype (a PyTables-style table, an h5py
//!   compound dataset): each member a column ([`RemoteTable::from_records`]);
//! - a group of equal-length 1-D arrays (HDF5 or Zarr), columns in the listing's order
//!   ([`crate::store::RemoteStore::table`]).
//!
//! A read of live rows `start..stop` reads each wanted column only over the physical rows
//! those live rows span (the mask read once, on first need, and kept), the columns
//! concurrently, and drops the deleted rows. A record array is read once for all its members
//! (they are interleaved in its chunks).

use crate::array::{ArrayData, ReadOptions, RemoteArray};
use crate::dtype::Kind;
use crate::element::{Element, Field};
use crate::error::{Error, Result};
use crate::formats::FormatError;
use crate::pipeline::Progress;
use crate::selection::{Index, Selection};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One column: name, numpy dtype string (typestr, `<U6`, `|S8`; a record member's descr)
/// and why it cannot be read (`None` when readable), e.g. "variable-length strings (.b2b
/// member): unsupported".
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Column {
    /// Column name (a CTable field, a compound member, an array's name in its group).
    pub name: String,
    /// numpy dtype string of the column's values.
    pub dtype: String,
    /// Why the column cannot be read; `None` when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Rows read from a table ([`RemoteTable::read_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TableRows {
    /// Live rows read.
    pub nrows: u64,
    /// The columns asked for, in the order asked, each of `nrows` values (shape `[nrows]`,
    /// or `[nrows, ...]` for a record member that is a sub-array).
    pub columns: Vec<(String, ArrayData)>,
}

/// How a table's values are stored.
enum Layout {
    /// One 1-D array per readable column (same order as the readable entries of
    /// `RemoteTable::columns`).
    Columns(Vec<(String, RemoteArray)>),
    /// One 1-D record array; each member a column.
    Records(Box<RemoteArray>),
}

/// The valid-rows mask, read once: which physical rows are live and how many live rows
/// precede each block of [`BLOCK`] physical rows (to find the k-th live row quickly).
struct LiveRows {
    live: Vec<bool>,
    before: Vec<u64>,
    count: u64,
}

/// Physical rows per entry of [`LiveRows::before`].
const BLOCK: usize = 4096;

impl LiveRows {
    fn new(live: Vec<bool>) -> LiveRows {
        let mut before = Vec::with_capacity(live.len() / BLOCK + 1);
        let mut count = 0u64;
        for block in live.chunks(BLOCK) {
            before.push(count);
            count += block.iter().filter(|&&b| b).count() as u64;
        }
        LiveRows {
            live,
            before,
            count,
        }
    }

    /// Physical position of live row `k` (`k < count`).
    fn physical(&self, k: u64) -> u64 {
        // The last block whose preceding count is at most k holds live row k.
        let b = self.before.partition_point(|&c| c <= k).saturating_sub(1);
        let mut seen = self.before[b];
        for (i, &l) in self.live[b * BLOCK..].iter().enumerate() {
            if l {
                if seen == k {
                    return (b * BLOCK + i) as u64;
                }
                seen += 1;
            }
        }
        unreachable!("live row {k} of {} not found", self.count)
    }
}

/// A table opened for reading: columns, live-row count and row reads.
pub struct RemoteTable {
    columns: Vec<Column>,
    layout: Layout,
    /// Physical rows (the arrays' length).
    physical: u64,
    mask: Option<RemoteArray>,
    live: OnceLock<Arc<LiveRows>>,
    /// The source named in errors.
    location: String,
}

impl std::fmt::Debug for RemoteTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteTable")
            .field("location", &self.location)
            .field("columns", &self.columns)
            .field("physical_rows", &self.physical)
            .field("mask", &self.mask.is_some())
            .finish()
    }
}

fn invalid(location: &str, detail: String) -> Error {
    FormatError::Invalid {
        location: location.to_string(),
        format: "table",
        detail,
    }
    .into()
}

/// The one dimension of a column array, or INVALID naming it.
fn length_1d(location: &str, what: &str, arr: &RemoteArray) -> Result<u64> {
    match arr.shape() {
        [n] => Ok(*n),
        s => Err(invalid(
            location,
            format!(
                "{what} is not 1-D (shape {s:?}): a table's columns are 1-D arrays of one length"
            ),
        )),
    }
}

impl RemoteTable {
    /// Columns as 1-D arrays of equal physical length, with an optional valid-rows mask (a
    /// `|b1` array of the same length: false = deleted row, skipped, as python-blosc2's
    /// `CTable._valid_rows`) and unreadable columns listed with their reasons (listed after
    /// the readable ones).
    ///
    /// # Errors
    /// INVALID (`INVALID_DATA`) for an array that is not 1-D, arrays of different lengths
    /// ("arrays of different lengths: a has 500, b 400"), or a mask that is not a 1-D `|b1`
    /// array of that length; `INVALID_ARGUMENT` for no readable column or a name given twice.
    pub fn from_columns(
        columns: Vec<(String, RemoteArray)>,
        unreadable: Vec<Column>,
        mask: Option<RemoteArray>,
    ) -> Result<RemoteTable> {
        let Some((first_name, first)) = columns.first() else {
            return Err(Error::InvalidArgument(format!(
                "a table needs at least one readable column{}",
                if unreadable.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (unreadable: {})",
                        unreadable
                            .iter()
                            .map(|c| format!("{}: {}", c.name, c.error.as_deref().unwrap_or("?")))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )
                }
            )));
        };
        let location = first.source_info().location.clone();
        let physical = length_1d(&location, first_name, first)?;
        let mut listed: Vec<Column> = Vec::with_capacity(columns.len() + unreadable.len());
        for (name, arr) in &columns {
            let n = length_1d(&arr.source_info().location, name, arr)?;
            if n != physical {
                return Err(invalid(
                    &location,
                    format!("arrays of different lengths: {first_name} has {physical}, {name} {n}"),
                ));
            }
            listed.push(Column {
                name: name.clone(),
                dtype: arr.dtype_descr(),
                error: None,
            });
        }
        listed.extend(unreadable.into_iter().map(|mut c| {
            c.error.get_or_insert_with(|| "unreadable".to_string());
            c
        }));
        for (i, c) in listed.iter().enumerate() {
            if listed[..i].iter().any(|d| d.name == c.name) {
                return Err(Error::InvalidArgument(format!(
                    "column {:?} given twice",
                    c.name
                )));
            }
        }
        if let Some(m) = &mask {
            let n = length_1d(&m.source_info().location, "the valid-rows mask", m)?;
            if m.dtype().kind != Kind::Bool || m.element().is_some() {
                return Err(invalid(
                    &m.source_info().location,
                    format!("the valid-rows mask has dtype {}, not |b1", m.dtype_descr()),
                ));
            }
            if n != physical {
                return Err(invalid(
                    &location,
                    format!("the valid-rows mask has {n} rows, the columns {physical}"),
                ));
            }
        }
        Ok(RemoteTable {
            columns: listed,
            layout: Layout::Columns(columns),
            physical,
            mask,
            live: OnceLock::new(),
            location,
        })
    }

    /// An HDF5 (or `.b2nd`) 1-D array of a record dtype (numpy structured dtype, HDF5
    /// compound): each member a column, in declaration order, with the member's descr as
    /// its dtype. Every row is live.
    ///
    /// # Errors
    /// INVALID (`INVALID_DATA`) for an array that is not 1-D or whose elements are not
    /// records.
    pub fn from_records(array: RemoteArray) -> Result<RemoteTable> {
        let location = array.source_info().location.clone();
        let physical = length_1d(&location, "the record array", &array)?;
        let Some(Element::Record { fields, .. }) = array.element() else {
            return Err(invalid(
                &location,
                format!(
                    "the array's dtype {} is not a record (structured) dtype",
                    array.dtype_descr()
                ),
            ));
        };
        let columns = fields
            .iter()
            .map(|f| Column {
                name: f.name.clone(),
                dtype: member_descr(&f.element),
                error: None,
            })
            .collect();
        Ok(RemoteTable {
            columns,
            layout: Layout::Records(Box::new(array)),
            physical,
            mask: None,
            live: OnceLock::new(),
            location,
        })
    }

    /// The columns: readable ones first (in their layout's order), then unreadable ones with
    /// their reasons.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The source named in errors: the first column array's (or the record array's) URL.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Physical rows of the column arrays (live and deleted).
    pub fn physical_rows(&self) -> u64 {
        self.physical
    }

    /// The live rows (mask true), when already known without a read: always without a mask,
    /// and once the mask has been read.
    pub fn known_nrows(&self) -> Option<u64> {
        match &self.mask {
            None => Some(self.physical),
            Some(_) => self.live.get().map(|l| l.count),
        }
    }

    /// Live rows (mask true), counted once: the mask is read on first need and kept.
    ///
    /// # Errors
    /// Those of reading the mask ([`RemoteArray::read`]).
    pub async fn nrows(&self) -> Result<u64> {
        Ok(match self.live_rows(&ReadOptions::default()).await? {
            Some(l) => l.count,
            None => self.physical,
        })
    }

    async fn live_rows(&self, options: &ReadOptions<'_>) -> Result<Option<Arc<LiveRows>>> {
        let Some(mask) = &self.mask else {
            return Ok(None);
        };
        if let Some(l) = self.live.get() {
            return Ok(Some(l.clone()));
        }
        let read_options = ReadOptions {
            progress: None,
            cancel: options.cancel.clone(),
            ..Default::default()
        };
        let data = mask.read(&Selection::all(), &read_options).await?;
        let live = LiveRows::new(data.data.iter().map(|&b| b != 0).collect());
        // Two concurrent first reads both read the mask; the first kept is used by both.
        Ok(Some(self.live.get_or_init(|| Arc::new(live)).clone()))
    }

    /// Live rows `start..stop` (clamped like Python slicing: past the end is the end, stop
    /// before start is empty) of the named columns (all readable ones when `None`), each read
    /// only over the physical row range those live rows span, columns read concurrently,
    /// the mask applied. `options.progress` sees the chunks of all columns together.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for an unknown column name (listing the columns) or one named
    /// twice; `UNSUPPORTED` for an unreadable column, with its reason; those of
    /// [`RemoteArray::read`].
    pub async fn read_rows(
        &self,
        start: u64,
        stop: u64,
        columns: Option<&[String]>,
        options: &ReadOptions<'_>,
    ) -> Result<TableRows> {
        let wanted: Vec<String> = match columns {
            Some(c) => c.to_vec(),
            None => self
                .columns
                .iter()
                .filter(|c| c.error.is_none())
                .map(|c| c.name.clone())
                .collect(),
        };
        for (i, name) in wanted.iter().enumerate() {
            if wanted[..i].contains(name) {
                return Err(Error::InvalidArgument(format!(
                    "column {name:?} asked for twice"
                )));
            }
            match self.columns.iter().find(|c| &c.name == name) {
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "no column {name:?} in the table; its columns: {}",
                        self.columns
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )))
                }
                Some(Column {
                    error: Some(reason),
                    ..
                }) => {
                    return Err(FormatError::Unsupported {
                        location: self.location.clone(),
                        format: "table",
                        detail: format!("column {name:?}: {reason}"),
                    }
                    .into())
                }
                Some(_) => {}
            }
        }
        let live = self.live_rows(options).await?;
        let nlive = live.as_ref().map_or(self.physical, |l| l.count);
        let start = start.min(nlive);
        let stop = stop.clamp(start, nlive);
        let (p0, p1) = match &live {
            Some(l) if stop > start => (l.physical(start), l.physical(stop - 1) + 1),
            Some(_) => (0, 0),
            None => (start, stop),
        };
        let selection = Selection {
            items: vec![Index::Slice {
                start: Some(p0 as i64),
                stop: Some(p1 as i64),
                step: None,
            }],
        };
        let keep = live.as_ref().map(|l| &l.live[p0 as usize..p1 as usize]);
        let columns = match &self.layout {
            Layout::Columns(arrays) => {
                let progress = Combined::new(options, wanted.len());
                let reads = wanted.iter().enumerate().map(|(i, name)| {
                    let (_, arr) = arrays
                        .iter()
                        .find(|(n, _)| n == name)
                        .expect("readable columns are arrays");
                    let selection = &selection;
                    let progress = &progress;
                    async move {
                        let report = move |p: Progress| progress.report(i, p);
                        let opts = ReadOptions {
                            progress: Some(&report),
                            cancel: options.cancel.clone(),
                            ..Default::default()
                        };
                        arr.read(selection, &opts).await
                    }
                });
                let datas = futures::future::try_join_all(reads).await?;
                wanted
                    .iter()
                    .cloned()
                    .zip(datas)
                    .map(|(n, d)| (n, filter_rows(d, keep)))
                    .collect()
            }
            Layout::Records(array) => {
                let data = filter_rows(array.read(&selection, options).await?, keep);
                let Some(Element::Record { fields, .. }) = &data.element else {
                    return Err(invalid(
                        &self.location,
                        "the record array read as no records".into(),
                    ));
                };
                wanted
                    .iter()
                    .map(|name| {
                        let f = fields
                            .iter()
                            .find(|f| &f.name == name)
                            .expect("record columns are members");
                        member(&data, f).map(|d| (name.clone(), d)).ok_or_else(|| {
                            invalid(
                                &self.location,
                                format!(
                                    "member {name:?} lies outside its record of {} bytes",
                                    data.dtype.itemsize
                                ),
                            )
                        })
                    })
                    .collect::<Result<_>>()?
            }
        };
        Ok(TableRows {
            nrows: stop - start,
            columns,
        })
    }
}

/// Progress of concurrent column reads reported as one: chunks done and touched summed
/// over the columns.
struct Combined<'a> {
    outer: Option<&'a dyn Fn(Progress)>,
    done: Vec<AtomicU64>,
    total: Vec<AtomicU64>,
}

impl<'a> Combined<'a> {
    fn new(options: &ReadOptions<'a>, n: usize) -> Combined<'a> {
        Combined {
            outer: options.progress,
            done: (0..n).map(|_| AtomicU64::new(0)).collect(),
            total: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn report(&self, column: usize, p: Progress) {
        self.done[column].store(p.done, Ordering::Relaxed);
        self.total[column].store(p.total, Ordering::Relaxed);
        if let Some(f) = self.outer {
            let sum = |v: &[AtomicU64]| v.iter().map(|a| a.load(Ordering::Relaxed)).sum();
            f(Progress {
                done: sum(&self.done),
                total: sum(&self.total),
            });
        }
    }
}

/// `data` (rows along its first dimension) with only the rows `keep` marks true; all rows
/// when `keep` is `None`.
fn filter_rows(mut data: ArrayData, keep: Option<&[bool]>) -> ArrayData {
    let Some(keep) = keep else {
        return data;
    };
    let rows = data.shape.first().copied().unwrap_or(0) as usize;
    if rows == 0 || keep.iter().all(|&k| k) {
        return data;
    }
    let row = data.data.len() / rows;
    let live = keep.iter().filter(|&&k| k).count();
    if row == 0 {
        // Zero-size elements: only the row count changes.
        data.shape[0] = live as u64;
        return data;
    }
    let mut out = Vec::with_capacity(live * row);
    for (r, bytes) in data.data.chunks_exact(row).enumerate() {
        if keep.get(r).copied().unwrap_or(false) {
            out.extend_from_slice(bytes);
        }
    }
    data.shape[0] = (out.len() / row) as u64;
    data.data = out;
    data
}

/// A record member's numpy dtype string: a number's typestr, `|S{n}`, a sub-array's base
/// with its shape, a nested record's descr list.
fn member_descr(e: &Element) -> String {
    e.descr()
}

/// Member `f` of every record of `data`, as a column: shape `[rows]` (plus a sub-array's
/// shape), the member's bytes in its stored byte order; `None` when the member does not lie
/// inside the record.
fn member(data: &ArrayData, f: &Field) -> Option<ArrayData> {
    let rows = data.shape.first().copied().unwrap_or(0);
    let size = f.element.stored_size();
    let record = data.dtype.itemsize;
    let at = f.offset..f.offset.checked_add(size)?;
    if at.end > record {
        return None;
    }
    let mut out = Vec::with_capacity(rows as usize * size);
    if record > 0 {
        for r in data.data.chunks_exact(record) {
            out.extend_from_slice(&r[at.clone()]);
        }
    }
    let (shape, element) = match &f.element {
        Element::SubArray { base, shape } => {
            let mut s = vec![rows];
            s.extend_from_slice(shape);
            (s, (**base).clone())
        }
        e => (vec![rows], e.clone()),
    };
    Some(column_data(shape, element, out))
}

/// An [`ArrayData`] of `element` values.
fn column_data(shape: Vec<u64>, element: Element, data: Vec<u8>) -> ArrayData {
    let (dtype, element) = match element {
        Element::Number(d) => (d, None),
        e => (e.storage_dtype(), Some(e)),
    };
    ArrayData {
        shape,
        dtype,
        data,
        element,
        missing_chunks: 0,
    }
}

impl TableRows {
    /// The rows as one record type: each column a member, packed in order (numpy's
    /// structured dtype of those `(name, format[, shape])` tuples, no padding).
    pub fn element(&self) -> Element {
        let mut fields = Vec::with_capacity(self.columns.len());
        let mut offset = 0usize;
        for (name, d) in &self.columns {
            let base = d.element.clone().unwrap_or(Element::Number(d.dtype));
            let element = if d.shape.len() > 1 {
                Element::SubArray {
                    base: Box::new(base),
                    shape: d.shape[1..].to_vec(),
                }
            } else {
                base
            };
            let size = element.stored_size();
            fields.push(Field {
                name: name.clone(),
                offset,
                element,
            });
            offset += size;
        }
        Element::Record {
            size: offset,
            fields,
        }
    }

    /// The rows as records of [`TableRows::element`]: `nrows` records, C order.
    pub fn records(&self) -> Vec<u8> {
        let element = self.element();
        let size = element.stored_size();
        let mut out = vec![0u8; size * self.nrows as usize];
        let mut offset = 0usize;
        for (_, d) in &self.columns {
            let n = self.nrows as usize;
            let width = d.data.len().checked_div(n).unwrap_or(0);
            for r in 0..n {
                out[r * size + offset..r * size + offset + width]
                    .copy_from_slice(&d.data[r * width..(r + 1) * width]);
            }
            offset += width;
        }
        out
    }

    /// numpy structured `.npy` bytes (descr = the columns in order, shape `(nrows,)`), as
    /// `numpy.save` writes a structured array ([`crate::npy::write_npy`]).
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` when no column was read (numpy has no empty structured dtype).
    pub fn to_npy(&self) -> Result<Vec<u8>> {
        if self.columns.is_empty() {
            return Err(Error::InvalidArgument(
                "no columns read: a structured .npy needs at least one".into(),
            ));
        }
        let mut out = Vec::new();
        crate::npy::write_npy(
            &mut out,
            &self.element().descr(),
            &[self.nrows],
            &self.records(),
        )
        .expect("writing to memory");
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;

    #[test]
    fn kth_live_row_across_blocks() {
        let live: Vec<bool> = (0..10_000)
            .map(|i| i % 3 != 0 && !(5000..9000).contains(&i))
            .collect();
        let l = LiveRows::new(live.clone());
        let want: Vec<u64> = (0..live.len() as u64)
            .filter(|&i| live[i as usize])
            .collect();
        assert_eq!(l.count, want.len() as u64);
        for (k, &p) in want.iter().enumerate() {
            assert_eq!(l.physical(k as u64), p, "live row {k}");
        }
    }

    #[test]
    fn malformed_members_and_empty_elements_do_not_panic() {
        let i2 = Element::Number(DType::parse("<i2").unwrap());
        let record = Element::Record {
            size: 2,
            fields: vec![Field {
                name: "a".into(),
                offset: 1,
                element: i2.clone(),
            }],
        };
        let data = column_data(vec![2], record, vec![0; 4]);
        let Some(Element::Record { fields, .. }) = &data.element else {
            unreachable!()
        };
        // A member past the end of its record is refused, not sliced out of bounds.
        assert!(member(&data, &fields[0]).is_none());
        // Zero-size elements: only the count changes.
        let empty = column_data(
            vec![3],
            Element::String {
                size: 0,
                padding: crate::element::Padding::NullPad,
                utf8: false,
            },
            vec![],
        );
        let kept = filter_rows(empty, Some(&[true, false, true]));
        assert_eq!(kept.shape, vec![2]);
    }

    #[test]
    fn records_pack_columns_in_order() {
        let rows = TableRows {
            nrows: 2,
            columns: vec![
                (
                    "a".into(),
                    column_data(
                        vec![2],
                        Element::Number(DType::parse("<i2").unwrap()),
                        vec![1, 0, 2, 0],
                    ),
                ),
                (
                    "s".into(),
                    column_data(
                        vec![2],
                        Element::String {
                            size: 3,
                            padding: crate::element::Padding::NullPad,
                            utf8: false,
                        },
                        b"ab\0xyz".to_vec(),
                    ),
                ),
            ],
        };
        assert_eq!(rows.element().descr(), "[('a', '<i2'), ('s', '|S3')]");
        assert_eq!(rows.records(), b"\x01\0ab\0\x02\0xyz".to_vec());
        let npy = crate::npy::read_npy(&rows.to_npy().unwrap()).unwrap();
        assert_eq!(npy.shape, vec![2]);
        assert_eq!(npy.descr, "[('a', '<i2'), ('s', '|S3')]");
    }
}
