-- ack_done: acknowledges a batch of done messages if ARGV[1] holds the leader lock (lead.lua):
-- removes the first ARGV[2] from the done list, moves the ARGV[3] refused ones that follow in
-- ARGV to the bad list, puts the ARGV[4] after them (outcomes whose row another transaction
-- held locked, to be tried again) back at the end of the done list, and adds the (field,
-- amount) pairs after them to the stats hash, all at once, so a batch leaves the list exactly
-- when it is counted.
--   KEYS[1] leader key, KEYS[2] done list, KEYS[3] bad list, KEYS[4] stats hash
--   ARGV[1] caller's id, ARGV[2] count, ARGV[3] n refused, ARGV[4] m put back, then n
--           messages, then m messages, then field, amount, field, amount, ...
--   returns 1, or 0 (not the leader, nothing changed)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[2], ARGV[2], -1)
local refused, back = tonumber(ARGV[3]), tonumber(ARGV[4])
if refused > 0 then redis.call('RPUSH', KEYS[3], unpack(ARGV, 5, 4 + refused)) end
if back > 0 then redis.call('RPUSH', KEYS[2], unpack(ARGV, 5 + refused, 4 + refused + back)) end
for i = 5 + refused + back, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], ARGV[i + 1])
end
return 1
