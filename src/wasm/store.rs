//! `RemoteStore` for JavaScript: an HDF5 file or a Zarr store opened once, listed, and read
//! array by array with shared caches.

use super::array::{cancellable, get_opt, parse_open_options, RemoteArray};
use super::{arg_error, js_error};
use crate::array::CancelFlag;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_STORE_TYPES: &'static str = r#"
/** What every node of a container's hierarchy has. */
export interface StoreNodeBase {
  /** Absolute path, "/" for the root group. */
  path: string;
  /** The node's attributes as the listing read them ({} when none). */
  attrs: Attrs;
}
/** A group (HDF5 group, Zarr group): holds other nodes. */
export interface StoreGroup extends StoreNodeBase {
  kind: "group";
  shape: null;
  dtype: null;
  error: null;
  dims: null;
}
/** An array (HDF5 dataset, Zarr array); `store.get(path)` opens it. */
export interface StoreArray extends StoreNodeBase {
  kind: "array";
  /** Shape in elements ([] for a scalar); null for an HDF5 null dataspace (no element) or
   *  when its metadata could not be read (`error` says why). */
  shape: number[] | null;
  /** numpy dtype ("|S", unsized, for variable-length strings: reads give "|S{n}"); null when
   *  its metadata could not be read. */
  dtype: string | null;
  /** Why the array cannot be read (unsupported type or filter, null dataspace, unreadable
   *  metadata), else null. */
  error: string | null;
  /** Dimension names (see RemoteArray.dims), else null. */
  dims: (string | null)[] | null;
}
/** An HDF5 external link or dangling soft link: nothing to open, `error` says which. */
export interface StoreLink extends StoreNodeBase {
  kind: "link";
  shape: null;
  dtype: null;
  error: string;
  dims: null;
}
/** A table (a python-blosc2 CTable in a .b2z): a group whose arrays are its columns and
 *  valid-rows mask; `store.table(path)` opens it. */
export interface StoreTable extends StoreNodeBase {
  kind: "table";
  /** [live rows]. */
  shape: number[];
  dtype: null;
  error: null;
  dims: null;
}
/** One node of a container's hierarchy, discriminated by `kind`. */
export type StoreNode = StoreGroup | StoreArray | StoreLink | StoreTable;
/** A portable reference (`store.exportReference()`): the store's public URL (no query, no
 *  user info; headers are never written), its size and validators, and its discovery
 *  records, signed by `sha256`. `RemoteStore.open(reference)` reopens the store from it with
 *  no discovery request. Integers past 2^53 in a record lose precision in a JS object and the
 *  reference is then refused (sha256): `store.exportReferenceText()` gives the document as
 *  JSON text that keeps them. */
export interface ChunkwiseReference {
  chunkwise_reference: 1;
  /** Public URL of the source. */
  url: string;
  kind: "hdf5" | "zarr" | "b2z";
  /** Size (bytes) and HTTP validators at export; reads check the server's answers against
   *  them (code SOURCE_CHANGED). */
  identity: { len: number; etag: string | null; last_modified: string | null };
  /** false: reopened in memory only, refresh refused; true: into the cache of the options
   *  ("disk" included), refreshable. */
  mutable: boolean;
  /** Discovery records by scope (chunkwise's own format, versioned). */
  records: Record<string, unknown>;
  /** With `exportReference({ withPayload: true })`: compressed chunks, base64. A document
   *  whose payload is in a sidecar file (`chunkwise reference --with-payload`, past 1 MiB)
   *  is refused here (INVALID_ARGUMENT): the CLI reads sidecars. */
  payload?:
    | { encoding: "base64"; chunks: { key: string; data: string }[] }
    | { encoding: "sidecar"; sidecar: string; sha256: string; chunks: { key: string; offset: number; len: number }[] };
  /** Hex SHA-256 of the rest (keys sorted, compact JSON). */
  sha256: string;
}
"#;

/// The `withPayload` option of an export (default false).
fn with_payload(options: &JsValue) -> Result<bool, JsValue> {
    match get_opt(
        &super::options::snapshot(options, &["withPayload"], &[])?,
        "withPayload",
    ) {
        None => Ok(false),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| arg_error("withPayload must be a boolean")),
    }
}

/// The portable reference of `store` as the JSON text chunkwise writes
/// ([`crate::reference::Reference::export`]).
async fn reference_text(
    store: &crate::store::RemoteStore,
    with_payload: bool,
) -> Result<String, JsValue> {
    let r = crate::reference::Reference::export(store, with_payload)
        .await
        .map_err(|e| js_error(&e))?;
    Ok(String::from_utf8(r.to_json()).expect("JSON is UTF-8"))
}

/// The portable reference passed where a URL is expected: a JS object, or a string holding
/// its JSON (one starting with `{`); `None` for any other string (a URL).
fn reference_arg(value: &JsValue) -> Result<Option<crate::reference::Reference>, JsValue> {
    let text = match value.as_string() {
        Some(s) if s.trim_start().starts_with('{') => s,
        Some(_) => return Ok(None),
        None if value.is_object() => super::stringify(value)
            .map_err(|e| arg_error(format!("a reference must be a JSON object: {e}")))?,
        None => return Ok(None),
    };
    crate::reference::Reference::from_json(text.as_bytes())
        .map(Some)
        .map_err(|e| js_error(&e))
}

/// A container (an HDF5 file, a Zarr store) opened once over HTTP range requests. Its arrays share its
/// transport, traffic counter and caches.
#[wasm_bindgen]
pub struct RemoteStore {
    inner: Option<Rc<crate::store::RemoteStore>>,
}

#[wasm_bindgen]
impl RemoteStore {
    /// Opens and lists a container: a file up to 8 MiB is fetched whole once; a listed
    /// dataset then opens without a request. Rejects with a `ChunkwiseError` (`code`
    /// `UNSUPPORTED` for a source that is not a container, and the codes of
    /// `RemoteArray.open`).
    ///
    /// `url` may also be a portable reference (`exportReference()`'s object, or its JSON
    /// text): the store then reopens from its records with no discovery request (an
    /// immutable one in memory only, whatever `cache` says; `refresh` refused). A document
    /// of another version or whose `sha256` does not match is `INVALID_ARGUMENT`.
    #[wasm_bindgen(unchecked_return_type = "RemoteStore")]
    pub async fn open(
        #[wasm_bindgen(unchecked_param_type = "string | ChunkwiseReference")] url: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "StoreOptions")] options: JsValue,
    ) -> Result<RemoteStore, JsValue> {
        let reference = reference_arg(&url)?;
        let url = match &reference {
            Some(r) => r.url.clone(),
            None => super::url_arg(&url)?,
        };
        let options = super::options::open(&options)?;
        let req = parse_open_options(&options)?;
        super::caterva2::check_host_credentials(&url, req.options.credentials.as_ref())?;
        let signal: Option<web_sys::AbortSignal> = super::options::signal(&options)?;
        let (timeout, cache_store, location) =
            (req.timeout, get_opt(&options, "cacheStore"), url.clone());
        let open = async move {
            if let Some(r) = reference {
                // An immutable snapshot never touches persistent storage (not even to
                // create a database): open_reference gives it a memory coordinator.
                let coordinator = if r.mutable {
                    super::array::open_coordinator(&req, cache_store).await?
                } else if req.options.cache == crate::cache::CachePolicy::None {
                    crate::cache::CacheCoordinator::none()
                } else {
                    crate::cache::CacheCoordinator::memory(req.options.max_cache_bytes)
                };
                return crate::reference::open_reference(
                    &r,
                    None,
                    req.headers,
                    req.options,
                    coordinator,
                )
                .await;
            }
            let coordinator = super::array::open_coordinator(&req, cache_store).await?;
            crate::open::open_store(&location, req.headers, req.options, coordinator).await
        };
        let open = cancellable(open, signal.as_ref(), CancelFlag::new());
        let open = super::with_warm_up(&url, open);
        let store = crate::io::deadline::operation(timeout, &url, open)
            .await
            .map_err(|e| super::abort::operation_error(&e, signal.as_ref()))?;
        Ok(RemoteStore {
            inner: Some(Rc::new(store)),
        })
    }

    fn inner(&self) -> Result<Rc<crate::store::RemoteStore>, JsValue> {
        self.inner
            .clone()
            .ok_or_else(|| arg_error("the store is closed"))
    }

    /// Groups and arrays, sorted by path: `{ path, kind, shape, dtype, error }` each.
    #[wasm_bindgen(getter, unchecked_return_type = "StoreNode[]")]
    pub fn nodes(&self) -> Result<JsValue, JsValue> {
        let inner = self.inner()?;
        let out = js_sys::Array::new();
        for n in inner.nodes() {
            let o = js_sys::Object::new();
            let set = |k: &str, v: JsValue| js_sys::Reflect::set(&o, &k.into(), &v);
            set("path", n.path.as_str().into())?;
            let kind = match n.kind {
                crate::formats::NodeKind::Group => "group",
                crate::formats::NodeKind::Array => "array",
                crate::formats::NodeKind::Link => "link",
                crate::formats::NodeKind::Table => "table",
            };
            set("kind", kind.into())?;
            let shape = n.shape.as_ref().map(|s| {
                JsValue::from(
                    s.iter()
                        .map(|&d| JsValue::from_f64(d as f64))
                        .collect::<js_sys::Array>(),
                )
            });
            set("shape", shape.unwrap_or(JsValue::NULL))?;
            set(
                "dtype",
                n.dtype
                    .as_deref()
                    .map(JsValue::from_str)
                    .unwrap_or(JsValue::NULL),
            )?;
            set(
                "error",
                n.error
                    .as_deref()
                    .map(JsValue::from_str)
                    .unwrap_or(JsValue::NULL),
            )?;
            set("attrs", super::attrs::attrs_js(&n.attrs))?;
            set("dims", super::attrs::dims_js(n.dims.as_deref()))?;
            out.push(&o);
        }
        Ok(out.into())
    }

    /// Opens the array at `path` (e.g. "/group/data"), sharing this store's caches.
    #[wasm_bindgen(unchecked_return_type = "Promise<RemoteArray>")]
    pub fn get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] path: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let inner = self.inner()?;
        let path = super::string_arg(&path, "path");
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let path = path?;
            let arr = inner.get(&path).await.map_err(|e| js_error(&e))?;
            Ok(RemoteArray::from_inner(arr).into())
        }))
    }

    /// Opens the table at `path` ("/run/table": a 1-D record dataset; "/cols": a group of
    /// equal-length 1-D arrays, one column each; "/" the root group), sharing this store's
    /// caches, and counts its live rows. Rejects with `INVALID_ARGUMENT` when the node is no
    /// table (saying what it is), `INVALID_DATA` for arrays that are not 1-D or of different
    /// lengths, `NOT_FOUND` for a path the store does not hold.
    #[wasm_bindgen(unchecked_return_type = "Promise<RemoteTable>")]
    pub fn table(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] path: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let inner = self.inner()?;
        let path = super::string_arg(&path, "path");
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let path = path?;
            let table =
                async { super::table::RemoteTable::from_inner(inner.table(&path).await?).await };
            Ok(table.await.map_err(|e| js_error(&e))?.into())
        }))
    }

    /// Discovers the container afresh (bypassing held records and the small-file copy)
    /// and, only once that succeeded, makes it the store's listing and drops the old
    /// version's cached entries. Arrays obtained by `get` before then fail their reads with
    /// code "STALE": get them again. A failed refresh rejects and leaves the store and its
    /// arrays as they were.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn refresh(&self) -> Result<js_sys::Promise, JsValue> {
        let inner = self.inner()?;
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            inner.refresh().await.map_err(|e| js_error(&e))?;
            Ok(JsValue::UNDEFINED)
        }))
    }

    /// What the open did with the listing's discovery record: "created", "reused" or
    /// "invalidated" (see `RemoteArray.cacheStatus`); "invalidated" after every successful
    /// refresh, whether the source changed or not (the held records were replaced).
    #[wasm_bindgen(getter, js_name = cacheStatus, unchecked_return_type = "\"created\" | \"reused\" | \"invalidated\"")]
    pub fn cache_status(&self) -> Result<String, JsValue> {
        Ok(self.inner()?.cache_status().as_str().to_string())
    }

    /// Bytes of compressed payload in the store's cache (see `RemoteArray.cacheBytes`).
    #[wasm_bindgen(getter, js_name = cacheBytes)]
    pub fn cache_bytes(&self) -> Result<f64, JsValue> {
        Ok(self.inner()?.cache_bytes() as f64)
    }

    /// Requests and bytes of the store and its arrays: `{ requests, bytes, roundTrips }`.
    #[wasm_bindgen(getter, unchecked_return_type = "Traffic")]
    pub fn traffic(&self) -> Result<JsValue, JsValue> {
        let t = self.inner()?.traffic();
        let o = js_sys::Object::new();
        js_sys::Reflect::set(&o, &"requests".into(), &(t.requests as f64).into())?;
        js_sys::Reflect::set(&o, &"bytes".into(), &(t.bytes as f64).into())?;
        js_sys::Reflect::set(&o, &"roundTrips".into(), &(t.round_trips as f64).into())?;
        Ok(o.into())
    }

    /// A portable reference of this store (a plain object, `ChunkwiseReference`): opens every
    /// array of the listing (an HDF5 dataset's chunk map is read then), then collects the
    /// store's discovery records; see `RemoteStore.open`. `withPayload: true` also embeds
    /// (base64) the compressed chunks the store's cache holds, put back into the cache at
    /// reopen. Rejects with the errors of `get`.
    #[wasm_bindgen(js_name = exportReference, unchecked_return_type = "Promise<ChunkwiseReference>")]
    pub fn export_reference(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ withPayload?: boolean }")]
        options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let inner = self.inner()?;
        let with_payload = with_payload(&options)?;
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            let text = reference_text(&inner, with_payload).await?;
            super::parse_json(&text).map_err(arg_error)
        }))
    }

    /// The portable reference of `exportReference` as its JSON text, exactly as chunkwise
    /// wrote it: integers past 2^53 in an attribute keep every digit (a JS object would
    /// round them, and the document would then fail its sha256 at reopen). Pass the text to
    /// `RemoteStore.open`, or save it as a `.json` file for `chunkwise read ref.json`.
    #[wasm_bindgen(js_name = exportReferenceText, unchecked_return_type = "Promise<string>")]
    pub fn export_reference_text(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "{ withPayload?: boolean }")]
        options: JsValue,
    ) -> Result<js_sys::Promise, JsValue> {
        let inner = self.inner()?;
        let with_payload = with_payload(&options)?;
        Ok(wasm_bindgen_futures::future_to_promise(async move {
            Ok(JsValue::from_str(
                &reference_text(&inner, with_payload).await?,
            ))
        }))
    }

    /// Releases this handle; arrays already returned by `get` stay usable. Later calls throw.
    pub fn close(&mut self) {
        self.inner.take();
    }
}
