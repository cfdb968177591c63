#!/usr/bin/env node
// Puts the JS snippets a wasm-bindgen `--target web` glue imports (./snippets/<crate>-<hash>/
// src/**/*.js: our `#[wasm_bindgen(module = ...)]` files) into the glue itself, so that the
// entry a page imports is one module with no static import. A browser learns a module's
// imports only once it has fetched and parsed it: with the snippets apart, importing
// `chunkwise` took two waves of requests (chunkwise.js, then its four snippets) before the
// wasm module could even be asked, one more round trip to wherever the package is served
// from. Each snippet becomes a function scope whose exports are returned as an object; the
// glue's `import {a, b as c} from "./snippets/..."`, `import * as x from ...` and
// `export {a} from ...` lines read that object instead. Nothing else changes (the wasm import
// object's keys stay the snippet paths: they are the module's import names, not files).
// The snippets must be plain ES modules without imports of their own, `import.meta` or
// top-level await (ours are); the script refuses one that is not, and any snippet import it
// did not rewrite, rather than write a glue that fails at load.
// Usage: node scripts/wasm-tools/inline-snippets.mjs GLUE.js   (rewritten in place)
// Prints one line: the glue and the snippets inlined.
import fs from "node:fs";
import path from "node:path";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: inline-snippets.mjs GLUE.js");
  process.exit(2);
}
const fail = (msg) => {
  console.error(`inline-snippets: ${file}: ${msg}`);
  process.exit(1);
};
const dir = path.dirname(file);
let glue = fs.readFileSync(file, "utf8");
const from = String.raw`from\s+["'](\./snippets/[^"']+\.js)["'];?[ \t]*$`;
const specs = [...new Set([...glue.matchAll(new RegExp(from, "gm"))].map((m) => m[1]))];
if (specs.length === 0) fail("no snippet import (already inlined, or wasm-bindgen changed?)");

const scopes = new Map();
let prelude = "";
for (const [i, spec] of specs.entries()) {
  const id = `__snippet${i}`;
  scopes.set(spec, id);
  let src = fs.readFileSync(path.join(dir, spec), "utf8");
  if (/^\s*(import\b|export\s+(\*|\{|default\b))/m.test(src) || /\bimport\.meta\b/.test(src)) {
    fail(`${spec} imports, re-exports, has a default export or uses import.meta: not inlined`);
  }
  const names = [...src.matchAll(/^export\s+(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)/gm)]
    .map((m) => m[1]);
  src = src.replace(/^export\s+/gm, "");
  prelude += `// ${spec.replace(/^\.\/snippets\/[^/]+\//, "")}, inlined (scripts/wasm-tools/inline-snippets.mjs).\n` +
    `const ${id} = (() => {\n${src.trimEnd()}\nreturn { ${names.join(", ")} };\n})();\n`;
}
const scope = (spec) => scopes.get(spec);
const renames = (list) => list.replace(/\s+as\s+/g, ": ");
glue = glue
  .replace(new RegExp(String.raw`^import\s+\*\s+as\s+([\w$]+)\s+` + from, "gm"), (_, v, s) => `const ${v} = ${scope(s)};`)
  .replace(new RegExp(String.raw`^import\s+\{([^}]*)\}\s+` + from, "gm"), (_, l, s) => `const {${renames(l)}} = ${scope(s)};`)
  .replace(new RegExp(String.raw`^export\s+\{([^}]*)\}\s+` + from, "gm"), (_, l, s) => {
    // `export {a as b} from` becomes a local binding of b, exported.
    const pairs = l.split(",").map((x) => x.trim()).filter(Boolean).map((x) => x.split(/\s+as\s+/));
    return `const {${pairs.map(([a, b]) => (b ? `${a}: ${b}` : a)).join(", ")}} = ${scope(s)};\n` +
      `export {${pairs.map(([a, b]) => b ?? a).join(", ")}};`;
  });
if (new RegExp(from, "m").test(glue)) fail("a snippet import is left that this script cannot rewrite");
// The prelude goes after the first line when that is the `@ts-self-types` comment.
const nl = glue.indexOf("\n");
const head = glue.startsWith("/* @ts-self-types") ? glue.slice(0, nl + 1) : "";
glue = head + prelude + glue.slice(head.length);
fs.writeFileSync(file, glue);
console.log(`inline-snippets: ${file}: ${specs.length} snippets inlined`);
