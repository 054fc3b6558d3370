#include "rowpump/common/protocol/push_scripts.hpp"

namespace rowpump::protocol {

const char* const kPushScript = R"lua(
local function server_micros()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
if redis.call('GET', KEYS[4]) ~= ARGV[4] then return {'-1', '0', '0'} end
local count, per, n = tonumber(ARGV[1]), tonumber(ARGV[2]), #ARGV - 6
local inside, rows, gone, now = {}, 0, 0, server_micros()
if count > 0 then
  for _, entry in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    local sep = string.find(entry, ':', 1, true)
    local at = tonumber(string.sub(entry, 1, sep - 1))
    if at + per <= now then
      if #inside == 0 then gone = gone + 1 end
    else
      rows = rows + tonumber(string.sub(entry, sep + 1))
      inside[#inside + 1] = {at, rows}
    end
  end
  if gone > 0 then redis.call('LTRIM', KEYS[2], gone, -1) end
end
-- How long until `want` more rows fit: until enough of the oldest entries have left.
local function wait(want)
  if count == 0 or rows + want <= count then return 0 end
  for _, entry in ipairs(inside) do
    if rows - entry[2] + want <= count then return entry[1] + per - now end
  end
  return per
end
local function reply(pushed)
  return {tostring(pushed), string.format('%d', count - rows), string.format('%d', wait(1))}
end
if wait(n) > 0 then return reply(0) end
if n == 0 then return reply(1) end
local backlog = tonumber(ARGV[6])
if backlog > 0 and redis.call('LLEN', KEYS[1]) + n > backlog then return reply(0) end
redis.call('PEXPIRE', KEYS[4], ARGV[5])
for i = 7, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HINCRBY', KEYS[3], ARGV[3], n)
if count > 0 then
  now = server_micros()  -- landed: the next push goes a full period after this moment
  redis.call('RPUSH', KEYS[2], string.format('%d', now) .. ':' .. n)
  redis.call('PEXPIRE', KEYS[2], math.ceil(per / 1000) + 1)
  rows = rows + n
  inside[#inside + 1] = {now, rows}
end
return reply(1)
)lua";

}  // namespace rowpump::protocol
