-- lead: takes a queue's leader lock when it is free, renews it when ARGV[1] holds it. The lock
-- (Keys::leader) holds the leading dispatcher's id and expires unless that dispatcher renews
-- it, so a leader that stops making progress (killed, frozen, a stuck host) loses it within the
-- expiry, measured on the Redis server's clock. Whatever a leader writes that another one would
-- also write (pushes, done-list trims) is fenced: it checks the lock in the same script
-- (push.lua, ack_done.lua), so a stale leader's write is refused atomically.
-- The epoch key holds a value no leader wrote before, written by the first leader since Redis
-- last lost its data: a leader that finds none writes ARGV[3], and nothing expires or deletes
-- it. A dispatcher that saw one epoch and later sees another knows Redis lost its data in
-- between (scan_claim.cpp).
--   KEYS[1] leader key, KEYS[2] epoch key
--   ARGV[1] caller's id, ARGV[2] expiry in ms, ARGV[3] a fresh epoch
--   returns {the holder's id after the call (ARGV[1] when the caller leads), '1' when the
--           caller took a free lock, else '0' (it renewed its own, or another holds it), the
--           epoch after the call ('' when none)}: a leader that takes a free lock lost it at
--           some point, and another may have led meanwhile
-- A key no dispatcher wrote (not a string, or another's id without an expiry: this script
-- always sets one) holds no lock: it is taken as free.
local holder = redis.pcall('GET', KEYS[1])
if type(holder) == 'table' and holder['err'] then
  redis.call('DEL', KEYS[1])
  holder = false
elseif holder and holder ~= ARGV[1] and redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('DEL', KEYS[1])
  holder = false
end
local function epoch()
  local value = redis.pcall('GET', KEYS[2])
  if type(value) ~= 'string' then return '' end
  return value
end
if holder and holder ~= ARGV[1] then return {holder, '0', epoch()} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if epoch() == '' then
  redis.call('DEL', KEYS[2])
  redis.call('SET', KEYS[2], ARGV[3])
end
if holder then return {ARGV[1], '0', epoch()} end
return {ARGV[1], '1', epoch()}
