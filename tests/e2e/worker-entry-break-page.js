// window.both for worker-entry-break.test.mjs: one operation run through the main entry
// (pkg/web) and through `chunkwise/worker` (pkg/worker), each outcome described as plain data
// (values, classes, error name/code/field/message) for the test to compare.
// The page's Worker is wrapped first, so that the test can see what the worker reports with
// each answer (the live handles it holds: an answer's `handles`).
const RealWorker = globalThis.Worker;
/** Live array/store handles the worker reported with its latest answer. */
window.workerHandles = () => lastHandles;
let lastHandles = 0;
globalThis.Worker = class extends RealWorker {
  constructor(...a) {
    super(...a);
    this.addEventListener("message", (ev) => {
      if (ev.data && typeof ev.data.handles === "number") lastHandles = ev.data.handles;
    });
  }
};

const main = await import("/pkg/web/chunkwise.js");
const wk = await import("/pkg/worker/index.js");
const query = new URLSearchParams(location.search);
await main.default();
window.main = main;
window.wk = wk;

/** A value as plain data: typed arrays by class and values (BigInt as strings). */
function plain(v, depth = 0) {
  if (depth > 8) return "<deep>";
  if (ArrayBuffer.isView(v)) {
    return { ctor: v.constructor.name, values: Array.from(v instanceof DataView ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v, (x) => typeof x === "bigint" ? `${x}n` : Number.isNaN(x) ? "NaN" : x) };
  }
  if (typeof v === "bigint") return `${v}n`;
  if (typeof v === "number" && Number.isNaN(v)) return "NaN";
  if (Array.isArray(v)) return v.map((x) => plain(x, depth + 1));
  if (v && typeof v === "object") {
    const o = { __proto: Object.getPrototypeOf(v)?.constructor?.name };
    for (const k of Object.keys(v)) o[k] = plain(v[k], depth + 1);
    return o;
  }
  if (typeof v === "function") return "<function>";
  return v;
}

function describeError(e) {
  const own = {};
  if (e && typeof e === "object") for (const k of Object.keys(e)) own[k] = plain(e[k]);
  return {
    threw: true, message: String(e?.message ?? e), name: e?.name, code: e?.code, field: e?.field,
    ctor: e?.constructor?.name, chunkwiseError: e instanceof main.ChunkwiseError,
    domException: e instanceof DOMException, typeError: e instanceof TypeError, own,
  };
}

/** Runs `script` (the body of an async function of (api, url)) with one entry. */
async function runWith(api, script, url) {
  try {
    const f = new Function("api", "url", `return (async () => { ${script} })();`);
    return { value: plain(await f(api, url)) };
  } catch (e) {
    return describeError(e);
  }
}

/** The outcome of `script` with the main entry, then with the worker entry. */
window.both = async (script, url) => ({
  main: await runWith(main, script, url),
  worker: await runWith(wk, script, url),
});
window.one = (which, script, url) => runWith(which === "main" ? main : wk, script, url);
window.ready = true;
