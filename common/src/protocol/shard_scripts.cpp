#include "rowpump/common/protocol/shard_scripts.hpp"

namespace rowpump::protocol {

const char* const kRouteDoneScript = R"lua(
local messages = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #messages == 0 then return 0 end
local shards, routed = #KEYS - 1, {}
for _, message in ipairs(messages) do
  local target = 2
  local ready = string.match(message, '^[^ ]*')
  local token = string.match(ready, ':([^:]*)$')
  local shard = token and tonumber(string.sub(token, 1, 2), 16)
  if shard and shard < shards then target = shard + 2 end
  routed[target] = routed[target] or {}
  table.insert(routed[target], message)
end
for target, list in pairs(routed) do
  for i = 1, #list, 1000 do
    redis.call('RPUSH', KEYS[target], unpack(list, i, math.min(i + 999, #list)))
  end
end
redis.call('LTRIM', KEYS[1], #messages, -1)
return #messages
)lua";

const char* const kReapToDoneScript = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local taken = redis.call('LRANGE', KEYS[2], 0, -1)
for i = 1, #taken do taken[i] = taken[i] .. ARGV[2] end
for i = 1, #taken, 1000 do
  redis.call('RPUSH', KEYS[4], unpack(taken, i, math.min(i + 999, #taken)))
end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
if #taken > 0 then redis.call('HINCRBY', KEYS[5], ARGV[3], #taken) end
return #taken
)lua";

}  // namespace rowpump::protocol
