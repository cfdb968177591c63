// Requests of one isolate share the wasm core, whose futures run on one executor
// (wasm-bindgen-futures' queue): a fetch the core starts for request B may be issued while
// the promise callbacks of request A run, and workerd then ties that fetch to A's I/O
// context, not B's. Seen in workerd 1.20261117.1: 16 concurrent reads of different chunks of
// one Zarr array in one isolate, 13 answered 500 by workerd ("Promise will never complete"),
// with or without a timer pending in each request and `ctx.waitUntil` keeping every context
// alive. So the core runs one operation at a time per isolate: `coreTurn(work)` waits for the
// turn, runs `work` (an open, a read), and hands the turn on. Requests still overlap their
// own encoding and the answers of the isolate's response cache, which need no core call.

let tail = Promise.resolve();
let waiting = 0;

/** Runs `work()` when no other core operation runs in this isolate. */
export function coreTurn(work) {
  waiting++;
  const run = tail.then(() => {
    waiting--;
    return work();
  });
  tail = run.then(() => {}, () => {});
  return run;
}

/** Core operations queued or running (for /v1/stats). */
export const queued = () => waiting;
