--[[
  Acquire (or re-enter) a fenced lock: RLock's acquire, plus a fencing token drawn by INCR on
  every acquisition, re-entries included. The token counter never expires and is never reset by
  a release, so tokens only grow.

  KEYS[1]  lock hash <name>
  KEYS[2]  token counter redisson_lock_token:{<name>}
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  owner token <clientId>:<threadId>
  ARGV[3]  holds the caller believes the owner has, counting its acquisitions still in flight.
           A larger count means this call is a re-send of one already applied: the lease is
           reset, nothing is counted twice and no new token is drawn; the current token (the
           last one drawn, by this owner, since it has held the lock throughout) is returned.

  Returns
    {0, token}  acquired; the owner's hold count was incremented and the lease reset to ARGV[1]
    {1, pttl}   not acquired; PTTL of the lock in ms (-1 when the key has no expiry)
]]
local lock, counter = KEYS[1], KEYS[2]
local lease, owner = ARGV[1], ARGV[2]

local held = tonumber(redis.call('hget', lock, owner) or 0)
if held > tonumber(ARGV[3]) then
  redis.call('pexpire', lock, lease)
  local current = tonumber(redis.call('get', counter))
  if not current then
    current = redis.call('incr', counter)
  end
  return {0, current}
end

if held > 0 or redis.call('exists', lock) == 0 then
  local token = redis.call('incr', counter)
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {0, token}
end

return {1, redis.call('pttl', lock)}
