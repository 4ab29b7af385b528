--[[
  Delete a fair lock whoever holds it and wake the waiter at the head of the queue.

  KEYS[1]  lock hash <name>
  KEYS[2]  wait queue (LIST) redisson_lock_queue:{<name>}
  KEYS[3]  waiter deadlines (ZSET) redisson_lock_timeout:{<name>}
  KEYS[4]  channel base redisson_lock__channel:{<name>} (a waiter's channel: base:<its owner token>)
  ARGV[1]  unlock message (0)
  ARGV[2]  now, the client's wall clock in epoch ms
  ARGV[3]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  the lock existed and was deleted
    0  there was no lock
]]
--- @include "purge-expired-heads"
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local now = tonumber(ARGV[2])

purgeExpiredHeads(queue, timeouts, now)

if redis.call('del', lock) == 1 then
  local head = redis.call('lindex', queue, 0)
  if head then
    redis.call(ARGV[3], KEYS[4] .. ':' .. head, ARGV[1])
  end
  return 1
end
return 0
