// The attribute panel: a node's attributes (RemoteArray.attrs, or `attrs` of a store node) and
// dimension names as text. Typed arrays (numeric attribute arrays) are shown elided: the first
// and last few values, their count, shape and element type.

const TYPED = {
  Int8Array: "int8", Uint8Array: "uint8", Int16Array: "int16", Uint16Array: "uint16",
  Int32Array: "int32", Uint32Array: "uint32", BigInt64Array: "int64", BigUint64Array: "uint64",
  Float32Array: "float32", Float64Array: "float64", Float16Array: "float16",
};

/**
 * A float as text: JS's shortest round-trip form, in exponent notation from 1e16 up (JS waits
 * until 1e21, so netCDF's fill value 1e20 would print as 21 digits; numpy prints 1e+20).
 */
export function floatText(v) {
  return Number.isFinite(v) && Math.abs(v) >= 1e16 ? v.toExponential() : String(v);
}

/** Shortest decimal text that reads back as the same float32. */
export function f32Text(v) {
  if (!Number.isFinite(v)) return String(v);
  for (let p = 1; p < 10; p++) {
    const t = Number(v.toPrecision(p));
    if (Math.fround(t) === v) return floatText(t);
  }
  return floatText(v);
}

/** Values shown of a long array: the first `HEAD` and the last `TAIL`. */
export const HEAD = 6;
export const TAIL = 2;

function elided(items, text) {
  if (items.length <= HEAD + TAIL + 1) return items.map(text).join(", ");
  return [...items.slice(0, HEAD).map(text), "…", ...items.slice(-TAIL).map(text)].join(", ");
}

/** Significant digits of the elements of a float typed array shown (`full`: all). */
export const ARRAY_DIGITS = 6;

/**
 * One attribute value as text: strings as they are, numbers and BigInts in JS notation, a
 * typed array as `[v0, v1, …, vn] (n × float32)` (with its shape, `2 × 3`, when it has more
 * than one dimension; float elements to ARRAY_DIGITS significant digits unless `full`, then
 * all values and every digit), a list as `[…]`, an object as `{k: v, …}`, an omitted value
 * as `(omitted: reason)`.
 */
export function attrText(v, depth = 0, { full = false } = {}) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return depth ? JSON.stringify(v) : v;
  if (typeof v === "number") return floatText(v);
  if (typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (ArrayBuffer.isView(v)) {
    const type = TYPED[v.constructor.name] || v.constructor.name;
    const float = type.startsWith("float");
    const text = full ? (type === "float32" ? f32Text : float ? floatText : String)
      : float ? (x) => floatText(Number((type === "float32" ? Number(f32Text(x)) : x).toPrecision(ARRAY_DIGITS))) : String;
    if (full) return `[${Array.from(v, text).join(", ")}] (${Array.isArray(v.shape) && v.shape.length > 1 ? v.shape.join(" × ") : v.length} × ${type})`;
    const dims = Array.isArray(v.shape) && v.shape.length > 1 ? v.shape.join(" × ") : String(v.length);
    return `[${elided(Array.from(v), text)}] (${dims} × ${type})`;
  }
  if (Array.isArray(v)) return `[${elided(v, (x) => attrText(x, depth + 1))}]`;
  if (typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "omitted" && typeof v.omitted === "string") return `(omitted: ${v.omitted})`;
    return `{${elided(keys, (k) => `${k}: ${attrText(v[k], depth + 1)}`)}}`;
  }
  return String(v);
}

/**
 * Fills the list `dl` with one row per attribute (`dd[data-name]`) and, when the node has
 * dimension names, a row `dims` (`dd[data-dims]`, unnamed dimensions as "–").
 */
export function renderAttrs(dl, attrs, dims) {
  dl.replaceChildren();
  const row = (name, text, key, title = text) => {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.textContent = text;
    dd.title = title.length > 4000 ? `${title.slice(0, 4000)}…` : title;
    if (key === "dims") dd.dataset.dims = "";
    else dd.dataset.name = name;
    dl.append(dt, dd);
  };
  if (Array.isArray(dims) && dims.length) row("dims", `(${dims.map((d) => d ?? "–").join(", ")})`, "dims");
  const names = attrs && typeof attrs === "object" ? Object.keys(attrs) : [];
  for (const name of names) {
    const v = attrs[name];
    row(name, attrText(v), "attr", ArrayBuffer.isView(v) && v.length <= 10000 ? attrText(v, 0, { full: true }) : attrText(v));
  }
  if (!names.length && !(Array.isArray(dims) && dims.length)) {
    const p = document.createElement("dd");
    p.className = "none";
    p.textContent = "no attributes";
    dl.append(p);
  }
}
