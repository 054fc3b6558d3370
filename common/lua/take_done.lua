-- take_done: the dispatcher reads the head of the done list through this script, bounded in
-- bytes before anything leaves Redis (a worker can write a message of any size). A message
-- longer than ARGV[2] at the head of the list is moved to the bad list and counted in the
-- stats hash (ARGV[1] of them at most); then the reply holds the messages from the head, oldest first, up to ARGV[1] of
-- them and ARGV[3] bytes in all (at least one), ending before the next one longer than ARGV[2]
-- (it is at the head once ack_done.lua has trimmed these, and goes aside then). Only the head
-- is ever removed here, and only when it is too long, so a batch read starts with a message
-- of this reply and ack_done's trim stays exact whoever runs this script meanwhile.
--   KEYS[1] done list, KEYS[2] bad list, KEYS[3] stats hash
--   ARGV[1] most messages, ARGV[2] longest message in bytes, ARGV[3] most bytes in all,
--   ARGV[4] stats field for messages moved aside
--   returns strings: {messages moved aside, 1 if the list holds more to read now else 0, message, ...}
local most, longest, budget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local aside, more, bytes, taken = 0, 0, 0, {}
while #taken + aside < most do
  local message = redis.call('LINDEX', KEYS[1], #taken)
  if not message then break end
  if #message > longest then
    if #taken > 0 then
      more = 1
      break
    end
    redis.call('RPUSH', KEYS[2], message)
    redis.call('LTRIM', KEYS[1], 1, -1)
    aside = aside + 1
  else
    if #taken > 0 and bytes + #message > budget then
      more = 1
      break
    end
    bytes = bytes + #message
    taken[#taken + 1] = message
  end
end
if aside > 0 then redis.call('HINCRBY', KEYS[3], ARGV[4], aside) end
return {tostring(aside), tostring(more), unpack(taken)}
