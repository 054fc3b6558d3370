#!/bin/sh
# As the official image: `redis-server ARGS` without a config file gets --protected-mode no.
set -e
if [ "$1" = redis-server ]; then
    shift
    exec redis-server --bind '* -::*' --protected-mode no "$@"
fi
exec "$@"
