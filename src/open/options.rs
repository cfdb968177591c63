//! The options of the JS `RemoteArray.open`, `RemoteStore.open` and `RemoteArray.read`, as
//! one declared TypeScript shape ([`OPTIONS_TS`], emitted by the wasm module into the package's
//! `.d.ts`) that the structs here mirror field for field, deserialised with serde (in wasm
//! with `serde_wasm_bindgen`, in native tests with `serde_json`), then checked here, in the
//! core, so native tests reach every rule. `signal` and `onProgress` are JS objects the
//! bindings take aside; they are no serde fields.
//!
//! Every field is read loosely (any JS value) and judged by [`OpenOptionsInput::resolve`] in
//! a fixed order, each with its own `INVALID_ARGUMENT` message: `cache` a policy name
//! ([`CachePolicy`]'s `FromStr`), `maxCacheBytes` a non-negative number (truncated to an
//! integer), `path` a string, `cacheKey` a non-empty string, `headers` an object of strings
//! each checked by [`crate::io::headers::check_header`] (the message names the header's
//! 1-based position, never its value), `timeoutMs` a positive finite number, `shareCache` a
//! boolean, `coalesceGap` an integer of bytes up to 1 GiB and `maxMergedBytes` a positive
//! integer of bytes ([`crate::io::coalesce::check_options`]). `null` is as absent, and fields of no declared name are ignored.

use crate::array::OpenOptions;
use crate::cache::{CacheCoordinator, CachePolicy};
use crate::error::{Error, Result};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::time::Duration;

/// The TypeScript declarations of the options: `OpenOptions`, `ReadOptions` and
/// `StoreOptions` (`OpenOptions` without `path`).
pub const OPTIONS_TS: &str = r#"
/** Options of RemoteArray.open. */
export interface OpenOptions {
  /** "memory" (default) keeps compressed chunks in an LRU in wasm memory; "none" keeps none
   *  between reads; "disk" keeps discovery, compressed chunks and small-source copies across
   *  reloads, every entry with a SHA-256 marker (a damaged entry is refetched): in IndexedDB
   *  by default in windows and workers, in OPFS with cacheBackend "opfs", or in cacheStore.
   *  Node and workerd have neither: give cacheStore (the package's nodeFsStore or
   *  cacheApiStore), else "disk" is refused with code INVALID_ARGUMENT. */
  cache?: "memory" | "none" | "disk";
  /** With cache "disk": "indexeddb" (default) or "opfs" (the origin private file system;
   *  synchronous access handles in dedicated workers). */
  cacheBackend?: "indexeddb" | "opfs";
  /** With cache "disk": a store of your own, { get(key), put(key, bytes), delete(key),
   *  keys(prefix) }, each returning a Promise (get: a Uint8Array, or undefined when absent;
   *  keys: an array of strings). Its keys are short ASCII strings and its values the blobs
   *  and markers chunkwise checks itself: the store needs no integrity of its own. */
  cacheStore?: CacheStore;
  /** With cache "disk": the name of the cache (default "chunkwise"): the IndexedDB database,
   *  the OPFS directory, or a key prefix in cacheStore. Opens with one name, backend and
   *  maxCacheBytes share one cache, and its budget, in a page or worker. */
  cacheName?: string;
  /** With cache "disk" in a window: ask the browser to keep the origin's storage under
   *  storage pressure (navigator.storage.persist()). Workers cannot ask: refused there with
   *  INVALID_ARGUMENT. */
  persist?: boolean;
  /** Use the page-wide MEMORY cache (256 MiB) shared by every open with this flag: a reopen
   *  of the same URL (same headers, same path) then makes no request. Default false: the
   *  array owns its cache. maxCacheBytes is ignored when shared. */
  shareCache?: boolean;
  /** Bound of retained compressed payload in bytes (default 256 MiB), least recently used
   *  first out; with cache "disk", null is no bound. Discovery records, decoded results and
   *  small-source copies are not counted. */
  maxCacheBytes?: number | null;
  /** Extra request headers, as fetch takes them: a record such as
   *  { Authorization: "Bearer ..." }, a Headers object, or [name, value] pairs (a name given
   *  twice, in any case, is sent once with its values joined by ", "). */
  headers?: Record<string, string> | Headers | Iterable<readonly [string, string]>;
  /** Dataset path inside an HDF5 file, e.g. "/group/data" (default: the root group's only
   *  dataset), or array path inside a Zarr store, e.g. "/temperature" (default: the store
   *  root). Ignored for single-array formats. */
  path?: string;
  /** A name identifying the source in the caches instead of its URL, for a URL that rotates
   *  (a signed URL with a new signature each time). Without it the caches key a source by its
   *  URL without query and user info, plus a salted fingerprint of the query, user info and
   *  headers: nothing secret is kept in a key. */
  cacheKey?: string;
  /** Default true: sources are immutable, and a held discovery record is trusted at open
   *  (a reopen makes no request). false (standalone .b2nd and Caterva2 datasets only; HDF5,
   *  Zarr and other stores are refused with INVALID_ARGUMENT): the open checks the source's
   *  identity (ETag, else Last-Modified and size) with the first request it makes anyway (a
   *  1-byte request when everything is cached; for Caterva2 one `api/info`, compared by
   *  ETag, mtime and stored size), and a change drops that source's entries (cacheStatus
   *  "invalidated") before reading the new version. */
  assumeImmutable?: boolean;
  /** Largest gap in bytes between two wanted byte ranges that one request reads through
   *  instead of two requests (default 32768, 32 KiB; 0 merges only touching ranges; at
   *  most 1 GiB). It changes the requests, never the values or the cache entries. For the
   *  chunk reads of `read`; discovery at open plans its own requests. */
  coalesceGap?: number;
  /** Largest merged request in bytes (default: no bound); a merge that would be longer
   *  starts a new request, and a single range longer than this is still read whole. A
   *  positive integer. For the chunk reads of `read`, as `coalesceGap`. */
  maxMergedBytes?: number;
  /** "caterva2": the URL is a Caterva2 server's URL base (e.g. "https://cat2.cloud/demo/")
   *  and `path` names a dataset of it, root first ("@public/dir/ds.b2nd"); RemoteStore.open
   *  then lists its roots and datasets. Discovery is one `api/info`, chunks come from
   *  `api/chunk` as stored. Default: the format is detected from the URL's bytes. */
  source?: "caterva2";
  /** With source "caterva2": { username, password } for the server's login (`POST
   *  auth/jwt/login`, once, before the first request sent), or { token } (the
   *  `c2subauth` cookie's value from an earlier login), for roots other than `@public`.
   *  Kept in this object's memory only, never written to a cache or shown in an error; the
   *  caches key entries by a salted fingerprint of them, so another user's entries are never
   *  served. In browsers the login's cookie is the browser's (HttpOnly: hidden from scripts,
   *  sent by `fetch` to the server's origin only): credentials work on a page of the
   *  server's own origin (the server sends `Access-Control-Allow-Origin: *`, which lets no
   *  other origin send cookies), and a token cannot be sent at all (a page may not set a
   *  `Cookie` header): it is refused there with INVALID_ARGUMENT. */
  credentials?: { username: string; password: string } | { token: string };
  /** Cancels the open (and the requests in flight); the promise rejects with code
   *  "CANCELLED". */
  signal?: AbortSignal;
  /** Deadline of the whole open in milliseconds, retries included; past it the promise
   *  rejects with code "TIMEOUT" and the requests in flight are aborted. Each request has
   *  60 s in any case. */
  timeoutMs?: number;
}
/** Options of RemoteArray.read. */
export interface ReadOptions {
  /** Cancels the read (and the requests in flight); the promise rejects with code
   *  "CANCELLED". */
  signal?: AbortSignal;
  /** Deadline of the whole read in milliseconds, retries included; past it the promise
   *  rejects with code "TIMEOUT" and the requests in flight are aborted. */
  timeoutMs?: number;
  /** Called after each chunk with { done, total } (chunks). */
  onProgress?: (p: { done: number; total: number }) => void;
}
/** A persistent key-value store for cache "disk" (see OpenOptions.cacheStore). */
export interface CacheStore {
  get(key: string): Promise<Uint8Array | undefined | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  keys(prefix: string): Promise<string[]>;
}
/** Options of RemoteStore.open: those of RemoteArray.open except path. */
export type StoreOptions = Omit<OpenOptions, "path">;
"#;

/// Fields of [`OPTIONS_TS`] that the bindings take aside as JS objects (an `AbortSignal`, a
/// callback) rather than deserialise.
pub const JS_OBJECT_FIELDS: &[&str] = &["signal", "onProgress", "cacheStore"];

/// The field names serde's derive gives struct `T` (what its `Deserialize` passes to
/// `deserialize_struct`), in declaration order and renamed as the input spells them; skipped
/// fields are not among them. Learnt without any input: a deserialiser that only records
/// the names and stops. The bindings read exactly these names of a JS options object
/// (`src/wasm/options.rs`). Empty for a type that is no struct.
pub fn struct_fields<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Names(std::cell::Cell<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl std::fmt::Display for Stop {
        fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("stop")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: std::fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> Deserializer<'de> for &Names {
        type Error = Stop;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> std::result::Result<V::Value, Stop> {
            self.0.set(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }
    let names = Names(std::cell::Cell::new(&[]));
    let _ = T::deserialize(&names);
    names.0.get()
}

/// Any JS (or JSON) value, kept for the checks of [`OpenOptionsInput::resolve`], which give
/// each option its own message whatever was passed.
#[derive(Debug, Clone, PartialEq)]
pub enum Loose {
    /// `null` (or `undefined`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (a BigInt in range reads as its value).
    Number(f64),
    /// A string.
    String(String),
    /// An object's (or an array's) entries in order; an array's names are its indexes.
    Object(Vec<(String, Loose)>),
    /// Anything else (a function, a symbol, bytes).
    Other,
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_unit<E>(self) -> std::result::Result<Loose, E> {
                Ok(Loose::Null)
            }
            fn visit_none<E>(self) -> std::result::Result<Loose, E> {
                Ok(Loose::Null)
            }
            fn visit_some<D: Deserializer<'de>>(
                self,
                d: D,
            ) -> std::result::Result<Loose, D::Error> {
                Loose::deserialize(d)
            }
            fn visit_bool<E>(self, v: bool) -> std::result::Result<Loose, E> {
                Ok(Loose::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<Loose, E> {
                Ok(Loose::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<Loose, E> {
                Ok(Loose::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<Loose, E> {
                Ok(Loose::Number(v))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Loose, E> {
                Ok(Loose::String(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Loose, E> {
                Ok(Loose::String(v))
            }
            fn visit_bytes<E>(self, _: &[u8]) -> std::result::Result<Loose, E> {
                Ok(Loose::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Loose, A::Error> {
                let mut entries = Vec::new();
                while let Some(v) = seq.next_element::<Loose>()? {
                    entries.push((entries.len().to_string(), v));
                }
                Ok(Loose::Object(entries))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Loose, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<Loose, Loose>()? {
                    let k = match k {
                        Loose::String(s) => s,
                        Loose::Number(n) => n.to_string(),
                        _ => String::new(),
                    };
                    entries.push((k, v));
                }
                Ok(Loose::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// A field read loosely: a value the deserialiser cannot describe (a JS function) is
/// [`Loose::Other`], for the field's own check to refuse; `null` is as absent.
fn loose<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Loose>, D::Error> {
    Ok(match Loose::deserialize(d) {
        Ok(Loose::Null) => None,
        Ok(v) => Some(v),
        Err(_) => Some(Loose::Other),
    })
}

/// A value that may hold a secret (the `credentials` option): [`Loose`] whose `Debug` shows
/// only its kind.
#[derive(Clone, PartialEq)]
pub struct Secret(pub Loose);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// [`loose`] for a field that may hold a secret.
fn secret<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Secret>, D::Error> {
    Ok(loose(d)?.map(Secret))
}

/// `credentials` checked: `{ username, password }` or `{ token }`, non-empty strings; the
/// messages name the fields, never their values.
fn credentials(v: Secret) -> Result<crate::formats::caterva2::Credentials> {
    use crate::formats::caterva2::Credentials;
    let shape = "credentials must be { username, password } or { token }, non-empty strings";
    let Loose::Object(entries) = v.0 else {
        return Err(invalid(shape));
    };
    let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
    names.sort_unstable();
    let field = |name: &str| match entries.iter().find(|(k, _)| k == name) {
        Some((_, Loose::String(s))) if !s.is_empty() => Ok(s.clone()),
        _ => Err(invalid(format!(
            "credentials.{name} must be a non-empty string"
        ))),
    };
    match names.as_slice() {
        ["password", "username"] => Ok(Credentials::Login {
            username: field("username")?,
            password: field("password")?,
        }),
        ["token"] => Ok(Credentials::Token(field("token")?)),
        _ => Err(invalid(format!(
            "{shape} (given: {})",
            names
                .iter()
                .map(|n| n.chars().take(32).collect::<String>())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The fields of the TypeScript `OpenOptions` (and `StoreOptions`), as given. Build it with
/// [`OpenOptionsInput::from_deserializer`] (JS `undefined` or `null` options: the
/// [`Default`]), then [`OpenOptionsInput::resolve`].
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenOptionsInput {
    /// `cache`: `"memory"`, `"none"` or `"disk"` (any case).
    #[serde(default, deserialize_with = "loose")]
    pub cache: Option<Loose>,
    /// `shareCache`: use the process-wide (page-wide) MEMORY coordinator.
    #[serde(default, deserialize_with = "loose")]
    pub share_cache: Option<Loose>,
    /// `maxCacheBytes`: bound of retained payload, bytes.
    #[serde(default, deserialize_with = "loose")]
    pub max_cache_bytes: Option<Loose>,
    /// `headers`: `{ name: value }`.
    #[serde(default, deserialize_with = "loose")]
    pub headers: Option<Loose>,
    /// `path`: the dataset or array inside a container.
    #[serde(default, deserialize_with = "loose")]
    pub path: Option<Loose>,
    /// `cacheKey`: a name for the source in the caches.
    #[serde(default, deserialize_with = "loose")]
    pub cache_key: Option<Loose>,
    /// `timeoutMs`: deadline of the whole open, milliseconds.
    #[serde(default, deserialize_with = "loose")]
    pub timeout_ms: Option<Loose>,
    /// `cacheBackend`: `"indexeddb"` or `"opfs"`.
    #[serde(default, deserialize_with = "loose")]
    pub cache_backend: Option<Loose>,
    /// `cacheName`: the cache's name.
    #[serde(default, deserialize_with = "loose")]
    pub cache_name: Option<Loose>,
    /// `persist`: ask for persistent storage.
    #[serde(default, deserialize_with = "loose")]
    pub persist: Option<Loose>,
    /// `assumeImmutable`: trust held discovery records without an identity check.
    #[serde(default, deserialize_with = "loose")]
    pub assume_immutable: Option<Loose>,
    /// `coalesceGap`: largest gap bridged by a merged request, bytes.
    #[serde(default, deserialize_with = "loose")]
    pub coalesce_gap: Option<Loose>,
    /// `maxMergedBytes`: largest merged request, bytes.
    #[serde(default, deserialize_with = "loose")]
    pub max_merged_bytes: Option<Loose>,
    /// `source`: `"caterva2"`, or absent (the format detected).
    #[serde(default, deserialize_with = "loose")]
    pub source: Option<Loose>,
    /// `credentials`: `{ username, password }` or `{ token }` (source `"caterva2"`);
    /// `Debug` never shows them.
    #[serde(default, deserialize_with = "secret")]
    pub credentials: Option<Secret>,
    /// Whether `maxCacheBytes` was given as `null` (no bound, DISK only); the bindings set it
    /// from the JS object, as serde sees `null` and `undefined` alike.
    #[serde(skip)]
    pub max_cache_bytes_null: bool,
    /// Whether a `cacheStore` object was given (the bindings take it aside).
    #[serde(skip)]
    pub cache_store_given: bool,
}

/// The fields of the TypeScript `ReadOptions` that are no JS objects.
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadOptionsInput {
    /// `timeoutMs`: deadline of the whole read, milliseconds.
    #[serde(default, deserialize_with = "loose")]
    pub timeout_ms: Option<Loose>,
}

/// Checked open options: what the opener ([`crate::open::open_array`],
/// [`crate::open::open_store`]) takes, the coordinator to use, and the deadline.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    /// Cache policy, bound, path and cache key.
    pub options: OpenOptions,
    /// Request headers, checked, in the order given.
    pub headers: Vec<(String, String)>,
    /// `shareCache: true`.
    pub share_cache: bool,
    /// Deadline of the whole open (`timeoutMs`), if any.
    pub timeout: Option<Duration>,
    /// Where DISK keeps its entries in a JS host, with `cache: "disk"`.
    pub disk: Option<DiskTarget>,
}

/// The storage of `cache: "disk"` in a JS host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiskBackend {
    /// IndexedDB (the default).
    IndexedDb,
    /// The origin private file system.
    Opfs,
    /// The `cacheStore` object given.
    Store,
}

/// Checked `cache: "disk"` options of a JS host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskTarget {
    /// Where entries are kept.
    pub backend: DiskBackend,
    /// `cacheName` (default `"chunkwise"`).
    pub name: String,
    /// `persist: true`.
    pub persist: bool,
    /// Payload bound in bytes; `None` for `maxCacheBytes: null`.
    pub max_cache_bytes: Option<u64>,
}

/// The default `cacheName`.
pub const DEFAULT_CACHE_NAME: &str = "chunkwise";

fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

/// `timeoutMs`: a positive finite number of milliseconds, capped to the longest timer delay
/// ([`crate::io::sleep::MAX_DELAY_MS`], about 24.8 days): a longer one waits that long, where
/// `Duration::from_secs_f64` would panic on one past `Duration::MAX` (`1e308`).
fn timeout(v: Option<Loose>) -> Result<Option<Duration>> {
    let longest = crate::io::sleep::MAX_DELAY_MS as f64;
    v.map(|v| match v {
        Loose::Number(ms) if ms.is_finite() && ms > 0.0 => {
            Ok(Duration::from_secs_f64(ms.min(longest) / 1000.0))
        }
        _ => Err(invalid("timeoutMs must be a positive number")),
    })
    .transpose()
}

impl OpenOptionsInput {
    /// The options from a deserialiser of the JS (or JSON) options object.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the value is not an object.
    pub fn from_deserializer<'de, D: Deserializer<'de>>(d: D) -> Result<OpenOptionsInput> {
        OpenOptionsInput::deserialize(d)
            .map_err(|e| invalid(format!("options must be an object: {e}")))
    }

    /// Checks every field, in the order `cache`, `maxCacheBytes`, `path`, `cacheKey`,
    /// `headers`, `timeoutMs`, `shareCache`, `cacheBackend`, `cacheName`, `persist`,
    /// `assumeImmutable`, `source`, `credentials`, `coalesceGap`, `maxMergedBytes`, then the
    /// DISK options together (the first failure is the error).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the field (see the module documentation).
    pub fn resolve(self) -> Result<OpenRequest> {
        let mut opts = OpenOptions::default();
        if let Some(c) = self.cache {
            let Loose::String(s) = c else {
                return Err(invalid("cache must be a string"));
            };
            opts.cache = s.parse::<CachePolicy>().map_err(invalid)?;
        }
        if let Some(m) = self.max_cache_bytes {
            match m {
                Loose::Number(n) if n >= 0.0 => opts.max_cache_bytes = n as u64,
                _ => return Err(invalid("maxCacheBytes must be a non-negative number")),
            }
        }
        if let Some(p) = self.path {
            let Loose::String(p) = p else {
                return Err(invalid("path must be a string"));
            };
            opts.path = Some(p);
        }
        if let Some(k) = self.cache_key {
            match k {
                Loose::String(k) if !k.is_empty() => opts.cache_key = Some(k),
                _ => return Err(invalid("cacheKey must be a non-empty string")),
            }
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(h) = self.headers {
            let Loose::Object(entries) = h else {
                return Err(invalid("headers must be an object"));
            };
            for (k, v) in entries {
                let n = headers.len() + 1;
                let Loose::String(v) = v else {
                    return Err(invalid(format!("header {n} must be a string")));
                };
                // Checked here, so fetch's own message (which repeats the value) never shows.
                crate::io::headers::check_header(&k, &v)
                    .map_err(|why| invalid(format!("header {n} {why}")))?;
                headers.push((k, v));
            }
        }
        let timeout = timeout(self.timeout_ms)?;
        let share_cache = match self.share_cache {
            None => false,
            Some(Loose::Bool(b)) => b,
            Some(_) => return Err(invalid("shareCache must be a boolean")),
        };
        let backend = match self.cache_backend {
            None => None,
            Some(Loose::String(s)) => match s.to_ascii_lowercase().as_str() {
                "indexeddb" => Some(DiskBackend::IndexedDb),
                "opfs" => Some(DiskBackend::Opfs),
                _ => {
                    return Err(invalid(format!(
                        "unknown cacheBackend {:?} (expected indexeddb or opfs)",
                        crate::error::excerpt(&s)
                    )))
                }
            },
            Some(_) => return Err(invalid("cacheBackend must be a string")),
        };
        let name = match self.cache_name {
            None => None,
            Some(Loose::String(s)) if !s.is_empty() && s.len() <= 256 => Some(s),
            Some(_) => {
                return Err(invalid(
                    "cacheName must be a non-empty string of at most 256 bytes",
                ))
            }
        };
        let persist = match self.persist {
            None => None,
            Some(Loose::Bool(b)) => Some(b),
            Some(_) => return Err(invalid("persist must be a boolean")),
        };
        match self.assume_immutable {
            None => {}
            Some(Loose::Bool(b)) => opts.assume_immutable = b,
            Some(_) => return Err(invalid("assumeImmutable must be a boolean")),
        }
        match self.source {
            None => {}
            Some(Loose::String(s)) if s.eq_ignore_ascii_case("caterva2") => {
                opts.source = crate::array::SourceKind::Caterva2
            }
            Some(Loose::String(s)) => {
                return Err(invalid(format!(
                    "unknown source {:?} (expected \"caterva2\", or no source to detect the \
                     format)",
                    crate::error::excerpt(&s)
                )))
            }
            Some(_) => return Err(invalid("source must be a string")),
        }
        if let Some(c) = self.credentials {
            if opts.source != crate::array::SourceKind::Caterva2 {
                return Err(invalid("credentials are for source \"caterva2\" only"));
            }
            opts.credentials = Some(credentials(c)?);
        }
        // Integers of bytes, exactly representable in a JS number.
        let bytes = |v: &Loose| match v {
            Loose::Number(n) if n.fract() == 0.0 && (0.0..=9_007_199_254_740_991.0).contains(n) => {
                Some(*n as u64)
            }
            _ => None,
        };
        if let Some(g) = &self.coalesce_gap {
            opts.coalesce_gap = bytes(g).ok_or_else(|| {
                invalid("coalesceGap must be a non-negative integer number of bytes")
            })?;
        }
        if let Some(m) = &self.max_merged_bytes {
            opts.max_merged_bytes = Some(bytes(m).ok_or_else(|| {
                invalid("maxMergedBytes must be a positive integer number of bytes")
            })?);
        }
        crate::io::coalesce::check_options(
            opts.coalesce_gap,
            opts.max_merged_bytes,
            ("coalesceGap", "maxMergedBytes"),
        )
        .map_err(invalid)?;
        let disk = if opts.cache == CachePolicy::Disk {
            if backend.is_some() && self.cache_store_given {
                return Err(invalid("give cacheBackend or cacheStore, not both"));
            }
            Some(DiskTarget {
                backend: match (backend, self.cache_store_given) {
                    (_, true) => DiskBackend::Store,
                    (Some(b), false) => b,
                    (None, false) => DiskBackend::IndexedDb,
                },
                name: name.unwrap_or_else(|| DEFAULT_CACHE_NAME.to_string()),
                persist: persist.unwrap_or(false),
                max_cache_bytes: (!self.max_cache_bytes_null).then_some(opts.max_cache_bytes),
            })
        } else {
            let given = [
                (backend.is_some(), "cacheBackend"),
                (self.cache_store_given, "cacheStore"),
                (name.is_some(), "cacheName"),
                (persist.is_some(), "persist"),
                (self.max_cache_bytes_null, "maxCacheBytes null (no bound)"),
            ];
            if let Some((_, what)) = given.iter().find(|(g, _)| *g) {
                return Err(invalid(format!("{what} is for cache \"disk\" only")));
            }
            None
        };
        Ok(OpenRequest {
            options: opts,
            headers,
            share_cache,
            timeout,
            disk,
        })
    }
}

impl OpenRequest {
    /// The cache coordinator of these options: the process-wide (page-wide) MEMORY one
    /// ([`CacheCoordinator::shared`]) with `shareCache: true` and the MEMORY policy, otherwise
    /// a private one of `cache` and `maxCacheBytes` ([`CacheCoordinator::new`]: `"disk"` is
    /// an `INVALID_ARGUMENT` in wasm, which has no persistent storage yet, and natively here
    /// too, which has no directory).
    ///
    /// # Errors
    /// As [`CacheCoordinator::new`].
    pub fn coordinator(&self) -> Result<CacheCoordinator> {
        if self.share_cache && self.options.cache == CachePolicy::Memory {
            return Ok(CacheCoordinator::shared());
        }
        CacheCoordinator::new(self.options.cache, self.options.max_cache_bytes)
    }
}

impl ReadOptionsInput {
    /// The options from a deserialiser of the JS (or JSON) options object.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the value is not an object.
    pub fn from_deserializer<'de, D: Deserializer<'de>>(d: D) -> Result<ReadOptionsInput> {
        ReadOptionsInput::deserialize(d)
            .map_err(|e| invalid(format!("options must be an object: {e}")))
    }

    /// The deadline of the read (`timeoutMs`), if any.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`]: "timeoutMs must be a positive number".
    pub fn timeout(self) -> Result<Option<Duration>> {
        timeout(self.timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(json: &str) -> Result<OpenRequest> {
        let mut d = serde_json::Deserializer::from_str(json);
        OpenOptionsInput::from_deserializer(&mut d)?.resolve()
    }

    fn refused(json: &str) -> String {
        match open(json) {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("{json}: {other:?}"),
        }
    }

    fn serde_fields<T: for<'de> Deserialize<'de>>() -> Vec<String> {
        let mut v: Vec<String> = struct_fields::<T>().iter().map(|f| f.to_string()).collect();
        v.sort();
        v
    }

    /// Field names of `export interface NAME { ... }` in [`OPTIONS_TS`], without the JS
    /// objects the bindings take aside.
    fn ts_fields(name: &str) -> Vec<String> {
        let start = OPTIONS_TS
            .find(&format!("export interface {name} {{"))
            .unwrap_or_else(|| panic!("no interface {name}"));
        let body = &OPTIONS_TS[start..];
        let body = &body[..body.find("\n}").expect("interface ends")];
        let mut v: Vec<String> = body
            .lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.starts_with("/**") && !l.starts_with('*'))
            .filter_map(|l| l.split_once("?:").map(|(n, _)| n.trim().to_string()))
            .filter(|n| !JS_OBJECT_FIELDS.contains(&n.as_str()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_structs_mirror_the_typescript_interfaces() {
        let declared = ts_fields("OpenOptions");
        assert_eq!(
            declared,
            [
                "assumeImmutable",
                "cache",
                "cacheBackend",
                "cacheKey",
                "cacheName",
                "coalesceGap",
                "credentials",
                "headers",
                "maxCacheBytes",
                "maxMergedBytes",
                "path",
                "persist",
                "shareCache",
                "source",
                "timeoutMs"
            ]
        );
        assert_eq!(serde_fields::<OpenOptionsInput>(), declared);
        assert_eq!(serde_fields::<ReadOptionsInput>(), ts_fields("ReadOptions"));
        assert_eq!(ts_fields("ReadOptions"), ["timeoutMs"]);
        // Every declared field is taken: a valid value of each opens.
        let all = r#"{"cache": "none", "shareCache": false, "maxCacheBytes": 1024,
            "headers": {"Authorization": "Bearer x"}, "path": "/a", "cacheKey": "k",
            "timeoutMs": 1500, "signal": {}}"#;
        let r = open(all).unwrap();
        assert_eq!(r.options.cache, CachePolicy::None);
        assert_eq!(r.options.max_cache_bytes, 1024);
        assert_eq!(r.options.path.as_deref(), Some("/a"));
        assert_eq!(r.options.cache_key.as_deref(), Some("k"));
        assert_eq!(r.headers, [("Authorization".into(), "Bearer x".into())]);
        assert_eq!(r.timeout, Some(Duration::from_millis(1500)));
        assert!(!r.share_cache);
    }

    #[test]
    fn each_option_has_its_rule_and_message() {
        // Absent or null: the defaults.
        for json in [
            "{}",
            r#"{"cache": null, "path": null, "timeoutMs": null}"#,
            r#"{"other": 1}"#,
        ] {
            let r = open(json).unwrap();
            assert_eq!(r.options.cache, CachePolicy::Memory, "{json}");
            assert_eq!(r.options.path, None);
            assert_eq!(r.timeout, None);
            assert!(r.headers.is_empty());
        }
        assert_eq!(refused(r#"{"cache": 5}"#), "cache must be a string");
        assert_eq!(
            refused(r#"{"cache": "tape"}"#),
            "unknown cache policy \"tape\" (expected memory, disk or none)"
        );
        // A refused value is repeated up to 64 characters, not whole.
        for field in ["cache", "cacheBackend", "source"] {
            let m = refused(&format!(r#"{{"{field}": "{}"}}"#, "é".repeat(1 << 20)));
            assert!(
                m.contains(&format!("\"{}...\"", "é".repeat(64))),
                "{field}: {m:.200}"
            );
            assert!(m.len() < 300, "{field}: {} bytes", m.len());
        }
        assert_eq!(
            open(r#"{"cache": "NONE"}"#).unwrap().options.cache,
            CachePolicy::None
        );
        for bad in ["-1", "\"5\"", "true"] {
            assert_eq!(
                refused(&format!(r#"{{"maxCacheBytes": {bad}}}"#)),
                "maxCacheBytes must be a non-negative number"
            );
        }
        assert_eq!(
            open(r#"{"maxCacheBytes": 0}"#)
                .unwrap()
                .options
                .max_cache_bytes,
            0
        );
        assert_eq!(
            open(r#"{"maxCacheBytes": 2.5}"#)
                .unwrap()
                .options
                .max_cache_bytes,
            2
        );
        assert_eq!(refused(r#"{"path": 1}"#), "path must be a string");
        for bad in ["\"\"", "3"] {
            assert_eq!(
                refused(&format!(r#"{{"cacheKey": {bad}}}"#)),
                "cacheKey must be a non-empty string"
            );
        }
        assert_eq!(refused(r#"{"headers": "x"}"#), "headers must be an object");
        assert_eq!(
            refused(r#"{"headers": {"A": 1}}"#),
            "header 1 must be a string"
        );
        // The position is named, never the value.
        let m = refused(r#"{"headers": {"A": "ok", "B": "sec\nret"}}"#);
        assert_eq!(
            m,
            "header 2 has a value with control or non-ASCII characters"
        );
        let m = refused(r#"{"headers": {"Bad Name": "secret"}}"#);
        assert!(m.starts_with("header 1 has no valid name"), "{m}");
        assert!(!m.contains("secret"), "{m}");
        let r = open(r#"{"headers": {"B": "2", "A": "1"}}"#).unwrap();
        assert_eq!(
            r.headers,
            [("B".into(), "2".into()), ("A".into(), "1".into())]
        );
        for bad in ["0", "-5", "\"10\""] {
            assert_eq!(
                refused(&format!(r#"{{"timeoutMs": {bad}}}"#)),
                "timeoutMs must be a positive number"
            );
        }
        assert_eq!(
            refused(r#"{"shareCache": "yes"}"#),
            "shareCache must be a boolean"
        );
        // The first failure in the fixed order wins, whatever the object's order.
        assert_eq!(
            refused(r#"{"shareCache": 1, "timeoutMs": 0, "cache": 5}"#),
            "cache must be a string"
        );
        assert_eq!(
            refused(r#"{"shareCache": 1, "timeoutMs": 0}"#),
            "timeoutMs must be a positive number"
        );
        // Not an object at all.
        let mut d = serde_json::Deserializer::from_str("\"memory\"");
        let e = OpenOptionsInput::from_deserializer(&mut d).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        // Read options.
        let read = |json: &str| {
            let mut d = serde_json::Deserializer::from_str(json);
            ReadOptionsInput::from_deserializer(&mut d)?.timeout()
        };
        assert_eq!(
            read(r#"{"timeoutMs": 250}"#).unwrap(),
            Some(Duration::from_millis(250))
        );
        assert_eq!(read(r#"{"onProgress": {}}"#).unwrap(), None);
        // Past the longest timer delay (and past `Duration::MAX`, which once panicked): the
        // longest deadline, 2^31 - 1 ms.
        let longest = Some(Duration::from_millis(i32::MAX as u64));
        for ms in ["2147483647", "1e10", "1.9e22", "1e308"] {
            assert_eq!(
                read(&format!(r#"{{"timeoutMs": {ms}}}"#)).unwrap(),
                longest,
                "{ms}"
            );
            let r = open(&format!(r#"{{"timeoutMs": {ms}}}"#)).unwrap();
            assert_eq!(r.timeout, longest, "{ms}");
        }
        match read(r#"{"timeoutMs": -1}"#) {
            Err(Error::InvalidArgument(m)) => assert_eq!(m, "timeoutMs must be a positive number"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn coalescing_options() {
        let r = open("{}").unwrap();
        assert_eq!(
            (r.options.coalesce_gap, r.options.max_merged_bytes),
            (crate::io::coalesce::DEFAULT_MAX_GAP, None)
        );
        let r = open(r#"{"coalesceGap": 0, "maxMergedBytes": 4194304}"#).unwrap();
        assert_eq!(
            (r.options.coalesce_gap, r.options.max_merged_bytes),
            (0, Some(4 << 20))
        );
        let r = open(r#"{"coalesceGap": 1073741824, "maxMergedBytes": null}"#).unwrap();
        assert_eq!(
            (r.options.coalesce_gap, r.options.max_merged_bytes),
            (1 << 30, None)
        );
        for bad in ["-1", "2.5", "\"64\"", "true", "1e300", "{}"] {
            assert_eq!(
                refused(&format!(r#"{{"coalesceGap": {bad}}}"#)),
                "coalesceGap must be a non-negative integer number of bytes",
                "{bad}"
            );
            assert_eq!(
                refused(&format!(r#"{{"maxMergedBytes": {bad}}}"#)),
                "maxMergedBytes must be a positive integer number of bytes",
                "{bad}"
            );
        }
        assert_eq!(
            refused(r#"{"coalesceGap": 1073741825}"#),
            "coalesceGap must be at most 1073741824 bytes (1 GiB), not 1073741825"
        );
        assert_eq!(
            refused(r#"{"maxMergedBytes": 0}"#),
            "maxMergedBytes must be a positive number of bytes"
        );
    }

    #[test]
    fn disk_options() {
        let d = open(r#"{"cache": "disk"}"#).unwrap().disk.unwrap();
        assert_eq!(
            d,
            DiskTarget {
                backend: DiskBackend::IndexedDb,
                name: "chunkwise".into(),
                persist: false,
                max_cache_bytes: Some(crate::cache::DEFAULT_MAX_CACHE_BYTES)
            }
        );
        let d = open(r#"{"cache": "disk", "cacheBackend": "OPFS", "cacheName": "n", "persist": true, "maxCacheBytes": 7}"#)
            .unwrap()
            .disk
            .unwrap();
        assert_eq!(
            (d.backend, d.name.as_str(), d.persist, d.max_cache_bytes),
            (DiskBackend::Opfs, "n", true, Some(7))
        );
        let with = |json: &str, null: bool, store: bool| {
            let mut de = serde_json::Deserializer::from_str(json);
            let mut i = OpenOptionsInput::from_deserializer(&mut de).unwrap();
            i.max_cache_bytes_null = null;
            i.cache_store_given = store;
            i.resolve()
        };
        let d = with(r#"{"cache": "disk"}"#, true, true)
            .unwrap()
            .disk
            .unwrap();
        assert_eq!((d.backend, d.max_cache_bytes), (DiskBackend::Store, None));
        let msg = |r: Result<OpenRequest>| match r {
            Err(Error::InvalidArgument(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            msg(with(
                r#"{"cache": "disk", "cacheBackend": "opfs"}"#,
                false,
                true
            )),
            "give cacheBackend or cacheStore, not both"
        );
        assert_eq!(
            msg(with(r#"{}"#, true, false)),
            "maxCacheBytes null (no bound) is for cache \"disk\" only"
        );
        assert_eq!(
            msg(with(r#"{}"#, false, true)),
            "cacheStore is for cache \"disk\" only"
        );
        assert_eq!(
            refused(r#"{"cacheName": "x"}"#),
            "cacheName is for cache \"disk\" only"
        );
        assert_eq!(
            refused(r#"{"cache": "none", "persist": false}"#),
            "persist is for cache \"disk\" only"
        );
        assert_eq!(
            refused(r#"{"cache": "disk", "cacheBackend": "s3"}"#),
            "unknown cacheBackend \"s3\" (expected indexeddb or opfs)"
        );
        assert_eq!(
            refused(r#"{"cache": "disk", "cacheBackend": 1}"#),
            "cacheBackend must be a string"
        );
        assert_eq!(
            refused(r#"{"cache": "disk", "cacheName": ""}"#),
            "cacheName must be a non-empty string of at most 256 bytes"
        );
        assert_eq!(
            refused(r#"{"cache": "disk", "persist": "yes"}"#),
            "persist must be a boolean"
        );
    }

    #[tokio::test]
    async fn the_coordinator_of_the_options() {
        // shareCache with MEMORY: the one process-wide coordinator.
        let a = open(r#"{"shareCache": true}"#)
            .unwrap()
            .coordinator()
            .unwrap();
        let b = open(r#"{"shareCache": true, "maxCacheBytes": 5}"#)
            .unwrap()
            .coordinator()
            .unwrap();
        a.put_record("options-test", b"x".to_vec()).await;
        assert_eq!(b.record("options-test").await.as_deref(), Some(&b"x"[..]));
        // Otherwise a private one of the policy and bound.
        let own = open(r#"{"maxCacheBytes": 4096}"#)
            .unwrap()
            .coordinator()
            .unwrap();
        assert_eq!(own.record("options-test").await, None);
        assert_eq!(own.max_cache_bytes(), Some(4096));
        let none = open(r#"{"cache": "none", "shareCache": true}"#)
            .unwrap()
            .coordinator()
            .unwrap();
        assert_eq!(none.policy(), CachePolicy::None);
        // DISK has no directory here.
        let e = open(r#"{"cache": "disk"}"#)
            .unwrap()
            .coordinator()
            .unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
    }

    #[test]
    fn caterva2_source_and_credentials_are_checked_and_never_shown() {
        use crate::array::SourceKind;
        use crate::formats::caterva2::Credentials;
        let r = open(r#"{"source": "caterva2", "path": "@public/a.b2nd"}"#).unwrap();
        assert_eq!(r.options.source, SourceKind::Caterva2);
        assert_eq!(r.options.credentials, None);
        assert_eq!(open("{}").unwrap().options.source, SourceKind::Detected);
        let login = r#"{"source": "caterva2",
            "credentials": {"username": "u@example.com", "password": "pw-s3cret-1"}}"#;
        let r = open(login).unwrap();
        assert_eq!(
            r.options.credentials,
            Some(Credentials::Login {
                username: "u@example.com".into(),
                password: "pw-s3cret-1".into()
            })
        );
        assert!(!format!("{r:?}").contains("pw-s3cret-1"), "{r:?}");
        let input =
            OpenOptionsInput::from_deserializer(&mut serde_json::Deserializer::from_str(login))
                .unwrap();
        assert!(!format!("{input:?}").contains("pw-s3cret-1"), "{input:?}");
        let r =
            open(r#"{"source": "CATERVA2", "credentials": {"token": "tok-s3cret-2"}}"#).unwrap();
        assert_eq!(
            r.options.credentials,
            Some(Credentials::Token("tok-s3cret-2".into()))
        );
        // Refusals name the field, never a value.
        for (json, says) in [
            (r#"{"source": "zarr"}"#, "unknown source"),
            (r#"{"source": 3}"#, "source must be a string"),
            (
                r#"{"credentials": {"token": "tok-s3cret-2"}}"#,
                "for source \"caterva2\" only",
            ),
            (
                r#"{"source": "caterva2", "credentials": "tok-s3cret-2"}"#,
                "credentials must be",
            ),
            (
                r#"{"source": "caterva2", "credentials": {"username": "u", "password": ""}}"#,
                "credentials.password must be a non-empty string",
            ),
            (
                r#"{"source": "caterva2", "credentials": {"username": "u", "pasword": "tok-s3cret-2"}}"#,
                "(given: pasword, username)",
            ),
            (
                r#"{"source": "caterva2", "credentials": {"token": "tok-s3cret-2", "username": "u"}}"#,
                "credentials must be",
            ),
        ] {
            let e = open(json).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{json}");
            let m = e.message();
            assert!(m.contains(says), "{json}: {m}");
            assert!(!m.contains("s3cret"), "{json}: {m}");
        }
    }
}
