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
--- @include "reclaim-expired-permits"

local name, zset, channel = KEYS[1], KEYS[2], KEYS[3]
reclaim(name, zset, channel, ARGV[1], ARGV[2], nil)
local available = redis.call('get', name)
local acquired = redis.call('zcard', zset)
if available == false then
  return { 0, 0, acquired }
end
return { 1, tonumber(available), acquired }
