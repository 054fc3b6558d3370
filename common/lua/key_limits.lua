-- key_limits: reads the per-key limits the operator sets (`rowpump limit`, docs/fairness.md),
-- bounded in Redis before anything travels: at most ARGV[1] fields, each field and value cut to
-- ARGV[2] bytes (a longer one is refused by the reader all the same: it is longer than allowed).
--   KEYS[1] key_limits hash
--   ARGV[1] most fields, ARGV[2] most bytes of a field or value kept
--   returns {field, value, field, value, ...}; with more than ARGV[1] fields, {count} alone
local n = redis.call('HLEN', KEYS[1])
if n > tonumber(ARGV[1]) then return {tostring(n)} end
local out, most = redis.call('HGETALL', KEYS[1]), tonumber(ARGV[2])
for i = 1, #out do out[i] = string.sub(out[i], 1, most) end
return out
