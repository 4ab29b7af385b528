--[[
  Undo acquisitions of a group multi-lock whose outcome the caller never learned: bring the owner's
  count on each value of the set back down to what it had before them, freeing (and announcing) the
  values it then holds no more.

  KEYS[1]     group hash <group>
  KEYS[2]     unlock channel redisson_lock__channel:{<group>}
  ARGV[1]     owner token <clientId>:<threadId>
  ARGV[2]     holds the owner had before the uncertain acquisitions
  ARGV[3]     unlock message (0)
  ARGV[4]     publish command (PUBLISH or SPUBLISH)
  ARGV[5..n]  value fields

  Returns
    integer  values whose count was lowered (0 when the acquisitions never took effect)
]]
local group, owner, keep = KEYS[1], ARGV[1], tonumber(ARGV[2])
local lowered, freed = 0, false
for i = 5, #ARGV do
  local prefix = ARGV[i] .. ':' .. owner
  local count = tonumber(redis.call('hget', group, prefix .. ':lock_count') or 0)
  if count > keep and redis.call('hget', group, ARGV[i]) == owner then
    lowered = lowered + 1
    if keep > 0 then
      redis.call('hset', group, prefix .. ':lock_count', keep)
    else
      redis.call('hdel', group, ARGV[i], prefix .. ':expire_time', prefix .. ':lock_count')
      freed = true
    end
  end
end
if freed then
  redis.call(ARGV[4], KEYS[2], ARGV[3])
end
return lowered
