// A worker script for worker-entry.test.mjs (init({ workerUrl })): pkg/worker/worker.js with
// its postMessage watched. After each answer is sent, it reports on a BroadcastChannel whether
// the answer's typed arrays were detached here, which only a transfer does (a copy leaves
// them intact). worker.js is imported statically (evaluated first, so that it listens before
// any message arrives) and looks postMessage up when it answers, finding the wrapper.
import "/pkg/worker/worker.js";

const real = self.postMessage.bind(self);
const probe = new BroadcastChannel("chunkwise-worker-probe");

function views(v, out = []) {
  if (ArrayBuffer.isView(v)) out.push(v);
  else if (v && typeof v === "object" && !Array.isArray(v)) for (const k of Object.keys(v)) if (k !== "attrs") views(v[k], out);
  return out;
}

self.postMessage = (msg, transfer) => {
  const vs = msg && msg.ok ? views(msg.value).map((v) => ({ v, bytes: v.byteLength })) : [];
  real(msg, transfer);
  if (vs.length) {
    probe.postMessage({ id: msg.id, worker: self.name, arrays: vs.map(({ v, bytes }) => ({ bytes, detached: v.buffer.byteLength === 0 })) });
  }
};

