#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build rowpump, run its tests and run the demo.
# Idempotent: when everything is installed it only asks dpkg and returns.
#   scripts/install-deps.sh [--peers]
# --peers: also the job queues scripts/bench.sh --peers compares rowpump with (delayed_job
# with ActiveRecord on MySQL, Sidekiq, RQ; BullMQ comes from npm, bench/peers/package-lock.json)
# and gnuplot for its plot.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

packages=(
    # build; clang and its sanitizer and libFuzzer runtimes for scripts/fuzz.sh
    build-essential cmake pkg-config g++ clang-format clang libclang-rt-14-dev
    # libraries: MySQL connector (its headers need Boost), hiredis, logging, config, tests, CLI
    libmysqlcppconn-dev libboost-dev libhiredis-dev libspdlog-dev libyaml-cpp-dev catch2 libcli11-dev
    # the dispatcher's HTTP endpoint (/metrics, health, dashboard) and its JSON
    libcpp-httplib-dev nlohmann-json3-dev
    # libcrypto: the MAC that signs claim: redis tokens
    libssl-dev
    # tests: promtool checks the /metrics format; Chromium shows the dashboard to a real browser
    prometheus chromium chromium-driver
    # servers for the integration tests and the demo, their clients, and ps/pgrep
    mariadb-server mariadb-client redis-server redis-tools procps
    # Redis Sentinel for the high-availability tests (tests/integration/test_redis_ha.cpp)
    redis-sentinel
    # TLS tests: certificates made with the openssl command (test_mysql_tls.cpp), the TLS
    # tunnel to Redis that docs/operations.md ("Running in production") describes
    openssl socat
    # the Python worker SDK (worker-sdk/python) and its tests: Debian's redis-py, and venv,
    # setuptools and pip for the offline `pip install --no-build-isolation`, mypy for its types
    python3 python3-redis python3-venv python3-setuptools python3-pip mypy
    # libfaketime: a MariaDB whose clock a test steps (tests/integration/test_lease_clock.cpp)
    faketime
    # system tests (tests/system): systemd in a container, a clean Debian root for the .deb,
    # a Docker engine and compose v1 for the demo
    systemd-container debootstrap docker.io docker-compose
    # the protocol model (scripts/model-check.sh): spin, whose verifiers gcc compiles
    spin
)

if [[ ${1:-} == --peers ]]; then
    packages+=(ruby ruby-delayed-job ruby-delayed-job-active-record ruby-activerecord ruby-mysql2
        ruby-sidekiq python3-rq gnuplot-nox)
elif (($#)); then
    die "unknown argument: $1 (expected --peers or nothing)"
fi

# Node.js and npm drive the browser test (playwright-core, tests/browser/package-lock.json)
# and run BullMQ for the peers benchmark, and the Node.js worker SDK (worker-sdk/node, its
# packages pinned by package-lock.json; tests/node/npm_ci.sh installs them).
# Machines that already have a Node.js with npm keep it.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [[ $status == installed ]] || missing+=("$pkg")
done
((${#missing[@]})) || exit 0

sudo=()
if ((EUID != 0)); then
    command -v sudo >/dev/null || die "not root and no sudo: install as root: ${missing[*]}"
    sudo=(sudo)
fi

log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive

# Keep the packaged MariaDB and Redis services from starting: rowpump's scripts and tests run
# servers of their own on other ports, and two idle daemons would only cost memory.
policy=/usr/sbin/policy-rc.d
if [[ ! -e $policy ]]; then
    trap '"${sudo[@]}" rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
fi

"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
log "done"
