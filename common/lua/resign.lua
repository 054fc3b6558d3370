-- resign: gives the leader lock (lead.lua) up if ARGV[1] holds it, so a stand-by need not wait
-- for the expiry.
--   KEYS[1] leader key
--   ARGV[1] caller's id
--   returns 0
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
