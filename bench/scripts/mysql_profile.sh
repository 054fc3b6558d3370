#!/usr/bin/env bash
# Where MariaDB's CPU goes during one end-to-end run, by the server's own functions: `perf
# record` of the MariaDB process while the dispatcher runs, then the share of samples whose
# stack passes through each of a list of functions (docs/benchmarks.md, "The fence as
# numbers"). A sample counts for every listed function on its stack, so the shares overlap.
# Starts its own servers.
#   bench/scripts/mysql_profile.sh CONFIG [ROWPUMP] [ROWS]
# CONFIG: one of the driver's --e2e-configs (e.g. 2x4); ROWPUMP: the rowpump executable
# (default: the driver's, build-bench/dispatcher/rowpump; "" for it); ROWS: the table's rows
# (default: the driver's, 1,000,000). Needs perf (Debian's linux-perf) and root. Results stay
# in run/profile-<time>/ (perf.data, stacks.txt).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# >= 1)) || die "usage: $0 CONFIG [ROWPUMP] [ROWS]"
config=$1 rowpump=${2:-} rows=${3:-}
command -v perf >/dev/null || die "no perf: apt-get install linux-perf"
bench_run_dir profile
start_servers "$run_dir"
start_e2e_run "$config" "$rowpump" "$rows"
perf record -F 999 -g -p "$ROWPUMP_MYSQL_PID" -o "$run_dir/perf.data" 2>"$run_dir/perf.log" &
perf_pid=$!
while e2e_running; do sleep 0.2; done
kill -INT "$perf_pid"
wait "$perf_pid" || true
wait "$driver_pid"
perf script -i "$run_dir/perf.data" -F ip,sym 2>/dev/null >"$run_dir/stacks.txt"

say "## MariaDB's samples by function on the stack: $config"
say
tr '\t' '\n' <"$run_dir/driver/results.tsv" | grep -E '^(tasks_per_s|mysql_cpu_s_per_million)='
say
say "| function on the stack | what it is | share of samples |"
say "|---|---|---:|"
# A blank line ends each sample's stack.
awk -v list="mysql_update|UPDATE statements
handler::ha_update_row|  the row writes
Item_cond_and::val_bool|  their WHERE, row by row
fill_record|  their SET, row by row
SQL_SELECT::test_quick_select|  range analysis of the id lists (also in SELECT)
Item_func_in::fix_length_and_dec|  sorting the IN lists (also in SELECT)
mysql_select|SELECT statements
multi_range_read_next|  reads through the primary key (also in UPDATE)
ha_index_next_same|  reads along the order index (the scan)
Item_func_concat::val_str|CONCAT, row by row (tokens)
tpool::task_group::execute|InnoDB background threads (purge, flushing)
mysql_parse|statements sent as text (the due count, COMMIT)" '
    BEGIN { n = split(list, rows, "\n"); for (i = 1; i <= n; ++i) {
                split(rows[i], f, "|"); fn[i] = f[1]; what[i] = substr(rows[i], length(f[1]) + 2) } }
    NF == 0 { if (in_sample) { ++samples; for (i = 1; i <= n; ++i) if (seen[i]) ++hits[i] }
              in_sample = 0; delete seen; next }
    { in_sample = 1; for (i = 1; i <= n; ++i) if (index($0, fn[i]) > 0) seen[i] = 1 }
    END { if (in_sample) { ++samples; for (i = 1; i <= n; ++i) if (seen[i]) ++hits[i] }
          for (i = 1; i <= n; ++i)
              printf "| `%s` | %s | %.1f%% |\n", fn[i], what[i], samples ? 100 * hits[i] / samples : 0
          printf "\n%d samples\n", samples }' "$run_dir/stacks.txt"
