#!/usr/bin/env bash
# What group_by costs `rowpump run` itself (docs/fairness.md): the dispatcher alone (no
# workers) moves due rows to the ready list for SECONDS, with and without group_by, on ROWS
# rows with 10, 1,000 and 100,000 keys taking turns and with one noisy key; prints the
# rows moved and the claims' mean, p50 and p99 time from the dispatcher's debug log
# ("dispatched N rows (capacity C) in X ms": claim, read-back and push), and the load average
# when the run ended (the machine is shared: compare lines of one run only).
#   bench/scripts/fair_dispatch.sh [ROWS[,ROWS...]] [SECONDS]      (defaults 1000000 and 20)
# Several table sizes (1000000,10000000) are interleaved: for each key count, each size in
# turn, so their figures come from the same minutes.
# FAIR_KEYS (default "10 1000 100000"; empty: none) picks the key counts, FAIR_NOISY=0 leaves
# the noisy case out.
# Needs: MYSQL (client command line for the scratch database, as fair_claim.sh), MYSQL_YAML
# (the `mysql:` map for rowpump, e.g. "{ host: localhost, user: root, database: fair }" with a
# socket: MYSQL_UNIX_PORT), REDIS_PORT (an empty Redis), ROWPUMP (the binary).
set -euo pipefail
sizes=${1:-1000000}
seconds=${2:-20}
mysql=${MYSQL:-mariadb fair}
rowpump=${ROWPUMP:-build/dispatcher/rowpump}
here=$(dirname "${BASH_SOURCE[0]}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$mysql -e "DROP TABLE IF EXISTS jobs"
$mysql <"$here/fair_claim.sql"

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
$2
YAML
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    $mysql -e "CALL unclaim()"
    "$rowpump" run -c "$work/rowpump.yaml" >"$work/log" 2>&1 &
    local pid=$!
    sleep "$seconds"
    kill -TERM "$pid"
    wait "$pid" || true
    grep -o 'dispatched [0-9]* rows (capacity [0-9]*) in [0-9]* ms' "$work/log" |
        awk -v label="$1" '{ n++; rows += $2; ms[n] = $7; sum += $7 }
            END { asort(ms); printf "%-40s %8d rows moved, %5d claims, mean %7.1f ms, p50 %5d ms, p99 %5d ms",
                  label, rows, n, sum / (n ? n : 1), ms[int(n * 0.5) + 1], ms[int(n * 0.99) + 1] }'
    echo ", load $(cut -d' ' -f1-3 /proc/loadavg)"
}

fill() {  # $1: rows, $2: keys, $3: 1 for the noisy case
    local start=$SECONDS
    $mysql -e "CALL fill($1, $2, $3)" >/dev/null
    echo "   (table of $1 rows loaded in $((SECONDS - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg))"
}

IFS=, read -ra rows_list <<<"$sizes"
for keys in ${FAIR_KEYS-10 1000 100000}; do
    for rows in "${rows_list[@]}"; do
        echo "== $rows due rows, $keys keys taking turns, ${seconds}s each"
        fill "$rows" "$keys" 0
        run "ordered (no group_by)" ""
        run "group_by: tenant_id" "    group_by: tenant_id"
        run "group_by + concurrency_per_key: 1000000" "    group_by: tenant_id
    concurrency_per_key: 1000000"
    done
done
for rows in "${rows_list[@]}"; do
    [[ ${FAIR_NOISY:-1} == 0 ]] && break
    echo "== $rows due rows: key 0 with all but 9,900, 99 keys with 100 each, key 0's rows first"
    fill "$rows" 100 1
    run "ordered (no group_by)" ""
    run "group_by: tenant_id" "    group_by: tenant_id"
done
