-- route_done: for a queue with shards (its rows on several MySQL servers, one leader per
-- shard). Workers know nothing of shards: they report to the queue's done list as always. Each
-- shard's leader first routes what is there to the shards' own done lists with this script, by
-- the shard its token names (messages.hpp, token_shard), and then applies and acknowledges only
-- its own list, fenced by its own leader lock. Every move is one script, so no report is lost
-- or read twice, whichever leaders route at the same moment, and a shard whose server is down
-- holds back only its own list. A message that names no shard (malformed) goes to the first
-- shard's list, whose leader sets it aside as bad.
--   KEYS[1] the queue's done list, KEYS[2..] the shards' done lists, in shard order
--   ARGV[1] how many messages at most, from the head of the queue's done list
--   returns how many it moved
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
