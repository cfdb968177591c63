// Plain `vite build`; base "./" so the build can be served from any directory.
export default { base: "./", build: { outDir: "dist", emptyOutDir: true } };
