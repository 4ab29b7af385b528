--[[
  Time left on an acquired permit's lease, after reclaiming expired permits.

  KEYS[1]  semaphore <name>
  KEYS[2]  ZSET {<name>}:timeout
  KEYS[3]  channel redisson_sc:{<name>}
  ARGV[1]  permit id (16 raw bytes)
  ARGV[2]  the no-expiry score 922337203685477
  ARGV[3]  now (the caller's epoch ms)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    -1        the permit never expires
    positive  ms left before it expires
    0         no such permit
]]
--- @include "reclaim-expired-permits"

local name, zset, channel = KEYS[1], KEYS[2], KEYS[3]
reclaim(name, zset, channel, ARGV[3], ARGV[4], nil)
local score = redis.call('zscore', zset, ARGV[1])
if score == false then
  return 0
end
if score == ARGV[2] then
  return -1
end
return tonumber(score) - tonumber(ARGV[3])
