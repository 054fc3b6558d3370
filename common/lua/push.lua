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
-- With rate_per_key (group_by) each key of the push is checked too, against its own pushes in
-- the key_rate hash: field "=<key's value>" ("null" for NULL), value "<until>:<rows>,..." (one
-- entry per push of that key within its period, `until` the server time in us it leaves the
-- window). The push goes only if every key has room for its rows (else none). Over 16 entries
-- the oldest two merge into the later one (a key's rows then count longer: stricter, never
-- looser). Every push drops a few random fields whose entries all left (idle keys), and the
-- hash expires after the longest period of the keys pushed.
--   KEYS[1] ready list, KEYS[2] window list, KEYS[3] stats hash, KEYS[4] leader key,
--   KEYS[5] key_rate hash
--   ARGV[1] rate count (0: no limit), ARGV[2] rate period in us, ARGV[3] stats field,
--   ARGV[4] caller's id, ARGV[5] leader lock expiry in ms, ARGV[6] most ready messages the
--   ready list may hold after the push (0: not checked here), ARGV[7] G: keys with a rate,
--   then 4 per key: its field, rate count, rate period in us, rows of it in this push (0 to
--   only read), then the ready messages
--   returns integers as strings: 1 if pushed (or nothing to push), 0 if the window, a key's
--           window or the ready list was full, -1 if the caller does not hold the lock; the
--           rows the window takes now; the us until it takes one more (0: now); then per key:
--           the rows its window takes now and the us until it takes one more
local function server_micros()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
if redis.call('GET', KEYS[4]) ~= ARGV[4] then return {'-1', '0', '0'} end
local count, per, groups = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[7])
local first = 8 + 4 * groups  -- the first ready message
local n = #ARGV - first + 1
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
-- The keys' windows: for each, its live entries {until, rows} sorted by until, and their rows.
local keyed = {}
if groups > 0 then
  local kind = redis.call('TYPE', KEYS[5])['ok']
  if kind ~= 'hash' and kind ~= 'none' then redis.call('DEL', KEYS[5]) end
end
local function live_entries(value)
  local live, sum = {}, 0
  for entry in string.gmatch(value or '', '[^,]+') do
    local u, r = string.match(entry, '^(%d%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?):(%d%d?%d?%d?%d?%d?%d?%d?%d?%d?)$')
    u, r = tonumber(u), tonumber(r)
    if u and r and u > now then
      live[#live + 1] = {u, r}
      sum = sum + r
    end
  end
  table.sort(live, function(a, b) return a[1] < b[1] end)
  return live, sum
end
for g = 1, groups do
  local at = 8 + 4 * (g - 1)
  local key = {field = ARGV[at], count = tonumber(ARGV[at + 1]), per = tonumber(ARGV[at + 2]),
               want = tonumber(ARGV[at + 3])}
  key.live, key.rows = live_entries(redis.call('HGET', KEYS[5], key.field))
  keyed[g] = key
end
local function key_wait(key, want)
  if key.rows + want <= key.count then return 0 end
  local left = key.rows
  for _, entry in ipairs(key.live) do
    left = left - entry[2]
    if left + want <= key.count then return entry[1] - now end
  end
  return key.per
end
local function reply(pushed)
  local out = {tostring(pushed), string.format('%d', count - rows), string.format('%d', wait(1))}
  for _, key in ipairs(keyed) do
    out[#out + 1] = string.format('%d', math.max(0, key.count - key.rows))
    out[#out + 1] = string.format('%d', key_wait(key, 1))
  end
  return out
end
if wait(n) > 0 then return reply(0) end
for _, key in ipairs(keyed) do
  if key.want > 0 and key_wait(key, key.want) > 0 then return reply(0) end
end
if n == 0 then return reply(1) end
local backlog = tonumber(ARGV[6])
if backlog > 0 and redis.call('LLEN', KEYS[1]) + n > backlog then return reply(0) end
redis.call('PEXPIRE', KEYS[4], ARGV[5])
for i = first, #ARGV, 1000 do
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
if groups > 0 then
  now = server_micros()
  local longest = 0
  for _, key in ipairs(keyed) do
    if key.want > 0 then
      key.live[#key.live + 1] = {now + key.per, key.want}
      key.rows = key.rows + key.want
      while #key.live > 16 do  -- merge the oldest two into the later one
        key.live[2][2] = key.live[2][2] + key.live[1][2]
        table.remove(key.live, 1)
      end
      local parts = {}
      for i, entry in ipairs(key.live) do parts[i] = string.format('%d:%d', entry[1], entry[2]) end
      redis.call('HSET', KEYS[5], key.field, table.concat(parts, ','))
      longest = math.max(longest, key.per)
    end
  end
  -- Idle keys: a few random fields whose entries all left go.
  local sample = redis.call('HRANDFIELD', KEYS[5], 2 * groups + 2, 'WITHVALUES')
  for i = 1, #sample, 2 do
    local live = live_entries(sample[i + 1])
    if #live == 0 then redis.call('HDEL', KEYS[5], sample[i]) end
  end
  local ms = math.ceil(longest / 1000) + 1
  if longest > 0 and redis.call('PTTL', KEYS[5]) < ms then redis.call('PEXPIRE', KEYS[5], ms) end
end
return reply(1)
