// The viewer's pure logic in Node (no browser): selections against numpy's slice rules, the
// preview's step bound, colour tables against their published values, percentiles and ticks.
// Expected values: Python's slice(...).indices(n) and matplotlib 3.10.9's `_viridis_data` and
// `_RdBu_data` (ColorBrewer), written here as numbers.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  boundSteps, defaultItems, formatSelection, parseSelection, sliceLength,
} from "../../www/selection.js";
import { COLORMAPS, lutIndex } from "../../www/colormaps.js";
import { niceTicks, normaliser, percentiles } from "../../www/plot.js";
import { attrText, f32Text } from "../../www/attrs-view.js";

describe("viewer logic", () => {
  test("selections follow numpy's slice rules (slice.indices) and print back the same", () => {
    // [n, text, start, stop, step, length] from Python's slice(...).indices(n)
    for (const [n, text, start, stop, step, len] of [
      [10, "2:8:3", 2, 8, 3, 2], [10, "-3:", 7, 10, 1, 3], [10, "5:2", 5, 5, 1, 0],
      [7, "::2", 0, 7, 2, 4], [7, "1:100:4", 1, 7, 4, 2],
    ]) {
      const [it] = parseSelection(text, [n]);
      assert.deepEqual({ start: it.start, stop: it.stop, step: it.step }, { start, stop, step }, text);
      assert.equal(sliceLength(it), len, text);
    }
    const shape = [12, 24, 36];
    for (const t of ["5, :, :", "-1, 3:20:2, ::3", "0, 0, 0", ":, 4, 1:"]) {
      const items = parseSelection(t, shape);
      assert.deepEqual(parseSelection(formatSelection(items, shape), shape), items, t);
    }
    assert.equal(formatSelection(parseSelection("-1", shape), shape), "11, :, :");   // trailing axes whole
    assert.equal(formatSelection(defaultItems(shape), shape), "0, :, :");
    for (const bad of ["...", "0, 0, 0, 0", "12", "::-1", "x"]) {
      assert.throws(() => parseSelection(bad, shape), (e) => e.code === "INVALID_SELECTION", bad);
    }
  });

  test("the preview's step bound keeps every displayed axis at most maxSide long", () => {
    const shape = [5000, 3, 2049];
    const { items, stepped } = boundSteps(parseSelection(":, 1, :", shape), 1024);
    assert.deepEqual(stepped, [{ axis: 0, factor: 5 }, { axis: 2, factor: 3 }]);
    assert.equal(formatSelection(items, shape), "::5, 1, ::3");
    assert.ok(sliceLength(items[0]) <= 1024 && sliceLength(items[2]) <= 1024);
    // a user step is multiplied, not replaced
    const b = boundSteps(parseSelection("::2", [5000]), 1024);
    assert.equal(formatSelection(b.items, [5000]), "::6");
  });

  test("colour tables: matplotlib's viridis entries, gray, ColorBrewer's RdBu ends and middle", () => {
    const at = (lut, i) => Array.from(lut.slice(3 * i, 3 * i + 3));
    // round(255 * _viridis_data[i]) for i = 0, 64, 128, 192, 255
    assert.deepEqual([0, 64, 128, 192, 255].map((i) => at(COLORMAPS.viridis, i)),
      [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]]);
    assert.deepEqual([0, 100, 255].map((i) => at(COLORMAPS.gray, i)), [[0, 0, 0], [100, 100, 100], [255, 255, 255]]);
    assert.deepEqual(at(COLORMAPS.RdBu, 0), [103, 0, 31]);     // #67001f
    assert.deepEqual(at(COLORMAPS.RdBu, 255), [5, 48, 97]);    // #053061
    // control point 5 (#f7f7f7) sits at 0.5, between entries 127 and 128
    for (const c of [...at(COLORMAPS.RdBu, 127), ...at(COLORMAPS.RdBu, 128)]) assert.ok(Math.abs(c - 247) <= 1, String(c));
    // matplotlib's rule: floor(t * 256), clamped
    assert.deepEqual([-1, 0, 0.5, 255.5 / 256, 1, 2, NaN].map(lutIndex), [0, 0, 128, 255, 255, 255, 0]);
  });

  test("percentiles are numpy's linear ones, NaN ignored; ticks are round", () => {
    // numpy.percentile([0..100 with NaN], [2, 98]) = [2, 98]; of [1, 2, 3, 4] at 50 = 2.5
    const v = Float64Array.from({ length: 101 }, (_, i) => i);
    v[50] = NaN;
    const [p2, p98] = percentiles(v, [2, 98]);
    // 100 values 0..100 without 50: rank 0.02 * 99 = 1.98 -> 1.98; 0.98 * 99 = 97.02 -> 98.02
    assert.ok(Math.abs(p2 - 1.98) < 1e-12 && Math.abs(p98 - 98.02) < 1e-12, `${p2} ${p98}`);
    assert.deepEqual(percentiles([1, 2, 3, 4], [50]), [2.5]);
    assert.deepEqual(percentiles([-1, 0, 5], [0], { positive: true }), [5]);
    assert.deepEqual(niceTicks(0, 511, 6, { integer: true }), [0, 100, 200, 300, 400, 500]);
    assert.deepEqual(niceTicks(-0.3, 0.3, 6), [-0.3, -0.2, -0.1, 0, 0.1, 0.2, 0.3]);
  });

  test("the linear scale keeps values in place over a range wider than a double", () => {
    // vmax - vmin overflows: every t was 0 (a finite difference over Infinity). By hand: -1..2
    // between -1.7e308 and 1.7e308 sit at t 0.5; -MAX, 0, MAX between -MAX and MAX at 0, 0.5, 1.
    const wide = normaliser("linear", -1.7e308, 1.7e308);
    for (const v of [-1, 0, 1, 2]) assert.equal(wide(v), 0.5);
    const own = normaliser("linear", -Number.MAX_VALUE, Number.MAX_VALUE);
    assert.deepEqual([-Number.MAX_VALUE, 0, Number.MAX_VALUE].map(own), [0, 0.5, 1]);
    // A range that does not overflow: as before; constant data takes the middle.
    assert.equal(normaliser("linear", 0, 100)(7), 0.07);
    assert.equal(normaliser("linear", 3, 3)(3), 0.5);
  });

  test("attribute values as text: typed arrays elided with count and type", () => {
    assert.equal(attrText(new Float32Array([200, 330])), "[200, 330] (2 × float32)");
    assert.equal(attrText(Int16Array.from({ length: 20 }, (_, i) => i)), "[0, 1, 2, 3, 4, 5, …, 18, 19] (20 × int16)");
    const m = new Float64Array([1, 2, 3, 4, 5, 6]);
    m.shape = [2, 3];
    assert.equal(attrText(m), "[1, 2, 3, 4, 5, 6] (2 × 3 × float64)");
    assert.equal(attrText(["a", "b"]), '["a", "b"]');
    assert.equal(attrText({ omitted: "reference (not shown)" }), "(omitted: reference (not shown))");
    assert.equal(attrText(2n ** 60n), "1152921504606846976");
    // netCDF's fill values: large floats in exponent notation, as numpy prints them, not 21 digits
    assert.equal(attrText(new Float32Array([1e20])), "[1e+20] (1 × float32)");
    assert.equal(attrText(new Float32Array([1e20]), 0, { full: true }), "[1e+20] (1 × float32)");
    assert.equal(attrText(new Float64Array([1.5e17, -2e16, 9.969209968386869e36])), "[1.5e+17, -2e+16, 9.96921e+36] (3 × float64)");
    assert.equal(f32Text(Math.fround(1e20)), "1e+20");
    assert.equal(attrText(1e20), "1e+20");
    assert.equal(attrText({ missing_value: 1e20 }), "{missing_value: 1e+20}");
    assert.equal(f32Text(Math.fround(123456.7)), "123456.7");
  });
});
