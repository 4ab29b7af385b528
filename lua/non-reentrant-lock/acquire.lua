--[[
  Acquire a non-reentrant lock (same hash as RLock). The owner that already holds it is refused
  with an error reply instead of re-entering.

  KEYS[1]  lock hash <name>
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  owner token <clientId>:<threadId>
  ARGV[3]  holds the caller believes the owner has, counting its acquisitions still in flight.
           A larger count means this call is a re-send of one already applied (not a re-entry):
           the lease is reset and the call reports success.
  ARGV[4]  text of the error reply for a re-acquire (NON_REENTRANT_REACQUIRE)

  Returns
    nil        acquired; the owner's field was set to 1 and the lease to ARGV[1]
    integer    not acquired; PTTL of the lock in ms (-1 when the key has no expiry)
    error      ARGV[4]: the owner already holds the lock
]]
local lock, owner = KEYS[1], ARGV[2]

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
  return redis.error_reply(ARGV[4])
end

return redis.call('pttl', lock)
