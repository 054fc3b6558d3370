redis.call('DEL', KEYS[1])
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return left
