-- give_back: run by a worker's heartbeat when the queue moved to another node (a Sentinel or
-- Cluster failover, a resharding): gives every task in its processing list back to the head of
-- the ready list. A report acknowledged by the old master and lost in the failover leaves its
-- task in the processing list although the worker is done with it; given back, it runs again
-- (its first outcome was never applied, or the settled token makes it count once). Tasks still
-- in hand run twice; their first reports are refused (no longer in the processing list).
--   KEYS[1] processing list, KEYS[2] ready list
--   ARGV    none
--   returns how many tasks it gave back
local given = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do
  given = given + 1
end
return given
