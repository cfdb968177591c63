#!/usr/bin/env bash
# tsc --strict over the npm package's declarations (web and Node builds): the README's JS
# snippets and a program using every public API (tests/types/check.mjs says what exactly).
# Installs the pinned TypeScript (tests/types/package-lock.json) through the npm cache under
# ~/.cache/chunkwise/npm when it is missing. Needs pkg/ (scripts/build-pkg.sh).
# Usage: scripts/check-types.sh [PKG_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here/tests/types"
# Installed when a pinned devDependency is missing or of another version.
if ! node -e '
  const d = require("./package.json").devDependencies;
  for (const [n, v] of Object.entries(d)) {
    try { if (require(`./node_modules/${n}/package.json`).version !== v) process.exit(1); }
    catch { process.exit(1); }
  }' 2>/dev/null; then
  npm ci --cache "$HOME/.cache/chunkwise/npm" --prefer-offline --no-audit --no-fund --loglevel error
fi
exec node check.mjs "$@"
