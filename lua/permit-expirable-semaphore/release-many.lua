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
--- @include "reclaim-expired-permits"

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
