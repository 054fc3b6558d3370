-- leave: run by a worker signing off after a clean stop. The heartbeat goes at once; the
-- worker leaves the workers set only with nothing left in hand, otherwise it stays listed, so
-- the dispatcher (seeing no heartbeat) takes the leftovers back right away.
--   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set
--   ARGV[1] worker id
--   returns how many tasks were left
redis.call('DEL', KEYS[1])
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return left
