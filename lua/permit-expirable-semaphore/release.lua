--[[
  Release one permit by id; the count grows by one and the new count is published.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  KEYS[3]  ZSET {<name>}:timeout
  ARGV[1]  permit id (16 raw bytes)
  ARGV[2]  permits to give back for it: 1
  ARGV[3]  now (the caller's epoch ms)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  released
    0  not held: no such permit (already released, reclaimed, or never acquired); or it was there
       but had expired (it is released all the same, as in Redisson)
]]
local name, channel, zset = KEYS[1], KEYS[2], KEYS[3]
local score = redis.call('zscore', zset, ARGV[1])
if redis.call('zrem', zset, ARGV[1]) == 0 then
  return 0
end
local available = redis.call('incrby', name, ARGV[2])
redis.call(ARGV[4], channel, available)
if tonumber(score) <= tonumber(ARGV[3]) then
  return 0
end
return 1
