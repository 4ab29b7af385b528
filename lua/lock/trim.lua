--[[
  Undo acquisitions whose outcome the caller never learned (abandoned, or failed in transit):
  bring the owner's hold count back down to what it had before them.

  KEYS[1]  lock hash <name>
  KEYS[2]  unlock channel redisson_lock__channel:{<name>}
  ARGV[1]  owner token <clientId>:<threadId>
  ARGV[2]  holds the owner had before the uncertain acquisitions
  ARGV[3]  unlock message (0)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  holds removed (0 when the acquisitions never took effect)
]]
local lock, owner = KEYS[1], ARGV[1]
local held = tonumber(redis.call('hget', lock, owner) or 0)
local keep = tonumber(ARGV[2])

if held <= keep then
  return 0
end

if keep > 0 then
  redis.call('hset', lock, owner, keep)
else
  if redis.call('hlen', lock) == 1 then
    -- The owner's field is the last: publish first, so a denied PUBLISH changes nothing.
    redis.call(ARGV[4], KEYS[2], ARGV[3])
    redis.call('del', lock)
  else
    redis.call('hdel', lock, owner)
  end
end
return held - keep
