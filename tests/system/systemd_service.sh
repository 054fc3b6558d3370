#!/usr/bin/env bash
# The dispatcher as a real systemd service (systemd 252 booted in systemd-nspawn over this
# machine's root, see lib.sh): deploy/rowpump.service with the built binary, its secrets as
# LoadCredential= files, against throwaway MariaDB and Redis on the host's loopback. Checks:
#   - `systemctl start` waits for READY=1: while Redis does not answer, the unit stays "activating";
#   - `systemctl status` shows the STATUS= line (leader, rows dispatched);
#   - a SIGSTOPped dispatcher sends no WATCHDOG=1 and systemd restarts it;
#   - `systemctl stop` is clean (SIGTERM, exit 0, "stopped" logged);
#   - the journal has each line at its own priority (warning, info).
#
#   tests/system/systemd_service.sh ROWPUMP_BINARY
# Exits 77 (skipped) without root or systemd-nspawn (apt-get install systemd-container).
set -euo pipefail
# shellcheck source=tests/system/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

binary=${1:?usage: $0 ROWPUMP_BINARY}
require_root_and systemd-nspawn systemd-container
[[ -x $binary ]] || fail "no binary at $binary"

work=$(mktemp -d /tmp/rowpump-systemd-XXXXXX)
cleanup() {
    poweroff_container
    [[ ! -e $work/redis.pid ]] || kill "$(cat "$work/redis.pid")" 2>/dev/null || true
    [[ ! -e $work/servers/env ]] || "$ROWPUMP_ROOT/scripts/servers.sh" stop "$work/servers" || true
    rm -rf "$work"
}
on_exit cleanup

step "throwaway MariaDB and Redis on the loopback, the demo table with 2,000 due rows"
start_servers "$work/servers"
with_http_env "$work/servers/env"
mysql_app() { mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" app "$@"; }
mysql_app --init-command='SET @rows=2000' <"$ROWPUMP_ROOT/deploy/seed.sql"
"$binary" migrate -c "$ROWPUMP_ROOT/deploy/demo.yaml" --apply >/dev/null
redis() { redis-cli -h 127.0.0.1 -p "$ROWPUMP_REDIS_PORT" "$@"; }
# Redis is away until it is started again on its port (a wrong password would be fatal at
# start by design): the dispatcher cannot connect.
redis SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait_until 10 proc_gone "$ROWPUMP_REDIS_PID" || fail "Redis did not stop"

step "booting systemd in a container"
boot_container "$work"
root=/proc/$container_leader/root

step "installing deploy/rowpump.service, the binary, the config and the credentials"
install -D -m 755 "$binary" "$root/opt/rowpump/bin/rowpump"
install -D -m 644 "$ROWPUMP_ROOT/deploy/rowpump.service" "$root/etc/systemd/system/rowpump.service"
install -D -m 644 "$ROWPUMP_ROOT/deploy/demo.yaml" "$root/etc/rowpump/rowpump.yaml"
# The secrets as the unit's credentials (Redis has no password here: an empty one), none of
# them in the environment file.
for credential in mysql-password redis-password http-token; do
    install -m 600 /dev/null "$root/etc/rowpump/$credential"
done
echo "$ROWPUMP_MYSQL_PASSWORD" >"$root/etc/rowpump/mysql-password"
echo "$ROWPUMP_HTTP_TOKEN" >"$root/etc/rowpump/http-token"
grep -v -e PASSWORD -e TOKEN -e _PID= -e RUN_DIR -e SOCKET "$work/servers/env" >"$root/etc/rowpump/env"
# The host's /usr is read-only in the container: the binary lives in /opt. A short watchdog
# keeps the test quick; everything else is the unit as shipped.
mkdir -p "$root/etc/systemd/system/rowpump.service.d"
cat >"$root/etc/systemd/system/rowpump.service.d/test.conf" <<'UNIT'
[Service]
ExecStart=
ExecStart=/opt/rowpump/bin/rowpump run -c /etc/rowpump/rowpump.yaml
WatchdogSec=3
RestartSec=1
UNIT
in_container systemctl daemon-reload

show() { in_container systemctl show -p "$1" --value rowpump; }
state_is() { [[ $(show ActiveState) == "$1" ]]; }
status_matches() { [[ $(show StatusText) =~ $1 ]]; }

step "systemctl start: not ready while Redis does not answer"
in_container systemctl start --no-block rowpump
wait_until 30 status_matches 'retrying after: Redis' || fail "no 'retrying' STATUS: $(show StatusText)"
check "still activating while a queue cannot connect (StatusText: $(show StatusText))" state_is activating
redis-server --bind 127.0.0.1 --port "$ROWPUMP_REDIS_PORT" --save '' --appendonly no \
    --dir "$work" --daemonize yes --pidfile "$work/redis.pid" >/dev/null
wait_until 30 state_is active || fail "not active after Redis came back: $(show ActiveState)"
say "ok: active once Redis answered"
wait_until 30 status_matches 'leader, 2000 rows dispatched' || fail "not dispatched: $(show StatusText)"
check "the 2,000 due rows reached Redis" test "$(redis LLEN 'rowpump:{user_block_check}:ready')" = 2000

step "systemctl restart returns only after READY=1"
in_container systemctl restart rowpump
check "active as soon as systemctl returns" state_is active
check "STATUS= says what the queue does" status_matches '^user_block_check: leader, [0-9]+ rows dispatched$'
status_text=$(in_container systemctl status --no-pager rowpump || true)
check "systemctl status shows it" grep -q 'Status: "user_block_check: leader' <<<"$status_text"
grep -E '^ *(Active|Status):' <<<"$status_text"

step "a SIGSTOPped dispatcher is restarted by the watchdog"
stopped_pid=$(show MainPID)
restarts=$(show NRestarts)
in_container systemctl kill --kill-who=main --signal=SIGSTOP rowpump
restarted() { [[ $(show MainPID) != "$stopped_pid" && $(show MainPID) != 0 ]] && state_is active; }
wait_until 60 restarted || fail "not restarted: $(show ActiveState) $(show MainPID)"
check "NRestarts went up" test "$(show NRestarts)" -gt "$restarts"
journal() { in_container journalctl --no-pager -u rowpump "$@"; }
check "systemd says why" grep -q 'Watchdog timeout' <<<"$(journal -o cat)"

step "systemctl stop is clean"
in_container systemctl stop rowpump
check "inactive" state_is inactive
check "Result=success" test "$(show Result)" = success
check "exit status 0" test "$(show ExecMainStatus)" = 0
check "'stopped' logged" grep -q 'rowpump dispatcher stopped' <<<"$(journal -o cat)"

step "the journal has each line at its priority"
check "the Redis outage at warning" grep -q 'queue user_block_check: Redis: .*Connection refused' <<<"$(journal -p warning..warning -o cat)"
check "the leader lock at info" grep -q 'took the leader lock' <<<"$(journal -p info..info -o cat)"
check "no '<N>' prefix left in any message" test -z "$(journal -o cat | grep '^<[0-9]>' || true)"
check "no info line at warning or above" test -z "$(journal -p warning -o cat | grep 'took the leader lock' || true)"

say "systemd service test passed in $((SECONDS - step_started)) s"
