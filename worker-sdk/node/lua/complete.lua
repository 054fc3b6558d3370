local accepted = 0
for i = 1, #ARGV, 2 do
  if redis.call('LREM', KEYS[1], 1, ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    accepted = accepted + 1
  end
end
return accepted
