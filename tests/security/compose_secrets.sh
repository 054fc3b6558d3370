#!/usr/bin/env bash
# The compose demo's secrets, checked statically (`docker-compose config`, no engine needed):
# without ROWPUMP_MYSQL_PASSWORD and ROWPUMP_HTTP_TOKEN compose refuses (no fallback
# defaults), and with them the workers' containers get neither.
#   tests/security/compose_secrets.sh
# Exits 77 (skipped) without docker-compose.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v docker-compose >/dev/null || { echo "skipped: no docker-compose"; exit 77; }
compose() { docker-compose -f "$root/deploy/docker-compose.yml" config "$@"; }

if out=$(env -u ROWPUMP_MYSQL_PASSWORD -u ROWPUMP_HTTP_TOKEN bash -c \
    "$(declare -f compose); root='$root'; compose" 2>&1); then
    echo "FAIL: compose accepted the demo without secrets (a fallback default?)"
    exit 1
fi
grep -q 'generate one' <<<"$out" || { echo "FAIL: not the expected refusal: $out"; exit 1; }
echo "ok: without secrets compose refuses: ${out##*: }"

config=$(ROWPUMP_MYSQL_PASSWORD=mysql-secret-x ROWPUMP_HTTP_TOKEN=http-token-x compose)
# The worker service's part of the merged config: from "  worker:" to the next service.
worker=$(awk '/^  [a-z]+:$/ { in_worker = ($1 == "worker:") } in_worker' <<<"$config")
[[ -n $worker ]] || { echo "FAIL: no worker service in the config"; exit 1; }
for secret in mysql-secret-x http-token-x ROWPUMP_MYSQL_PASSWORD ROWPUMP_HTTP_TOKEN; do
    if grep -q "$secret" <<<"$worker"; then
        echo "FAIL: the workers get $secret:"
        echo "$worker"
        exit 1
    fi
done
echo "ok: the workers get neither the MySQL password nor the HTTP token"
grep -q 'ROWPUMP_MYSQL_PASSWORD: mysql-secret-x' <<<"$config" || { echo "FAIL: the dispatcher lost its password"; exit 1; }
echo "ok: migrate and the dispatcher get the password and the token passed in"
