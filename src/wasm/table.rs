//! `RemoteTable` for JavaScript: rows of a table ([`crate::table::RemoteTable`]) read column
//! by column, each column a typed array (numbers) or an Array of strings.

use super::arg_error;
use super::array::{cancellable, get_opt, parse_open_options, value_js};
use crate::array::{CancelFlag, ReadOptions};
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_TABLE_TYPES: &'static str = r#"
/** One column of a RemoteTable. */
export interface TableColumn {
  /** Column name (a CTable field, a compound member, an array's name in its group). */
  name: string;
  /** numpy dtype string of its values ("<i8", "|S8", "<U6", a member's descr). */
  dtype: string;
  /** Why the column cannot be read; absent when it can. */
  error?: string;
}
/** Options of RemoteTable.readRows. */
export interface ReadRowsOptions extends ReadOptions {
  /** Names of the columns to read (default: every readable column). */
  columns?: string[];
}
/** Rows of a table: one entry per column read, a typed array for numbers (as
 *  RemoteArray.read's data: BigInt64Array for 64-bit integers, ...; a sub-array member
 *  flattened row by row), an Array of strings for byte strings, an Array of objects for
 *  record members. */
export type TableRows = Record<string, ReadData>;
"#;

/// A table opened for reading: a 1-D record dataset, a group of equal-length 1-D arrays,
/// or a CTable (columns plus a valid-rows mask: deleted rows are skipped).
#[wasm_bindgen]
pub struct RemoteTable {
    inner: Option<Rc<crate::table::RemoteTable>>,
    nrows: f64,
}

impl RemoteTable {
    /// The table of `inner`, its live rows counted now (the mask read once).
    pub(crate) async fn from_inner(inner: crate::table::RemoteTable) -> crate::Result<Self> {
        let nrows = inner.nrows().await? as f64;
        Ok(RemoteTable {
            inner: Some(Rc::new(inner)),
            nrows,
        })
    }

    fn inner(&self) -> Result<Rc<crate::table::RemoteTable>, JsValue> {
        self.inner
            .clone()
            .ok_or_else(|| arg_error("the table is closed"))
    }
}

/// A row bound of `readRows`: undefined is `default`, a negative integer counts from the
/// end (Python slicing), past the end is the end.
fn bound(v: &JsValue, default: u64, nrows: u64, what: &str) -> Result<u64, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(default);
    }
    match v.as_f64() {
        Some(n) if n.fract() == 0.0 || n.is_infinite() => Ok(if n < 0.0 {
            (nrows as f64 + n).max(0.0) as u64
        } else {
            n.min(nrows as f64) as u64
        }),
        _ => Err(arg_error(format!("readRows: {what} is not an integer"))),
    }
}

/// One column's values as JS: numbers as a typed array (little-endian, one copy), strings
/// and records as an Array of plain values. Byte strings of formats that describe no element
/// (a b2nd "|S8") read as null-padded strings and unicode ones ("<U3") as JS strings, as
/// `RemoteArray.read` gives them (src/wasm/array.rs `result_js`).
fn column_js(mut data: crate::array::ArrayData) -> JsValue {
    let element = data.element.clone().or(match data.dtype.kind {
        crate::dtype::Kind::Bytes => Some(crate::element::Element::String {
            size: data.dtype.itemsize,
            padding: crate::element::Padding::NullPad,
            utf8: false,
        }),
        crate::dtype::Kind::Unicode => Some(crate::element::Element::Number(data.dtype)),
        _ => None,
    });
    if let Some(e) = element {
        return e
            .values(&data.data)
            .iter()
            .map(value_js)
            .collect::<js_sys::Array>()
            .into();
    }
    data.dtype.make_little_endian(&mut data.data);
    let dt = data.dtype.to_little_endian();
    super::typed::typed_array(dt.kind, dt.itemsize, &data.data)
}

#[wasm_bindgen]
impl RemoteTable {
    /// Opens the table at `options.path` of a container (an HDF5 file, a Zarr store, a
    /// `.b2z` archive; by default the root: a `.b2z` CTable, a Zarr group; an HDF5 file
    /// needs `path`): other options
    /// as `RemoteStore.open`. Counts its live rows before resolving. Rejects with a
    /// `ChunkwiseError`: `INVALID_ARGUMENT` when the node is no table (or an HDF5 file has
    /// no `path`), `INVALID_DATA` for columns of different lengths, the codes of
    /// `RemoteStore.open`.
    #[wasm_bindgen(unchecked_return_type = "RemoteTable")]
    pub async fn open(
        #[wasm_bindgen(unchecked_param_type = "string")] url: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<RemoteTable, JsValue> {
        let url = super::url_arg(&url)?;
        let options = super::options::open(&options)?;
        let mut req = parse_open_options(&options)?;
        let path = req.options.path.take();
        let signal: Option<web_sys::AbortSignal> = super::options::signal(&options)?;
        let (timeout, cache_store, location) =
            (req.timeout, get_opt(&options, "cacheStore"), url.clone());
        let open = async move {
            let coordinator = super::array::open_coordinator(&req, cache_store).await?;
            let store =
                crate::open::open_store(&location, req.headers, req.options, coordinator).await?;
            let path = match (path, store.kind()) {
                (Some(p), _) => p,
                (None, "hdf5") => {
                    return Err(crate::Error::InvalidArgument(
                        "RemoteTable.open of an HDF5 file needs options.path, the table's dataset or group"
                            .into(),
                    ))
                }
                (None, _) => "/".to_string(),
            };
            RemoteTable::from_inner(store.table(&path).await?).await
        };
        let open = cancellable(open, signal.as_ref(), CancelFlag::new());
        crate::io::deadline::operation(timeout, &url, open)
            .await
            .map_err(|e| super::abort::operation_error(&e, signal.as_ref()))
    }

    /// The columns: `{ name, dtype, error? }` each, readable ones first.
    #[wasm_bindgen(getter, unchecked_return_type = "TableColumn[]")]
    pub fn columns(&self) -> Result<JsValue, JsValue> {
        let out = js_sys::Array::new();
        for c in self.inner()?.columns() {
            let o = js_sys::Object::new();
            js_sys::Reflect::set(&o, &"name".into(), &c.name.as_str().into())?;
            js_sys::Reflect::set(&o, &"dtype".into(), &c.dtype.as_str().into())?;
            if let Some(e) = &c.error {
                js_sys::Reflect::set(&o, &"error".into(), &e.as_str().into())?;
            }
            out.push(&o);
        }
        Ok(out.into())
    }

    /// Live rows (deleted CTable rows not counted).
    #[wasm_bindgen(getter)]
    pub fn nrows(&self) -> Result<f64, JsValue> {
        self.inner()?;
        Ok(self.nrows)
    }

    /// Reads live rows `start..stop` (Python slicing: negative counts from the end, past the
    /// end is the end; defaults 0 and `nrows`) of `options.columns` (default every readable
    /// column), each column read only over the rows asked, concurrently. Resolves to
    /// `{ [column]: values }` (see `TableRows`). Rejects with `INVALID_ARGUMENT` for an
    /// unknown column (listing the columns), `UNSUPPORTED` for an unreadable one (with its
    /// reason); `signal`, `timeoutMs` and `onProgress` (chunks of all columns) as
    /// `RemoteArray.read`.
    #[wasm_bindgen(js_name = readRows, unchecked_return_type = "Promise<TableRows>")]
    pub fn read_rows(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] start: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] stop: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadRowsOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let prepared = (|| {
            let inner = self.inner()?;
            let n = self.nrows as u64;
            let start = bound(&start, 0, n, "start")?;
            let stop = bound(&stop, n, n, "stop")?;
            let options = super::options::read(&options, &["columns"])?;
            let columns = match get_opt(&options, "columns") {
                None => None,
                Some(c) => Some(
                    c.dyn_ref::<js_sys::Array>()
                        .ok_or_else(|| arg_error("readRows: columns must be an array of names"))?
                        .iter()
                        .map(|v| {
                            v.as_string().ok_or_else(|| {
                                arg_error("readRows: columns must be an array of names")
                            })
                        })
                        .collect::<Result<Vec<String>, JsValue>>()?,
                ),
            };
            let limit = super::array::read_timeout(&options)?;
            let signal: Option<web_sys::AbortSignal> = super::options::signal(&options)?;
            let on_progress: Option<js_sys::Function> = super::options::on_progress(&options)?;
            Ok::<_, JsValue>((inner, start, stop, columns, limit, signal, on_progress))
        })();
        let (inner, start, stop, columns, limit, signal, on_progress) = match prepared {
            Ok(p) => p,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let cancel = CancelFlag::new();
            let progress = super::options::progress_callback(on_progress);
            let ropts = ReadOptions {
                progress: Some(&progress),
                cancel: Some(cancel.clone()),
                ..Default::default()
            };
            let read = inner.read_rows(start, stop, columns.as_deref(), &ropts);
            let read = cancellable(read, signal.as_ref(), cancel);
            let location = inner.location().to_string();
            let rows = crate::io::deadline::operation(limit, &location, read)
                .await
                .map_err(|e| super::abort::operation_error(&e, signal.as_ref()))?;
            let out = js_sys::Object::new();
            for (name, data) in rows.columns {
                js_sys::Reflect::set(&out, &JsValue::from_str(&name), &column_js(data))?;
            }
            Ok(out.into())
        }))
    }

    /// Releases the table. Later calls throw.
    pub fn close(&mut self) {
        self.inner.take();
    }
}
