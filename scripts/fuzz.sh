#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in build-fuzz/ and runs each
# for a fixed time, starting from its seed corpus in fuzz/corpus/<target>/.
#   scripts/fuzz.sh [--seconds N] [TARGET...]      (default: 10 s each, every target)
# Prints one line per target with its run count. A crash (or a failed property check) stops
# with a non-zero status and leaves the input in build-fuzz/crashes/; replay it with
# `build-fuzz/fuzz/fuzz_<target> FILE`, fix the bug, then add the file to the corpus:
# `cp FILE fuzz/corpus/<target>/crash-<what it was>`.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

seconds=10
targets=()
while (($#)); do
    case $1 in
        --seconds) seconds=${2:?--seconds needs a value}; shift ;;
        -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
        -*) die "unknown option: $1" ;;
        *) targets+=("$1") ;;
    esac
    shift
done
((${#targets[@]})) || targets=(done_message ready_message duration_rate percent_encoding
                               config_loader sql_fragment queue_hashes)

started=$SECONDS
"$ROWPUMP_ROOT/scripts/install-deps.sh"
build_dir=$ROWPUMP_ROOT/build-fuzz
mkdir -p "$build_dir/crashes"
CXX=${FUZZ_CXX:-clang++} cmake -S "$ROWPUMP_ROOT" -B "$build_dir" -DROWPUMP_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; die "cmake configure failed"; }
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}" "${targets[@]/#/--target=fuzz_}" >/dev/null

# Leaks are not what these targets look for, and a report of one would drown a real crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
total=0
for target in "${targets[@]}"; do
    # New inputs go to a scratch corpus (the first directory); the seeds stay as they are.
    work=$build_dir/corpus/$target
    mkdir -p "$work"
    output=$build_dir/$target.log
    if ! "$build_dir/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 -artifact_prefix="$build_dir/crashes/$target-" \
        "$work" "$ROWPUMP_ROOT/fuzz/corpus/$target" >"$output" 2>&1; then
        tail -n 40 "$output" >&2
        crash=$(grep -o "Test unit written to .*" "$output" | tail -n 1 | cut -d' ' -f5-)
        die "fuzz: $target failed; input saved as ${crash:-(none)}; replay it with" \
            "build-fuzz/fuzz/fuzz_$target ${crash:-FILE}, fix it, then add it to" \
            "fuzz/corpus/$target/"
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$output" | tail -n 1)
    say "fuzz: $target: ${runs:-?} runs in $seconds s, no crash"
    total=$((total + ${runs:-0}))
done
say "fuzz: ${#targets[@]} targets, $total runs, $((SECONDS - started)) s with the build"
