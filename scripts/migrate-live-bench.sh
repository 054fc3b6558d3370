#!/usr/bin/env bash
# What `rowpump migrate --apply` costs on a large table that an application keeps writing to,
# against the single ALTER TABLE it used to run (columns and index together). Prints the
# migration times and the application's write latency before and during each; the figures
# are recorded in docs/migrate-live.md. A measurement, not a test: nothing here asserts.
#
#   scripts/migrate-live-bench.sh [ROWS]          default 5000000
# Needs a built rowpump (scripts/build.sh) and MariaDB; starts throwaway servers.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rows=${1:-5000000}
rowpump=$ROWPUMP_ROOT/build/dispatcher/rowpump
[[ -x $rowpump ]] || die "build first: scripts/build.sh"
work=$(mktemp -d /tmp/rowpump-migrate-bench-XXXXXX)
writer=
cleanup() {
    [[ -z $writer ]] || kill $writer 2>/dev/null || true
    [[ ! -e $work/servers/env ]] || "$ROWPUMP_ROOT/scripts/servers.sh" stop "$work/servers" >/dev/null 2>&1 || true
    rm -rf "$work"
}
on_exit cleanup

start_servers "$work/servers" 2>/dev/null
sql() { mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" app "$@"; }
log "seeding $rows rows"
sql --init-command="SET @rows=$rows" <"$ROWPUMP_ROOT/deploy/seed.sql"
sql -e 'ANALYZE TABLE user_block_status' >/dev/null

# The application: one connection updating random rows back to back; for each write, when it
# started (epoch seconds) and how long the server took, in microseconds.
generate_writes() {
    while :; do
        printf 'SET @t = NOW(6); UPDATE user_block_status SET status = status + 1 WHERE user_id = %d; ' \
            $(((RANDOM * 32768 + RANDOM) % rows + 1))
        printf 'SELECT UNIX_TIMESTAMP(@t), TIMESTAMPDIFF(MICROSECOND, @t, NOW(6));\n'
    done
}

writer_pids=()
start_writer() {
    rm -f "$work/writes.fifo"
    mkfifo "$work/writes.fifo"
    sql -N -B <"$work/writes.fifo" >"$1" 2>/dev/null &
    writer_pids=($!)
    generate_writes >"$work/writes.fifo" 2>/dev/null &
    writer_pids+=($!)
    writer=${writer_pids[*]}
}

stop_writer() {
    kill "${writer_pids[@]}" 2>/dev/null || true
    wait "${writer_pids[@]}" 2>/dev/null || true
    writer=
}

now() { date +%s.%N; }

# latency FILE FROM TO: "n=... p50=...ms p99=...ms max=...ms" of the writes started in [FROM, TO).
latency() {
    awk -v from="$2" -v to="$3" '$1 >= from && $1 < to { print $2 }' "$1" | sort -n |
        awk '{ v[NR] = $1 } END {
            if (NR == 0) { print "n=0"; exit }
            printf "n=%d p50=%.2fms p99=%.2fms max=%.1fms\n", NR, v[int(NR * 0.5) + 1] / 1000,
                v[int(NR * 0.99) + 1] / 1000, v[NR] / 1000 }'
}

# An application transaction that has read the table and stays open for `seconds`: it
# holds the table's metadata lock meanwhile.
hold_table() {
    sql -e "START TRANSACTION; SELECT COUNT(*) FROM user_block_status WHERE user_id < 10;
            SELECT SLEEP($1); COMMIT" >/dev/null &
    holder=$!
    until [[ $(sql -N -e "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%'") == 1 ]]; do
        sleep 0.05
    done
}

# measure NAME CMD...: 5 s of writes alone, then CMD while writing, then latency figures.
# HOLD=N: an open transaction holds the table for N s from just before CMD.
measure() {
    local name=$1; shift
    local out=$work/$name.writes t0 t1 t2 holder=
    start_writer "$out"
    t0=$(now)
    sleep 5
    [[ -z ${HOLD:-} ]] || hold_table "$HOLD"
    t1=$(now)
    "$@" >"$work/$name.log" 2>&1 || true
    t2=$(now)
    [[ -z $holder ]] || wait "$holder"
    stop_writer
    say "$name: migration $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }') s"
    say "  writes before: $(latency "$out" "$t0" "$t1")"
    say "  writes during: $(latency "$out" "$t1" "$t2")"
}

config=$ROWPUMP_ROOT/deploy/demo.yaml
say "table: $rows rows; MariaDB $(sql -N -e 'SELECT VERSION()')"
# The statement rowpump used to run: the columns and the index in one ALTER, no clauses.
combined=$("$rowpump" migrate -c "$config" | sed -n '/^ALTER TABLE/,/;$/p' |
    sed 's/,$//; /ALGORITHM=/d' | grep -v '^ALTER TABLE' | paste -sd, -)
unmigrate() {
    sql -e 'ALTER TABLE user_block_status DROP INDEX rp_lease_idx, DROP COLUMN rp_token,
            DROP COLUMN rp_lease_until, DROP COLUMN rp_attempts, DROP COLUMN rp_last_error, DROP COLUMN rp_dead_at'
}

HOLD=8 measure "split, a transaction open for 8 s" "$rowpump" migrate -c "$config" --apply --lock-wait 2s
grep -o 'gave up after [0-9.]* s' "$work/split, a transaction open for 8 s.log" | sed 's/^/  /' || true
HOLD=8 measure "combined, a transaction open for 8 s" sql -e "ALTER TABLE user_block_status $combined"
unmigrate
measure split "$rowpump" migrate -c "$config" --apply
sed -n '/applied in/p' "$work/split.log" | sed 's/^/  /'
unmigrate
measure combined sql -e "ALTER TABLE user_block_status $combined"
