--[[
  Release one hold of a spin lock. Same effects as the RLock unlock except that nothing is
  published: spin-lock waiters poll, so a release wakes nobody. The outcome is recorded in an
  unlock latch so that a re-sent call with the same request id replays it.

  KEYS[1]  lock hash <name>
  KEYS[2]  unlock latch redisson_unlock_latch:{<name>}:<requestId>
  ARGV[1]  lease in ms applied when holds remain
  ARGV[2]  owner token <clientId>:<threadId>
  ARGV[3]  latch time-to-live in ms

  Returns
    1    the lock was fully released (or a previous call with this request id released it)
    0    one hold was released, the owner still holds the lock (or replay of that outcome)
    nil  the owner does not hold the lock
]]
local lock, latch = KEYS[1], KEYS[2]
local lease, owner, latchTtl = ARGV[1], ARGV[2], ARGV[3]

local replay = redis.call('get', latch)
if replay then
  return tonumber(replay)
end

local held = redis.call('hget', lock, owner)
if not held then
  return nil
end

if tonumber(held) > 1 then
  redis.call('hincrby', lock, owner, -1)
  redis.call('pexpire', lock, lease)
  redis.call('set', latch, 0, 'px', latchTtl)
  return 0
end

redis.call('del', lock)
redis.call('set', latch, 1, 'px', latchTtl)
return 1
