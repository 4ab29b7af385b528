--[[
  Included by the permit-expirable semaphore's scripts (`--- @include "reclaim-expired-permits"`).

  KEYS  none of its own: the including script passes its semaphore, ZSET and channel keys
  ARGV  none: the function takes (name, zset, channel, now in epoch ms, publish command, limit or nil)
  Returns nothing; gives expired permits back to the count and publishes it
]]
-- Reclaims expired permits (score <= now), at most `limit` of them when given: removes them from
-- the ZSET, adds them back to the count and, if the count is then positive, publishes it.
local function reclaim(name, zset, channel, now, publish, limit)
  local expired
  if limit then
    expired = redis.call('zrangebyscore', zset, 0, now, 'limit', 0, limit)
  else
    expired = redis.call('zrangebyscore', zset, 0, now)
  end
  if #expired == 0 then
    return
  end
  for i = 1, #expired, 100 do
    redis.call('zrem', zset, unpack(expired, i, math.min(i + 99, #expired)))
  end
  local available = redis.call('incrby', name, #expired)
  if available > 0 then
    redis.call(publish, channel, available)
  end
end
