--[[
  Take permits from a semaphore (RSemaphore) if enough are available.

  KEYS[1]  semaphore <name> (STRING integer: available permits)
  ARGV[1]  permits wanted (a positive integer)

  Returns
    1  taken: the count was decremented by ARGV[1]
    0  not enough permits (or no semaphore); nothing changed
]]
local available = redis.call('get', KEYS[1])
if available ~= false and tonumber(available) >= tonumber(ARGV[1]) then
  redis.call('decrby', KEYS[1], ARGV[1])
  return 1
end
return 0
