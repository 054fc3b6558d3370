#include "rowpump/common/protocol/scripts.hpp"

namespace rowpump::protocol {

const char* const kCompleteScript = R"lua(
local accepted = 0
for i = 1, #ARGV, 2 do
  if redis.call('LREM', KEYS[1], 1, ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    accepted = accepted + 1
  end
end
return accepted
)lua";

const char* const kTakeScript = R"lua(
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local message = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not message then break end
  taken[i] = message
end
return taken
)lua";

const char* const kLeaveScript = R"lua(
redis.call('DEL', KEYS[1])
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('SREM', KEYS[3], ARGV[1])
end
return left
)lua";

const char* const kGiveBackScript = R"lua(
local given = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do
  given = given + 1
end
return given
)lua";

const char* const kReapScript = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {}
end
local taken = redis.call('LRANGE', KEYS[2], 0, -1)
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return taken
)lua";

const char* const kHeldScript = R"lua(
local wanted, left, all = {}, 0, #ARGV == 1
for i = 2, #ARGV do
  if not wanted[ARGV[i]] then left = left + 1 end
  wanted[ARGV[i]] = true
end
local held = {}
local function look(message)
  if all then
    held[#held + 1] = message
  elseif wanted[message] then
    wanted[message] = nil
    held[#held + 1] = message
    left = left - 1
  end
end
local function scan(key, reported)
  if left == 0 and not all then return end
  for _, message in ipairs(redis.call('LRANGE', key, 0, -1)) do
    if reported then
      local space = string.find(message, ' ', 1, true)
      if space then look(string.sub(message, 1, space - 1)) end
    else
      look(message)
    end
  end
end
scan(KEYS[1], false)
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  scan(ARGV[1] .. worker, false)
end
scan(KEYS[2], true)
if KEYS[4] then scan(KEYS[4], true) end
return held
)lua";

}  // namespace rowpump::protocol
