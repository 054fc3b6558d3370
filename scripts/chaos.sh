#!/usr/bin/env bash
# The chaos run (docs/chaos.md): a workload under a seeded fault schedule, and a verdict on it.
#   scripts/chaos.sh [--tasks N] [--seed S] [--claim mysql|redis] [--keep] [-- DRIVER_OPTION...]
# Installs packages, builds rowpump_chaos in build/, and runs it: it starts its own MariaDB,
# Redis, two dispatchers and the workers, plays the schedule printed at the start, waits for
# the work to finish, and prints one line:
#   chaos: seed S tasks N, lost 0, applied twice 0, extra runs K (explained K), rate violations 0, key concurrency violations 0, key rate violations 0, finished in T s
# Exit 1 if any count but K is non-zero or an extra handler run is not explained by a fault.
# --tasks: default 50,000 (about 2 minutes; what CI runs); 1000000 is the full run.
# --seed: repeat a schedule (default: a new random seed, printed first).
# --claim: every queue's claim mode (default mysql; docs/semantics.md, "Claims in MySQL or in Redis"),
#   except the grouped queue's (keyed), which is claim: mysql in both (group_by needs it).
# The run directory (run/chaos-<time>/: config, logs, ledgers) is kept when the run fails or
# with --keep, removed otherwise. Options after -- go to the driver (build/chaos/rowpump_chaos
# --help), e.g. -- --seconds 300.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

keep=0
driver_args=()
while (($#)); do
    case $1 in
        --tasks|--seed|--claim)
            (($# >= 2)) || die "$1 needs a value"
            driver_args+=("$1" "$2"); shift 2 ;;
        --keep) keep=1; shift ;;
        --) shift; driver_args+=("$@"); break ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (driver options go after --)" ;;
    esac
done

"$ROWPUMP_ROOT/scripts/install-deps.sh"
"$ROWPUMP_ROOT/tests/node/npm_ci.sh" "$ROWPUMP_ROOT/worker-sdk/node" >/dev/null  # the Node.js workers
"$ROWPUMP_ROOT/scripts/build.sh" rowpump_chaos >/dev/null

run_dir=$ROWPUMP_ROOT/run/chaos-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "${run_dir%/*}"
mkdir "$run_dir" || die "$run_dir exists"

status=0
"$ROWPUMP_ROOT/build/chaos/rowpump_chaos" --run-dir "$run_dir" "${driver_args[@]}" || status=$?
if ((status == 0 && !keep)); then
    rm -rf "$run_dir"
else
    log "configs, logs and ledgers: $run_dir"
fi
exit "$status"
