// Requests of one isolate share the wasm core. Its reads join each other inside the core
// (a second read of a chunk or object already in flight awaits the first one's fetch:
// src/formats/zarr/store.rs `InFlight`, and the shared opens): the joiner's answer is then
// settled in the I/O context of the request that issued the fetch, whose promise callbacks
// run the wasm executor (wasm-bindgen-futures' one queue) when the fetch answers. Seen in
// workerd 1.20261117.1 (tests/contexts.test.mjs, TRACE_CONTEXTS=on): 16 concurrent reads of
// one Zarr array, 9 distinct chunks; each fetch was issued under the request that needed the
// chunk, the 7 requests that joined another's read issued none, and exactly those 7 were
// answered 500 by workerd ("Promise will never complete": a promise of one request settled
// from another's context). The compatibility flag handle_cross_request_promise_resolution
// (workerd's default from compatibility date 2024-10-14; config.mjs sets it) makes such a
// promise settle in the request that created it: then all 16 are answered with their values,
// and core operations run concurrently. `coreTurn(work)` runs `work` (an open, a read) at
// once; with CORE_TURNS=on it runs one core operation at a time per isolate instead (for a
// runtime without the flag).
//
// The core may also write its persistent cache after a read has answered (Cache API puts
// issued from whichever context runs the executor then): `trackStore` counts those
// operations, and each request keeps its context alive (`ctx.waitUntil(quiet())`) until no
// core operation and no store operation is in flight, so such a put is not cancelled with
// the context. A precaution: the tests and the load test gave the same results without it.

import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The request whose async context is active (`TRACE_CONTEXTS=on`: each handler runs in
 * `requestScope.run(tag, ...)`; the installed fetch logs the tag active when the core calls it).
 */
export const requestScope = new AsyncLocalStorage();

let tail = Promise.resolve();
/** Whether core operations take turns (the binding CORE_TURNS=on; off by default). */
let turns = false;
/** Sets whether core operations take turns (`CORE_TURNS=on`) or run concurrently. */
export function setTurns(on) { turns = on; }
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
 * Runs `work()` (counted for `quiet()`). With CORE_TURNS=on, only when no other core operation
 * runs in this isolate: it then rejects with TurnTimeout when the turn has not come within
 * `maxWaitMs` (the work is then skipped), so a queue behind slow upstreams cannot hold a
 * request without bound.
 */
export function coreTurn(work, maxWaitMs = Infinity) {
  if (!turns) return counted(work);
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

async function counted(work) {
  queued++;
  try {
    return await work();
  } finally {
    queued--;
    wake();
  }
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
