#!/usr/bin/env bash
# The package as users get it: `npm pack` of worker-sdk/node, installed from the tarball
# into a fresh project with --offline (its dependencies from the npm cache, which `npm ci`
# filled), then require('rowpump-worker') and the installed conformance worker run.
#   tests/node/package_install.sh <worker-sdk/node> <scratch dir>
set -euo pipefail
sdk=$1
work=$2
rm -rf "$work"
mkdir -p "$work/pack" "$work/app"
tarball=$(cd "$sdk" && npm pack --silent --pack-destination "$work/pack")
tar -tzf "$work/pack/$tarball" >"$work/contents.txt"
for file in package/index.js package/index.d.ts package/lua/complete.lua package/conformance-worker.js package/README.md; do
    grep -qx "$file" "$work/contents.txt" || { echo "the package lacks $file"; cat "$work/contents.txt"; exit 1; }
done
if grep -q -e '^package/node_modules/' -e '^package/test/' "$work/contents.txt"; then
    echo "the package holds files it should not:"; cat "$work/contents.txt"; exit 1
fi
cd "$work/app"
echo '{"name": "rowpump-package-test", "private": true}' >package.json
npm install --offline --no-audit --no-fund --loglevel=error "$work/pack/$tarball"
node -e "
const rowpump = require('rowpump-worker');
const worker = new rowpump.Worker({ queue: 'package-test', workerId: 'package-test' });
const outcome = rowpump.ok({ status: '1' });
if (worker.workerId !== 'package-test' || outcome.verb !== 'ok' || typeof rowpump.nudge !== 'function') process.exit(1);
console.log('rowpump-worker loads: worker_id=' + worker.workerId);
"
# The installed conformance worker answers a bad flag with exit code 2.
set +e
node node_modules/rowpump-worker/conformance-worker.js --bogus 1 2>/dev/null
code=$?
set -e
[[ $code == 2 ]] || { echo "conformance-worker.js --bogus exited $code, not 2"; exit 1; }
echo "package test ok"
