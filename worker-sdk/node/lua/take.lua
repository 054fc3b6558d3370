local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local message = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not message then break end
  taken[i] = message
end
return taken
