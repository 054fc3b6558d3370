#!/usr/bin/env bash
# What a fair claim read costs (docs/fairness.md): today's ordered claim, a ROW_NUMBER() window
# claim and the key ring's per-key claim, each run as consecutive claims that stamp leases, on
# ROWS due rows with 10, 1,000 and 100,000 keys taking turns, and with one noisy key.
#   bench/scripts/fair_claim.sh [ROWS]      (default 1000000)
# MYSQL: the client command line for an empty scratch database on MariaDB 10.11
# (default: mariadb fair). The database's `jobs` table is dropped and refilled.
set -euo pipefail
rows=${1:-1000000}
mysql=${MYSQL:-mariadb fair}
here=$(dirname "${BASH_SOURCE[0]}")
$mysql -e "DROP TABLE IF EXISTS jobs"
$mysql <"$here/fair_claim.sql"
run() { $mysql --table -e "$1" | grep -v '^+' | grep -v 'read  *|' || true; }
for keys in 10 1000 100000; do
    echo "== $rows due rows, $keys keys taking turns"
    $mysql -e "CALL fill($rows, $keys, 0)" >/dev/null
    run "CALL claim_ordered(20, 1000)"
    run "CALL claim_window(3, 1000, GREATEST(1, CEIL(1000 / $keys)))"
    run "CALL claim_keys(20, 1000, 100)"
    run "CALL claim_keys(20, 1000, 1000)"
done
echo "== $rows due rows: key 0 with all but 9,900, 99 keys with 100 each, key 0's rows first"
$mysql -e "CALL fill($rows, 100, 1)" >/dev/null
run "CALL claim_ordered(20, 1000)"
run "CALL claim_window(3, 1000, 10)"
run "CALL claim_keys(20, 1000, 100)"
