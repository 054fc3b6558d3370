#!/usr/bin/env bash
# rowpump end to end against the job queues a new user would try (docs/benchmarks.md,
# "Against other job queues"): delayed_job on the same MariaDB, Sidekiq, BullMQ and RQ on the
# same Redis, each running no-op jobs, in rounds that interleave the systems. rowpump's
# workers run on each of its SDKs: C++ (against all), Node.js (against BullMQ, Node's peer)
# and Python (against RQ, Python's).
#   bench/scripts/peers.sh RUN_DIR DRIVER [--jobs N] [--python-jobs N] [--rounds R] [--systems LIST]
# scripts/bench.sh --peers calls this with the servers running and their ROWPUMP_* variables
# exported, DRIVER being build-bench/bench/rowpump_bench. LIST: comma-separated, of rowpump,
# rowpump-node, rowpump-python, delayed_job, sidekiq, bullmq, rq (default: all). --jobs: jobs
# per run (100,000); --python-jobs: per run of rowpump-python and RQ (10,000: RQ runs a few
# hundred jobs a second). Writes RUN_DIR/peers.tsv (every run), RUN_DIR/peers.md (the table)
# and RUN_DIR/peers.png (jobs/s), and prints the table.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

(($# >= 2)) ||
    die "usage: $0 RUN_DIR DRIVER [--jobs N] [--python-jobs N] [--rounds R] [--systems LIST]"
run_dir=$1 driver=$2
shift 2
jobs=100000 python_jobs=10000 rounds=2
systems=rowpump,rowpump-node,bullmq,rowpump-python,rq,sidekiq,delayed_job
while (($#)); do
    case $1 in
        --jobs) jobs=$2; shift 2 ;;
        --python-jobs) python_jobs=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --systems) systems=$2; shift 2 ;;
        *) die "unknown argument: $1" ;;
    esac
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs: expected a positive number, got '$jobs'"
[[ $python_jobs =~ ^[1-9][0-9]*$ ]] ||
    die "--python-jobs: expected a positive number, got '$python_jobs'"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds: expected a positive number, got '$rounds'"
for system in ${systems//,/ }; do
    [[ $system =~ ^(rowpump|rowpump-node|rowpump-python|delayed_job|sidekiq|bullmq|rq)$ ]] ||
        die "--systems: unknown system '$system'" \
            "(rowpump, rowpump-node, rowpump-python, delayed_job, sidekiq, bullmq, rq)"
done
peers=$ROWPUMP_ROOT/bench/peers
results=$run_dir/peers.tsv
export REDIS_URL=redis://$ROWPUMP_REDIS_HOST:$ROWPUMP_REDIS_PORT/0  # Sidekiq's

mysql_root() { mariadb --no-defaults -uroot --socket="$ROWPUMP_MYSQL_SOCKET" -N -B "$@"; }
proc_cpu() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print (f[12] + f[13]) / 100 }' "/proc/$1/stat"; }

# As the driver does before each measurement: Redis empty, MariaDB done purging and idle
# (history list under 1,000, under 5% of a core for half a second), at most 90 s.
reset_and_settle() {
    redis-cli -h "$ROWPUMP_REDIS_HOST" -p "$ROWPUMP_REDIS_PORT" flushall >/dev/null
    local deadline=$((SECONDS + 90)) history before after
    while ((SECONDS < deadline)); do
        history=$(mysql_root -e "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
            WHERE VARIABLE_NAME = 'INNODB_HISTORY_LIST_LENGTH'")
        before=$(proc_cpu "$ROWPUMP_MYSQL_PID")
        sleep 0.5
        after=$(proc_cpu "$ROWPUMP_MYSQL_PID")
        awk -v h="$history" -v b="$before" -v a="$after" 'BEGIN { exit !(h < 1000 && a - b < 0.025) }' &&
            return 0
    done
    log "MariaDB not idle after 90 s; measuring anyway"
}

# One row of peers.tsv: system, config, round, jobs, done, seconds, process CPU s (workers,
# and the dispatcher for rowpump), MariaDB CPU s, Redis CPU s, jobs run more than once.
record() { (IFS=$'\t'; say "$*") >>"$results"; }

# rowpump: the driver's end-to-end phase on a fresh table of JOBS rows, for each of CONFIGS
# (the driver's --e2e-configs; "node:" and "python:" ones run that SDK's worker). Duplicates:
# ready messages beyond the rows (each message runs once; a row pushed twice could run twice).
run_rowpump() {
    local round=$1 name=$2 jobs=$3 configs=$4 dir=$run_dir/$2-r$1
    "$driver" --run-dir "$dir" --phases e2e --reps 1 --e2e-rows "$jobs" \
        --e2e-configs "$configs" >/dev/null 2>>"$run_dir/peers.log"
    awk -F'\t' -v round="$round" -v jobs="$jobs" -v name="$name" -v OFS='\t' '
        $1 == "e2e" { delete v
            for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            print name, $2, round, jobs, v["completed"] - v["not_done_in_mysql"], v["seconds"],
                v["dispatcher_cpu_s"] + v["workers_cpu_s"], v["mysql_cpu_s"], v["redis_cpu_s"],
                v["dispatched"] - jobs }' "$dir/results.tsv" >>"$results"
}

# A peer program prints "result jobs= left= seconds= workers_cpu_s= mysql_cpu_s=
# redis_cpu_s="; its worker processes leave the ids they ran in ran-*.txt.
run_peer() {
    local system=$1 config=$2 round=$3 jobs=$4
    shift 4
    local dir=$run_dir/$system-$config-r$round line runs unique completed
    mkdir -p "$dir"
    reset_and_settle
    "$@" "$dir" >"$dir/out.log" 2>&1 || { tail -n 20 "$dir/out.log" >&2; die "$system $config failed"; }
    line=$(grep '^result ' "$dir/out.log") || die "$system $config: no result line in $dir/out.log"
    runs=$(cat "$dir"/ran-*.txt | grep -c . || true)
    unique=$(cat "$dir"/ran-*.txt | grep . | sort -u | wc -l)
    value() { sed -E "s/.* $1=([^ ]+).*/\1/" <<<" $line"; }
    completed=$(($(value jobs) - $(value left)))
    ((unique >= completed)) || completed=$unique
    record "$system" "$config" "$round" "$jobs" "$completed" \
        "$(value seconds)" "$(value workers_cpu_s)" "$(value mysql_cpu_s)" "$(value redis_cpu_s)" \
        "$((runs - unique))"
    ((unique == jobs)) || log "$system $config round $round: $unique of $jobs jobs ran"
    log "$system $config round $round: $(tail -n 1 "$results")"
}

run_round() {
    local round=$1
    if [[ ,$systems, == *,rowpump,* ]]; then
        log "round $round: rowpump (C++ workers)"
        run_rowpump "$round" rowpump "$jobs" 2x4@mysql,2x4x16@mysql,2x4@redis,2x4x16@redis
    fi
    if [[ ,$systems, == *,rowpump-node,* ]]; then
        log "round $round: rowpump (Node.js workers)"
        run_rowpump "$round" rowpump-node "$jobs" node:2x4@mysql,node:2x4@redis
    fi
    if [[ ,$systems, == *,bullmq,* ]]; then
        for processes in 1 2; do
            log "round $round: BullMQ, $processes x concurrency 50"
            run_peer bullmq "${processes}x50" "$round" "$jobs" \
                node "$peers/bullmq.mjs" run "$jobs" "$processes" 50
        done
    fi
    if [[ ,$systems, == *,rowpump-python,* ]]; then
        log "round $round: rowpump (Python workers)"
        run_rowpump "$round" rowpump-python "$python_jobs" python:2x4@mysql,python:2x4@redis
    fi
    if [[ ,$systems, == *,rq,* ]]; then
        for processes in 2 4; do
            log "round $round: RQ, $processes SimpleWorker processes, job logging off"
            run_peer rq "${processes}p-log-off" "$round" "$python_jobs" \
                /usr/bin/python3 "$peers/rq_peer.py" run "$python_jobs" "$processes" off
        done
    fi
    if [[ ,$systems, == *,sidekiq,* ]]; then
        for logging in on off; do
            log "round $round: Sidekiq, 2 processes x 10 threads, job logging $logging"
            run_peer sidekiq "2x10-log-$logging" "$round" "$jobs" \
                ruby "$peers/sidekiq.rb" "$jobs" 2 10 "$logging"
        done
    fi
    if [[ ,$systems, == *,delayed_job,* ]]; then
        for workers in 2 4; do
            log "round $round: delayed_job, $workers workers"
            run_peer delayed_job "${workers}w" "$round" "$jobs" \
                ruby "$peers/delayed_job.rb" run "$jobs" "$workers"
        done
    fi
}

deb_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed -E 's/^[0-9]+://; s/[-+~].*//'; }
npm_version() { node -p "require('$peers/node_modules/$1/package.json').version"; }
ruby_version() { command -v ruby >/dev/null && ruby -e 'print RUBY_VERSION'; }
versions() {
    say "Peers: delayed_job $(deb_version ruby-delayed-job) with delayed_job_active_record" \
        "$(deb_version ruby-delayed-job-active-record), ActiveRecord $(deb_version ruby-activerecord)" \
        "and mysql2 $(deb_version ruby-mysql2); Sidekiq $(deb_version ruby-sidekiq) with redis-rb" \
        "$(deb_version ruby-redis); Ruby $(ruby_version) (Debian); BullMQ" \
        "$(npm_version bullmq) with ioredis $(npm_version ioredis) (npm), Node.js $(node --version);" \
        "RQ $(deb_version python3-rq) with redis-py $(deb_version python3-redis), Python" \
        "$(/usr/bin/python3 -c 'import platform; print(platform.python_version())') (Debian)."
}

: >"$results"
for ((round = 1; round <= rounds; round++)); do run_round "$round"; done
versions
say
"$ROWPUMP_ROOT/bench/scripts/peers_report.sh" "$results" "$run_dir"
