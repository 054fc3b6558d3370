#!/usr/bin/env bash
# Runs the benchmarks described in docs/benchmarks.md and prints their summary (markdown).
#   scripts/bench.sh [--quick] [--keep] [-- DRIVER_OPTION...]
#   scripts/bench.sh --peers [--keep] [-- --jobs N --python-jobs N --rounds R --systems LIST]
# Installs packages, builds Release in build-bench/, starts throwaway MariaDB and Redis in
# run/bench-<time>/ (scripts/servers.sh), runs the driver (build-bench/bench/rowpump_bench)
# against them, stops them. The run directory keeps summary.md, results.tsv (every
# repetition), machine.md, the generated configs and every process's log.
# --quick: small tables and one repetition, a smoke test of the chain (~2 min; its figures
# mean little). --keep: leave the servers and their data running. Options after -- go to the
# driver (see build-bench/bench/rowpump_bench --help), e.g. -- --phases dispatch --reps 5;
# -- --phases scale: dispatch and end to end on 1M against 10M rows (20-40 min a repetition).
# --peers: instead, rowpump end to end against delayed_job, Sidekiq, BullMQ and RQ on the same
# servers, with rowpump's C++, Node.js and Python workers (bench/scripts/peers.sh; its options
# after --); installs those first. Adds peers.md, peers.tsv and peers.png to the run
# directory (~50 min with 100,000 jobs).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

quick=0 keep=0 peers=0
driver_args=()
while (($#)); do
    case $1 in
        --quick) quick=1; shift ;;
        --keep) keep=1; shift ;;
        --peers) peers=1; shift ;;
        --) shift; driver_args+=("$@"); break ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (driver options go after --)" ;;
    esac
done
((!(quick && peers))) || die "--quick and --peers do not go together (--peers -- --jobs N: a short run)"
if ((quick)); then
    # shellcheck disable=SC2054 # the commas are inside arguments (lists the driver splits)
    driver_args=(--reps 1 --rows 100000 --batches 1000 --dispatch-time-limit 60
        --e2e-rows 100000 --e2e-configs 2x4,2x4x16 --latency-seconds 5 --latency-polls 50ms
        --baseline-seconds 5 --baseline-table-rows 100000 --small-rows 20000 "${driver_args[@]}")
fi

build_dir=$ROWPUMP_ROOT/build-bench
run_dir=$ROWPUMP_ROOT/run/bench-$(date +%Y%m%d-%H%M%S)

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    if [[ -e $run_dir/env ]] && ((!keep)); then
        "$ROWPUMP_ROOT/scripts/servers.sh" stop "$run_dir" || status=1
        rm -rf "$run_dir/mysql" "$run_dir/redis"  # GBs of table data; the logs stay
    fi
    [[ -d $run_dir ]] && log "results, configs and logs: $run_dir"
    exit "$status"
}

# What the server runs with, read from the server itself.
mysql_settings() {
    mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" -N -e "SELECT CONCAT(
        'buffer pool ', @@innodb_buffer_pool_size DIV 1048576, 'M, redo log ',
        @@innodb_log_file_size DIV 1048576, 'M, flush_log_at_trx_commit=',
        @@innodb_flush_log_at_trx_commit)"
}

machine_info() {
    local cpu mem
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    say "| what | value |"
    say "|---|---|"
    say "| CPU | $(nproc) cores, ${cpu:-unknown} |"
    say "| memory | $mem |"
    say "| kernel | $(uname -r) |"
    say "| MariaDB | $(mariadbd --version 2>/dev/null | awk '{ print $3 }') ($(mysql_settings); see scripts/servers.sh) |"
    say "| Redis | $(redis-server --version | awk '{ print $3 }' | sed 's/v=//') |"
    say "| compiler | $(g++ --version | head -n 1) (Release: -O3 -DNDEBUG) |"
    say "| source | git $(git -C "$ROWPUMP_ROOT" describe --always --dirty 2>/dev/null || echo unknown) |"
    say "| load average at start | $(cut -d' ' -f1-3 /proc/loadavg) |"
}

if ((peers)); then
    "$ROWPUMP_ROOT/scripts/install-deps.sh" --peers
    log "npm ci in bench/peers and worker-sdk/node"
    (cd "$ROWPUMP_ROOT/bench/peers" && npm ci --no-audit --no-fund --loglevel=error) >&2
    "$ROWPUMP_ROOT/tests/node/npm_ci.sh" "$ROWPUMP_ROOT/worker-sdk/node" >&2
else
    "$ROWPUMP_ROOT/scripts/install-deps.sh"
fi

log "building (Release) in $build_dir"
mkdir -p "$build_dir"
cmake -S "$ROWPUMP_ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DROWPUMP_BUILD_TESTS=OFF \
    -DROWPUMP_BUILD_BENCH=ON >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; die "cmake configure failed"; }
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}" --target rowpump_bench

mkdir -p "${run_dir%/*}"
mkdir "$run_dir" || die "$run_dir exists"
on_exit cleanup
start_servers "$run_dir"

machine_info >"$run_dir/machine.md"
log "running the benchmarks; progress below, summary at the end"
if ((peers)); then
    "$ROWPUMP_ROOT/bench/scripts/peers.sh" "$run_dir" "$build_dir/bench/rowpump_bench" \
        "${driver_args[@]}" >"$run_dir/summary.md"
else
    "$build_dir/bench/rowpump_bench" --run-dir "$run_dir" "${driver_args[@]}" >/dev/null
fi
printf '| load average at end | %s |\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$run_dir/machine.md"

say "## Machine"
say
cat "$run_dir/machine.md"
say
cat "$run_dir/summary.md"
