#!/bin/bash
# Initialises an empty data directory the way the official image does, then runs the server.
set -euo pipefail
[[ ${1:-} != -* ]] || set -- mariadbd "$@"   # options alone: they are the server's
if [[ $1 != mariadbd ]]; then exec "$@"; fi
shift

datadir=/var/lib/mysql
if [[ ! -d $datadir/mysql ]]; then
    echo "stand-in mariadb: initialising $datadir"
    mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db \
        --auth-root-authentication-method=socket >/dev/null
    # A private socket while initialising: the health check fails until the real server runs.
    init_socket=/run/mysqld/init.sock
    mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket="$init_socket" &
    init_pid=$!
    for _ in $(seq 300); do
        mariadb-admin --socket="$init_socket" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    sql() { mariadb --socket="$init_socket" -uroot "$@"; }
    sql <<SQL
CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE:?}\`;
CREATE USER '${MARIADB_USER:?}'@'%' IDENTIFIED BY '${MARIADB_PASSWORD:?}';
GRANT ALL ON \`${MARIADB_DATABASE}\`.* TO '${MARIADB_USER}'@'%';
SQL
    for file in /docker-entrypoint-initdb.d/*.sql; do
        [[ -e $file ]] || continue
        echo "stand-in mariadb: running $file"
        sql "$MARIADB_DATABASE" <"$file"
    done
    mariadb-admin --socket="$init_socket" shutdown
    wait "$init_pid" || true
    echo "stand-in mariadb: initialised"
fi
exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 --skip-name-resolve "$@"
