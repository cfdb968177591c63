// window.bench for scripts/bench-main-thread.mjs. While one whole read runs, the main thread is
// watched two ways: a PerformanceObserver of "longtask" entries (tasks over 50 ms, Long Tasks
// API) and a heartbeat, a setTimeout(0) chain whose longest gap between two ticks is the
// longest time a click or a frame would have waited.
import initMain, * as main from "/pkg/web/chunkwise.js";
import initWorker, * as worker from "/pkg/worker/index.js";

const entries = {
  main: { ready: null, init: () => initMain(), mod: main },
  worker: { ready: null, init: () => initWorker(), mod: worker },
};

/** Reads `url` (dataset `path`) whole with `entry` ("main" or "worker"); module start is done
 *  before the clock starts. Returns { ms, longestTaskMs, longTasks, longTaskMs, longestGapMs,
 *  heartbeats, window } with `window` the values [r0:r1, c0:c1] of the result for the check. */
async function run(entry, url, path, win) {
  const e = entries[entry];
  e.ready ??= e.init();
  await e.ready;
  const tasks = [];
  const obs = new PerformanceObserver((list) => { for (const t of list.getEntries()) tasks.push(t.duration); });
  obs.observe({ type: "longtask", buffered: false });
  let last = performance.now();
  let longestGap = 0;
  let beats = 0;
  let going = true;
  const beat = () => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    beats++;
    if (going) setTimeout(beat, 0);
  };
  setTimeout(beat, 0);
  const t0 = performance.now();
  const arr = await e.mod.RemoteArray.open(url, path ? { path } : {});
  const r = await arr.read("...");
  const ms = performance.now() - t0;
  going = false;
  await new Promise((res) => setTimeout(res, 100)); // the observer's last entries
  obs.disconnect();
  arr.close();
  const [r0, r1, c0, c1] = win;
  const cols = r.shape[1];
  const w = [];
  for (let i = r0; i < r1; i++) for (let j = c0; j < c1; j++) w.push(r.data[i * cols + j]);
  return {
    ms, longestTaskMs: Math.max(0, ...tasks), longTasks: tasks.length,
    longTaskMs: tasks.reduce((a, b) => a + b, 0), longestGapMs: longestGap, heartbeats: beats,
    bytes: r.data.byteLength, window: w,
  };
}

window.bench = { run };
document.body.dataset.state = "ready";
