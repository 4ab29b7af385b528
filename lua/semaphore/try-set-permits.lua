--[[
  Create a semaphore with a number of permits unless it exists; announce the count. Shared by the
  permit-expirable semaphore, whose trySetPermits has the same effect.

  KEYS[1]  semaphore <name>
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  permits (an integer >= 0)
  ARGV[2]  time-to-live of the key in ms; 0 for none
  ARGV[3]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  set, with its TTL if one was given; ARGV[1] published
    0  the semaphore exists already; nothing changed
]]
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
if tonumber(ARGV[2]) > 0 then
  redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
else
  redis.call('set', KEYS[1], ARGV[1])
end
redis.call(ARGV[3], KEYS[2], ARGV[1])
return 1
