local given = 0
while redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT') do
  given = given + 1
end
return given
