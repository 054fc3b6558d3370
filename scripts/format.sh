#!/usr/bin/env bash
# Applies .clang-format to every C++ file git tracks.
#   scripts/format.sh          rewrites the files in place
#   scripts/format.sh --check  changes nothing; fails, listing each difference, if any file is off
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode=(-i)
case ${1:-} in
    --check) mode=(--dry-run -Werror) ;;
    "") ;;
    *) die "unknown option: $1 (usage: scripts/format.sh [--check])" ;;
esac
command -v clang-format >/dev/null || die "clang-format not found: run scripts/install-deps.sh"

cd "$ROWPUMP_ROOT"
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp')
clang-format "${mode[@]}" "${files[@]}" || die "files differ from .clang-format: run scripts/format.sh"
