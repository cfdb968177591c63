// Plain `vite build`; base "./" so the build can be served from any directory. The dev
// server would need `optimizeDeps: { exclude: ["chunkwise"] }` (pkg README); build does not.
export default { base: "./", build: { outDir: "dist", emptyOutDir: true } };
