--[[
  Make the semaphore's total (available + acquired) equal to ARGV[1]: create it with that count,
  or adjust the available count by the difference (it may go negative). Publishes ARGV[1] when
  anything changed.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  KEYS[3]  ZSET {<name>}:timeout
  ARGV[1]  total permits (an integer >= 0)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  changed
    0  the total was ARGV[1] already
]]
local name, channel, zset = KEYS[1], KEYS[2], KEYS[3]
local wanted = tonumber(ARGV[1])
local available = redis.call('get', name)
if available == false then
  redis.call('set', name, wanted)
  redis.call(ARGV[2], channel, ARGV[1])
  return 1
end
local total = tonumber(available) + redis.call('zcard', zset)
if total == wanted then
  return 0
end
redis.call('incrby', name, wanted - total)
redis.call(ARGV[2], channel, ARGV[1])
return 1
