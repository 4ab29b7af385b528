--[[
  Add (or, negative, remove) available permits of a permit-expirable semaphore. Unlike RSemaphore
  it publishes the delta, and only when it is positive (Redisson's behaviour).

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  delta (an integer, may be negative)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  the new available count
]]
local available = tonumber(redis.call('get', KEYS[1]) or '0') + tonumber(ARGV[1])
redis.call('set', KEYS[1], available)
if tonumber(ARGV[1]) > 0 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return available
