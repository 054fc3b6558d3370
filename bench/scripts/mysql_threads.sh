#!/usr/bin/env bash
# Where MariaDB's CPU goes during one end-to-end run: CPU seconds per server thread, with
# each connection's thread named by the statements performance_schema saw it run (docs/benchmarks.md,
# "One MySQL write per task"). Starts its own servers, with the performance schema on.
#   bench/scripts/mysql_threads.sh CONFIG [ROWPUMP] [ROWS]
# CONFIG: one of the driver's --e2e-configs (e.g. 2x4x16@redis); ROWPUMP: the rowpump
# executable (default: the driver's, build-bench/dispatcher/rowpump; "" for it); ROWS: the
# table's rows (default: the driver's, 1,000,000). Results stay in
# run/threads-<time>/. Also prints the dispatcher's prepared statements (performance_schema.
# prepared_statements_instances, as last seen before the dispatcher stopped): executions and
# server time per task, rows examined and changed per execution.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# >= 1)) || die "usage: $0 CONFIG [ROWPUMP] [ROWS]"
config=$1 rowpump=${2:-} rows=${3:-}
bench_run_dir threads
# Statement figures (prepared_statements_instances) need the statement consumers too.
ROWPUMP_MYSQLD_ARGS="--performance-schema=ON --performance-schema-instrument=statement/%=ON
    --performance-schema-consumer-events-statements-current=ON
    --performance-schema-consumer-statements-digest=ON" start_servers "$run_dir"
mysql_root() { mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" -N -B -e "$1"; }
threads_cpu() {
    local task
    for task in "/proc/$ROWPUMP_MYSQL_PID/task/"*; do
        awk -v t="${task##*/}" '{ sub(/.*\) /, ""); split($0, f, " "); print t, f[12] + f[13] }' \
            "$task/stat"
    done
}

start_e2e_run "$config" "$rowpump" "$rows"
threads_cpu >"$run_dir/cpu.start"
: >"$run_dir/seen"
: >"$run_dir/statements"
while e2e_running; do
    threads_cpu >"$run_dir/cpu.end"
    mysql_root "SELECT THREAD_OS_ID, NAME, LEFT(REPLACE(IFNULL(PROCESSLIST_INFO, ''), '\n', ' '), 40)
                FROM performance_schema.threads WHERE THREAD_OS_ID IS NOT NULL" \
        >>"$run_dir/seen" || true
    # A statement's figures go when its connection closes: keep the last look.
    mysql_root "SELECT OBJECT_INSTANCE_BEGIN, COUNT_EXECUTE, SUM_TIMER_EXECUTE,
                       SUM_ROWS_EXAMINED, SUM_ROWS_AFFECTED,
                       LEFT(REPLACE(SQL_TEXT, '\n', ' '), 90)
                FROM performance_schema.prepared_statements_instances" \
        >"$run_dir/statements.tmp" 2>/dev/null && [[ -s $run_dir/statements.tmp ]] &&
        awk -F'\t' -v OFS='\t' 'FILENAME ~ /tmp$/ { seen[$1] = $0; next }
            !($1 in seen) { print } END { for (k in seen) print seen[k] }' \
            "$run_dir/statements.tmp" "$run_dir/statements" >"$run_dir/statements.new" 2>/dev/null &&
        mv "$run_dir/statements.new" "$run_dir/statements"
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

completed=$(tr '\t' '\n' <"$run_dir/driver/results.tsv" | sed -n 's/^completed=//p' | head -n 1)
say
say "## The dispatcher's prepared statements: $config, $completed tasks"
say
say "| statement (start) | executions per 1,000 tasks | server ms per 1,000 tasks | rows examined per execution | rows changed per execution |"
say "|---|---:|---:|---:|---:|"
awk -F'\t' -v tasks="$completed" '
    { key = $6; gsub(/`/, "", key); n[key] += $2; t[key] += $3; ex[key] += $4; ch[key] += $5 }
    END { for (k in n) if (n[k] > 0)
            printf "%.3f\t| `%s` | %.2f | %.1f | %.1f | %.1f |\n", t[k], k, n[k] * 1000 / tasks,
                t[k] / 1e9 * 1000 / tasks, ex[k] / n[k], ch[k] / n[k] }' "$run_dir/statements" |
    sort -t$'\t' -k1,1 -rn | cut -f2- | head -15
