#!/usr/bin/env bash
# The rowpump demo, from a fresh Debian 12 machine to live numbers in one command:
#   scripts/demo.sh [--duration SECONDS] [--rows N] [--workers N] [--keep]
# Installs packages, builds, starts throwaway MariaDB and Redis in run/demo-<time>/, creates
# user_block_status with N users (default 100000) that are all due, and runs the dispatcher
# plus N example workers (default 4, 8 threads each) while `rowpump status` shows progress
# for SECONDS (default 60; 0: until Ctrl-C). Then everything stops in order and the logs stay
# in the run directory. --keep leaves the servers running (stop them with
# `scripts/servers.sh stop RUN_DIR`).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

duration=60 rows=100000 workers=4 keep=0
usage() { sed -n '2,9p' "$0" >&2; exit 2; }
number() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 needs a whole number, got '$2'"; }
while (($#)); do
    case $1 in
        --duration) number "$1" "${2:-}"; duration=$2; shift 2 ;;
        --rows) number "$1" "${2:-}"; rows=$2; shift 2 ;;
        --workers) number "$1" "${2:-}"; workers=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage ;;
        *) log "unknown argument: $1"; usage ;;
    esac
done

queue=user_block_check
rowpump=$ROWPUMP_ROOT/build/dispatcher/rowpump
worker=$ROWPUMP_ROOT/build/worker-sdk/examples/rowpump_example_user_block_worker
run_dir=$ROWPUMP_ROOT/run/demo-$(date +%Y%m%d-%H%M%S)
config=$run_dir/rowpump.yaml
dispatcher_pid=
worker_pids=()

step() { printf '\n== %s\n' "$*"; }

sql() {
    mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" --batch --skip-column-names \
        "$ROWPUMP_MYSQL_DATABASE" "$@"
}

# Stops what was started, in order: workers (they finish and report what they hold), then the
# dispatcher (it applies what was reported), then the servers. Runs once, on any exit.
cleanup() {
    local status=$? pid
    trap - EXIT INT TERM
    ((${#worker_pids[@]})) && kill -TERM "${worker_pids[@]}" 2>/dev/null
    for pid in "${worker_pids[@]}"; do
        stop_pid "$pid" worker 10 || true
    done
    if [[ -n $dispatcher_pid ]]; then
        stop_pid "$dispatcher_pid" dispatcher 10 || true
        local rc=0
        wait "$dispatcher_pid" 2>/dev/null || rc=$?
        say "dispatcher exited with status $rc"
    fi
    if [[ -e $run_dir/env ]]; then
        if ((keep)); then
            say "servers still running: MariaDB 127.0.0.1:$ROWPUMP_MYSQL_PORT, Redis 127.0.0.1:$ROWPUMP_REDIS_PORT"
            say "  credentials: $run_dir/env; stop them: scripts/servers.sh stop $run_dir"
        else
            "$ROWPUMP_ROOT/scripts/servers.sh" stop "$run_dir" || status=1
            rm -rf "$run_dir/mysql" "$run_dir/redis"
        fi
    fi
    [[ -d $run_dir ]] && say "logs and config: $run_dir"
    exit "$status"
}

summary() {
    local total checked dead completed
    read -r total checked dead < <(sql -e "SELECT COUNT(*), SUM(updated_time >= '$start_time'),
        SUM(rp_dead_at IS NOT NULL) FROM user_block_status")
    completed=$(redis-cli -h 127.0.0.1 -p "$ROWPUMP_REDIS_PORT" --raw \
        HGET "rowpump:{$queue}:stats" completed)
    step "Summary"
    say "users checked at least once: ${checked:-0} of $total; dead rows: ${dead:-0}"
    say "checks completed (every user is due again 10 s after its check): ${completed:-0}"
}

step "Installing packages"
"$ROWPUMP_ROOT/scripts/install-deps.sh"

step "Building"
targets=(rowpump)
((workers == 0)) || targets+=(rowpump_example_user_block_worker)
"$ROWPUMP_ROOT/scripts/build.sh" "${targets[@]}"

step "Starting MariaDB and Redis in $run_dir"
mkdir -p "${run_dir%/*}"
mkdir "$run_dir" || die "$run_dir exists"
on_exit cleanup
start_servers "$run_dir"

step "Creating user_block_status with $rows users, all due"
sql --init-command="SET @rows = $rows" <"$ROWPUMP_ROOT/deploy/seed.sql"
# A copy keeps the run directory self-contained: config, env and logs side by side.
cp "$ROWPUMP_ROOT/deploy/demo.yaml" "$config"
# The dashboard and /metrics on a free loopback port; its token guards retry, discard, pause.
ROWPUMP_HTTP_LISTEN=127.0.0.1:$(pick_port)
ROWPUMP_HTTP_TOKEN=$(random_hex 16)
export ROWPUMP_HTTP_LISTEN ROWPUMP_HTTP_TOKEN
printf 'ROWPUMP_HTTP_LISTEN=%s\nROWPUMP_HTTP_TOKEN=%s\n' "$ROWPUMP_HTTP_LISTEN" "$ROWPUMP_HTTP_TOKEN" \
    >>"$run_dir/env"

step "rowpump migrate --apply (adds the bookkeeping columns)"
"$rowpump" migrate -c "$config" --apply
step "rowpump check"
"$rowpump" check -c "$config"

step "Starting the dispatcher and $workers workers"
start_time=$(sql -e "SELECT NOW(3)")
# setsid: a Ctrl-C reaches only this script, which then stops everything in order.
setsid "$rowpump" run -c "$config" </dev/null >"$run_dir/dispatcher.log" 2>&1 &
dispatcher_pid=$!
for ((i = 1; i <= workers; i++)); do
    setsid "$worker" --redis-port "$ROWPUMP_REDIS_PORT" --threads 8 \
        </dev/null >"$run_dir/worker-$i.log" 2>&1 &
    worker_pids+=($!)
done
say "dispatcher pid $dispatcher_pid (log dispatcher.log), workers: ${worker_pids[*]:-none}"
say "dashboard: http://$ROWPUMP_HTTP_LISTEN/  (token for its actions: $ROWPUMP_HTTP_TOKEN)"
say "metrics:   http://$ROWPUMP_HTTP_LISTEN/metrics"

if ((duration)); then
    step "Progress for ${duration}s (Ctrl-C stops early)"
    watch_args=(--count "$duration")
else
    step "Progress (Ctrl-C stops)"
    watch_args=()
fi
"$rowpump" status -c "$config" --watch 1s "${watch_args[@]}"
proc_alive "$dispatcher_pid" || { tail -n 20 "$run_dir/dispatcher.log" >&2; die "the dispatcher died"; }
summary
