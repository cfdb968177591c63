// Selections of the preview page: the numpy basic-indexing text the library reads
// (`RemoteArray.read("0, :, ::2")`), parsed into one item per axis so the page can say which
// axes it displays, where each displayed element sits in the array, and read big arrays with a
// step. The page's model is a subset of numpy's: per axis an integer index or a slice with a
// positive step; fewer items than axes leave the trailing axes whole (numpy's rule).

/** An error of the page's own checks, with a `code` like the library's errors. */
export class SelectionError extends Error {
  constructor(message) {
    super(message);
    this.name = "ChunkwiseError";
    this.code = "INVALID_SELECTION";
  }
}

/**
 * Parses `text` against `shape`: one item per axis, `{ kind: "index", index }` (normalised,
 * in range) or `{ kind: "slice", start, stop, step }` (numpy's slice.indices for step > 0).
 * Throws SelectionError for text outside the page's model (ellipsis, negative steps, too
 * many items, an index out of range).
 */
export function parseSelection(text, shape) {
  let t = String(text ?? "").trim();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1).trim();
  const parts = t === "" ? [] : t.split(",").map((s) => s.trim());
  if (parts.length && parts.at(-1) === "") parts.pop();   // a trailing comma, as numpy allows
  if (parts.length > shape.length) {
    throw new SelectionError(`${parts.length} items for ${shape.length} axes`);
  }
  const int = (s, what) => {
    if (!/^[+-]?\d+$/.test(s)) throw new SelectionError(`${what} "${s}" is not an integer`);
    return Number(s);
  };
  return shape.map((n, axis) => {
    const p = axis < parts.length ? parts[axis] : ":";
    if (p === "..." || p === "None") throw new SelectionError(`"${p}" is not supported by the viewer`);
    if (!p.includes(":")) {
      let i = int(p, "index");
      if (i < 0) i += n;
      if (i < 0 || i >= n) throw new SelectionError(`index ${p} out of range for axis ${axis} of length ${n}`);
      return { kind: "index", index: i };
    }
    const f = p.split(":");
    if (f.length > 3) throw new SelectionError(`"${p}" is not a slice`);
    const step = f[2] !== undefined && f[2] !== "" ? int(f[2], "step") : 1;
    if (step <= 0) throw new SelectionError(`step ${step} of axis ${axis}: the viewer takes positive steps`);
    const bound = (s, dflt) => {
      if (s === undefined || s === "") return dflt;
      let v = int(s, "bound");
      if (v < 0) v += n;
      return Math.min(n, Math.max(0, v));
    };
    const start = bound(f[0], 0);
    const stop = Math.max(start, bound(f[1], n));
    return { kind: "slice", start, stop, step };
  });
}

/** Elements a slice item selects. */
export const sliceLength = (s) => Math.max(0, Math.ceil((s.stop - s.start) / s.step));

/** The text of items, the shortest numpy spelling of each (":" for a whole axis). */
export function formatSelection(items, shape) {
  return items.map((it, axis) => {
    if (it.kind === "index") return String(it.index);
    const whole = it.start === 0 && it.stop >= shape[axis];
    if (whole) return it.step === 1 ? ":" : `::${it.step}`;
    const range = `${it.start || ""}:${it.stop >= shape[axis] ? "" : it.stop}`;
    return it.step === 1 ? range : `${range}:${it.step}`;
  }).join(", ");
}

/** The displayed axes: the slice items' axes, in array order. */
export const sliceAxes = (items) => items.flatMap((it, a) => (it.kind === "slice" ? [a] : []));

/**
 * Bounds the elements a preview reads: a displayed axis longer than `maxSide` gets its step
 * multiplied so that it shows at most `maxSide` elements. Returns the new items and, per
 * stepped axis, `{ axis, factor }`.
 */
export function boundSteps(items, maxSide) {
  const stepped = [];
  const out = items.map((it, axis) => {
    if (it.kind !== "slice") return it;
    const n = sliceLength(it);
    if (n <= maxSide) return it;
    const factor = Math.ceil(n / maxSide);
    stepped.push({ axis, factor });
    return { ...it, step: it.step * factor };
  });
  return { items: out, stepped };
}

/**
 * The default preview of an array of `shape`: the last two axes whole, leading indices 0 (a
 * 1-D array whole, a scalar as itself).
 */
export function defaultItems(shape) {
  const nd = shape.length;
  return shape.map((n, a) => (a >= nd - 2 ? { kind: "slice", start: 0, stop: n, step: 1 } : { kind: "index", index: 0 }));
}
