#!/usr/bin/env bash
# The compose demo in a real Docker engine: scripts/compose-demo.sh --local-images (a private
# dockerd, the debootstrap'd Debian base imported as debian:bookworm, stand-ins for
# mariadb:10.11 and redis:7) runs deploy/docker-compose.yml briefly; then checks that every
# service came up (4 workers, migrate exited 0), that the dispatcher's HEALTHCHECK says
# healthy, and in MariaDB that the workers have processed rows.
#
#   tests/system/compose_demo.sh
# Exits 77 (skipped) without root, dockerd or docker-compose.
set -euo pipefail
# shellcheck source=tests/system/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root_and dockerd docker.io
require_root_and docker-compose docker-compose
require_root_and debootstrap debootstrap

demo=("$ROWPUMP_ROOT/scripts/compose-demo.sh" --local-images)
export COMPOSE_PROJECT_NAME=rowpump-system-test
# The demo's secrets, chosen here and shared with scripts/compose-demo.sh: the compose file has
# no fallbacks, so this script's own docker-compose calls below need the same values.
ROWPUMP_MYSQL_PASSWORD=$(random_hex 16)
ROWPUMP_HTTP_TOKEN=$(random_hex 16)
export ROWPUMP_MYSQL_PASSWORD ROWPUMP_HTTP_TOKEN
cleanup() { "${demo[@]}" --down >/dev/null 2>&1 || true; }
on_exit cleanup

step "scripts/compose-demo.sh --local-images --for 15 --keep"
"${demo[@]}" --for 15 --keep || fail "the demo did not run"

step "what is running"
# The engine the demo used: the machine's own, or else its private one.
if [[ -z ${DOCKER_HOST:-} ]] && ! docker version >/dev/null 2>&1; then
    export DOCKER_HOST=unix:///run/rowpump-docker/docker.sock
fi
compose() {
    docker-compose -f "$ROWPUMP_ROOT/deploy/docker-compose.yml" \
        -f "$ROWPUMP_ROOT/tests/system/compose/local-images.yml" "$@"
}
running() { compose ps -q "$1" | xargs -r docker inspect -f '{{.State.Running}}' | grep -c true || true; }
check "MariaDB runs" test "$(running mariadb)" = 1
check "Redis runs" test "$(running redis)" = 1
check "the dispatcher runs" test "$(running dispatcher)" = 1
check "4 workers run" test "$(running worker)" = 4
migrate_exit=$(compose ps -q migrate | xargs docker inspect -f '{{.State.ExitCode}}')
check "migrate exited 0" test "$migrate_exit" = 0

dispatcher=$(compose ps -q dispatcher)
health() { docker inspect -f '{{.State.Health.Status}}' "$dispatcher"; }
wait_until 60 test "$(health)" = healthy || fail "the dispatcher's health check says $(health)"
say "ok: the dispatcher's HEALTHCHECK says healthy"

step "rows processed, in MariaDB"
processed=$(compose exec -T mariadb sh -c 'mariadb -u"$MARIADB_USER" -p"$MARIADB_PASSWORD" "$MARIADB_DATABASE" -N -e \
    "SELECT COUNT(*) FROM user_block_status WHERE updated_time > NOW(3) - INTERVAL 30 MINUTE"')
check "the workers processed rows ($processed of 100000)" test "$processed" -gt 0

say "compose demo test passed in $((SECONDS - step_started)) s"
