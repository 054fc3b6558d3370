#include "rowpump/common/protocol/leader_scripts.hpp"

namespace rowpump::protocol {

const char* const kLeadScript = R"lua(
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {holder, '0'} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if holder then return {ARGV[1], '0'} end
return {ARGV[1], '1'}
)lua";

const char* const kResignScript = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
)lua";

const char* const kAckDoneScript = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('LTRIM', KEYS[2], ARGV[2], -1)
local refused = tonumber(ARGV[3])
if refused > 0 then redis.call('RPUSH', KEYS[3], unpack(ARGV, 4, 3 + refused)) end
for i = 4 + refused, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], ARGV[i + 1])
end
return 1
)lua";

}  // namespace rowpump::protocol
