-- leave: run by a worker signing off after a clean stop. The heartbeat goes at once (only its
-- own: given an incarnation, only while the heartbeat's value carries it, see beat.lua); the
-- worker leaves the workers set only with nothing left in hand, otherwise it stays listed, so
-- the dispatcher (seeing no heartbeat) takes the leftovers back right away.
--   KEYS[1] heartbeat, KEYS[2] processing list, KEYS[3] workers set
--   ARGV[1] worker id, ARGV[2] (optional) incarnation
--   returns how many tasks were left, or -1 when the heartbeat is another incarnation's (it
--           is left alone, and so are the processing list and the workers set)
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
