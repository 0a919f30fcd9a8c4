#!/usr/bin/env bash
# The browser suite's npm tools (Lighthouse, axe-core), pinned in
# tests/e2e/tools/package-lock.json and installed with `npm ci` into
# tests/e2e/tools/node_modules/ (ignored by git). `make test` runs this; a no-op when
# the installed tree already matches the lock file. Needs node and npm
# (scripts/system-programs.txt; `scripts/ensure-programs.sh test` installs them).
set -euo pipefail
tools="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/tools"
stamp="$tools/node_modules/.installed-lock"
if [ -f "$stamp" ] && cmp -s "$stamp" "$tools/package-lock.json"; then
    exit 0
fi
npm ci --prefix "$tools" --no-audit --no-fund --loglevel=error
cp "$tools/package-lock.json" "$stamp"
echo "ensure-node-tools: installed $(cd "$tools" && node -e 'const p=require("./package.json");console.log(Object.entries(p.dependencies).map(([k,v])=>k+"@"+v).join(" "))')"
