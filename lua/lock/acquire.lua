--[[
  Acquire (or re-enter) a reentrant lock (RLock).

  KEYS[1]  lock hash <name>
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  owner token <clientId>:<threadId>

  Returns
    nil      acquired; the owner's hold count was incremented and the lease reset to ARGV[1]
    integer  not acquired; PTTL of the lock in ms (-1 when the key has no expiry)
]]
local lock = KEYS[1]
local owner = ARGV[2]

if redis.call('exists', lock) == 0 or redis.call('hexists', lock, owner) == 1 then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[1])
  return nil
end

return redis.call('pttl', lock)
