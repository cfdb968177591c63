//! `RemoteArray` for JavaScript.

use super::{arg_error, js_error};
use crate::array::{CancelFlag, ReadOptions};
use crate::dtype::Kind;
use crate::element::Value;
use crate::selection::Selection;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_OPTIONS: &'static str = crate::open::options::OPTIONS_TS;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** A selection: numpy-like text ("0, 10:20, ::2, ...") or one item per dimension
 *  (a number selects one index, null or ":" the whole axis, a string "a:b:c" a slice). */
export type Selection = string | Array<number | string | null>;
/** The result of a read: C-ordered values (little-endian), their shape and numpy dtype.
 *  64-bit integers come as BigInt64Array/BigUint64Array, bool as Uint8Array, float16 as
 *  Float16Array where the runtime has one (else Float32Array, values converted), complex as
 *  interleaved Float32Array/Float64Array, datetime64/timedelta64 as BigInt64Array.
 *  Strings (HDF5 fixed-length, dtype "|S{n}", and variable-length, resolved to "|S{n}" with n
 *  the longest string read) come as an Array of strings, UTF-8 decoded (invalid bytes become
 *  U+FFFD), trailing NULs removed. numpy's fixed-width unicode ("<U{n}" or ">U{n}" as
 *  stored, e.g. in .b2nd frames of python-blosc2) comes as an Array of strings too, trailing
 *  NUL characters removed as numpy does, code points that are no Unicode scalar value
 *  (surrogates, past U+10FFFF) as U+FFFD. Records (HDF5 compounds; dtype is numpy's descr list, e.g.
 *  "[('id', '<i4'), ('pos', [('x', '<f4')])]") come as an Array of plain objects
 *  { field: value }: numbers, BigInt for 64-bit integers, booleans, strings, nested objects
 *  for nested records, Arrays (flattened, C order) for array members, [re, im] for complex. */
export interface ReadResult<T extends ReadData = ReadData> {
  data: T;
  shape: number[];
  dtype: string;
  /** Zarr: chunks of the selection absent from the store (404), read as the fill value (the
   *  Zarr rule); warm reads count them too. Many where data is expected suggests a wrong store
   *  URL or prefix. Always 0 for Blosc2 and HDF5. */
  missingChunks: number;
}
/** The typed arrays numeric reads give (see ReadResult and DataOf). */
export type NumericData = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array |
  Uint32Array | BigInt64Array | BigUint64Array | Float32Array | Float64Array | Float16Data;
/** What a float16 read gives: Float16Array where the runtime has one, else Float32Array.
 *  Written so that it compiles under any `lib` (Float16Array is in TypeScript's lib only
 *  from ES2025/esnext): where the lib lacks it, this is Float32Array. */
export type Float16Data = typeof globalThis extends { Float16Array: { prototype: infer P } }
  ? P | Float32Array : Float32Array;
/** Every `data` a read can give: a typed array, strings, or records. */
export type ReadData = NumericData | string[] | RecordValue[];
/** The `data` of a read whose result dtype (little-endian, as ReadResult.dtype gives it) is
 *  D: `DataOf<"<f4">` is Float32Array, `DataOf<"|S8">` string[]; a dtype not known here gives
 *  ReadData. For `arr.read<DataOf<"<f4">>(sel)` when you know the array's dtype (the type
 *  argument is not checked at run time: `result.dtype` is). */
export type DataOf<D extends string> =
  D extends "|i1" ? Int8Array :
  D extends "|u1" | "|b1" | `|V${number}` ? Uint8Array :
  D extends "<i2" ? Int16Array :
  D extends "<u2" ? Uint16Array :
  D extends "<f2" ? Float16Data :
  D extends "<i4" ? Int32Array :
  D extends "<u4" ? Uint32Array :
  D extends "<i8" | `<M8${string}` | `<m8${string}` ? BigInt64Array :
  D extends "<u8" ? BigUint64Array :
  D extends "<f4" | "<c8" ? Float32Array :
  D extends "<f8" | "<c16" ? Float64Array :
  D extends `|S${number}` | `<U${number}` | `>U${number}` ? string[] :
  D extends `[${string}` ? { [field: string]: RecordValue }[] :
  ReadData;
export interface RemoteArray {
  /** Reads a selection (default: the whole array) whose data you know to be of type T,
   *  e.g. `arr.read<Float32Array>("0:10")` (an assertion, as for JSON.parse: not checked at
   *  run time). */
  read<T extends ReadData>(selection?: Selection, options?: ReadOptions): Promise<ReadResult<T>>;
}
/** What discovery found (`RemoteArray.info`; `chunkwise info --json` prints the same). */
export interface ArrayInfo {
  /** "b2nd", "b2z" (an array of a .b2z container), "hdf5", "zarr2", "zarr3" or "caterva2". */
  format: "b2nd" | "b2z" | "hdf5" | "zarr2" | "zarr3" | "caterva2";
  /** Array shape (elements). */
  shape: number[];
  /** numpy typestr as stored, or numpy's descr list for a record; "|S" for variable-length
   *  strings. */
  dtype: string;
  /** Chunk shape (elements). */
  chunks: number[];
  /** Block shape (elements; Blosc2 blocks, else the chunk shape). */
  blocks: number[];
  /** Codec and filters, e.g. "ZSTD(5) + SHUFFLE". */
  codecs: string;
  /** Number of chunks in the grid (0 when an axis has none); null for a grid of 2^64 chunks
   *  or more (a read of such an array is refused with code UNSUPPORTED). Above 2^53 a number
   *  is not exact: 2^64 - 1 arrives as 2^64. */
  nchunks: number | null;
  /** Uncompressed bytes of the array: numpy's nbytes (elements times item size; 0 when an
   *  axis is empty) for fixed-size dtypes, and for variable-length strings ("|S") elements
   *  times the size of their stored heap references (16 bytes in HDF5 files of 8-byte
   *  offsets; h5py counts its 8-byte object pointers); null when that is 2^64 bytes or
   *  more. Above 2^53 a number is not exact. */
  nbytes: number | null;
  /** Stored bytes of the data chunks; null where unknown (a Zarr store: its chunk objects
   *  are not listed). */
  cbytes: number | null;
  /** Total size of the source in bytes; null where unknown (a Zarr store). */
  source_bytes: number | null;
}
/** One value of a record member, string or nested record (see ReadResult). */
export type RecordValue = number | bigint | boolean | string | RecordValue[] |
  { [field: string]: RecordValue };
/** The source object an array was opened on (`RemoteArray.identity`): its URL without
 *  query and user info, size in bytes and HTTP validators (null when not sent). */
export interface SourceIdentity { url: string; len: number; etag: string | null; lastModified: string | null; }
/** Requests and body bytes that reached the network since open (cache hits never count). */
export interface Traffic { requests: number; bytes: number; roundTrips: number; }
"#;

#[wasm_bindgen(typescript_custom_section)]
const TS_READ_EXTRAS: &'static str = r#"
/** Read results of complex, datetime and float16 arrays (merged into ReadResult). */
export interface ReadResult {
  /** True for complex dtypes: data holds interleaved re, im pairs (twice the elements). */
  complex?: true;
  /** datetime64/timedelta64 ("<M8[ns]", "<m8[s]"): numpy's unit code ("ns", "s", "D",
   *  "" for the generic unit); data holds BigInt64 counts of it, NaT as -(2n ** 63n). */
  unit?: string;
}
"#;

/// A remote array opened over HTTP range requests.
#[wasm_bindgen]
pub struct RemoteArray {
    inner: Option<Rc<crate::array::RemoteArray>>,
    /// The last `readInto` result buffer, handed to the next `readInto` (see
    /// [`ReadOptions::result_buffer`]).
    spare: Rc<std::cell::RefCell<Option<Vec<u8>>>>,
}

impl RemoteArray {
    /// Wraps an opened array (for `RemoteStore.get`).
    pub(crate) fn from_inner(inner: crate::array::RemoteArray) -> RemoteArray {
        RemoteArray {
            inner: Some(Rc::new(inner)),
            spare: Default::default(),
        }
    }
}

pub(crate) fn get_opt(obj: &JsValue, name: &str) -> Option<JsValue> {
    if obj.is_undefined() || obj.is_null() {
        return None;
    }
    js_sys::Reflect::get(obj, &name.into())
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

/// The options of `RemoteArray.open` and `RemoteStore.open`, deserialised into the core's
/// mirror of the TypeScript `OpenOptions` and checked there
/// ([`crate::open::options::OpenOptionsInput`]); `undefined` or `null` is no option.
pub(crate) fn parse_open_options(
    options: &JsValue,
) -> Result<crate::open::options::OpenRequest, JsValue> {
    use crate::open::options::OpenOptionsInput;
    let mut input = if options.is_undefined() || options.is_null() {
        OpenOptionsInput::default()
    } else {
        OpenOptionsInput::from_deserializer(serde_wasm_bindgen::Deserializer::from(options.clone()))
            .map_err(|e| js_error(&e))?
    };
    if !options.is_undefined() && !options.is_null() {
        // serde sees `null` and `undefined` alike; `maxCacheBytes: null` means no bound.
        input.max_cache_bytes_null = js_sys::Reflect::get(options, &"maxCacheBytes".into())
            .map(|v| v.is_null())
            .unwrap_or(false);
        if input.max_cache_bytes_null {
            input.max_cache_bytes = None;
        }
        input.cache_store_given = get_opt(options, "cacheStore").is_some();
    }
    input.resolve().map_err(|e| js_error(&e))
}

/// The cache coordinator of checked open options: under `cache: "disk"` the page's
/// coordinator of that cache ([`super::cache::disk_coordinator`], with the `cacheStore`
/// object `store`), else [`crate::open::options::OpenRequest::coordinator`]. Awaited inside
/// the open's deadline and cancellation: a store that never answers cannot hold the open.
///
/// # Errors
/// `INVALID_ARGUMENT` (see [`super::cache::disk_coordinator`]).
pub(crate) async fn open_coordinator(
    req: &crate::open::options::OpenRequest,
    store: Option<JsValue>,
) -> crate::Result<crate::cache::CacheCoordinator> {
    match &req.disk {
        Some(target) => super::cache::disk_coordinator(target, store).await,
        None => req.coordinator(),
    }
}

/// The `timeoutMs` of a read's options ([`crate::open::options::ReadOptionsInput`]):
/// `RemoteArray.read` and `RemoteTable.readRows`, on their [`super::options::read`] copy.
pub(crate) fn read_timeout(options: &JsValue) -> Result<Option<std::time::Duration>, JsValue> {
    use crate::open::options::ReadOptionsInput;
    if options.is_undefined() || options.is_null() {
        return Ok(None);
    }
    ReadOptionsInput::from_deserializer(serde_wasm_bindgen::Deserializer::from(options.clone()))
        .and_then(ReadOptionsInput::timeout)
        .map_err(|e| js_error(&e))
}

fn selection_from_js(sel: &JsValue) -> Result<Selection, JsValue> {
    let sel = &super::options::list(sel, "the selection")?;
    if sel.is_undefined() || sel.is_null() {
        return Ok(Selection::all());
    }
    if let Some(s) = sel.as_string() {
        return Selection::parse(&s).map_err(|e| js_error(&crate::Error::Selection(e)));
    }
    if let Some(arr) = sel.dyn_ref::<js_sys::Array>() {
        let mut parts = Vec::new();
        for item in arr.iter() {
            if item.is_null() || item.is_undefined() {
                parts.push(":".to_string());
            } else if let Some(n) = item.as_f64() {
                if n.fract() != 0.0 {
                    return Err(arg_error(format!("selection index {n} is not an integer")));
                }
                parts.push(format!("{}", n as i64));
            } else if let Some(s) = item.as_string() {
                parts.push(s);
            } else {
                return Err(arg_error(
                    "selection items must be numbers, strings or null",
                ));
            }
        }
        return Selection::parse(&parts.join(","))
            .map_err(|e| js_error(&crate::Error::Selection(e)));
    }
    Err(arg_error("selection must be a string or an array"))
}

fn shape_js(shape: &[u64]) -> js_sys::Array {
    shape.iter().map(|&s| JsValue::from_f64(s as f64)).collect()
}

pub(crate) use super::typed::typed_array;

/// One element value as a plain JS value (see `ReadResult` in the TypeScript section).
pub fn value_js(v: &Value) -> JsValue {
    match v {
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Int(i) => JsValue::from_f64(*i as f64),
        Value::UInt(u) => JsValue::from_f64(*u as f64),
        Value::Int64(i) => js_sys::BigInt::from(*i).into(),
        Value::UInt64(u) => js_sys::BigInt::from(*u).into(),
        Value::Float(f) => JsValue::from_f64(*f),
        Value::Complex(re, im) => [JsValue::from_f64(*re), JsValue::from_f64(*im)]
            .iter()
            .collect::<js_sys::Array>()
            .into(),
        Value::Bytes(b) => JsValue::from_str(&String::from_utf8_lossy(b)),
        Value::Str(s) => JsValue::from_str(s),
        Value::List(items) => items.iter().map(value_js).collect::<js_sys::Array>().into(),
        Value::Record(fields) => {
            let o = js_sys::Object::new();
            for (name, v) in fields {
                let _ = js_sys::Reflect::set(&o, &JsValue::from_str(name), &value_js(v));
            }
            o.into()
        }
    }
}

#[wasm_bindgen]
impl RemoteArray {
    /// Opens a remote array: one bounded request for the header (a file up to 8 MiB is then
    /// fetched whole once), one for the chunk index (a name ending in `.b2nd` asks the
    /// frame's tail, which holds it, at the same time as the header). With `source:
    /// "caterva2"`, `url` is a Caterva2 server's URL base and `path` a dataset of it: one
    /// `api/info` (none when its record is cached), chunks through `api/chunk`. Rejects with a
    /// `ChunkwiseError` whose `code` is e.g. `NOT_FOUND`, `NETWORK`, `RANGE_IGNORED`,
    /// `UNRECOGNISED_FORMAT`, `HTTP_STATUS` (a Caterva2 root refusing the request: 401).
    #[wasm_bindgen(unchecked_return_type = "RemoteArray")]
    pub async fn open(
        #[wasm_bindgen(unchecked_param_type = "string")] url: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "OpenOptions")] options: JsValue,
    ) -> Result<RemoteArray, JsValue> {
        let url = super::url_arg(&url)?;
        let options = super::options::open(&options)?;
        let req = parse_open_options(&options)?;
        super::caterva2::check_host_credentials(&url, req.options.credentials.as_ref())?;
        let signal: Option<web_sys::AbortSignal> = super::options::signal(&options)?;
        let (timeout, store, location) =
            (req.timeout, get_opt(&options, "cacheStore"), url.clone());
        let open = async move {
            let coordinator = open_coordinator(&req, store).await?;
            crate::open::open_array(&location, req.headers, req.options, coordinator).await
        };
        let open = cancellable(open, signal.as_ref(), CancelFlag::new());
        let open = super::with_warm_up(&url, open);
        let result = crate::io::deadline::operation(timeout, &url, open).await;
        let inner = result.map_err(|e| super::abort::operation_error(&e, signal.as_ref()))?;
        Ok(RemoteArray {
            inner: Some(Rc::new(inner)),
            spare: Default::default(),
        })
    }

    fn inner(&self) -> Result<Rc<crate::array::RemoteArray>, JsValue> {
        self.inner
            .clone()
            .ok_or_else(|| arg_error("the array is closed"))
    }

    /// Array shape (elements per dimension).
    #[wasm_bindgen(getter, unchecked_return_type = "number[]")]
    pub fn shape(&self) -> Result<js_sys::Array, JsValue> {
        Ok(shape_js(self.inner()?.shape()))
    }

    /// numpy dtype string as stored, e.g. "<f8", ">i4", "|S8", "<U6"; numpy's descr list for a
    /// record; "|S" (unsized) for variable-length strings (reads resolve them to "|S{n}").
    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> Result<String, JsValue> {
        Ok(self.inner()?.dtype_descr())
    }

    /// Chunk shape (elements).
    #[wasm_bindgen(getter, unchecked_return_type = "number[]")]
    pub fn chunks(&self) -> Result<js_sys::Array, JsValue> {
        Ok(shape_js(self.inner()?.chunks()))
    }

    /// Block shape (elements).
    #[wasm_bindgen(getter, unchecked_return_type = "number[]")]
    pub fn blocks(&self) -> Result<js_sys::Array, JsValue> {
        Ok(shape_js(self.inner()?.blocks()))
    }

    /// The array's attributes (HDF5 attributes, Zarr `.zattrs` / v3 `attributes`, Blosc2
    /// vlmeta), read at open: a plain object, numeric arrays as typed arrays (see `Attrs`).
    #[wasm_bindgen(getter, unchecked_return_type = "Attrs")]
    pub fn attrs(&self) -> Result<JsValue, JsValue> {
        Ok(super::attrs::attrs_js(&self.inner()?.attrs()))
    }

    /// Dimension names, one per dimension (null for an unnamed one): Zarr v3
    /// `dimension_names`, xarray's `_ARRAY_DIMENSIONS`, HDF5 dimension scales; null when the
    /// source names none.
    #[wasm_bindgen(getter, unchecked_return_type = "(string | null)[] | null")]
    pub fn dims(&self) -> Result<JsValue, JsValue> {
        Ok(super::attrs::dims_js(self.inner()?.dims().as_deref()))
    }

    /// What discovery found: format, shape, dtype, chunks, blocks, codecs, sizes.
    #[wasm_bindgen(getter, unchecked_return_type = "ArrayInfo")]
    pub fn info(&self) -> Result<JsValue, JsValue> {
        // Through JSON, as `chunkwise info --json` prints it (unknown sizes are null).
        super::parse_json(&self.inner()?.info().to_json().to_string()).map_err(arg_error)
    }

    /// What the open did with its discovery record: "created" (none was held), "reused"
    /// (one was used, no discovery request) or "invalidated" (one was held and dropped: the
    /// source changed under `assumeImmutable: false`, or the record was of another version).
    #[wasm_bindgen(getter, js_name = cacheStatus, unchecked_return_type = "\"created\" | \"reused\" | \"invalidated\"")]
    pub fn cache_status(&self) -> Result<String, JsValue> {
        Ok(self.inner()?.cache_status().as_str().to_string())
    }

    /// Bytes of compressed payload in this array's cache (every source it holds, not this
    /// array's alone). Under cache "disk", the entries this page knows: exact after a write
    /// or a `cacheUsage()` call, which lists the storage.
    #[wasm_bindgen(getter, js_name = cacheBytes)]
    pub fn cache_bytes(&self) -> Result<f64, JsValue> {
        Ok(self.inner()?.cache_bytes() as f64)
    }

    /// Failures of this array's cache storage so far (lookups answered as misses, writes
    /// skipped: a quota exceeded, a store that threw or did not answer). Reads never fail
    /// for them; a count that grows says the cache is not keeping what it is given.
    #[wasm_bindgen(getter, js_name = cacheErrors)]
    pub fn cache_errors(&self) -> Result<f64, JsValue> {
        Ok(self.inner()?.coordinator().stats().cache_errors as f64)
    }

    /// Requests and bytes since open: `{ requests, bytes }`.
    #[wasm_bindgen(getter, unchecked_return_type = "Traffic")]
    pub fn traffic(&self) -> Result<JsValue, JsValue> {
        let t = self.inner()?.traffic();
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"requests".into(), &(t.requests as f64).into())?;
        js_sys::Reflect::set(&o, &"bytes".into(), &(t.bytes as f64).into())?;
        js_sys::Reflect::set(&o, &"roundTrips".into(), &(t.round_trips as f64).into())?;
        Ok(o.into())
    }

    /// Reads a selection. Resolves to `{ data, shape, dtype, missingChunks }` (see
    /// `ReadResult`; complex results add `complex: true`, datetimes and timedeltas `unit`).
    #[wasm_bindgen(unchecked_return_type = "Promise<ReadResult>")]
    pub fn read(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Selection")] selection: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        // A closed array or a bad selection rejects the promise rather than throwing, as
        // every other failure of a read does.
        let job = match self.read_job(&selection, &options) {
            Ok(j) => j,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            result_js(job.run().await?)
        }))
    }

    /// Reads chunk `coords` (its coordinates in the chunk grid of `chunks`; for a sharded
    /// Zarr array the inner chunks') decoded, whole, as zarrita's `getChunk` does: resolves to
    /// `{ data, shape, dtype, missingChunks }` (see `ReadResult`) with `shape` the full chunk
    /// shape even for an edge chunk (elements past the array's edge are what the source
    /// stores there: Blosc2 and HDF5 pad edge chunks, zarr-python writes the fill value). A
    /// chunk that is not stored reads as the fill value (a Zarr chunk absent from its store
    /// has `missingChunks: 1`). Rejects with `INVALID_ARGUMENT` for coordinates that are not
    /// non-negative integers, of another rank or outside the chunk grid. Options as `read`.
    #[wasm_bindgen(js_name = getChunk, unchecked_return_type = "Promise<ReadResult>")]
    pub fn get_chunk(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let job = match self.chunk_job(&coords, &options) {
            Ok(j) => j,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            result_js(job.run().await?)
        }))
    }

    /// The stored bytes of chunk `coords` (as for `getChunk`) as the source holds them,
    /// compressed: a Blosc2 chunk of a `.b2nd` frame, an HDF5 chunk as its filters left it,
    /// a Zarr chunk object or the inner chunk's bytes in its shard. Resolves to a
    /// `Uint8Array`, or `null` for a chunk that is not stored (a Blosc2 special-value chunk,
    /// an unallocated HDF5 chunk, a Zarr chunk absent from its store). One request (a shard:
    /// its index first, remembered); never cached. Rejects as `getChunk`; `signal` and
    /// `timeoutMs` as `read`.
    #[wasm_bindgen(js_name = getChunkBytes, unchecked_return_type = "Promise<Uint8Array | null>")]
    pub fn get_chunk_bytes(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let job = match self.chunk_job(&coords, &options) {
            Ok(j) => j,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        Ok(chunk_promise(job, async |inner, coords, _| {
            Ok(match inner.chunk_bytes(coords).await? {
                Some(b) => js_sys::Uint8Array::from(&b[..]).into(),
                None => JsValue::NULL,
            })
        }))
    }

    /// Chunk `coords` (as for `getChunk`) as one C-Blosc2 chunk (a 32-byte header, then
    /// blocks: what C-Blosc2's `blosc2_decompress`, python-blosc2's `blosc2.decompress2` or
    /// this package's `decodeChunk` decode) holding the whole chunk, the full chunk shape
    /// (`chunks`) even for an edge chunk, as the format stores it. A `.b2nd` array's stored
    /// chunk as it is (not re-encoded; one request, never cached): its elements in the
    /// Blosc2 NDim layout, blocks of `blocks` one after another in C order, each block in C
    /// order, in the frame's byte order. Any other format's decoded chunk (a chunk not
    /// stored: its fill values) encoded by chunkwise's Blosc2 encoder as the payload cache
    /// does (LZ4, SHUFFLE): C order of the chunk, little-endian. Resolves to a `Uint8Array`. Rejects as `getChunk`;
    /// `signal` and `timeoutMs` as `read`.
    #[wasm_bindgen(js_name = getChunkBlosc2, unchecked_return_type = "Promise<Uint8Array>")]
    pub fn get_chunk_blosc2(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] coords: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let job = match self.chunk_job(&coords, &options) {
            Ok(j) => j,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        Ok(chunk_promise(job, async |inner, coords, ropts| {
            let got = inner.chunk_blosc2(coords, ropts).await?;
            Ok(js_sys::Uint8Array::from(&got[..]).into())
        }))
    }

    /// The identity of the source object this array was opened on, for validators such as
    /// strong ETags: `{ url, len, etag, lastModified }`, `url` without its query and user
    /// info (never a credential), `len` its size in bytes, `etag` and `lastModified` the
    /// server's validators as it sent them (null when it sent none, and for local files).
    /// For a Zarr array, the object opened is its metadata (`zarr.json` or `.zarray`).
    #[wasm_bindgen(getter, unchecked_return_type = "SourceIdentity")]
    pub fn identity(&self) -> Result<JsValue, JsValue> {
        let inner = self.inner()?;
        let s = inner.source_info();
        let o = js_sys::Object::new();
        let url = crate::io::url::public_url(&s.location);
        js_sys::Reflect::set(&o, &"url".into(), &url.into())?;
        js_sys::Reflect::set(&o, &"len".into(), &(s.len as f64).into())?;
        let opt = |v: &Option<String>| v.as_deref().map_or(JsValue::NULL, JsValue::from);
        js_sys::Reflect::set(&o, &"etag".into(), &opt(&s.etag))?;
        js_sys::Reflect::set(&o, &"lastModified".into(), &opt(&s.last_modified))?;
        Ok(o.into())
    }

    /// Reads a selection into `target`, a typed array of the class and length the result has
    /// (see `ReadResult`: `Float32Array` for `<f4`, `BigInt64Array` for 64-bit integers and
    /// datetimes, twice the elements for complex, ...), which is checked before any request.
    /// The values are copied once from wasm memory into it, and the wasm memory of the read
    /// is given back to the allocator when it ends: reading a large array window by window
    /// into one buffer keeps wasm memory at about one window. Resolves to
    /// `{ data: target, shape, dtype, missingChunks }` (plus `complex` / `unit`). Rejects with
    /// `INVALID_ARGUMENT` (naming the class and length expected and given) for a wrong
    /// target, and for strings and records, which have no typed array.
    #[wasm_bindgen(js_name = readInto, unchecked_return_type = "Promise<ReadResult>")]
    pub fn read_into(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ArrayBufferView")] target: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Selection")] selection: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ReadOptions")] options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let job = match self
            .read_job(&selection, &options)
            .and_then(|job| job.check_target(&target).map(|()| job))
        {
            Ok(j) => j,
            Err(e) => return Ok(js_sys::Promise::reject(&e)),
        };
        let mut job = job;
        job.result_buffer = self.spare.borrow_mut().take();
        let spare = self.spare.clone();
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let mut data = job.run().await?;
            data.dtype.make_little_endian(&mut data.data);
            let dt = data.dtype.to_little_endian();
            super::typed::copy_into(&target, dt, &data.data)?;
            // Kept for the next readInto (wasm memory is not given back anyway).
            *spare.borrow_mut() = Some(std::mem::take(&mut data.data));
            let o = result_object(target, &data.shape, dt)?;
            js_sys::Reflect::set(
                &o,
                &"missingChunks".into(),
                &JsValue::from_f64(data.missing_chunks as f64),
            )?;
            Ok(o.into())
        }))
    }

    /// Releases this handle (and its cache unless it is shared with a store or the page).
    /// Later calls throw.
    pub fn close(&mut self) {
        self.inner.take();
        self.spare.borrow_mut().take();
    }
}

/// The JS value of a read's result (see `ReadResult`): strings and records as an Array of
/// plain values, numbers as a typed array (one copy), whose wasm memory is given back at once.
fn result_js(mut data: crate::array::ArrayData) -> Result<JsValue, JsValue> {
    let missing = JsValue::from_f64(data.missing_chunks as f64);
    // Byte strings of formats that describe no element (a b2nd "|S8") read as null-padded
    // strings, unicode ones ("<U8") as JS strings (trailing NULs dropped as numpy does).
    let element = data.element.clone().or(match data.dtype.kind {
        Kind::Bytes => Some(crate::element::Element::String {
            size: data.dtype.itemsize,
            padding: crate::element::Padding::NullPad,
            utf8: false,
        }),
        Kind::Unicode => Some(crate::element::Element::Number(data.dtype)),
        _ => None,
    });
    if let Some(e) = &element {
        // Strings and records: plain JS values rather than a typed array.
        let values: js_sys::Array = e.values(&data.data).iter().map(value_js).collect();
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"data".into(), &values)?;
        js_sys::Reflect::set(&o, &"shape".into(), &shape_js(&data.shape))?;
        js_sys::Reflect::set(&o, &"dtype".into(), &e.descr().into())?;
        js_sys::Reflect::set(&o, &"missingChunks".into(), &missing)?;
        return Ok(o.into());
    }
    data.dtype.make_little_endian(&mut data.data);
    let dt = data.dtype.to_little_endian();
    let typed = typed_array(dt.kind, dt.itemsize, &data.data);
    // The copy is out: the wasm memory of the result goes back to the allocator now, not
    // when the promise's closure is collected.
    drop(std::mem::take(&mut data.data));
    let o = result_object(typed, &data.shape, dt)?;
    js_sys::Reflect::set(&o, &"missingChunks".into(), &missing)?;
    Ok(o.into())
}

/// `{ data, shape, dtype }` of a numeric result, with `complex: true` for complex dtypes
/// and `unit` (numpy's code, `"ns"`, `"D"`, `""` generic) for datetimes and timedeltas.
fn result_object(
    data: JsValue,
    shape: &[u64],
    dt: crate::dtype::DType,
) -> Result<js_sys::Object, JsValue> {
    let o = js_sys::Object::new();
    js_sys::Reflect::set(&o, &"data".into(), &data)?;
    js_sys::Reflect::set(&o, &"shape".into(), &shape_js(shape))?;
    js_sys::Reflect::set(&o, &"dtype".into(), &dt.to_string().into())?;
    match dt.kind {
        Kind::Complex => {
            js_sys::Reflect::set(&o, &"complex".into(), &JsValue::TRUE)?;
        }
        Kind::Datetime(u) | Kind::Timedelta(u) => {
            js_sys::Reflect::set(&o, &"unit".into(), &u.as_str().into())?;
        }
        _ => {}
    }
    Ok(o)
}

/// One read as `read` and `readInto` run it: the array, the checked selection and options.
struct ReadJob {
    inner: Rc<crate::array::RemoteArray>,
    what: ReadWhat,
    limit: Option<std::time::Duration>,
    signal: Option<web_sys::AbortSignal>,
    on_progress: Option<js_sys::Function>,
    /// A buffer the read may take for its result (`readInto`'s previous result).
    result_buffer: Option<Vec<u8>>,
}

/// What a [`ReadJob`] reads.
enum ReadWhat {
    /// A selection (`read`, `readInto`).
    Select(Selection),
    /// One whole chunk by its grid coordinates (`getChunk`, `getChunkBytes`, `getChunkBlosc2`).
    Chunk(Vec<u64>),
}

/// The promise of a chunk job (`getChunkBytes`, `getChunkBlosc2`): `op` run on the array, the
/// chunk's coordinates and read options carrying the job's cancel flag, cancelled by the job's
/// `signal` and bounded by its `timeoutMs` as `read` is.
fn chunk_promise(
    job: ReadJob,
    op: impl AsyncFnOnce(&crate::array::RemoteArray, &[u64], &ReadOptions) -> crate::Result<JsValue>
        + 'static,
) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let ReadJob {
            inner,
            what,
            limit,
            signal,
            ..
        } = job;
        let ReadWhat::Chunk(coords) = what else {
            unreachable!("a chunk job")
        };
        let cancel = CancelFlag::new();
        let ropts = ReadOptions {
            cancel: Some(cancel.clone()),
            ..Default::default()
        };
        let location = inner.source_info().location.clone();
        let got = cancellable(op(&inner, &coords, &ropts), signal.as_ref(), cancel);
        crate::io::deadline::operation(limit, &location, got)
            .await
            .map_err(|e| super::abort::operation_error(&e, signal.as_ref()))
    })
}

/// Chunk coordinates from JS: an Array of non-negative integers.
fn coords_from_js(coords: &JsValue) -> Result<Vec<u64>, JsValue> {
    let coords = &super::options::list(coords, "chunk coordinates")?;
    let arr = coords
        .dyn_ref::<js_sys::Array>()
        .ok_or_else(|| arg_error("chunk coordinates must be an array of numbers"))?;
    arr.iter()
        .map(|v| match v.as_f64() {
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64 => Ok(n as u64),
            _ => Err(arg_error(format!(
                "chunk coordinate {v:?} is not a non-negative integer"
            ))),
        })
        .collect()
}

impl RemoteArray {
    fn read_job(&self, selection: &JsValue, options: &JsValue) -> Result<ReadJob, JsValue> {
        let what = ReadWhat::Select(selection_from_js(selection)?);
        self.job(what, options)
    }

    fn chunk_job(&self, coords: &JsValue, options: &JsValue) -> Result<ReadJob, JsValue> {
        let what = ReadWhat::Chunk(coords_from_js(coords)?);
        self.job(what, options)
    }

    fn job(&self, what: ReadWhat, options: &JsValue) -> Result<ReadJob, JsValue> {
        let inner = self.inner()?;
        let options = &super::options::read(options, &[])?;
        let limit = read_timeout(options)?;
        Ok(ReadJob {
            inner,
            what,
            limit,
            signal: super::options::signal(options)?,
            on_progress: super::options::on_progress(options)?,
            result_buffer: None,
        })
    }
}

impl ReadJob {
    /// Checks `target` for `readInto` against the result this read will have.
    fn check_target(&self, target: &JsValue) -> Result<(), JsValue> {
        let dtype = self.inner.dtype();
        if self.inner.element().is_some() || !dtype.is_numeric() {
            return Err(arg_error(format!(
                "readInto: {} elements have no typed array (read gives them as an Array)",
                self.inner.dtype_descr()
            )));
        }
        let ReadWhat::Select(sel) = &self.what else {
            return Err(arg_error("readInto reads a selection"));
        };
        let dims = sel
            .resolve(self.inner.shape())
            .map_err(|e| js_error(&crate::Error::Selection(e)))?;
        let n = dims.iter().map(|d| d.count).product::<u64>();
        super::typed::check_target(target, dtype.to_little_endian(), n)
    }

    /// Runs the read under its signal and deadline.
    async fn run(self) -> Result<crate::array::ArrayData, JsValue> {
        let ReadJob {
            inner,
            what,
            limit,
            signal,
            on_progress,
            result_buffer,
        } = self;
        let cancel = CancelFlag::new();
        let progress = super::options::progress_callback(on_progress);
        let ropts = ReadOptions {
            progress: Some(&progress),
            cancel: Some(cancel.clone()),
            result_buffer: std::sync::Mutex::new(result_buffer),
        };
        let location = inner.source_info().location.clone();
        let read = async {
            match &what {
                ReadWhat::Select(sel) => inner.read(sel, &ropts).await,
                ReadWhat::Chunk(coords) => inner.read_chunk(coords, &ropts).await,
            }
        };
        let read = cancellable(read, signal.as_ref(), cancel);
        let result = crate::io::deadline::operation(limit, &location, read).await;
        result.map_err(|e| super::abort::operation_error(&e, signal.as_ref()))
    }
}

/// Runs `fut` unless `signal` aborts first (then [`crate::io::IoError::Cancelled`]); `cancel`
/// is set on abort so steps in progress stop at their next check. On abort `fut` is dropped,
/// and with it the reads in flight, whose transports abort their requests
/// ([`crate::io::fetch`]). The abort listener is removed when this returns.
pub(crate) async fn cancellable<T>(
    fut: impl std::future::Future<Output = crate::Result<T>>,
    signal: Option<&web_sys::AbortSignal>,
    cancel: CancelFlag,
) -> crate::Result<T> {
    let Some(signal) = signal else {
        return fut.await;
    };
    if crate::io::signal::aborted(signal) {
        cancel.cancel();
        return Err(crate::Error::Io(crate::io::IoError::Cancelled));
    }
    let mut listener = None;
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let c = cancel.clone();
        listener = Some(crate::io::fetch::AbortListener::new(signal, move || {
            c.cancel();
            let _ = resolve.call0(&JsValue::NULL);
        }));
    });
    let aborted = wasm_bindgen_futures::JsFuture::from(promise);
    futures::pin_mut!(fut);
    futures::pin_mut!(aborted);
    let result = match futures::future::select(fut, aborted).await {
        futures::future::Either::Left((r, _)) => r,
        futures::future::Either::Right(_) => Err(crate::Error::Io(crate::io::IoError::Cancelled)),
    };
    drop(listener);
    result
}
