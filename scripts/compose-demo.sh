#!/usr/bin/env bash
# The docker-compose demo (deploy/docker-compose.yml) run for real, with progress:
# MariaDB with 100,000 due users, Redis, the schema migration, the dispatcher and 4 workers.
#
#   scripts/compose-demo.sh [--local-images] [--for SECONDS] [--keep]
#   scripts/compose-demo.sh [--local-images] --down      remove what --keep left running
#
# --for 30      stop after that many seconds (default: at Ctrl-C), then `down -v`
# --keep        leave the demo (and a private engine) running instead
# --local-images  for machines that cannot pull images: imports a debootstrap'd Debian 12
#               root (scripts/debian-root.sh) as debian:bookworm and builds stand-ins for
#               mariadb:10.11 and redis:7 (tests/system/compose/local-images.yml)
#
# The engine: $DOCKER_HOST or /var/run/docker.sock if one answers; otherwise, as root, a
# private dockerd (socket and state in /run/rowpump-docker, images in
# ${ROWPUMP_TEST_CACHE:-/var/cache/rowpump-test}/docker) without a default bridge or iptables
# rules, stopped again at the end. Compose: `docker compose` (v2) if there, else
# `docker-compose` (Debian's v1).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

local_images=0 keep=0 down=0 duration=
while (($#)); do
    case $1 in
        --local-images) local_images=1 ;;
        --keep) keep=1 ;;
        --down) down=1 ;;
        --for) duration=${2:?--for needs a number of seconds}; shift ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
    shift
done

cache=${ROWPUMP_TEST_CACHE:-/var/cache/rowpump-test}
private=/run/rowpump-docker
files=(-f "$ROWPUMP_ROOT/deploy/docker-compose.yml")
((!local_images)) || files+=(-f "$ROWPUMP_ROOT/tests/system/compose/local-images.yml")
export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-rowpump-demo}
# Compose v1 builds through its own client, which honours `build.network` (the private
# engine has no default bridge, so builds use the host's network).
export COMPOSE_DOCKER_CLI_BUILD=0

engine_answers() { docker version >/dev/null 2>&1; }

start_private_engine() {
    ((EUID == 0)) || die "no Docker engine answers, and starting one needs root"
    command -v dockerd >/dev/null || die "no Docker engine (apt-get install docker.io docker-compose)"
    mkdir -p "$private" "$cache/docker"
    export DOCKER_HOST=unix://$private/docker.sock
    if engine_answers; then return 0; fi
    log "starting a private dockerd ($DOCKER_HOST, log $private/dockerd.log)"
    dockerd --host "$DOCKER_HOST" --data-root "$cache/docker" --exec-root "$private/exec" \
        --pidfile "$private/dockerd.pid" --bridge=none --iptables=false \
        >"$private/dockerd.log" 2>&1 &
    echo $! >"$private/started-by-demo"
    wait_until 60 engine_answers || { tail -n 20 "$private/dockerd.log" >&2; die "dockerd did not start"; }
}

stop_private_engine() {
    [[ -e $private/started-by-demo ]] || return 0
    # Each source change leaves the previous build's images behind, unnamed; the current
    # ones (and the layers they share, such as the build stage's packages) stay cached.
    docker image prune -f --filter until=6h >/dev/null 2>&1 || true
    log "stopping the private dockerd"
    local pid
    pid=$(cat "$private/started-by-demo")
    stop_pid "$pid" dockerd 30 || true
    wait "$pid" 2>/dev/null || true  # reaped here when this run started it
    rm -f "$private/started-by-demo"
    # dockerd leaves its namespace mount behind; the next start makes a new one.
    umount "$private/exec/netns/default" 2>/dev/null || true
}

compose() {
    if docker compose version >/dev/null 2>&1; then
        docker compose "${files[@]}" "$@"
    else
        command -v docker-compose >/dev/null || die "neither docker compose nor docker-compose"
        docker-compose "${files[@]}" "$@"
    fi
}

# The debootstrap'd root as the base image the Dockerfiles start FROM.
import_base_image() {
    if docker image inspect debian:bookworm >/dev/null 2>&1; then return 0; fi
    local root
    root=$("$ROWPUMP_ROOT/scripts/debian-root.sh")
    log "importing $root as debian:bookworm (and debian:bookworm-slim)"
    tar -C "$root" --exclude=./.complete -c . | docker import - debian:bookworm >/dev/null
    docker tag debian:bookworm debian:bookworm-slim
}

# Rows the workers have checked: seed.sql makes every row an hour old, a check sets NOW(3).
processed_rows() {
    compose exec -T mariadb sh -c 'mariadb -u"$MARIADB_USER" -p"$MARIADB_PASSWORD" "$MARIADB_DATABASE" -N -e \
        "SELECT COUNT(*) FROM user_block_status WHERE updated_time > NOW(3) - INTERVAL 30 MINUTE"' 2>/dev/null
}

# The demo's secrets: fresh ones unless the caller gives its own (the compose file has no
# fallbacks). Only compose sees them; the workers' containers get neither.
ROWPUMP_MYSQL_PASSWORD=${ROWPUMP_MYSQL_PASSWORD:-$(random_hex 16)}
ROWPUMP_HTTP_TOKEN=${ROWPUMP_HTTP_TOKEN:-$(random_hex 16)}
export ROWPUMP_MYSQL_PASSWORD ROWPUMP_HTTP_TOKEN

engine_answers || start_private_engine
if ((down)); then
    compose down -v --remove-orphans
    stop_private_engine
    exit 0
fi

finish() {
    local status=$?
    if ((keep && status == 0)); then
        log "left running; stop with: $0$( ((local_images)) && echo ' --local-images') --down"
        return
    fi
    log "docker-compose down -v"
    compose down -v --remove-orphans >/dev/null 2>&1 || true
    stop_private_engine
}
on_exit finish

if ((local_images)); then import_base_image; fi
log "building the images (the first time takes minutes: Debian packages and a compile)"
compose build >"${TMPDIR:-/tmp}/rowpump-compose-build.log" 2>&1 ||
    { tail -n 30 "${TMPDIR:-/tmp}/rowpump-compose-build.log" >&2; die "build failed"; }
log "docker-compose up: MariaDB (seed.sql), Redis, migrate, dispatcher, workers"
compose up -d
started=$SECONDS
until [[ $(compose ps -q dispatcher 2>/dev/null) ]] && processed_rows >/dev/null; do
    ((SECONDS - started < 300)) || { compose logs --tail 30 >&2; die "the demo did not come up"; }
    sleep 1
done
compose ps
say "progress (rowpump status in the dispatcher's container, every 2 s):"
deadline=
[[ -z $duration ]] || deadline=$((SECONDS + duration))
skip_header=
while [[ -z $deadline ]] || ((SECONDS < deadline)); do
    compose exec -T dispatcher rowpump status -c /etc/rowpump/rowpump.yaml 2>&1 | sed "${skip_header}s/^/  /"
    skip_header='1d; '
    sleep 2
done
say "processed: $(processed_rows) of the 100000 users checked at least once (in MariaDB)"
