--[[
  Give permits back to a semaphore only if it exists, and announce the new count.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  permits released (a positive integer)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  released: the count was incremented and the new count published
    0  no semaphore; nothing changed
]]
if redis.call('exists', KEYS[1]) == 0 then
  return 0
end
local available = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], available)
return 1
