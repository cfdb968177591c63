// webpack 5 with no rule of its own for the package: `new URL("chunkwise_bg.wasm",
// import.meta.url)` becomes an asset, the top-level await an async module.
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export default {
  mode: "production",
  entry: "./app.js",
  context: here,
  output: { path: path.join(here, "dist"), filename: "main.js", publicPath: "auto", clean: true },
  performance: { hints: false },
};
