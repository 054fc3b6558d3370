#!/usr/bin/env bash
# npm ci in the Node.js worker SDK, unless node_modules already holds exactly what
# package-lock.json pins (node_modules/.installed-lock.json is the lock it was installed from).
#   tests/node/npm_ci.sh <worker-sdk/node>
set -euo pipefail
sdk=$1
if cmp -s "$sdk/package-lock.json" "$sdk/node_modules/.installed-lock.json" 2>/dev/null; then
    echo "node_modules matches package-lock.json"
    exit 0
fi
cd "$sdk"
npm ci --no-audit --no-fund --loglevel=error
cp package-lock.json node_modules/.installed-lock.json
