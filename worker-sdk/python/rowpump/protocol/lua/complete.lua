-- complete: run by workers to report outcomes. For each (ready message, done message) pair,
-- removes the ready message from the worker's processing list and, only if it was still
-- there, pushes the done message; a report is refused when the task had already been taken
-- back from this worker. README.md ("Protocol") and tests/integration/redis_cli_worker.sh
-- quote this script; tests/unit/test_scripts.cpp keeps them in step.
--   KEYS[1] processing list, KEYS[2] done list
--   ARGV    ready message, done message, ready message, done message, ...
--   returns how many reports were accepted
local accepted = 0
for i = 1, #ARGV, 2 do
  if redis.call('LREM', KEYS[1], 1, ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    accepted = accepted + 1
  end
end
return accepted
