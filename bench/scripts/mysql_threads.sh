#!/usr/bin/env bash
# Where MariaDB's CPU goes during one end-to-end run: CPU seconds per server thread, with
# each connection's thread named by the statements performance_schema saw it run (docs/benchmarks.md,
# "One MySQL write per task"). Starts its own servers, with the performance schema on.
#   bench/scripts/mysql_threads.sh CONFIG [ROWPUMP]
# CONFIG: one of the driver's --e2e-configs (e.g. 2x4x16@redis); ROWPUMP: the rowpump
# executable (default: the driver's, build-bench/dispatcher/rowpump). Results stay in
# run/threads-<time>/.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# >= 1)) || die "usage: $0 CONFIG [ROWPUMP]"
config=$1 rowpump=${2:-}
driver=$ROWPUMP_ROOT/build-bench/bench/rowpump_bench
[[ -x $driver ]] || die "no $driver: run scripts/bench.sh (or build target rowpump_bench) first"
run_dir=$ROWPUMP_ROOT/run/threads-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run_dir"
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    [[ -e $run_dir/env ]] && "$ROWPUMP_ROOT/scripts/servers.sh" stop "$run_dir"
    rm -rf "$run_dir/mysql" "$run_dir/redis"
    exit "$status"
}
on_exit cleanup
ROWPUMP_MYSQLD_ARGS=--performance-schema=ON start_servers "$run_dir"
mysql_root() { mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" -N -B -e "$1"; }
threads_cpu() {
    local task
    for task in "/proc/$ROWPUMP_MYSQL_PID/task/"*; do
        awk -v t="${task##*/}" '{ sub(/.*\) /, ""); split($0, f, " "); print t, f[12] + f[13] }' \
            "$task/stat"
    done
}

"$driver" --run-dir "$run_dir/driver" --phases e2e --reps 1 --e2e-configs "$config" \
    ${rowpump:+--rowpump "$rowpump"} >/dev/null &
driver_pid=$!
# The run starts when the dispatcher does (after the table load); it ends when it stops.
wait_until 300 pgrep -f "$run_dir/driver/e2e.yaml" >/dev/null || die "no dispatcher started"
threads_cpu >"$run_dir/cpu.start"
: >"$run_dir/seen"
while pgrep -f "$run_dir/driver/e2e.yaml" >/dev/null; do
    threads_cpu >"$run_dir/cpu.end"
    mysql_root "SELECT THREAD_OS_ID, NAME, LEFT(REPLACE(IFNULL(PROCESSLIST_INFO, ''), '\n', ' '), 40)
                FROM performance_schema.threads WHERE THREAD_OS_ID IS NOT NULL" \
        >>"$run_dir/seen" || true
    sleep 0.5
done
wait "$driver_pid"

say "## MariaDB CPU per thread: $config"
say
tr '\t' '\n' <"$run_dir/driver/results.tsv" | grep -E '^(tasks_per_s|mysql_cpu_s_per_million)='
say
say "Prepared statements do not show in performance_schema.threads: the connection that shows"
say "START TRANSACTION and COMMIT applies outcomes, the busiest silent one claims."
say
say "| thread | CPU s | kind | statements seen |"
say "|---|---:|---|---|"
awk -F'\t' '
    FILENAME ~ /seen$/ { name[$1] = $2; if ($3 != "" && !(($1, $3) in had)) {
                             had[$1, $3] = 1; text[$1] = text[$1] (text[$1] == "" ? "" : "; ") $3 } next }
    FILENAME ~ /start$/ { split($0, p, " "); start[p[1]] = p[2]; next }
    { split($0, p, " "); d = p[2] - start[p[1]]; if (d > 0) printf "%s\t%.2f\t%s\t%s\n", p[1], d / 100, name[p[1]], text[p[1]] }
' "$run_dir/seen" "$run_dir/cpu.start" "$run_dir/cpu.end" | sort -t$'\t' -k2,2 -rn | head -12 |
    awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }'
