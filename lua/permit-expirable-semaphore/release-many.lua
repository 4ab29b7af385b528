--[[
  Release several permits by id, all or none: if any id is missing or expired nothing changes.
  Otherwise expired permits are reclaimed, the ids removed, the count raised by as many, and that
  number (not the new count, as in Redisson) published.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  KEYS[3]  ZSET {<name>}:timeout
  ARGV[1]  number of ids n
  ARGV[2]  now (the caller's epoch ms)
  ARGV[3 .. 2+n]  permit ids (raw bytes)
  ARGV[3+n]       publish command (PUBLISH or SPUBLISH), the last argument

  Returns
    integer  permits released (n), or 0 when nothing was released
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

local name, channel, zset = KEYS[1], KEYS[2], KEYS[3]
local count, now = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, count do
  local score = redis.call('zscore', zset, ARGV[2 + i])
  if score == false or tonumber(score) <= now then
    return 0
  end
end
reclaim(name, zset, channel, ARGV[2], ARGV[#ARGV], nil)
local removed = 0
for i = 1, count do
  removed = removed + redis.call('zrem', zset, ARGV[2 + i])
end
redis.call('incrby', name, removed)
redis.call(ARGV[#ARGV], channel, removed)
return removed
