#!/usr/bin/env bash
# Configures and builds rowpump.
#   scripts/build.sh [--sanitize] [TARGET...]
# Default build: build/ (RelWithDebInfo). --sanitize: build-asan/ with AddressSanitizer and
# UBSan (-DROWPUMP_SANITIZE=ON). TARGETs limit the build to those targets.
# CMAKE_BUILD_TYPE and JOBS in the environment override the defaults.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_dir=$ROWPUMP_ROOT/build
sanitize=OFF
targets=()
for arg in "$@"; do
    case $arg in
        --sanitize) build_dir=$ROWPUMP_ROOT/build-asan; sanitize=ON ;;
        -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
        -*) die "unknown option: $arg" ;;
        *) targets+=(--target "$arg") ;;
    esac
done

# Configure output is noise unless it fails.
mkdir -p "$build_dir"
configure_log=$build_dir/configure.log
cmake -S "$ROWPUMP_ROOT" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
    -DROWPUMP_SANITIZE="$sanitize" >"$configure_log" 2>&1 ||
    { cat "$configure_log" >&2; die "cmake configure failed"; }
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}" "${targets[@]}"
