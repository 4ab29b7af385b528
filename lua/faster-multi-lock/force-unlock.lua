--[[
  Free every value of a group multi-lock's set whoever holds it, and publish the unlock message.

  KEYS[1]     group hash <group>
  KEYS[2]     unlock channel redisson_lock__channel:{<group>}
  ARGV[1]     unlock message (0)
  ARGV[2]     publish command (PUBLISH or SPUBLISH)
  ARGV[3..n]  value fields

  Returns
    integer  values that were held and are freed now
]]
local group = KEYS[1]
local freed = 0
for i = 3, #ARGV do
  local holder = redis.call('hget', group, ARGV[i])
  if holder then
    redis.call('hdel', group, ARGV[i], ARGV[i] .. ':' .. holder .. ':expire_time', ARGV[i] .. ':' .. holder .. ':lock_count')
    freed = freed + 1
  end
end
redis.call(ARGV[2], KEYS[2], ARGV[1])
return freed
