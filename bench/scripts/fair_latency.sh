#!/usr/bin/env bash
# The fairness benchmark (docs/benchmarks.md, "A noisy key and 99 quiet ones"): one key with
# NOISY due rows (default 1,000,000) and 99 keys with 100 rows each that come due 3 s after
# the dispatcher and workers start; SDK workers (bench/e2e_worker.cpp --mode latency) record
# when each handler started. Per run, with and without group_by: the quiet keys' due-to-start
# latency (p50, p99, max, and how many had started) and the dispatch rate (tasks completed per
# second over the run), both from the table. Each run lasts SECONDS (default 60).
#   bench/scripts/fair_latency.sh [NOISY] [SECONDS]
# Needs MYSQL, MYSQL_YAML, REDIS_PORT and ROWPUMP as bench/scripts/fair_dispatch.sh, and
# WORKER (build/bench/rowpump_bench_e2e_worker); WORKERS processes (default 2) of THREADS
# threads (default 4).
set -euo pipefail
noisy=${1:-1000000}
seconds=${2:-60}
mysql=${MYSQL:-mariadb fair}
rowpump=${ROWPUMP:-build/dispatcher/rowpump}
worker=${WORKER:-build/bench/rowpump_bench_e2e_worker}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fill() {
    $mysql -e "DROP TABLE IF EXISTS fair_tasks;
CREATE TABLE fair_tasks (
  id BIGINT NOT NULL PRIMARY KEY, tenant_id INT NOT NULL, status TINYINT NOT NULL DEFAULT 0,
  due_at DATETIME(6) NOT NULL, started_at DATETIME(6) NULL,
  rp_token VARCHAR(64) NULL, rp_lease_until DATETIME(3) NULL, rp_attempts INT NOT NULL DEFAULT 0,
  rp_last_error VARCHAR(255) NULL, rp_dead_at DATETIME(3) NULL,
  KEY rp_lease_idx (rp_lease_until), KEY by_due (status, due_at), KEY by_tenant (tenant_id, due_at)) ENGINE=InnoDB;
INSERT INTO fair_tasks (id, tenant_id, due_at)
  SELECT seq, 0, NOW(6) - INTERVAL 1 HOUR + INTERVAL seq MICROSECOND FROM seq_1_to_$noisy;"
}

run() {  # $1: label, $2: extra queue lines
    fill
    cat >"$work/rowpump.yaml" <<YAML
mysql: $MYSQL_YAML
redis: { host: 127.0.0.1, port: $REDIS_PORT }
queues:
  bench:
    table: fair_tasks
    id: id
    due: "status = 0 AND due_at <= NOW(6)"
    order_by: due_at
    on_success: "status = 1, started_at = FROM_UNIXTIME(:started)"
    batch: 1000
    max_backlog: 20000
$2
YAML
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    "$rowpump" run -c "$work/rowpump.yaml" --log-level warn >"$work/dispatcher.log" 2>&1 &
    local dispatcher=$!
    local pids=()
    for _ in $(seq "${WORKERS:-2}"); do
        "$worker" --redis-port "$REDIS_PORT" --queue bench --mode latency \
            --threads "${THREADS:-4}" --time-limit $((seconds + 60)) >>"$work/workers.log" 2>&1 &
        pids+=($!)
    done
    # The quiet keys' rows come due 3 s from now, behind the noisy key's in due_at order.
    $mysql -e "INSERT INTO fair_tasks (id, tenant_id, due_at)
      SELECT $noisy + seq, 1 + (seq - 1) % 99, NOW(6) + INTERVAL 3 SECOND + INTERVAL seq MICROSECOND
      FROM seq_1_to_9900"
    local start
    start=$($mysql -N -e "SELECT NOW(6)")
    sleep "$seconds"
    kill -TERM "$dispatcher" "${pids[@]}"
    wait "$dispatcher" "${pids[@]}" || true
    $mysql -N -e "
      SELECT '$1', COUNT(*) AS done,
             ROUND(COUNT(*) / TIMESTAMPDIFF(MICROSECOND, '$start', MAX(started_at)) * 1000000) AS per_s
        FROM fair_tasks WHERE status = 1;
      SELECT 'quiet keys started', COUNT(started_at), 'of 9900' FROM fair_tasks WHERE tenant_id <> 0;" | tr '\t' ' '
    # Percentiles of due -> handler start over the quiet rows that started.
    $mysql -N -e "SELECT TIMESTAMPDIFF(MICROSECOND, due_at, started_at) FROM fair_tasks
      WHERE tenant_id <> 0 AND started_at IS NOT NULL ORDER BY 1" >"$work/lat"
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "  quiet latency: none started"; exit }
         printf "  quiet due->start ms: p50 %.1f, p99 %.1f, max %.1f (over %d rows)\n",
         v[int(NR * 0.5) + 1] / 1000, v[int(NR * 0.99) + 1] / 1000, v[NR] / 1000, NR }' "$work/lat"
}

echo "== $noisy due rows of key 0, 99 keys with 100 rows each, ${seconds}s per run"
run "ordered (no group_by)" ""
run "group_by: tenant_id" "    group_by: tenant_id"
