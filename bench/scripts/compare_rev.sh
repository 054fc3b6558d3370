#!/usr/bin/env bash
# End to end, the current dispatcher against an older one, on one pair of servers with the two
# sides interleaved (docs/benchmarks.md, "What changed the end-to-end rate").
#   bench/scripts/compare_rev.sh OLD_REV OLD_INDEXES [REPS] [CONFIG] [CURRENT_CONFIGS]
# OLD_INDEXES: the bookkeeping indexes OLD_REV's tables need (the driver's --indexes):
# "token" before 35a2ebd, "token,lease" from 35a2ebd to b2cebae, "lease" since. REPS defaults
# to 3, CONFIG (worker processes x threads[x batch], see the driver's --e2e-configs) to 4x8.
# CURRENT_CONFIGS: what the current side runs, a comma-separated list (default CONFIG), e.g.
# 2x4x16,2x4x16@redis to add claim: redis. The current side uses build-bench/ (scripts/bench.sh
# builds it) and the tables `rowpump migrate` makes today. OLD_REV is exported with `git
# archive` and built in run/compare-<time>/old-build; the results stay in run/compare-<time>/.
# Prints, per side and config, tasks/s, MariaDB CPU seconds per million tasks and row updates
# per task (MariaDB's Handler_update), each run in order.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# >= 2)) || die "usage: $0 OLD_REV OLD_INDEXES [REPS] [CONFIG]"
old_rev=$1 old_indexes=$2 reps=${3:-3} config=${4:-4x8} current_configs=${5:-${4:-4x8}}
driver=$ROWPUMP_ROOT/build-bench/bench/rowpump_bench
[[ -x $driver ]] || die "no $driver: run scripts/bench.sh (or build target rowpump_bench) first"
run_dir=$ROWPUMP_ROOT/run/compare-$(date +%Y%m%d-%H%M%S)
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
on_exit cleanup
start_servers "$run_dir"

for ((rep = 1; rep <= reps; rep++)); do
    log "end to end, repetition $rep of $reps"
    "$driver" --run-dir "$run_dir/current" --phases e2e --reps 1 --e2e-configs "$current_configs" \
        >/dev/null
    "$driver" --run-dir "$run_dir/old" --phases e2e --reps 1 --e2e-configs "$config" \
        --rowpump "$old_rowpump" --indexes "$old_indexes" >/dev/null
done

say "## End to end: current ($(git -C "$ROWPUMP_ROOT" describe --always --dirty)) vs $old_rev"
say
say "| side | config | tasks/s per run | MariaDB CPU s per million tasks | row updates per task |"
say "|---|---|---|---|---|"
for side in current old; do
    awk -F'\t' -v side="$side" '
        { delete v; for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          c = $2; if (!(c in rate)) order[++n] = c
          rate[c] = rate[c] sep[c] sprintf("%.0f", v["tasks_per_s"])
          cpu[c] = cpu[c] sep[c] sprintf("%.1f", v["mysql_cpu_s"] * 1e6 / v["completed"])
          upd[c] = upd[c] sep[c] sprintf("%.2f", v["row_updates_per_task"]); sep[c] = " / " }
        END { for (i = 1; i <= n; i++) { c = order[i]
                printf "| %s | %s | %s | %s | %s |\n", side, c, rate[c], cpu[c], upd[c] } }' \
        "$run_dir/$side/results.tsv"
done
