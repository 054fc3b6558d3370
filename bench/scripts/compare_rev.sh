#!/usr/bin/env bash
# End to end, one dispatcher against an older one, on one pair of servers with the two sides
# interleaved (docs/benchmarks.md, "What changed the end-to-end rate").
#   bench/scripts/compare_rev.sh [--new REV] [--rows N] OLD_REV OLD_INDEXES [REPS] [CONFIG] [NEW_CONFIGS]
# OLD_INDEXES: the bookkeeping indexes OLD_REV's tables need (the driver's --indexes):
# "token" before 35a2ebd, "token,lease" from 35a2ebd to b2cebae, "lease" since. REPS defaults
# to 3, CONFIG (worker processes x threads[x batch][@claim], see the driver's --e2e-configs)
# to 4x8; a config without @claim leaves the queue's claim: key out, so each side runs its
# own default. NEW_CONFIGS: what the new side runs, a comma-separated list (default CONFIG),
# e.g. 2x4x16,2x4x16@redis; its first one is compared with CONFIG.
# The new side: the working tree's dispatcher in build-bench/ (scripts/bench.sh builds it),
# or with --new REV that revision, built like OLD_REV. Revisions are exported with `git
# archive` into run/compare-<time>/<side>-src and built (Release) in its build-bench/, the
# layout of the working tree's, so that ccache finds what build-bench compiled; the results
# stay in run/compare-<time>/. --rows: rows per run (default the driver's, 1,000,000).
# Prints, per side and config, tasks/s, MariaDB CPU seconds per million tasks, row updates and
# statements per task (MariaDB's Handler_update and Com_* counters), each run in order, then
# the ratios new / old of the medians: end to end and MariaDB CPU per task.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

usage="usage: $0 [--new REV] [--rows N] OLD_REV OLD_INDEXES [REPS] [CONFIG] [NEW_CONFIGS]"
new_rev="" rows=()
while (($#)); do
    case $1 in
        --new) new_rev=$2; shift 2 ;;
        --rows) rows=(--e2e-rows "$2"); shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) break ;;
    esac
done
(($# >= 2)) || die "$usage"
old_rev=$1 old_indexes=$2 reps=${3:-3} config=${4:-4x8} new_configs=${5:-${4:-4x8}}
driver=$ROWPUMP_ROOT/build-bench/bench/rowpump_bench
[[ -x $driver ]] || die "no $driver: run scripts/bench.sh (or build target rowpump_bench) first"
bench_run_dir compare

# Builds rowpump at REV in run_dir/SIDE-src/build-bench and prints the executable's path.
build_rev() {
    local rev=$1 side=$2 src=$run_dir/$2-src
    log "building rowpump at $rev ($side side)"
    mkdir -p "$src"
    git -C "$ROWPUMP_ROOT" archive "$rev" | tar -x -C "$src"
    cmake -S "$src" -B "$src/build-bench" -DCMAKE_BUILD_TYPE=Release \
        -DROWPUMP_BUILD_TESTS=OFF -DROWPUMP_BUILD_BENCH=OFF -DROWPUMP_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$src/build-bench" -j"${JOBS:-$(nproc)}" --target rowpump >/dev/null
    say "$src/build-bench/dispatcher/rowpump"
}

old_rowpump=$(build_rev "$old_rev" old)
new_rowpump=$ROWPUMP_ROOT/build-bench/dispatcher/rowpump new_name="working tree"
if [[ -n $new_rev ]]; then
    new_rowpump=$(build_rev "$new_rev" new)
    new_name=$new_rev
else
    new_name="working tree, $(git -C "$ROWPUMP_ROOT" describe --always --dirty)"
fi

start_servers "$run_dir"

for ((rep = 1; rep <= reps; rep++)); do
    log "end to end, repetition $rep of $reps"
    "$driver" --run-dir "$run_dir/new" --phases e2e --reps 1 --e2e-configs "$new_configs" \
        --rowpump "$new_rowpump" "${rows[@]}" >/dev/null
    "$driver" --run-dir "$run_dir/old" --phases e2e --reps 1 --e2e-configs "$config" \
        --rowpump "$old_rowpump" --indexes "$old_indexes" "${rows[@]}" >/dev/null
done

export LC_ALL=C
say "## End to end: new ($new_name) vs old ($old_rev)"
say
say "| side | config | tasks/s per run | MariaDB CPU s per million tasks | row updates per task | statements per 1,000 tasks: SELECT / UPDATE / UPDATE with a join / COMMIT |"
say "|---|---|---|---|---|---|"
for side in new old; do
    awk -F'\t' -v side="$side" '
        { delete v; for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          c = $2; if (!(c in rate)) order[++n] = c
          rate[c] = rate[c] sep[c] sprintf("%.0f", v["tasks_per_s"])
          cpu[c] = cpu[c] sep[c] sprintf("%.1f", v["mysql_cpu_s"] * 1e6 / v["completed"])
          upd[c] = upd[c] sep[c] sprintf("%.2f", v["row_updates_per_task"])
          st[c] = st[c] sep[c] sprintf("%.1f / %.1f / %.1f / %.1f", 1000 * v["com_select_per_task"],
                                       1000 * v["com_update_per_task"],
                                       1000 * v["com_update_multi_per_task"],
                                       1000 * v["com_commit_per_task"])
          sep[c] = " ; " }
        END { for (i = 1; i <= n; i++) { c = order[i]
                printf "| %s | %s | %s | %s | %s | %s |\n", side, c, rate[c], cpu[c], upd[c], st[c] } }' \
        "$run_dir/$side/results.tsv"
done

# The ratios of the medians, the new side's first config against the old side's CONFIG.
say
awk -F'\t' -v first="${new_configs%%,*}" -v config="$config" '
    function median(list,   v, n, i, j, t) {
        n = split(list, v, " ")
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    { delete v; for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    FILENAME ~ /\/new\/results.tsv$/ && $2 == first {
        rate_new = rate_new " " v["tasks_per_s"]; cpu_new = cpu_new " " v["mysql_cpu_s"] / v["completed"] }
    FILENAME ~ /\/old\/results.tsv$/ && $2 == config {
        rate_old = rate_old " " v["tasks_per_s"]; cpu_old = cpu_old " " v["mysql_cpu_s"] / v["completed"] }
    END {
        if (rate_new == "" || rate_old == "") { print "no runs to compare"; exit }
        printf "end to end, new %s / old %s: %.2fx (medians %.0f / %.0f tasks/s)\n", first, config,
            median(rate_new) / median(rate_old), median(rate_new), median(rate_old)
        printf "MariaDB CPU per task, new %s / old %s: %.0f%% (medians %.1f / %.1f CPU s per million tasks)\n",
            first, config, 100 * median(cpu_new) / median(cpu_old), median(cpu_new) * 1e6,
            median(cpu_old) * 1e6
    }' "$run_dir/new/results.tsv" "$run_dir/old/results.tsv"
