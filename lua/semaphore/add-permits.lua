--[[
  Add (or, with a negative delta, remove) permits and announce the new count, which may go
  negative. Like Redisson, the count is written with SET, so a TTL set by trySetPermits is dropped.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  delta (an integer, may be negative)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  the new count (also the message published)
]]
local available = tonumber(redis.call('get', KEYS[1]) or '0') + tonumber(ARGV[1])
redis.call('set', KEYS[1], available)
redis.call(ARGV[2], KEYS[2], available)
return available
