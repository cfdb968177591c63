// A dedicated worker of cache-page.js: one open + whole read with the web build, posted back.
import init, { RemoteArray } from "/pkg/web/chunkwise.js";

self.onmessage = async ({ data: { url, opts } }) => {
  try {
    await init();
    const arr = await RemoteArray.open(url, opts);
    const r = await arr.read("...");
    self.postMessage({ data: Array.from(r.data, Number), shape: r.shape, traffic: arr.traffic, cacheStatus: arr.cacheStatus });
    arr.close();
  } catch (e) {
    self.postMessage({ error: `${e.code}: ${e.message}`, code: e.code });
  }
};
