--[[
  Count a latch down by one; at zero (or below) the key goes, and reaching zero announces
  ZERO_COUNT. Counting down an unset latch makes -1 and deletes it at once, as in Redisson.

  KEYS[1]  latch <name>
  KEYS[2]  channel redisson_countdownlatch__channel__{<name>}; absent when it is in another cluster
           slot than the name (a name with braces): the caller then publishes after the reply
  ARGV[1]  message to publish at zero: ZERO_COUNT (0)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  the count after the decrement (0 or less: the latch is open)
]]
local count = redis.call('decr', KEYS[1])
if count <= 0 then
  redis.call('del', KEYS[1])
end
if count == 0 and KEYS[2] then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return count
