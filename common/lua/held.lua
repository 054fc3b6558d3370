-- held: run by the dispatcher before it writes off a claim whose lease is running out: which of
-- the given ready messages are still held in Redis, that is waiting in the ready list, in the
-- processing list of a listed worker (a worker whose heartbeat lapsed is listed until the
-- dispatcher takes its tasks back), or reported in the done list and not applied yet. One
-- atomic look, so a task moving from one list to the next is never missed. Reads the
-- processing lists by name (ARGV[1] .. worker id): they share the queue's hash tag, so the
-- same Redis Cluster slot.
--   KEYS[1] ready list, KEYS[2] done list, KEYS[3] workers set, KEYS[4] (a shard's runner
--           only) the queue's done list, where reports wait to be routed
--   ARGV[1] processing key prefix, ARGV[2..] heads of ready messages ("<id>:<token>")
--   returns the heads it found; given none, the head of every message held (a key of another
--           type than it should be holds none). A message is compared by its head, the part
--           before its first space: a ready message's fields (its payload) and a done
--           message's verb and values do not count.
local wanted, left, all = {}, 0, #ARGV == 1
for i = 2, #ARGV do
  if not wanted[ARGV[i]] then left = left + 1 end
  wanted[ARGV[i]] = true
end
local held = {}
local function look(message)
  local space = string.find(message, ' ', 1, true)
  if space then message = string.sub(message, 1, space - 1) end
  if all then
    held[#held + 1] = message
  elseif wanted[message] then
    wanted[message] = nil
    held[#held + 1] = message
    left = left - 1
  end
end
local function scan(key)
  if left == 0 and not all then return end
  if redis.call('TYPE', key)['ok'] ~= 'list' then return end
  for _, message in ipairs(redis.call('LRANGE', key, 0, -1)) do
    look(message)
  end
end
scan(KEYS[1])
if redis.call('TYPE', KEYS[3])['ok'] == 'set' then
  for _, worker in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    scan(ARGV[1] .. worker)
  end
end
scan(KEYS[2])
if KEYS[4] then scan(KEYS[4]) end
return held
