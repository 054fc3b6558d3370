-- push: the dispatcher pushes ready messages through this script. A queue with a `rate` keeps
-- its push window in Redis (Keys::window): every push is checked against it and recorded in it
-- atomically, on the Redis server's clock, so the limit holds whichever dispatcher pushes,
-- across restarts and takeovers. Pushes the ready messages if the caller holds the leader lock
-- (lead.lua), the window has room for all of them (else none) and, with a backlog limit, so has
-- the ready list (with shards, several dispatchers push to one ready list); records the push in
-- the window, counts the rows in the stats hash and renews the lock. With no messages it only
-- reads the window. The window list holds one entry "<server time in us>:<rows>" per push,
-- oldest first, stamped when the push has landed; an entry leaves it `period` later; an entry
-- of another form is skipped, and a window key that is not a list deleted. Times are the Redis
-- server's: if its clock is set back, pushes wait for the step too (the limit stays strict).
--   KEYS[1] ready list, KEYS[2] window list, KEYS[3] stats hash, KEYS[4] leader key
--   ARGV[1] rate count (0: no limit), ARGV[2] rate period in us, ARGV[3] stats field,
--   ARGV[4] caller's id, ARGV[5] leader lock expiry in ms, ARGV[6] most ready messages the
--   ready list may hold after the push (0: not checked here), ARGV[7...] ready messages
--   returns three integers as strings: 1 if pushed (or nothing to push), 0 if the window or
--           the ready list was full, -1 if the caller does not hold the lock; the rows the
--           window takes now; the us until it takes one more (0: now)
local function server_micros()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
if redis.call('GET', KEYS[4]) ~= ARGV[4] then return {'-1', '0', '0'} end
local count, per, n = tonumber(ARGV[1]), tonumber(ARGV[2]), #ARGV - 6
local inside, rows, gone, now = {}, 0, 0, server_micros()
-- An entry this script wrote: "<at>:<rows>", two whole numbers, rows at most the rate's count.
-- Anything else (written by another client) is nil, skipped, and trimmed once at the head.
local function parse(entry)
  local at, n = string.match(entry, '^(%d%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?):(%d+)$')
  at, n = tonumber(at), tonumber(n)
  if at and n and n <= count then return at, n end
end
if count > 0 then
  local kind = redis.call('TYPE', KEYS[2])['ok']
  if kind ~= 'list' and kind ~= 'none' then redis.call('DEL', KEYS[2]) end
  for _, entry in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    local at, n = parse(entry)
    if not at or at + per <= now then
      if #inside == 0 then gone = gone + 1 end
    else
      rows = rows + n
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
