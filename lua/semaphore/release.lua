--[[
  Give permits back to a semaphore and announce the new count. No upper bound: a release without
  an acquisition adds permits, as in Redisson. A missing key counts as 0.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  permits released (a positive integer)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  the available permits after the release (also the message published)
]]
local available = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], available)
return available
