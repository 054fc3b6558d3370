#!/usr/bin/env bash
# The package as users get it, offline (its dependencies from the npm cache, which `npm ci` in
# worker-sdk/node filled, or from the tree):
#   1. `npm pack` of worker-sdk/node holds what it should and nothing else;
#   2. a fresh project that depends on the tarball, its lock pinning the SDK's dependencies as
#      worker-sdk/node/package-lock.json does, installs with `npm ci --offline`; then
#      require('rowpump-worker') works and the installed conformance worker runs;
#   3. `npm install --offline <worker-sdk/node>` into a fresh project (a link to the tree).
# A plain `npm install <tarball>` without a lock would also need the registry's package
# metadata, which `npm ci` does not cache.
#   tests/node/package_install.sh <worker-sdk/node> <scratch dir>
set -euo pipefail
sdk=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work/pack" "$work/app" "$work/linked"
work=$(cd "$work" && pwd)

tarball=$(cd "$sdk" && npm pack --silent --pack-destination "$work/pack")
tar -tzf "$work/pack/$tarball" >"$work/contents.txt"
for file in package/index.js package/index.d.ts package/lua/complete.lua package/lua/take.lua package/lua/beat.lua \
    package/lib/worker.js package/conformance-worker.js package/README.md; do
    grep -qx "$file" "$work/contents.txt" || { echo "the package lacks $file"; cat "$work/contents.txt"; exit 1; }
done
if grep -q -e '^package/node_modules/' -e '^package/test/' "$work/contents.txt"; then
    echo "the package holds files it should not:"; cat "$work/contents.txt"; exit 1
fi

cd "$work/app"
SDK_LOCK=$sdk/package-lock.json DEP="file:../pack/$tarball" node - <<'JS'
const fs = require('node:fs');
const lock = JSON.parse(fs.readFileSync(process.env.SDK_LOCK, 'utf8'));
const sdk = lock.packages[''];
const dep = process.env.DEP;
const app = { name: 'rowpump-package-test', private: true, dependencies: { 'rowpump-worker': dep } };
const packages = { '': app, 'node_modules/rowpump-worker': { version: sdk.version, resolved: dep, dependencies: sdk.dependencies } };
for (const [path, entry] of Object.entries(lock.packages)) if (path !== '' && !entry.dev) packages[path] = entry;
fs.writeFileSync('package.json', JSON.stringify(app, null, 2) + '\n');
fs.writeFileSync('package-lock.json', JSON.stringify({ name: app.name, lockfileVersion: 3, requires: true, packages }, null, 2) + '\n');
JS
npm ci --offline --no-audit --no-fund --loglevel=error
[[ ! -L node_modules/rowpump-worker ]] || { echo "the tarball was linked, not installed"; exit 1; }

check_loads() {
    node -e "
const rowpump = require('rowpump-worker');
const worker = new rowpump.Worker({ queue: 'package-test', workerId: 'package-test' });
const outcome = rowpump.ok({ status: '1' });
if (worker.workerId !== 'package-test' || outcome.verb !== 'ok' || typeof rowpump.nudge !== 'function') process.exit(1);
console.log('rowpump-worker loads (' + require.resolve('rowpump-worker') + ')');
"
}
check_loads
# The installed conformance worker answers a bad flag with exit code 2.
set +e
node node_modules/rowpump-worker/conformance-worker.js --bogus 1 2>/dev/null
code=$?
set -e
[[ $code == 2 ]] || { echo "conformance-worker.js --bogus exited $code, not 2"; exit 1; }

cd "$work/linked"
echo '{"name": "rowpump-linked-test", "private": true}' >package.json
npm install --offline --no-audit --no-fund --loglevel=error "$sdk"
check_loads
echo "package test ok"
