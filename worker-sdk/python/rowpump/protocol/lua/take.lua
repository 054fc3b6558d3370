-- take: run by workers to take up to ARGV[1] tasks at once without blocking: LMOVE from the
-- ready list to the processing list, oldest first.
--   KEYS[1] ready list, KEYS[2] processing list
--   ARGV[1] how many at most
--   returns the messages it moved
local taken = {}
for i = 1, tonumber(ARGV[1]) do
  local message = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
  if not message then break end
  taken[i] = message
end
return taken
