--[[
  Release one hold of a reentrant lock; publish the unlock message when the last hold goes.
  The outcome is recorded in an unlock latch so that a re-sent call with the same request id
  replays it instead of failing.

  KEYS[1]  lock hash <name>
  KEYS[2]  unlock channel redisson_lock__channel:{<name>}
  KEYS[3]  unlock latch redisson_unlock_latch:{<name>}:<requestId>
  ARGV[1]  unlock message (0)
  ARGV[2]  lease in ms applied when holds remain
  ARGV[3]  owner token <clientId>:<threadId>
  ARGV[4]  latch time-to-live in ms
  ARGV[5]  publish command (PUBLISH or SPUBLISH)

  Returns
    1    the lock was fully released (or a previous call with this request id released it)
    0    one hold was released, the owner still holds the lock (or replay of that outcome)
    nil  the owner does not hold the lock
]]
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]

local replay = redis.call('get', latch)
if replay then
  return tonumber(replay)
end

local held = redis.call('hget', lock, ARGV[3])
if not held then
  return nil
end

if tonumber(held) > 1 then
  redis.call('hincrby', lock, ARGV[3], -1)
  redis.call('pexpire', lock, ARGV[2])
  redis.call('set', latch, 0, 'px', ARGV[4])
  return 0
end

-- Publish first: should the user lack the right to, the script fails before it changed anything.
redis.call(ARGV[5], channel, ARGV[1])
redis.call('del', lock)
redis.call('set', latch, 1, 'px', ARGV[4])
return 1
