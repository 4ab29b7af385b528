--[[
  Extend the leases of a batch of locks, each only if its owner still holds it.

  KEYS[1..n]    lock hashes
  ARGV[1]       lease in ms
  ARGV[2..n+1]  owner token for the lock at the same position (KEYS[i] <-> ARGV[i + 1])

  Returns
    array of n integers: 1 when KEYS[i] was renewed, 0 when its owner no longer holds it
]]
local renewed = {}
for i, lock in ipairs(KEYS) do
  if redis.call('hexists', lock, ARGV[i + 1]) == 1 then
    redis.call('pexpire', lock, ARGV[1])
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed
