--[[
  Take every available permit: set the count to 0 (with SET, as Redisson does, dropping a TTL).

  KEYS[1]  semaphore <name>

  Returns
    integer  the count before (0 when the semaphore does not exist, which is left missing)
]]
local available = redis.call('get', KEYS[1])
if available == false then
  return 0
end
redis.call('set', KEYS[1], 0)
return tonumber(available)
