// The shape of a selection and the chunks it touches, worked out before any read so that the
// worker's limits refuse a request without fetching or allocating for it.
//
// The text is numpy's basic indexing, the text inside `a[...]`, as chunkwise takes it
// (README "Command line": integers, negative ones from the end, `start:stop:step` slices with
// any part left out, one `...`, outer brackets allowed, `()` or `...` for a scalar). Slices
// follow Python's `slice.indices`; an integer drops its dimension. Lists of indices and
// `newaxis` are not taken by chunkwise either: refused here as INVALID_SELECTION.

/** A selection the worker refuses before reading (mapped to 400 INVALID_SELECTION). */
export class SelectionError extends Error {
  constructor(message) {
    super(message);
    this.code = "INVALID_SELECTION";
  }
}

const INT = /^[+-]?\d+$/;

function int(text, what) {
  if (!INT.test(text)) throw new SelectionError(`${what} ${JSON.stringify(text)} is not an integer`);
  return Number(text);
}

/** Python's slice.indices(n) for one parsed slice: { start, step, count }. */
function sliceIndices(start, stop, step, n) {
  if (step === 0) throw new SelectionError("slice step cannot be zero");
  const lower = step < 0 ? -1 : 0;
  const upper = step < 0 ? n - 1 : n;
  const clamp = (v, dflt) => {
    if (v === null) return dflt;
    if (v < 0) return Math.max(v + n, lower);
    return Math.min(v, upper);
  };
  const s = clamp(start, step < 0 ? upper : lower);
  const e = clamp(stop, step < 0 ? lower : upper);
  const count = step > 0 ? (e > s ? Math.ceil((e - s) / step) : 0) : (s > e ? Math.ceil((s - e) / -step) : 0);
  return { start: s, step, count };
}

/**
 * Parses `text` (null or "" for the whole array) against `shape`. Returns one entry per
 * dimension of the array, `{ start, step, count, dropped }` (`dropped` for an integer index),
 * and `shape`, the result's shape. Throws SelectionError.
 *
 * @param {string | null} text
 * @param {number[]} shape
 */
export function parseSelection(text, shape) {
  let t = (text ?? "").trim();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1).trim();
  if (t === "()") t = "...";
  const items = t === "" ? [] : t.split(",").map((s) => s.trim());
  if (items.length > 1 && items[items.length - 1] === "") items.pop(); // "1," as numpy takes it
  const ellipses = items.filter((s) => s === "...").length;
  if (ellipses > 1) throw new SelectionError("a selection takes at most one ellipsis");
  const explicit = items.length - ellipses;
  if (explicit > shape.length) {
    throw new SelectionError(`${explicit} indices for an array of ${shape.length} dimensions`);
  }
  const expanded = [];
  for (const it of items) {
    if (it === "...") for (let k = 0; k < shape.length - explicit; k++) expanded.push(":");
    else expanded.push(it);
  }
  while (expanded.length < shape.length) expanded.push(":");
  const dims = expanded.map((it, d) => {
    const n = shape[d];
    if (it.includes(":")) {
      const parts = it.split(":").map((p) => p.trim());
      if (parts.length > 3) throw new SelectionError(`slice ${JSON.stringify(it)} has too many colons`);
      const [a, b, c] = [parts[0], parts[1], parts[2] ?? ""];
      const step = c === "" ? 1 : int(c, "step");
      return { ...sliceIndices(a === "" ? null : int(a, "start"), b === "" ? null : int(b, "stop"), step, n), dropped: false };
    }
    if (it === "") throw new SelectionError("an empty index");
    let i = int(it, "index");
    if (i < -n || i >= n) throw new SelectionError(`index ${i} is out of bounds for a dimension of ${n}`);
    if (i < 0) i += n;
    return { start: i, step: 1, count: 1, dropped: true };
  });
  return { dims, shape: dims.filter((x) => !x.dropped).map((x) => x.count) };
}

/**
 * Number of chunks (of shape `chunks`) the parsed selection touches: per dimension, every
 * index its own chunk when the step is at least the chunk's extent, else every chunk between
 * the first and last index (a smaller step skips none).
 */
export function chunksTouched(dims, chunks) {
  let total = 1;
  dims.forEach((x, d) => {
    if (x.count === 0) { total = 0; return; }
    const c = Math.max(1, chunks[d]);
    const first = x.start, last = x.start + (x.count - 1) * x.step;
    const lo = Math.min(first, last), hi = Math.max(first, last);
    total *= Math.abs(x.step) >= c ? x.count : Math.floor(hi / c) - Math.floor(lo / c) + 1;
  });
  return total;
}

/**
 * Bytes of one element of numpy dtype `dtype` (`<f4` 4, `|S8` 8, `<U6` 24, `<c16` 16), or
 * null when the text gives none (records, unsized `|S`).
 */
export function itemSize(dtype) {
  const m = /^[<>|=]?([a-zA-Z])(\d+)/.exec(dtype);
  if (!m) return null;
  const n = Number(m[2]);
  return m[1] === "U" ? 4 * n : m[1] === "M" || m[1] === "m" ? 8 : n;
}
