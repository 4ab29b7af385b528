--[[
  Take permits from a semaphore (RSemaphore) for one or more acquisitions, in order, each exactly as
  if it ran alone: an acquisition gets its permits if that many are still available.

  KEYS[1]  semaphore <name> (STRING integer: available permits)
  ARGV[i]  permits wanted by acquisition i (a positive integer)

  Returns one flag per acquisition:
    1  taken: the count was decremented by ARGV[i]
    0  not enough permits left (or no semaphore)
]]
local flags = {}
local available = redis.call('get', KEYS[1])
available = available and tonumber(available)
local taken = 0
for i = 1, #ARGV do
  local wanted = tonumber(ARGV[i])
  if available and available - taken >= wanted then
    taken = taken + wanted
    flags[i] = 1
  else
    flags[i] = 0
  end
end
if taken > 0 then
  redis.call('decrby', KEYS[1], taken)
end
return flags
