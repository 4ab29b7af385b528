--[[
  Release one hold of a fair lock; when the last hold goes, publish the unlock message on the
  channel of the waiter at the head of the queue (and on no other). The outcome is recorded in an
  unlock latch so that a re-sent call with the same request id replays it.

  KEYS[1]  lock hash <name>
  KEYS[2]  wait queue (LIST) redisson_lock_queue:{<name>}
  KEYS[3]  waiter deadlines (ZSET) redisson_lock_timeout:{<name>}
  KEYS[4]  channel base redisson_lock__channel:{<name>} (a waiter's channel: base:<its owner token>)
  KEYS[5]  unlock latch redisson_unlock_latch:{<name>}:<requestId>
  ARGV[1]  unlock message (0)
  ARGV[2]  lease in ms applied when holds remain
  ARGV[3]  owner token <clientId>:<threadId>
  ARGV[4]  now, the client's wall clock in epoch ms
  ARGV[5]  latch time-to-live in ms
  ARGV[6]  publish command (PUBLISH or SPUBLISH)

  Returns
    1    the lock was fully released (or a previous call with this request id released it)
    0    one hold was released, the owner still holds the lock (or replay of that outcome)
    nil  the owner does not hold the lock. When nobody holds it, the effects are Redisson's (the
         head is woken and the latch records 1, where Redisson reports success); the caller is
         told it held nothing all the same
]]
--- @include "purge-expired-heads"
local lock, queue, timeouts, channel, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = tonumber(ARGV[4])

local replay = redis.call('get', latch)
if replay then
  return tonumber(replay)
end

purgeExpiredHeads(queue, timeouts, now)

local function wakeHead()
  local head = redis.call('lindex', queue, 0)
  if head then
    redis.call(ARGV[6], channel .. ':' .. head, ARGV[1])
  end
end

if redis.call('exists', lock) == 0 then
  wakeHead()
  redis.call('set', latch, 1, 'px', ARGV[5])
  return nil
end

local held = redis.call('hget', lock, ARGV[3])
if not held then
  return nil
end

if tonumber(held) > 1 then
  redis.call('hincrby', lock, ARGV[3], -1)
  redis.call('pexpire', lock, ARGV[2])
  redis.call('set', latch, 0, 'px', ARGV[5])
  return 0
end

redis.call('del', lock)
redis.call('set', latch, 1, 'px', ARGV[5])
wakeHead()
return 1
