#!/usr/bin/env bash
# The packed npm package installed into fresh Vite, webpack, esbuild and Node projects, built
# and run (tests/toolchains/run.mjs). Needs pkg/ (scripts/build-pkg.sh), the e2e packages
# (tests/e2e: playwright-core) and the `chunkwise` CLI ($CHUNKWISE_BIN, else the release build).
# Usage: scripts/test-toolchains.sh [PKG_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
source "$here/scripts/env.sh"
[ -d "$here/tests/e2e/node_modules/playwright-core" ] ||
  (cd "$here/tests/e2e" && npm ci --cache "$HOME/.cache/chunkwise/npm" --prefer-offline --no-audit --no-fund --loglevel error)
exec node "$here/tests/toolchains/run.mjs" "$@"
