#!/usr/bin/env bash
# A rowpump worker written with nothing but redis-cli, following the wire protocol
# (common/include/rowpump/common/protocol/protocol.hpp; docs/protocol.md): it shows that a worker
# needs no SDK. The end-to-end tests run it; it reports every task "ok status=1".
#
#   redis_cli_worker.sh HOST PORT QUEUE WORKER_ID [HEARTBEAT_TTL_MS [WORK_S EXTEND]]
#
# With WORK_S and EXTEND (a duration such as 60s), each task is a slow one: the script first
# extends its lease to EXTEND from now, then works for WORK_S seconds, then reports it.
#
# Runs until SIGTERM/SIGINT, then finishes the task in hand, signs off and exits 0.
# Exits 1 if no dispatcher announces the queue within 30 s, or if the dispatcher speaks
# another protocol version than this script's (1; an absent field means 1).
set -u

host=$1 port=$2 queue=$3 worker=$4 ttl_ms=${5:-10000} work_s=${6:-0} extend=${7:-}
prefix="rowpump:{$queue}:"
ready="${prefix}ready"
done_list="${prefix}done"
meta="${prefix}meta"
workers="${prefix}workers"
processing="${prefix}processing:$worker"
heartbeat="${prefix}heartbeat:$worker"

# For each (ready, done) pair: removes the task from our processing list and, only if it was
# still there (the dispatcher had not taken it back), pushes the done message. Returns how
# many were accepted. Same code as common/lua/complete.lua (below its header comment); a unit
# test compares the two.
complete_script="
local accepted = 0
for i = 1, #ARGV, 2 do
  if redis.call('LREM', KEYS[1], 1, ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    accepted = accepted + 1
  end
end
return accepted
"

# Beat every ttl/3. Each BLMOVE blocks for less than the heartbeat can lapse once we freeze
# ((ttl - ttl/3) / 2, at most 1 s): Redis would still serve a longer block after the dispatcher
# had given up on us, into a processing list nobody watches.
beat_ms=$((ttl_ms / 3))
block_ms=$(((ttl_ms - beat_ms) / 2))
((block_ms > 1000)) && block_ms=1000
((block_ms < 10)) && block_ms=10
block=$(printf '%d.%03d' $((block_ms / 1000)) $((block_ms % 1000)))

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
cli() { redis-cli -h "$host" -p "$port" --raw "$@"; }

# The heartbeat key goes first: a listed worker without one is a dead worker to the dispatcher.
beat() {
  cli SET "$heartbeat" "$worker" PX "$ttl_ms" >/dev/null
  cli SADD "$workers" "$worker" >/dev/null
  last_beat=$(now_ms)
}

stop=0
trap 'stop=1' TERM INT

for ((waited = 0; ; waited++)); do
  [ "$(cli EXISTS "$meta")" = 1 ] && break
  if ((waited >= 300 || stop)); then
    echo "redis_cli_worker: unknown queue '$queue': no dispatcher has announced it ($meta is missing)" >&2
    exit 1
  fi
  sleep 0.1
done
# The protocol rule (docs/protocol.md, "Protocol version"), checked before anything is taken.
protocol=$(cli HGET "$meta" protocol)
if [ "${protocol:-1}" != 1 ]; then
  echo "redis_cli_worker: queue '$queue': the dispatcher speaks protocol version '$protocol', this worker 1" >&2
  exit 1
fi

beat
while ((!stop)); do
  (($(now_ms) - last_beat >= beat_ms)) && beat
  message=$(cli BLMOVE "$ready" "$processing" LEFT RIGHT "$block")
  [ -n "$message" ] || continue
  if [ -n "$extend" ]; then
    # A plain RPUSH, not the complete script: the task must stay in the processing list.
    cli RPUSH "$done_list" "$message extend lease=$extend" >/dev/null
    sleep "$work_s"
  fi
  accepted=$(cli EVAL "$complete_script" 2 "$processing" "$done_list" "$message" "$message ok status=1")
  [ "$accepted" = 1 ] || echo "redis_cli_worker: report on '$message' came too late" >&2
done

# Sign off: drop the heartbeat; leave the workers set only with nothing left in hand.
cli DEL "$heartbeat" >/dev/null
[ "$(cli LLEN "$processing")" = 0 ] && cli SREM "$workers" "$worker" >/dev/null
exit 0
