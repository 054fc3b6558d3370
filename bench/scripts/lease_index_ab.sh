#!/usr/bin/env bash
# Diagnostic (docs/benchmarks.md, "The lease index"): what rp_lease_idx costs, measured on one
# pair of servers with the two sides interleaved.
#   bench/scripts/lease_index_ab.sh [OLD_REV]     (default 6669ec7, the last rev before the index)
# 1. End to end, 4 worker processes x 8 threads, 3 times each: the current dispatcher (table with
#    rp_lease_idx) against the dispatcher of OLD_REV (table without it).
# 2. The bare claim loop at batch 100 and 1000 on tables with and without the index.
# Needs build-bench/ (scripts/bench.sh builds it). OLD_REV is exported with `git archive` and
# built in run/lease-ab-<time>/old-build; the results stay in run/lease-ab-<time>/.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

old_rev=${1:-6669ec7}
driver=$ROWPUMP_ROOT/build-bench/bench/rowpump_bench
[[ -x $driver ]] || die "no $driver: run scripts/bench.sh (or build target rowpump_bench) first"
run_dir=$ROWPUMP_ROOT/run/lease-ab-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run_dir/old-src"

log "building rowpump at $old_rev"
git -C "$ROWPUMP_ROOT" archive "$old_rev" | tar -x -C "$run_dir/old-src"
cmake -S "$run_dir/old-src" -B "$run_dir/old-build" -DCMAKE_BUILD_TYPE=Release \
    -DROWPUMP_BUILD_TESTS=OFF -DROWPUMP_BUILD_BENCH=OFF -DROWPUMP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$run_dir/old-build" -j"${JOBS:-$(nproc)}" --target rowpump >/dev/null
old_rowpump=$run_dir/old-build/dispatcher/rowpump

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    [[ -e $run_dir/env ]] && "$ROWPUMP_ROOT/scripts/servers.sh" stop "$run_dir"
    rm -rf "$run_dir/mysql" "$run_dir/redis" "$run_dir/old-src"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$ROWPUMP_ROOT/scripts/servers.sh" start "$run_dir"
set -a
# shellcheck source=/dev/null
source "$run_dir/env"
set +a

for rep in 1 2 3; do
    log "end to end, repetition $rep"
    "$driver" --run-dir "$run_dir/current" --phases e2e --reps 1 --e2e-configs 4x8 >/dev/null
    "$driver" --run-dir "$run_dir/old" --phases e2e --reps 1 --e2e-configs 4x8 \
        --rowpump "$old_rowpump" --no-lease-index >/dev/null
done
"$driver" --run-dir "$run_dir/bare" --phases lease-index --batches 100,1000 --reps 3 >/dev/null

say "## End to end, 4x8: current (rp_lease_idx) vs $old_rev (no lease index)"
say
say "| | tasks/s per run | MariaDB CPU s per run |"
say "|---|---|---|"
for side in current old; do
    awk -F'\t' -v side="$side" '
        { for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          rate = rate sep sprintf("%.0f", v["tasks_per_s"]); cpu = cpu sep sprintf("%.1f", v["mysql_cpu_s"]); sep = " / " }
        END { printf "| %s | %s | %s |\n", side, rate, cpu }' "$run_dir/$side/results.tsv"
done
say
cat "$run_dir/bare/summary.md"
