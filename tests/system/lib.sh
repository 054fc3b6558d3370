# Helpers for the system tests (real systemd, real packages, a real Docker engine); sourced.
# shellcheck shell=bash
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

# ctest's SKIP_RETURN_CODE for these tests: the machine lacks what the test needs.
SKIPPED=77

skip() {
    say "skipped: $*"
    exit "$SKIPPED"
}

step_started=$SECONDS
step() {
    say "[$((SECONDS - step_started))s] $*"
}

fail() {
    say "FAILED: $*"
    exit 1
}

# check DESCRIPTION CMD...: runs CMD, fails the test with DESCRIPTION if it fails.
check() {
    local what=$1; shift
    "$@" || fail "$what"
    say "ok: $what"
}

# Skips unless this is root and `tool` is on PATH (`package` installs it).
require_root_and() {
    local tool=$1 package=$2
    ((EUID == 0)) || skip "needs root"
    command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install $package)"
}

# --- a systemd container over this machine's root ---------------------------------------
# systemd-nspawn --volatile=yes: a tmpfs root with the host's /usr read-only and the host's
# network (the throwaway servers on 127.0.0.1 are reachable). A preset that disables every
# unit keeps the host's enabled services (MariaDB, Redis, Docker...) from starting in it, and
# systemd.firstboot=off keeps the empty /etc from prompting on the console.

container_leader=
container_nspawn=

# boot_container WORK_DIR: boots it and waits until systemd is up; the container's root is
# then /proc/$container_leader/root.
boot_container() {
    local work=$1
    mkdir -p "$work/preset"
    echo 'disable *' >"$work/preset/00-rowpump-test.preset"
    systemd-nspawn -D / --volatile=yes --boot --register=no --keep-unit --quiet \
        --bind-ro="$work/preset:/etc/systemd/system-preset" \
        systemd.firstboot=off >"$work/console.log" 2>&1 &
    container_nspawn=$!
    wait_until 30 find_container_leader || fail "the container did not start (see $work/console.log)"
    wait_until 30 test -S "/proc/$container_leader/root/run/systemd/private" ||
        fail "systemd in the container did not start (see $work/console.log)"
    local state
    state=$(timeout 60 nsenter -t "$container_leader" -a systemctl is-system-running --wait || true)
    [[ $state == running || $state == degraded ]] || fail "systemd in the container is '$state'"
}

# PID 1 of the container, as the host sees it: nspawn's child whose last NSpid is 1.
find_container_leader() {
    local child
    for child in $(pgrep -P "$container_nspawn" || true); do
        if [[ $(awk '/^NSpid:/ { print $NF }' "/proc/$child/status" 2>/dev/null) == 1 ]]; then
            container_leader=$child
            return 0
        fi
    done
    return 1
}

in_container() {
    nsenter -t "$container_leader" -a "$@"
}

# A clean poweroff (SIGRTMIN+4 to its systemd), then SIGKILL for nspawn if it hangs.
poweroff_container() {
    [[ -n $container_nspawn ]] || return 0
    if [[ -n $container_leader ]]; then
        kill -s SIGRTMIN+4 "$container_leader" 2>/dev/null || true
    fi
    wait_until 30 proc_gone "$container_nspawn" || kill -KILL "$container_nspawn" 2>/dev/null || true
    wait "$container_nspawn" 2>/dev/null || true
    container_nspawn=
}

# deploy/demo.yaml serves metrics and the dashboard at ${ROWPUMP_HTTP_LISTEN}, with actions
# behind ${ROWPUMP_HTTP_TOKEN}: a free loopback port and a fresh token, added to the servers'
# env file (which the tests hand on to the dispatcher) and exported here.
with_http_env() {
    local env_file=$1
    ROWPUMP_HTTP_LISTEN=127.0.0.1:$(pick_port)
    ROWPUMP_HTTP_TOKEN=$(random_hex 16)
    export ROWPUMP_HTTP_LISTEN ROWPUMP_HTTP_TOKEN
    printf 'ROWPUMP_HTTP_LISTEN=%s\nROWPUMP_HTTP_TOKEN=%s\n' "$ROWPUMP_HTTP_LISTEN" \
        "$ROWPUMP_HTTP_TOKEN" >>"$env_file"
}
