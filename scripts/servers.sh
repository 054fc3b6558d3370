#!/usr/bin/env bash
# Throwaway MariaDB and Redis servers on free loopback ports, for the demo, benchmarks and
# manual tests. Nothing here touches the system's own MariaDB or Redis.
#
#   scripts/servers.sh start DIR   start both with their data in DIR, write DIR/env
#   scripts/servers.sh stop DIR    shut both down (SIGTERM, then SIGKILL after a grace period)
#
# DIR/env holds shell assignments (also fine as a systemd EnvironmentFile):
#   ROWPUMP_RUN_DIR, ROWPUMP_MYSQL_HOST, ROWPUMP_MYSQL_PORT, ROWPUMP_MYSQL_SOCKET,
#   ROWPUMP_MYSQL_USER, ROWPUMP_MYSQL_PASSWORD, ROWPUMP_MYSQL_DATABASE, ROWPUMP_MYSQL_PID,
#   ROWPUMP_REDIS_HOST, ROWPUMP_REDIS_PORT, ROWPUMP_REDIS_PID
# The database `app` belongs to user `rowpump` (random password, from 127.0.0.1 and localhost);
# root has no password over the socket: mariadb --no-defaults -uroot -S "$ROWPUMP_MYSQL_SOCKET".
# ROWPUMP_MYSQLD_ARGS, if set, adds options to mariadbd's command line (split on spaces), e.g.
# --performance-schema=ON for bench/scripts/mysql_threads.sh.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,14p' "$0" >&2; exit 2; }

# Longest unix socket path the kernel takes is 107 bytes; deep run dirs get one in /tmp.
socket_path() {
    local dir=$1
    if ((${#dir} + 11 <= 100)); then
        printf '%s\n' "$dir/mysql.sock"
    else
        printf '/tmp/rowpump-mysql-%s.sock\n' "$(random_hex 6)"
    fi
}

mysql_root() { mariadb --no-defaults -uroot --socket="$mysql_socket"; }
mysql_ready() { mariadb-admin --no-defaults -uroot --socket="$mysql_socket" ping >/dev/null 2>&1; }
redis_ready() { [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]]; }

# Starts a server with `start_fn PORT` until it answers `ready_fn`, on a new port if the
# chosen one was taken in the meantime (another run may pick the same free port).
start_server() {
    local name=$1 start_fn=$2 ready_fn=$3 log_file=$4
    for _ in 1 2 3 4 5; do
        port=$(pick_port)
        "$start_fn" "$port"
        wait_until 60 server_settled "$ready_fn" || true
        if proc_alive "$pid" && "$ready_fn"; then
            return 0
        fi
        stop_pid "$pid" "$name" 5 || true
        if ! grep -qiE 'address already in use|bind on tcp/ip port' "$log_file"; then
            tail -n 20 "$log_file" >&2 || true
            die "$name did not start (log: $log_file)"
        fi
        log "$name: port $port was taken, trying another"
    done
    die "$name: no port worked"
}

# Ready, or dead: no point in waiting for a server that exited.
server_settled() {
    proc_alive "$pid" || return 0
    "$1"
}

launch_mysql() {
    # setsid: the servers must not see a Ctrl-C meant for the demo; it stops them in order.
    # shellcheck disable=SC2086 # ROWPUMP_MYSQLD_ARGS is a list of options
    setsid mariadbd --no-defaults --user=root --datadir="$dir/mysql" --tmpdir="$dir/tmp" \
        --socket="$mysql_socket" \
        --pid-file="$dir/mysql.pid" --log-error="$dir/mysql.log" --port="$1" \
        --bind-address=127.0.0.1 --skip-name-resolve \
        --innodb-buffer-pool-size=512M --innodb-flush-log-at-trx-commit=2 ${ROWPUMP_MYSQLD_ARGS:-} \
        </dev/null >>"$dir/mysql.log" 2>&1 &
    pid=$!
}

launch_redis() {
    setsid redis-server --bind 127.0.0.1 --port "$1" --save '' --appendonly no \
        --dir "$dir/redis" --daemonize no </dev/null >>"$dir/redis.log" 2>&1 &
    pid=$!
}

cmd_start() {
    [[ ! -e $dir/env ]] || die "$dir/env exists: servers may be running (scripts/servers.sh stop $dir)"
    # A tmpdir of our own: MariaDB deletes every #sql* file in its tmpdir when it starts, so
    # servers sharing /tmp destroy each other's temporary tables.
    mkdir -p "$dir/redis" "$dir/tmp"
    mysql_socket=$(socket_path "$dir")

    if [[ ! -d $dir/mysql/mysql ]]; then
        mariadb-install-db --no-defaults --user=root --datadir="$dir/mysql" --tmpdir="$dir/tmp" \
            --auth-root-authentication-method=normal --skip-test-db >"$dir/mysql-install.log" 2>&1 ||
            { tail -n 20 "$dir/mysql-install.log" >&2; die "mariadb-install-db failed"; }
    fi

    # Globals: the EXIT trap below needs them.
    start_server MariaDB launch_mysql mysql_ready "$dir/mysql.log"
    mysql_port=$port mysql_pid=$pid
    # If anything below fails, do not leave a server behind.
    trap 'stop_pid "$mysql_pid" MariaDB 30 || true; stop_pid "${redis_pid:-}" Redis || true' EXIT

    start_server Redis launch_redis redis_ready "$dir/redis.log"
    redis_port=$port redis_pid=$pid

    local password
    password=$(random_hex 16)
    mysql_root <<SQL
CREATE DATABASE IF NOT EXISTS app;
CREATE USER IF NOT EXISTS 'rowpump'@'127.0.0.1' IDENTIFIED BY '$password';
CREATE USER IF NOT EXISTS 'rowpump'@'localhost' IDENTIFIED BY '$password';
GRANT ALL PRIVILEGES ON app.* TO 'rowpump'@'127.0.0.1', 'rowpump'@'localhost';
SQL

    {
        printf 'ROWPUMP_RUN_DIR=%q\n' "$dir"
        printf 'ROWPUMP_MYSQL_HOST=127.0.0.1\n'
        printf 'ROWPUMP_MYSQL_PORT=%s\n' "$mysql_port"
        printf 'ROWPUMP_MYSQL_SOCKET=%q\n' "$mysql_socket"
        printf 'ROWPUMP_MYSQL_USER=rowpump\n'
        printf 'ROWPUMP_MYSQL_PASSWORD=%s\n' "$password"
        printf 'ROWPUMP_MYSQL_DATABASE=app\n'
        printf 'ROWPUMP_MYSQL_PID=%s\n' "$mysql_pid"
        printf 'ROWPUMP_REDIS_HOST=127.0.0.1\n'
        printf 'ROWPUMP_REDIS_PORT=%s\n' "$redis_port"
        printf 'ROWPUMP_REDIS_PID=%s\n' "$redis_pid"
    } >"$dir/env.tmp"
    mv "$dir/env.tmp" "$dir/env"
    trap - EXIT
    log "MariaDB on 127.0.0.1:$mysql_port (pid $mysql_pid), Redis on 127.0.0.1:$redis_port (pid $redis_pid); env: $dir/env"
}

# A pid from the env file is ours only if that process still works in our directory (both
# servers chdir to their data directory): after a reboot the number may belong to anything.
owns() {
    local pid=$1 cwd
    [[ -n $pid ]] && proc_alive "$pid" || return 1
    cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || return 1
    [[ $cwd == "$dir"/* ]]
}

cmd_stop() {
    [[ -r $dir/env ]] || die "no $dir/env: nothing started there"
    (
        # shellcheck source=/dev/null
        source "$dir/env"
        status=0
        if owns "$ROWPUMP_REDIS_PID"; then stop_pid "$ROWPUMP_REDIS_PID" Redis 10 || status=1; fi
        if owns "$ROWPUMP_MYSQL_PID"; then stop_pid "$ROWPUMP_MYSQL_PID" MariaDB 60 || status=1; fi
        [[ $ROWPUMP_MYSQL_SOCKET != /tmp/* ]] || rm -f "$ROWPUMP_MYSQL_SOCKET"
        exit "$status"
    )
    mv "$dir/env" "$dir/env.stopped"
    log "stopped the servers in $dir"
}

(($# == 2)) || usage
case $1 in
    start) mkdir -p "$2"; dir=$(cd "$2" && pwd); cmd_start ;;
    stop) [[ -d $2 ]] || die "no such directory: $2"; dir=$(cd "$2" && pwd); cmd_stop ;;
    *) usage ;;
esac
