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
# another protocol version than this script's (1; an absent field means 1), or if another live
# process holds WORKER_ID (docs/protocol.md: one incarnation per process).
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

# The heartbeat of this process: refreshed only while it is absent or ours (its value carries
# our incarnation); the first beat reports what an earlier process under our worker id left
# in the processing list as retries. Same code as common/lua/beat.lua (a unit test compares).
beat_script="
local held = redis.call('GET', KEYS[1])
if held and not string.find(';' .. held .. ';', ';incarnation=' .. ARGV[4] .. ';', 1, true) then
  return {held}
end
local left = {}
if ARGV[5] and not held then left = redis.call('LRANGE', KEYS[3], 0, -1) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
for i = 1, #left do
  redis.call('RPUSH', KEYS[4], string.match(left[i], '^[^ ]*') .. ARGV[5])
end
if #left > 0 then redis.call('DEL', KEYS[3]) end
return #left
"

# Sign off: our heartbeat only. Same code as common/lua/leave.lua (a unit test compares).
leave_script="
if ARGV[2] then
  local held = redis.call('GET', KEYS[1])
  if held and not string.find(';' .. held .. ';', ';incarnation=' .. ARGV[2] .. ';', 1, true) then
    return -1
  end
end
redis.call('DEL', KEYS[1])
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return left
"

# A process is its worker id plus an incarnation chosen at random when it starts.
incarnation=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
left_reason=" retry reason=worker%20${worker}%20restarted%20before%20reporting%20it delay=0ms"

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

# One beat (the script sets the heartbeat before it lists us: a listed worker without one is a
# dead worker to the dispatcher); with "first", this incarnation's first. Sets `other` to the
# heartbeat's value when another incarnation holds it (the beat did nothing), else to "".
beat() {
  local reply
  reply=$(redis-cli -h "$host" -p "$port" --no-raw EVAL "$beat_script" 4 "$heartbeat" "$workers" \
    "$processing" "$done_list" "$worker" "incarnation=$incarnation" "$ttl_ms" "$incarnation" \
    ${1:+"$left_reason"})
  other=""
  case $reply in
    "(integer) "*) last_beat=$(now_ms) ;;
    *) other=$(cli GET "$heartbeat"); [ -n "$other" ] || other="?" ;;
  esac
}

in_use() {
  echo "redis_cli_worker: worker id '$worker' is in use by another live process ($1) (heartbeat $heartbeat: '$other')" >&2
  exit 1
}

# Another incarnation holds our worker id at start: a process just killed, whose heartbeat
# lapses within its TTL, or a live one, which renews it. Wait for one or the other.
take_over() {
  local last value ttl
  last=$(cli PTTL "$heartbeat")
  while [ -n "$other" ]; do
    [ "$last" = -1 ] && in_use "its heartbeat has no TTL"
    sleep 0.1
    ((stop)) && exit 0
    value=$(cli GET "$heartbeat")
    ttl=$(cli PTTL "$heartbeat")
    if [ -z "$value" ]; then
      beat first
      last=$(cli PTTL "$heartbeat")
    elif [ "$value" != "$other" ] || ((ttl > last)); then
      in_use "it renewed its heartbeat"
    else
      last=$ttl
    fi
  done
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

beat first
take_over
while ((!stop)); do
  if (($(now_ms) - last_beat >= beat_ms)); then
    beat
    if [ -n "$other" ]; then
      echo "redis_cli_worker: worker id '$worker' was taken over by another process while this one's heartbeat had lapsed" >&2
      exit 1
    fi
  fi
  message=$(cli BLMOVE "$ready" "$processing" LEFT RIGHT "$block")
  [ -n "$message" ] || continue
  head=${message%% *}  # <id>:<token>: fields (a payload) may follow after a space
  if [ -n "$extend" ]; then
    # A plain RPUSH, not the complete script: the task must stay in the processing list.
    cli RPUSH "$done_list" "$head extend lease=$extend" >/dev/null
    sleep "$work_s"
  fi
  accepted=$(cli EVAL "$complete_script" 2 "$processing" "$done_list" "$message" "$head ok status=1")
  [ "$accepted" = 1 ] || echo "redis_cli_worker: report on '$message' came too late" >&2
done

# Sign off: drop our heartbeat; leave the workers set only with nothing left in hand.
cli EVAL "$leave_script" 3 "$heartbeat" "$processing" "$workers" "$worker" "$incarnation" >/dev/null
exit 0
