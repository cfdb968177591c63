// renderPng (the wasm module in Node, pkg/node) on float32 images of growing size, smooth and
// noisy: median milliseconds of 5 runs, megapixels per second, PNG bytes and their ratio to the
// raw RGBA. Run after scripts/build-pkg.sh: node scripts/bench-render.mjs [--runs N]
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const { renderPng } = createRequire(import.meta.url)(path.join(here, "../pkg/node/chunkwise.js"));
const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 5;

function image(n, kind) {
  const a = new Float32Array(n * n);
  let seed = 12345;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      a[i * n + j] = kind === "smooth" ? Math.sin(i / 40) * Math.cos(j / 30) : seed / 2 ** 32;
    }
  }
  return a;
}

const rows = [];
for (const n of [256, 1024, 2048]) {
  for (const kind of ["smooth", "noise"]) {
    const data = image(n, kind);
    const ms = [];
    let png;
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      png = renderPng(data, [n, n], { cmap: "viridis" });
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const med = ms[Math.floor(ms.length / 2)];
    rows.push({ size: `${n}x${n}`, data: kind, ms: med.toFixed(1), mpix_per_s: (n * n / 1e6 / (med / 1e3)).toFixed(1),
      png_bytes: png.length, png_vs_rgba: (png.length / (4 * n * n)).toFixed(3) });
  }
}
console.table(rows);
