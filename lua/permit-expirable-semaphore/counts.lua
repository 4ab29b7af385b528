--[[
  Reclaim every expired permit, then report the counts behind availablePermits, acquiredPermits
  and getPermits.

  KEYS[1]  semaphore <name>
  KEYS[2]  ZSET {<name>}:timeout
  KEYS[3]  channel redisson_sc:{<name>}
  ARGV[1]  now (the caller's epoch ms)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    { exists, available, acquired }  exists: 1 if the semaphore key exists, else 0; available: its
                                     count (0 when missing); acquired: permits in the ZSET
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

local name, zset, channel = KEYS[1], KEYS[2], KEYS[3]
reclaim(name, zset, channel, ARGV[1], ARGV[2], nil)
local available = redis.call('get', name)
local acquired = redis.call('zcard', zset)
if available == false then
  return { 0, 0, acquired }
end
return { 1, tonumber(available), acquired }
