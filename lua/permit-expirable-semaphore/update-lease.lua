--[[
  Give an acquired permit a new expiry, after reclaiming expired permits.

  KEYS[1]  semaphore <name>
  KEYS[2]  ZSET {<name>}:timeout
  KEYS[3]  channel redisson_sc:{<name>}
  ARGV[1]  permit id (16 raw bytes)
  ARGV[2]  new expiry score: now + lease (epoch ms)
  ARGV[3]  now (the caller's epoch ms)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  updated
    0  no such permit (released, expired, or never acquired)
]]
--- @include "reclaim-expired-permits"

local name, zset, channel = KEYS[1], KEYS[2], KEYS[3]
reclaim(name, zset, channel, ARGV[3], ARGV[4], nil)
if redis.call('zscore', zset, ARGV[1]) == false then
  return 0
end
redis.call('zadd', zset, ARGV[2], ARGV[1])
return 1
