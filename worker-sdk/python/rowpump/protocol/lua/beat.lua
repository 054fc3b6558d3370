-- beat: a worker's heartbeat, run at start and every ttl/3. A worker process is its worker id
-- plus an incarnation chosen at random when it starts (again in a child after fork), carried in
-- the heartbeat's value as a field "incarnation=<hex>" (fields separated by ';'). The beat
-- refreshes the heartbeat only while it is absent or this incarnation's, so two live processes
-- with one worker id cannot both hold it. The first beat of an incarnation (ARGV[5] given)
-- reports every task left in the processing list, held by an earlier incarnation that is gone,
-- as "<id>:<token><ARGV[5]>" (a retry) to the done list, as the dispatcher's reap would.
--   KEYS[1] heartbeat, KEYS[2] workers set, KEYS[3] processing list, KEYS[4] done list
--   ARGV[1] worker id, ARGV[2] heartbeat value, ARGV[3] heartbeat TTL in ms,
--   ARGV[4] incarnation, ARGV[5] (first beat only) what follows each left task's first word
--   returns the number of left tasks reported (0 after the first beat) when the beat went
--           through, else {the heartbeat's value}: another incarnation holds the worker id
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
