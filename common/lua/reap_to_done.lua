-- reap_to_done: reap.lua for a queue with shards: takes the tasks of a worker whose heartbeat
-- expired and reports each on the worker's behalf, "<id>:<token><ARGV[2]>" (a retry: the ready
-- message's head, without the fields that may follow it), to the
-- queue's done list, from where its shard's leader applies it (route_done.lua); counts them in
-- the stats hash.
--   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set, KEYS[4] done list,
--   KEYS[5] stats hash
--   ARGV[1] worker id, ARGV[2] what follows each ready message, ARGV[3] stats field
--   returns how many it took (0 while the heartbeat is there)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local taken = {}
if redis.call('TYPE', KEYS[2])['ok'] == 'list' then taken = redis.call('LRANGE', KEYS[2], 0, -1) end
for i = 1, #taken do taken[i] = string.match(taken[i], '^[^ ]*') .. ARGV[2] end
for i = 1, #taken, 1000 do
  redis.call('RPUSH', KEYS[4], unpack(taken, i, math.min(i + 999, #taken)))
end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
if #taken > 0 then redis.call('HINCRBY', KEYS[5], ARGV[3], #taken) end
return #taken
