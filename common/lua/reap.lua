-- reap: run by the dispatcher to take back the tasks of a worker whose heartbeat expired.
-- Atomic with respect to the worker's own reports.
--   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set
--   ARGV[1] worker id
--   returns the ready messages it took (none while the heartbeat is there); a processing key
--           that is not a list holds none, and is deleted
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {}
end
local taken = {}
if redis.call('TYPE', KEYS[2])['ok'] == 'list' then taken = redis.call('LRANGE', KEYS[2], 0, -1) end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return taken
