// The options object of a call, read once inside one `try` (the binding imports this with
// `catch`). Everything the bindings read of the options is then read from the copy, where
// no getter, Proxy trap or cycle runs: a JS exception thrown while Rust code reads the
// caller's object itself (serde-wasm-bindgen reads `obj[key]` and `Object.entries(obj)`)
// would unwind through the module's frames, leaving an open's promise that never settles.
// A chunk argument's bytes and the calls of a read's onProgress go through here for the
// same reason (and the signal through src/io/signal.js).

// Nesting past this depth is refused (a cyclic object would otherwise recurse without end).
const MAX_DEPTH = 16;
// An array past this length is refused (`{ length: 2 ** 32 - 1 }`-sized sparse arrays
// would otherwise be walked index by index). Options hold short lists: headers, columns.
const MAX_ITEMS = 65536;

/**
 * A plain copy of `options`: each name of `fields` read once and copied as data (a plain
 * object as its own enumerable entries, an array by index, a Map as a Map of copies; a typed
 * array, an ArrayBuffer and a function as they are; any other iterable, which no option
 * takes, as a symbol), each name of `references` kept as it is (an AbortSignal, a callback,
 * a cache store). `options` that is not an object (undefined, null, a string) is returned
 * as it is. Throws an Error with the message of what a getter or a trap threw, or of nesting
 * deeper than 16 levels or an array of more than 65536 items.
 */
export function snapshotOptions(options, fields, references) {
  if (options === null || typeof options !== "object") return options;
  return guarded(() => copyOptions(options, fields, references));
}

function copyOptions(options, fields, references) {
  const copy = {};
  for (const key of fields) {
    const v = options[key];
    if (v !== undefined) copy[key] = key === "headers" ? headersRecord(v) : plain(v, 1, key);
  }
  for (const key of references) {
    const v = options[key];
    if (v !== undefined) copy[key] = v;
  }
  return copy;
}

/**
 * A plain copy of `value` when it is an array (a selection, chunk coordinates, a shape: its
 * items copied as `snapshotOptions` copies an option), else `value` itself. Throws as
 * `snapshotOptions` does.
 */
export function snapshotList(value, what) {
  return Array.isArray(value) ? guarded(() => plain(value, 1, what)) : value;
}

/**
 * The bytes of `value` as a Uint8Array of this realm over the same memory, when `value` is a
 * typed array of one byte per element (a Uint8Array of any realm, a Node Buffer, an
 * Int8Array, a Uint8ClampedArray). Throws a TypeError for anything else (null, a string, a
 * plain array, whose items wasm-bindgen's own glue would have copied one by one, a Proxy)
 * and what a getter of `value` throws, as `snapshotOptions` does.
 */
export function byteView(value) {
  return guarded(() => {
    // ArrayBuffer.isView is false for a Proxy: the getters read below are the view's own.
    if (!ArrayBuffer.isView(value) || value.BYTES_PER_ELEMENT !== 1) {
      throw new TypeError(`${value === null ? "null" : typeof value} is not a Uint8Array`);
    }
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  });
}

/**
 * Calls a read's `onProgress` callback `f` with `{ done, total }` (chunks). What `f` throws is
 * ignored, and so is the rejection of a promise it returns (an `async` callback), also where
 * that promise has a `then` of its own that throws: a failing callback neither fails the read
 * nor leaves an unhandled rejection, which ends a Node process.
 */
export function reportProgress(f, done, total) {
  try {
    const returned = f({ done, total });
    // The intrinsic `then`, not the promise's own: one that throws would leave the rejection
    // unhandled.
    if (returned instanceof Promise) Promise.prototype.then.call(returned, undefined, () => {});
  } catch {
    // ignored, as the doc comment says
  }
}

// Runs `f`; what it throws is thrown again as an Error of that message (a string read here,
// where an Error whose own `message` getter throws cannot reach the module).
function guarded(f) {
  try {
    return f();
  } catch (e) {
    let message;
    try {
      message = e instanceof Error ? String(e.message) : String(e);
    } catch {
      message = "a value that gives no message";
    }
    throw new Error(message);
  }
}

/**
 * The `headers` option, which takes what fetch takes (its HeadersInit), as one plain record:
 * a record is copied as any option; a Headers object (of any realm, read through the
 * intrinsic `Headers.prototype.entries`, so that none of its own members run), an array or
 * any other iterable of `[name, value]` pairs give their pairs in order. A name given twice,
 * in any case, has its string values joined by ", ", as Headers joins them (the first
 * spelling of the name is kept). Values that are no string are kept for the core to refuse,
 * naming the header. Throws a TypeError for an item that is no pair of two, or past 65536
 * items.
 */
function headersRecord(v) {
  if (v === null || typeof v !== "object") return v;
  let pairs;
  if (isHeaders(v)) {
    pairs = Headers.prototype.entries.call(v);
  } else if (Symbol.iterator in v) {
    pairs = v;
  } else {
    return plain(v, 1, "headers");
  }
  const record = Object.create(null); // a header named __proto__ is a header
  const spelling = new Map(); // lowercased name -> the name as first given
  let n = 0;
  for (const pair of pairs) {
    n += 1;
    if (n > MAX_ITEMS) throw new TypeError(`headers has more than ${MAX_ITEMS} items`);
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw new TypeError(`headers: item ${n} is not a [name, value] pair`);
    }
    const name = pair[0];
    const value = plain(pair[1], 2, "headers");
    if (typeof name !== "string") throw new TypeError(`headers: the name of item ${n} is not a string`);
    const key = spelling.get(name.toLowerCase());
    if (key === undefined) {
      spelling.set(name.toLowerCase(), name);
      record[name] = value;
    } else if (typeof record[key] === "string" && typeof value === "string") {
      record[key] = `${record[key]}, ${value}`;
    } else if (typeof record[key] === "string") {
      record[key] = value;
    }
  }
  return record;
}

// True for a Headers object of this realm or another: the WebIDL brand check of the
// intrinsic `has` throws for anything else, a look-alike included.
function isHeaders(v) {
  if (typeof Headers !== "function") return false;
  try {
    Headers.prototype.has.call(v, "a");
    return true;
  } catch {
    return false;
  }
}

function plain(v, depth, path) {
  if (v === null || typeof v !== "object") return v;
  if (depth > MAX_DEPTH) throw new TypeError(`${path} nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(v)) {
    const n = v.length;
    if (n > MAX_ITEMS) throw new TypeError(`${path} has more than ${MAX_ITEMS} items`);
    const a = new Array(n);
    for (let i = 0; i < n; i++) a[i] = plain(v[i], depth + 1, path);
    return a;
  }
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v;
  if (v instanceof Map) {
    const m = new Map();
    for (const [k, x] of v) m.set(k, plain(x, depth + 1, path));
    return m;
  }
  if (Symbol.iterator in v) return Symbol("an iterable");
  const o = {};
  for (const [k, x] of Object.entries(v)) o[k] = plain(x, depth + 1, path);
  return o;
}
