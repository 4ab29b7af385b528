--[[
  Undo acquisitions of a fair lock whose outcome the caller never learned (abandoned, or failed in
  transit): bring the owner's hold count back down to what it had before them. A lock this frees
  wakes the waiter at the head of the queue, as an unlock would.

  KEYS[1]  lock hash <name>
  KEYS[2]  wait queue (LIST) redisson_lock_queue:{<name>}
  KEYS[3]  waiter deadlines (ZSET) redisson_lock_timeout:{<name>}
  KEYS[4]  channel base redisson_lock__channel:{<name>} (a waiter's channel: base:<its owner token>)
  ARGV[1]  owner token <clientId>:<threadId>
  ARGV[2]  holds the owner had before the uncertain acquisitions
  ARGV[3]  unlock message (0)
  ARGV[4]  now, the client's wall clock in epoch ms
  ARGV[5]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  holds removed (0 when the acquisitions never took effect)
]]
--- @include "purge-expired-heads"
local lock, queue, timeouts, owner = KEYS[1], KEYS[2], KEYS[3], ARGV[1]
local held = tonumber(redis.call('hget', lock, owner) or 0)
local keep = tonumber(ARGV[2])

if held <= keep then
  return 0
end

if keep > 0 then
  redis.call('hset', lock, owner, keep)
  return held - keep
end

redis.call('hdel', lock, owner)
if redis.call('hlen', lock) == 0 then
  redis.call('del', lock)
  local now = tonumber(ARGV[4])
  purgeExpiredHeads(queue, timeouts, now)
  local head = redis.call('lindex', queue, 0)
  if head then
    redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[3])
  end
end
return held - keep
