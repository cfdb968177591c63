// Requests of one isolate share the wasm core, whose futures run on one executor
// (wasm-bindgen-futures' queue): a fetch the core starts for request B may be issued while
// the promise callbacks of request A run, and workerd then ties that fetch to A's I/O
// context, not B's. Seen in workerd 1.20261117.1: 16 concurrent reads of different chunks of
// one Zarr array in one isolate, 13 answered 500 by workerd ("Promise will never complete"),
// with or without a timer pending in each request and `ctx.waitUntil` keeping every context
// alive. So the core runs one operation at a time per isolate: `coreTurn(work)` waits for the
// turn, runs `work` (an open, a read), and hands the turn on. Requests still overlap their
// own encoding and the answers of the isolate's response cache, which need no core call.
//
// The core may also write its persistent cache after a read has answered (Cache API puts
// issued from whichever context runs the executor then): `trackStore` counts those
// operations, and each request keeps its context alive (`ctx.waitUntil(quiet())`) until no
// core operation and no store operation is in flight, so such a put is not cancelled with
// the context. A precaution: the tests and the load test gave the same results without it.

let tail = Promise.resolve();
let queued = 0;
let storeOps = 0;
let waiters = [];

function wake() {
  if (queued !== 0 || storeOps !== 0) return;
  const w = waiters;
  waiters = [];
  for (const r of w) r();
}

/** What a request gets when its turn did not come in time (answered 504 TIMEOUT). */
export class TurnTimeout extends Error {
  constructor(ms) {
    super(`waited ${ms} ms for the isolate's reads ahead of this one (2 x UPSTREAM_TIMEOUT_MS)`);
    this.name = "TimeoutError";
  }
}

/**
 * Runs `work()` when no other core operation runs in this isolate. Rejects with TurnTimeout
 * when the turn has not come within `maxWaitMs` (the work is then skipped), so a queue behind
 * slow upstreams cannot hold a request without bound.
 */
export function coreTurn(work, maxWaitMs = Infinity) {
  queued++;
  let late = false;
  let timer;
  const waited = new Promise((_, reject) => {
    if (Number.isFinite(maxWaitMs)) timer = setTimeout(() => { late = true; reject(new TurnTimeout(maxWaitMs)); }, maxWaitMs);
  });
  const run = tail.then(() => {
    clearTimeout(timer);
    return late ? undefined : work();
  });
  tail = run.then(() => {}, () => {}).then(() => {
    queued--;
    wake();
  });
  return Promise.race([run, waited]);
}

/** `store` (a cacheStore) with its operations counted for `quiet()`. */
export function trackStore(store) {
  const wrap = (name) => async (...args) => {
    storeOps++;
    try {
      return await store[name](...args);
    } finally {
      storeOps--;
      wake();
    }
  };
  return { get: wrap("get"), put: wrap("put"), delete: wrap("delete"), keys: wrap("keys") };
}

/** Resolves once no core or store operation is in flight, or after `maxMs`. */
export function quiet(maxMs) {
  if (queued === 0 && storeOps === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, maxMs);
    waiters.push(() => { clearTimeout(t); resolve(); });
  });
}

/** Core operations queued or running, and store operations in flight (for /v1/stats). */
export const busy = () => ({ core: queued, store: storeOps });
