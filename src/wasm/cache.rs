//! `cache: "disk"` in JS hosts: the stores behind it (IndexedDB, OPFS, or a JS-supplied
//! `cacheStore`) as [`KeyValueStore`]s, Web Locks as [`PublicationLocks`], one coordinator
//! per cache in a page or worker, and `clearCache` / `cacheUsage`.
//!
//! The stores themselves (`cache.js`) only move bytes; every blob is checked against its
//! SHA-256 marker by [`crate::cache::backend::MarkedBackend`]. A store that fails, rejects a
//! write (quota exceeded) or never answers (each operation has [`STORE_OP_TIMEOUT`]) gives a
//! miss or a skipped write, never a failed read.

use super::{arg_error, js_error};
use crate::cache::backend::{BackendError, KeyValueStore};
use crate::cache::{CacheCoordinator, PublicationGuard, PublicationLocks};
use crate::open::options::{DiskBackend, DiskTarget, DEFAULT_CACHE_NAME};
use bytes::Bytes;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/wasm/cache.js")]
extern "C" {
    #[wasm_bindgen(js_name = indexedDbStore)]
    fn indexed_db_store(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = opfsStore)]
    fn opfs_store(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = hasIndexedDb)]
    fn has_indexed_db() -> bool;
    #[wasm_bindgen(js_name = hasOpfs)]
    fn has_opfs() -> bool;
    #[wasm_bindgen(js_name = isWindow)]
    fn is_window() -> bool;
    #[wasm_bindgen(js_name = persistStorage)]
    fn persist_storage() -> js_sys::Promise;
    #[wasm_bindgen(js_name = webLock)]
    fn web_lock(name: &str, wait_ms: f64) -> js_sys::Promise;
}

/// Longest wait for one store operation: a store that never answers is a failure (a miss
/// or a skipped write), not a read that hangs.
pub const STORE_OP_TIMEOUT: Duration = Duration::from_secs(10);

/// After an operation ran out of [`STORE_OP_TIMEOUT`] (or the store's own wait ran out: a
/// `TimeoutError`), the store is not asked again for this long (every operation fails at once): one stuck store must not cost every later lookup
/// and write the full wait.
pub const STORE_PAUSE_AFTER_TIMEOUT: Duration = Duration::from_secs(60);

/// A JS object with `get`, `put`, `delete` and `keys` methods returning promises (the
/// `cacheStore` shape; the IndexedDB and OPFS stores of `cache.js` have it too), its keys
/// under `prefix`.
pub struct JsStore {
    obj: JsValue,
    prefix: String,
    name: &'static str,
    /// Until when (ms since the epoch) the store is not asked, after a timeout.
    paused_until: std::cell::Cell<f64>,
}

impl JsStore {
    /// `obj`'s methods, keys prefixed by `prefix`; `name` for messages.
    pub fn new(obj: JsValue, prefix: &str, name: &'static str) -> JsStore {
        JsStore {
            obj,
            prefix: prefix.to_string(),
            name,
            paused_until: std::cell::Cell::new(0.0),
        }
    }

    fn fail(&self, op: &str, detail: impl std::fmt::Display) -> BackendError {
        BackendError::Storage {
            backend: self.name,
            detail: format!("{op}: {detail}"),
        }
    }

    /// Stops asking the store for [`STORE_PAUSE_AFTER_TIMEOUT`].
    fn pause(&self) {
        self.paused_until
            .set(js_sys::Date::now() + STORE_PAUSE_AFTER_TIMEOUT.as_millis() as f64);
    }

    /// Calls `obj[op](args...)` and awaits its promise, within [`STORE_OP_TIMEOUT`].
    async fn call(&self, op: &str, args: &[JsValue]) -> Result<JsValue, BackendError> {
        if js_sys::Date::now() < self.paused_until.get() {
            return Err(self.fail(op, "paused after an operation that did not answer"));
        }
        let f = js_sys::Reflect::get(&self.obj, &op.into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| self.fail(op, "the store has no such method"))?;
        let args: js_sys::Array = args.iter().collect();
        let ret = f
            .apply(&self.obj, &args)
            .map_err(|e| self.fail(op, describe(&e)))?;
        let answer = JsFuture::from(js_sys::Promise::resolve(&ret));
        let timeout = crate::io::sleep::sleep(STORE_OP_TIMEOUT);
        futures::pin_mut!(answer);
        futures::pin_mut!(timeout);
        match futures::future::select(answer, timeout).await {
            futures::future::Either::Left((r, _)) => r.map_err(|e| {
                let what = describe(&e);
                // The store's own wait ran out (an IndexedDB that does not open after the
                // browser deleted the origin's storage): pause as after our own timeout,
                // rather than wait again on every later lookup and write.
                if what.starts_with("TimeoutError") {
                    self.pause();
                }
                self.fail(op, what)
            }),
            futures::future::Either::Right(_) => {
                self.pause();
                Err(self.fail(op, format!("no answer in {} s", STORE_OP_TIMEOUT.as_secs())))
            }
        }
    }
}

/// A JS exception's name and message (no stack: it may hold file paths).
fn describe(e: &JsValue) -> String {
    match e.dyn_ref::<js_sys::Error>() {
        Some(err) => format!(
            "{}: {}",
            String::from(err.name()),
            String::from(err.message())
        ),
        None => e
            .as_string()
            .unwrap_or_else(|| "a non-Error value was thrown".into()),
    }
}

#[async_trait::async_trait(?Send)]
impl KeyValueStore for JsStore {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>, BackendError> {
        let v = self
            .call("get", &[format!("{}{key}", self.prefix).into()])
            .await?;
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        if let Some(a) = v.dyn_ref::<js_sys::Uint8Array>() {
            return Ok(Some(Bytes::from(a.to_vec())));
        }
        if let Some(b) = v.dyn_ref::<js_sys::ArrayBuffer>() {
            return Ok(Some(Bytes::from(js_sys::Uint8Array::new(b).to_vec())));
        }
        Err(self.fail("get", "expected a Uint8Array or undefined"))
    }

    async fn put(&self, key: &str, bytes: Bytes) -> Result<(), BackendError> {
        // A copy in JS memory: the store may keep the array, and wasm memory moves.
        let a = js_sys::Uint8Array::from(&bytes[..]);
        self.call("put", &[format!("{}{key}", self.prefix).into(), a.into()])
            .await
            .map(|_| ())
    }

    async fn delete(&self, key: &str) -> Result<(), BackendError> {
        self.call("delete", &[format!("{}{key}", self.prefix).into()])
            .await
            .map(|_| ())
    }

    async fn keys(&self, prefix: &str) -> Result<Vec<String>, BackendError> {
        let v = self
            .call("keys", &[format!("{}{prefix}", self.prefix).into()])
            .await?;
        let a = v
            .dyn_ref::<js_sys::Array>()
            .ok_or_else(|| self.fail("keys", "expected an array of strings"))?;
        Ok(a.iter()
            .filter_map(|k| k.as_string())
            .filter_map(|k| k.strip_prefix(&self.prefix).map(str::to_string))
            .collect())
    }
}

/// Longest wait for a Web Lock before publishing without persisting (memory only).
pub const WEB_LOCK_WAIT: Duration = Duration::from_secs(3);

/// Web Locks named `chunkwise:<cache name>:<name>`, shared by every page and worker of the
/// origin; none in hosts without `navigator.locks` (Node, workerd).
struct WebLocks {
    prefix: String,
}

struct WebLockGuard(js_sys::Function);

impl PublicationGuard for WebLockGuard {}

impl Drop for WebLockGuard {
    fn drop(&mut self) {
        let _ = self.0.call0(&JsValue::NULL);
    }
}

#[async_trait::async_trait(?Send)]
impl PublicationLocks for WebLocks {
    async fn acquire(&self, name: &str) -> Result<Option<Box<dyn PublicationGuard>>, ()> {
        // Shorter than natively: a publication here holds the lock for a few storage
        // operations, and a request left pending when the browser deletes the origin's
        // storage bucket can wait without end.
        let wait = WEB_LOCK_WAIT.as_millis() as f64;
        // Rejected when not had within the wait (another holder is stuck).
        let release = JsFuture::from(web_lock(&format!("{}{name}", self.prefix), wait))
            .await
            .map_err(|_| ())?;
        Ok(release
            .dyn_into::<js_sys::Function>()
            .ok()
            .map(|f| Box::new(WebLockGuard(f)) as Box<dyn PublicationGuard>))
    }
}

/// A coordinator being made, or made, awaited by every open of its cache.
type Pending = futures::future::Shared<futures::future::LocalBoxFuture<'static, CacheCoordinator>>;

/// The coordinators of the registry made so far, with their ids.
fn registered() -> Vec<(DiskBackend, String, Option<JsValue>, CacheCoordinator)> {
    REGISTRY.with(|r| {
        r.borrow()
            .iter()
            .filter_map(|(k, f)| {
                f.peek()
                    .map(|c| (k.backend, k.name.clone(), k.store.clone(), c.clone()))
            })
            .collect()
    })
}

/// Which cache an entry of the registry is.
#[derive(PartialEq)]
struct CacheId {
    backend: DiskBackend,
    name: String,
    max_cache_bytes: Option<u64>,
    /// The `cacheStore` object, compared by identity.
    store: Option<JsValue>,
}

thread_local! {
    /// The DISK coordinators of this page or worker: opens of one cache share its
    /// coordinator (its budget, its index of entries, its in-memory records). A page opens
    /// few caches, so a list searched in order is enough.
    /// Each coordinator is registered while it is being made (a shared future), so opens
    /// started together wait for one coordinator rather than each making its own (and each
    /// writing its own salt).
    static REGISTRY: RefCell<Vec<(CacheId, Pending)>> = const { RefCell::new(Vec::new()) };
}

fn same(a: &CacheId, b: &CacheId) -> bool {
    a.backend == b.backend
        && a.name == b.name
        && a.max_cache_bytes == b.max_cache_bytes
        && match (&a.store, &b.store) {
            (None, None) => true,
            (Some(x), Some(y)) => js_sys::Object::is(x, y),
            _ => false,
        }
}

/// The name a cache is stored under in OPFS (a directory), in a `cacheStore` (a key prefix)
/// and in Web Locks: `name` itself when it is 1 to 64 of `A-Z a-z 0-9 . _ -` and not `.` or
/// `..`; otherwise `h` and 32 hexadecimal digits of its SHA-256, so that any name is a valid
/// directory name and keeps keys short (a file-per-key store allows 255 bytes a name).
/// IndexedDB takes any name as it is.
pub fn storage_name(name: &str) -> String {
    let plain = (1..=64).contains(&name.len())
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if plain {
        name.to_string()
    } else {
        format!(
            "h{}",
            &crate::cache::identity::sha256_hex(name.as_bytes())[..32]
        )
    }
}

/// The store of `backend` for the cache `name` (`store`: the `cacheStore` object, whose
/// keys are then prefixed by [`storage_name`]`(name)/`).
///
/// # Errors
/// `INVALID_ARGUMENT` when the host lacks the storage, or the object lacks a method.
pub fn store_of(
    backend: DiskBackend,
    name: &str,
    store: Option<&JsValue>,
) -> crate::Result<Arc<dyn KeyValueStore>> {
    let arg_error = |m: String| crate::Error::InvalidArgument(m);
    Ok(Arc::new(match backend {
        DiskBackend::IndexedDb => {
            if !has_indexed_db() {
                return Err(arg_error(
                    "cache \"disk\" needs IndexedDB, which this host lacks: give cacheStore \
                     (Node: nodeFsStore from \"chunkwise/stores/node-fs\"; workers: \
                     cacheApiStore from \"chunkwise/stores/cache-api\")"
                        .into(),
                ));
            }
            JsStore::new(indexed_db_store(name), "", "indexeddb")
        }
        DiskBackend::Opfs => {
            if !has_opfs() {
                return Err(arg_error(
                    "cacheBackend \"opfs\" needs navigator.storage.getDirectory, which this host lacks"
                        .into(),
                ));
            }
            JsStore::new(opfs_store(&storage_name(name)), "", "opfs")
        }
        DiskBackend::Store => {
            let obj = store.cloned().unwrap_or(JsValue::UNDEFINED);
            for m in ["get", "put", "delete", "keys"] {
                let ok = js_sys::Reflect::get(&obj, &m.into())
                    .map(|f| f.is_function())
                    .unwrap_or(false);
                if !ok {
                    return Err(arg_error(format!(
                        "cacheStore must have the methods get, put, delete and keys ({m} is missing)"
                    )));
                }
            }
            JsStore::new(obj, &format!("{}/", storage_name(name)), "js-store")
        }
    }))
}

/// The coordinator of `cache: "disk"` with `target` (and the `cacheStore` object, when the
/// backend is [`DiskBackend::Store`]): the page's existing one for the same cache, name and
/// bound, or a new one on its store.
///
/// # Errors
/// `INVALID_ARGUMENT` when the host lacks the storage asked for, when `cacheStore` lacks a
/// method, or for `persist: true` outside a window.
pub(crate) async fn disk_coordinator(
    target: &DiskTarget,
    store: Option<JsValue>,
) -> crate::Result<CacheCoordinator> {
    if target.persist {
        if !is_window() {
            return Err(crate::Error::InvalidArgument(
                "persist: navigator.storage.persist() can only be called from a window, not \
                 from a worker; ask for it from the page"
                    .into(),
            ));
        }
        // The answer (granted or not) changes nothing here: the cache works either way.
        let _ = JsFuture::from(persist_storage()).await;
    }
    let id = CacheId {
        backend: target.backend,
        name: target.name.clone(),
        max_cache_bytes: target.max_cache_bytes,
        store: store.filter(|_| target.backend == DiskBackend::Store),
    };
    use futures::FutureExt;
    let existing = REGISTRY.with(|r| {
        r.borrow()
            .iter()
            .find(|(k, _)| same(k, &id))
            .map(|(_, f)| f.clone())
    });
    if let Some(f) = existing {
        return Ok(f.await);
    }
    let kv = store_of(id.backend, &id.name, id.store.as_ref())?;
    let locks = Arc::new(WebLocks {
        prefix: format!("chunkwise:{}:", storage_name(&id.name)),
    });
    let max = id.max_cache_bytes;
    let made: Pending = async move { CacheCoordinator::on_store(kv, max, Some(locks)).await }
        .boxed_local()
        .shared();
    REGISTRY.with(|r| r.borrow_mut().push((id, made.clone())));
    Ok(made.await)
}

/// The cache named by `clearCache`/`cacheUsage` options: `{ cacheName, cacheBackend,
/// cacheStore }` (defaults: "chunkwise", IndexedDB).
async fn named_cache(options: &JsValue) -> Result<CacheCoordinator, JsValue> {
    let options =
        &super::options::snapshot(options, &["cacheName", "cacheBackend"], &["cacheStore"])?;
    let get = |n: &str| super::array::get_opt(options, n);
    let name = match get("cacheName") {
        None => DEFAULT_CACHE_NAME.to_string(),
        Some(v) => v
            .as_string()
            .filter(|s| !s.is_empty() && s.len() <= 256)
            .ok_or_else(|| {
                arg_error("cacheName must be a non-empty string of at most 256 bytes")
            })?,
    };
    let store = get("cacheStore");
    let backend = match (get("cacheBackend").map(|v| v.as_string()), &store) {
        (Some(_), Some(_)) => return Err(arg_error("give cacheBackend or cacheStore, not both")),
        (None, Some(_)) => DiskBackend::Store,
        (None, None) => DiskBackend::IndexedDb,
        (Some(Some(s)), None) if s.eq_ignore_ascii_case("indexeddb") => DiskBackend::IndexedDb,
        (Some(Some(s)), None) if s.eq_ignore_ascii_case("opfs") => DiskBackend::Opfs,
        (Some(_), None) => return Err(arg_error("cacheBackend must be \"indexeddb\" or \"opfs\"")),
    };
    let target = DiskTarget {
        backend,
        name,
        persist: false,
        max_cache_bytes: Some(crate::cache::DEFAULT_MAX_CACHE_BYTES),
    };
    disk_coordinator(&target, store)
        .await
        .map_err(|e| js_error(&e))
}

/// Removes every entry of a DISK cache (`{ cacheName, cacheBackend, cacheStore }`, defaults
/// "chunkwise" in IndexedDB): payload, discovery records and small-source copies, for every
/// page sharing it. Arrays already open stay usable and refetch what they read. Resolves to
/// the number of entries removed.
#[wasm_bindgen(js_name = clearCache, unchecked_return_type = "Promise<number>")]
pub fn clear_cache(
    #[wasm_bindgen(unchecked_optional_param_type = "CacheOptions")] options: JsValue,
) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let c = named_cache(&options).await?;
        let mut removed = c.clear_all().await.map_err(|e| js_error(&e))?;
        // Other coordinators of this cache in the page (opened with other bounds) find the
        // entries gone; they also drop what they hold in memory.
        let all = registered();
        let this = all
            .iter()
            .find(|(.., o)| o.same_as(&c))
            .map(|(b, n, st, _)| (*b, n.clone(), st.clone()));
        let others: Vec<CacheCoordinator> = all
            .into_iter()
            .filter(|(b, n, st, o)| {
                !o.same_as(&c)
                    && this.as_ref().is_some_and(|(tb, tn, ts)| {
                        b == tb
                            && n == tn
                            && match (st, ts) {
                                (None, None) => true,
                                (Some(x), Some(y)) => js_sys::Object::is(x, y),
                                _ => false,
                            }
                    })
            })
            .map(|(.., o)| o)
            .collect();
        for o in others {
            removed += o.clear_all().await.map_err(|e| js_error(&e))?;
        }
        Ok((removed as f64).into())
    })
}

/// What a DISK cache holds (`{ cacheName, cacheBackend, cacheStore }`), from a fresh listing:
/// `{ entries, bytes, payload: {entries, bytes}, discovery: {...}, sources: {...},
/// perSource: [{ source, entries, bytes }] }` (bytes of blobs; `source` is the public URL).
#[wasm_bindgen(js_name = cacheUsage, unchecked_return_type = "Promise<CacheUsage>")]
pub fn cache_usage(
    #[wasm_bindgen(unchecked_optional_param_type = "CacheOptions")] options: JsValue,
) -> js_sys::Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        let c = named_cache(&options).await?;
        let r = c.usage_report().await.map_err(|e| js_error(&e))?;
        let layer = |l: &crate::cache::LayerUsage| serde_json::json!({ "entries": l.entries, "bytes": l.bytes });
        let json = serde_json::json!({
            "entries": r.payload.entries + r.discovery.entries + r.sources.entries,
            "bytes": r.payload.bytes + r.discovery.bytes + r.sources.bytes,
            "payload": layer(&r.payload),
            "discovery": layer(&r.discovery),
            "sources": layer(&r.sources),
            "perSource": r.per_source.iter().map(|s| serde_json::json!({
                "source": s.source, "entries": s.entries, "bytes": s.bytes
            })).collect::<Vec<_>>(),
        });
        super::parse_json(&json.to_string()).map_err(arg_error)
    })
}

#[wasm_bindgen(typescript_custom_section)]
const TS_CACHE: &'static str = r#"
/** Names a DISK cache for clearCache and cacheUsage (defaults: "chunkwise" in IndexedDB). */
export interface CacheOptions {
  cacheName?: string;
  cacheBackend?: "indexeddb" | "opfs";
  cacheStore?: CacheStore;
}
/** Entries and blob bytes of a cache layer. */
export interface LayerUsage { entries: number; bytes: number; }
/** What a DISK cache holds (cacheUsage). Payload is what maxCacheBytes bounds. */
export interface CacheUsage {
  entries: number;
  bytes: number;
  payload: LayerUsage;
  discovery: LayerUsage;
  sources: LayerUsage;
  perSource: { source: string; entries: number; bytes: number }[];
}
"#;
