#!/usr/bin/env bash
# THE test command: installs what is missing, builds, runs every test.
#   scripts/test.sh [--sanitize] [CTEST_ARG...]
# --sanitize builds and tests build-asan/ (AddressSanitizer + UBSan). Extra arguments go to
# ctest, e.g. `scripts/test.sh -L unit` or `scripts/test.sh -R 'integration: .*lease'`.
# Integration tests start servers of their own on their own ports, so ctest runs two at once.
# Exits with ctest's status; ctest's summary is the last thing printed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_args=()
build_dir=$ROWPUMP_ROOT/build
if [[ ${1:-} == --sanitize ]]; then
    shift
    build_args=(--sanitize)
    build_dir=$ROWPUMP_ROOT/build-asan
    # UBSan reports (fatal: -fno-sanitize-recover) come with a stack, also from child processes.
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fi

"$ROWPUMP_ROOT/scripts/install-deps.sh"
# The browser test's driver, exactly as pinned in package-lock.json (skipped when installed).
browser=$ROWPUMP_ROOT/tests/browser
if ! cmp -s "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json" 2>/dev/null; then
    log "npm ci in tests/browser"
    (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$browser/package-lock.json" "$browser/node_modules/.installed-lock.json"
fi
# The Node.js worker SDK's packages (ioredis, and typescript for its type test), likewise.
"$ROWPUMP_ROOT/tests/node/npm_ci.sh" "$ROWPUMP_ROOT/worker-sdk/node"
"$ROWPUMP_ROOT/scripts/build.sh" "${build_args[@]}"
exec ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
