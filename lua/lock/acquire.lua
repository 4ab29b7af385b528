--[[
  Acquire (or re-enter) a reentrant lock (RLock).

  KEYS[1]  lock hash <name>
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  owner token <clientId>:<threadId>
  ARGV[3]  holds the caller believes the owner has, counting its acquisitions still in flight.
           A larger count means this call is a re-send of one already applied (the client
           reconnected and sent it again): the lease is reset but nothing is counted twice.

  Returns
    nil      acquired; the owner's hold count was incremented and the lease reset to ARGV[1]
    integer  not acquired; PTTL of the lock in ms (-1 when the key has no expiry)
]]
local lock = KEYS[1]
local owner = ARGV[2]

-- A free lock (the common case) is taken without reading the owner's count.
if redis.call('exists', lock) == 0 then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[1])
  return nil
end

local held = tonumber(redis.call('hget', lock, owner) or 0)
if held > tonumber(ARGV[3]) then
  redis.call('pexpire', lock, ARGV[1])
  return nil
end

if held > 0 then
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[1])
  return nil
end

return redis.call('pttl', lock)
