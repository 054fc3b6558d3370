# Helpers shared by the scripts in this folder; sourced, never run.
# shellcheck shell=bash

# shellcheck disable=SC2034 # used by the scripts that source this file
ROWPUMP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*"; }
log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# A pid counts as alive only while its process is not a zombie: an orphaned server that died
# stays in the process table until init reaps it, and `kill -0` keeps succeeding meanwhile.
proc_alive() {
    local pid=$1 stat
    { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

# Polls `cmd...` every 0.1 s until it succeeds or `seconds` have passed.
wait_until() {
    local seconds=$1; shift
    local deadline=$((SECONDS + seconds))
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

proc_gone() { ! proc_alive "$1"; }

# Runs `handler` when the script exits, also after Ctrl-C (status 130) or SIGTERM (143).
on_exit() {
    # shellcheck disable=SC2064 # the handler's name is meant to be fixed now
    trap "$1" EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# A benchmark's run directory, run/NAME-<time>, in `run_dir`: when the script exits, the
# servers started there (start_servers) stop and their data goes; the results stay.
bench_run_dir() {
    run_dir=$ROWPUMP_ROOT/run/$1-$(date +%Y%m%d-%H%M%S)
    mkdir -p "$run_dir"
    on_exit stop_bench_servers
}
stop_bench_servers() {
    local status=$?
    trap - EXIT INT TERM
    [[ -e $run_dir/env ]] && "$ROWPUMP_ROOT/scripts/servers.sh" stop "$run_dir"
    rm -rf "$run_dir/mysql" "$run_dir/redis"
    exit "$status"
}

# One end-to-end run of the benchmark driver in the background (its pid in `driver_pid`,
# results in run_dir/driver): CONFIG [ROWPUMP] [ROWS] as bench/scripts/mysql_threads.sh takes
# them. Returns once its dispatcher runs (after the table load); the run ends when the
# dispatcher does (e2e_running).
start_e2e_run() {
    local config=$1 rowpump=${2:-} rows=${3:-}
    local driver=$ROWPUMP_ROOT/build-bench/bench/rowpump_bench
    [[ -x $driver ]] || die "no $driver: run scripts/bench.sh (or build target rowpump_bench) first"
    "$driver" --run-dir "$run_dir/driver" --phases e2e --reps 1 --e2e-configs "$config" \
        ${rowpump:+--rowpump "$rowpump"} ${rows:+--e2e-rows "$rows"} >"$run_dir/driver.out" 2>&1 &
    driver_pid=$!
    wait_until 300 e2e_running || die "no dispatcher started (see $run_dir/driver.out)"
}
e2e_running() { pgrep -f "$run_dir/driver/e2e.yaml" >/dev/null; }

# Starts throwaway MariaDB and Redis in `dir` (scripts/servers.sh start) and exports the
# ROWPUMP_* variables of the env file it writes. Stopping them is up to the caller.
start_servers() {
    "$ROWPUMP_ROOT/scripts/servers.sh" start "$1"
    set -a
    # shellcheck source=/dev/null
    source "$1/env"
    set +a
}

# SIGTERM, up to `grace` seconds for a clean exit, then SIGKILL. Returns 1 if it had to kill.
stop_pid() {
    local pid=$1 name=$2 grace=${3:-10}
    [[ -n $pid ]] && proc_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    if wait_until "$grace" proc_gone "$pid"; then
        return 0
    fi
    log "$name (pid $pid) still running after ${grace}s: sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    wait_until 5 proc_gone "$pid" || log "$name (pid $pid) did not die"
    return 1
}

# True if no TCP socket (any state, IPv4 or IPv6) uses local port $1. Reads procfs so it
# needs neither ss nor python; TIME_WAIT sockets count as taken, which is what we want.
port_free() {
    local hex
    hex=$(printf ':%04X' "$1")
    ! awk -v p="$hex" 'NR > 1 && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# A free port below the usual ephemeral range (32768+), so outgoing connections cannot take
# it between our check and the server's bind. Callers retry if a bind still fails.
pick_port() {
    local port tries
    for ((tries = 0; tries < 200; tries++)); do
        port=$((10000 + (RANDOM * 32768 + RANDOM) % 22000))
        if port_free "$port"; then
            printf '%s\n' "$port"
            return 0
        fi
    done
    die "no free loopback port found"
}

# Password-grade random hex (no shell or SQL quoting issues).
random_hex() {
    od -An -N"${1:-16}" -tx1 /dev/urandom | tr -d ' \n'
}
