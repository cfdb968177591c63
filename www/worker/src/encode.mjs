// Result bodies: raw little-endian bytes, .npy (format 1.0, numpy's NEP 1 header), JSON.

/** Float32 value to IEEE 754 binary16 bits (exact for values that came from binary16). */
function f16bits(v) {
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return h;
}

/**
 * The bytes of a read's `data` (C order, little-endian: what the core gives on every
 * platform wasm runs on), for a numeric or bool dtype. `<f2` read as a Float32Array (a runtime
 * without Float16Array) is converted back to binary16 bits. Returns null for data that has
 * no fixed-size bytes (strings, records: a JS Array).
 */
export function rawBytes(data, dtype) {
  if (!ArrayBuffer.isView(data)) return null;
  if (/f2$/.test(dtype) && data instanceof Float32Array) {
    const out = new Uint16Array(data.length);
    for (let i = 0; i < data.length; i++) out[i] = f16bits(data[i]);
    return new Uint8Array(out.buffer);
  }
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * A .npy file (format version 1.0: magic, version, u16 header length, the header dict padded
 * with spaces and a newline to a multiple of 64 bytes, then the C-order data), as
 * numpy.lib.format.write_array writes it.
 */
export function npy(bytes, shape, dtype) {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
  let header = `{'descr': '${dtype}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + bytes.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  out[8] = header.length & 0xff;
  out[9] = header.length >> 8;
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(bytes, 10 + header.length);
  return out;
}

/** JSON.stringify's replacer: 64-bit integers (BigInt, also as fields of records) as decimal
 *  strings, typed arrays (a record's subarray field) as arrays. */
function plainJson(_key, v) {
  if (typeof v === "bigint") return v.toString();
  if (ArrayBuffer.isView(v)) return Array.from(v, (x) => (typeof x === "bigint" ? x.toString() : x));
  return v;
}

/**
 * JSON of a read: `{ shape, dtype, values }`, values in C order; 64-bit integers as decimal
 * strings (JSON numbers would lose precision), in records too; NaN and infinities as null
 * (JSON has none); complex values interleaved re, im as the core gives them.
 */
export function jsonBody(data, shape, dtype, extra = {}) {
  const values = Array.from(data);
  return JSON.stringify({ shape: Array.from(shape), dtype, ...extra, values }, plainJson);
}

/**
 * The most bytes one element of numpy dtype `dtype` can take in `jsonBody`'s text, its
 * separator included, or null when the dtype's text gives no bound (records, unsized `|S`).
 * Floats (any width, read as JS numbers) print as the shortest round-trip decimal of a
 * double (ECMA-262 Number::toString: at most 24 characters, `-2.2250738585072014e-308`),
 * complex as two of them; 64-bit integers and datetimes as quoted decimal strings (22);
 * bools `false`; strings of n characters (or bytes) each at most 6 bytes (`\u0000`, what
 * JSON.stringify writes for a control character) plus quotes.
 */
export function jsonElementBytes(dtype) {
  const m = /^[<>|=]?([a-zA-Z])(\d+)$/.exec(dtype);
  if (!m) return null;
  const kind = m[1], n = Number(m[2]);
  const ints = { i1: 4, u1: 3, i2: 6, u2: 5, i4: 11, u4: 10, i8: 22, u8: 22 };
  switch (kind) {
    case "b": return 6;
    case "i": case "u": return ints[kind + n] === undefined ? null : ints[kind + n] + 1;
    case "f": return 25;
    case "c": return 50;
    case "M": case "m": return 23;
    case "S": case "U": return 6 * n + 3;
    default: return null;
  }
}

/** Most bytes of `jsonBody`'s text around the values: shape, dtype, missingChunks. */
export function jsonOverheadBytes(shape, dtype) {
  return 96 + 21 * shape.length + 6 * String(dtype).length;
}
