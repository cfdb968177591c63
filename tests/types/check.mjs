// Type check of the npm package's declarations, as its users meet them: `tsc --strict` over
//   - every ```js block (and <script type="module"> of ```html blocks) of README.md and of
//     the package's README.md, checked as JavaScript (checkJs) the way an editor checks it;
//   - api.ts (every public API), api-web.ts, api-worker.ts (chunkwise/worker) and api-node.{mts,cts},
// against the web build's .d.ts (lib es2020 + dom, no Node types, bundler resolution with the
// "browser" condition) and the Node build's (lib es2020 + @types/node, nodenext resolution),
// and api-node.cts as a CommonJS project with TypeScript's classic `moduleResolution: "node"`
// (node10: no `exports`, the top-level `types` of package.json, which must be the Node
// build's, the declarations of `main`).
// Blocks that use Node (require, node:, process) are checked in the Node project only, the
// others in the web one. lib es2020 on purpose: the declarations must not need newer libs
// (Symbol.dispose). The one free name a snippet may use is `url` (a string).
// Usage: node tests/types/check.mjs [PKG_DIR]   (default: pkg/ of this checkout; needs
// `npm ci` here first: scripts/check-types.sh does both)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const pkg = path.resolve(process.argv[2] ?? path.join(repo, "pkg"));
const tsc = path.join(here, "node_modules/typescript/bin/tsc");
for (const [f, how] of [[tsc, "npm ci in tests/types"], [path.join(pkg, "package.json"), "scripts/build-pkg.sh"],
  [path.join(pkg, "README.md"), "scripts/build-pkg.sh"]]) {
  if (!fs.existsSync(f)) throw new Error(`${f} is missing: run ${how}`);
}

// The package as users install it: node_modules/chunkwise (a link to PKG_DIR).
const link = path.join(here, "node_modules/chunkwise");
fs.rmSync(link, { recursive: true, force: true });
fs.symlinkSync(pkg, link, "dir");

const gen = path.join(here, "gen");
fs.rmSync(gen, { recursive: true, force: true });
fs.mkdirSync(gen);
fs.symlinkSync("../node_modules", path.join(gen, "node_modules"), "dir");
fs.writeFileSync(path.join(gen, "globals.d.ts"), "/** The placeholder URL of the README snippets. */\ndeclare const url: string;\n");

// Each snippet in its own module, padded so that tsc's line numbers are the README's.
const snippets = { web: [], node: [] };
for (const [readme, tag] of [[path.join(repo, "README.md"), "README"], [path.join(pkg, "README.md"), "pkg-README"]]) {
  const lines = fs.readFileSync(readme, "utf8").split("\n");
  let open = null;
  lines.forEach((line, i) => {
    if (open === null) {
      const m = /^```(js|javascript|html)\s*$/.exec(line);
      if (m) open = { lang: m[1], start: i + 1, body: [] };
      return;
    }
    if (line.startsWith("```")) {
      let body = open.body;
      let start = open.start;
      if (open.lang === "html") {
        const s = body.findIndex((l) => /<script type="module">/.test(l));
        const e = body.findIndex((l) => /<\/script>/.test(l));
        if (s < 0 || e < s) { open = null; return; }
        start += s + 1;
        body = body.slice(s + 1, e);
      }
      const text = body.join("\n");
      const kind = /\brequire\(|["']node:|\bprocess\./.test(text) ? "node" : "web";
      const name = `${tag}-${start + 1}.mjs`;
      fs.writeFileSync(path.join(gen, name), "\n".repeat(start) + text + "\nexport {};\n");
      snippets[kind].push(`gen/${name}`);
      open = null;
      return;
    }
    open.body.push(line);
  });
  if (open) throw new Error(`${readme}: a code block from line ${open.start} is not closed`);
}

const common = {
  strict: true,
  noEmit: true,
  target: "es2020",
  allowJs: true,
  checkJs: true,
  skipLibCheck: false,
  forceConsistentCasingInFileNames: true,
};
const projects = {
  web: {
    compilerOptions: { ...common, lib: ["es2020", "dom"], module: "esnext", moduleResolution: "bundler",
      customConditions: ["browser"], types: [] },
    files: ["gen/globals.d.ts", "api.ts", "api-web.ts", "api-worker.ts", ...snippets.web],
  },
  node: {
    compilerOptions: { ...common, lib: ["es2020"], module: "nodenext", moduleResolution: "nodenext", types: ["node"] },
    files: ["gen/globals.d.ts", "api.ts", "api-node.mts", "api-node.cts", ...snippets.node],
  },
  "node-cjs-node10": {
    compilerOptions: { ...common, lib: ["es2020"], module: "commonjs", moduleResolution: "node10", types: ["node"] },
    files: ["gen/globals.d.ts", "api-node.cts"],
  },
};
let failed = false;
for (const [name, config] of Object.entries(projects)) {
  const file = path.join(gen, `tsconfig.${name}.json`);
  config.compilerOptions.rootDir = here;
  config.files = config.files.map((f) => path.join(here, f));
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  try {
    execFileSync(process.execPath, [tsc, "-p", file, "--pretty", "false"], { cwd: here, stdio: "pipe" });
    console.log(`check-types: ${name}: ${config.files.length - 1} files, no error (${pkg})`);
  } catch (e) {
    failed = true;
    console.log(`check-types: ${name}: errors (${pkg})\n${e.stdout}${e.stderr}`);
  }
}
process.exit(failed ? 1 : 0);
