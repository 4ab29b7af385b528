--[[
  Delete a lock whoever holds it and wake a waiter.

  KEYS[1]  lock hash <name>
  KEYS[2]  unlock channel redisson_lock__channel:{<name>}
  ARGV[1]  unlock message (0)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  the lock existed and was deleted
    0  there was no lock
]]
-- Publish first: should the user lack the right to, the script fails before it changed anything.
if redis.call('exists', KEYS[1]) == 1 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  redis.call('del', KEYS[1])
  return 1
end
return 0
