#!/usr/bin/env bash
# What rate_per_key costs `rowpump run` (docs/fairness.md): the dispatcher alone (no workers)
# moves due rows to the ready list for SECONDS with group_by, without a per-key rate, with one
# that never binds (each claim reads the next keys' windows in Redis) and with one that holds
# every key back most of the time (keys at their limit must be passed over without a read).
# Prints rows moved, claims and their mean time (debug log, as fair_dispatch.sh), and the rows
# the server's handlers read per row moved (the Handler_read_* counters over the run / rows
# moved: index dives, index and table rows read).
#   bench/scripts/key_rate_dispatch.sh [ROWS] [KEYS] [SECONDS]   (defaults 100000, 1000, 10)
# Needs MYSQL, MYSQL_YAML, REDIS_PORT, ROWPUMP as fair_dispatch.sh.
set -euo pipefail
rows=${1:-100000}
keys=${2:-1000}
seconds=${3:-10}
mysql=${MYSQL:-mariadb fair}
rowpump=${ROWPUMP:-build/dispatcher/rowpump}
here=$(dirname "${BASH_SOURCE[0]}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$mysql -e "DROP TABLE IF EXISTS jobs"
$mysql <"$here/fair_claim.sql"
$mysql -e "CALL fill($rows, $keys, 0)" >/dev/null

rows_read() { $mysql -N -e "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ n += $2 } END { print n }'; }

run() {  # $1: label, $2: extra queue lines
    cat >"$work/rowpump.yaml" <<YAML
mysql: $MYSQL_YAML
redis: { host: 127.0.0.1, port: $REDIS_PORT }
log_level: debug
queues:
  fair:
    table: jobs
    id: id
    due: "run_at <= NOW(3)"
    order_by: run_at
    batch: 1000
    max_backlog: 100000000
    poll: { min: 10ms, max: 100ms }
    group_by: tenant_id
$2
YAML
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    $mysql -e "CALL unclaim()"
    local before
    before=$(rows_read)
    "$rowpump" run -c "$work/rowpump.yaml" >"$work/log" 2>&1 &
    local pid=$!
    sleep "$seconds"
    kill -TERM "$pid"
    wait "$pid" || true
    local read=$(($(rows_read) - before))
    grep -o 'dispatched [0-9]* rows (capacity [0-9]*) in [0-9]* ms' "$work/log" |
        awk -v label="$1" -v read="$read" '{ n++; rows += $2; sum += $7 }
            END { printf "%-36s %7d rows moved, %5d claims, mean %6.1f ms, %6.1f rows read per row moved\n",
                  label, rows, n, sum / (n ? n : 1), read / (rows ? rows : 1) }'
}

echo "== $rows due rows, $keys keys taking turns, ${seconds}s each"
run "group_by" ""
run "rate_per_key: 1000000/1s (never binds)" "    rate_per_key: 1000000/1s"
run "rate_per_key: 2/1s (binds)" "    rate_per_key: 2/1s"
