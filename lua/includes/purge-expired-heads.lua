--[[
  Included by the fair lock's scripts (`--- @include "purge-expired-heads"`).

  KEYS  none of its own: the including script passes its queue and timeout keys
  ARGV  none: the function takes (queue LIST, timeouts ZSET, now in epoch ms)
  Returns nothing; drops the expired heads
]]
-- Drops waiters at the head of the queue whose deadline (epoch ms, in the timeout set) has passed;
-- only heads, as Redisson does, so a live waiter behind a dead one waits for the dead one's deadline.
local function purgeExpiredHeads(queue, timeouts, now)
  while true do
    local head = redis.call('lindex', queue, 0)
    if not head then break end
    local deadline = tonumber(redis.call('zscore', timeouts, head))
    if deadline == nil or deadline > now then break end
    redis.call('zrem', timeouts, head)
    redis.call('lpop', queue)
  end
end
