// The app of ../app.js through `chunkwise/worker`: the reader in a dedicated worker, which
// `vite build` must bundle (worker.js with the web build it imports, and the module).
import "./worker-app.js";
