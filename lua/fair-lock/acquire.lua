--[[
  Acquire (or re-enter) a fair lock (Redisson's RFairLock): first come, first served through a
  wait queue. A waiter that cannot have the lock now joins the queue's tail with a deadline; the
  lock goes to the queue's head only. Heads whose deadline has passed are presumed dead and purged.

  KEYS[1]  lock hash <name>
  KEYS[2]  wait queue (LIST) redisson_lock_queue:{<name>}
  KEYS[3]  waiter deadlines (ZSET) redisson_lock_timeout:{<name>}
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  owner token <clientId>:<threadId>
  ARGV[3]  the waiter's slack in ms: the call's wait time, or fairLockWaitTimeout
  ARGV[4]  now, the client's wall clock in epoch ms
  ARGV[5]  holds the caller believes the owner has, counting its acquisitions still in flight;
           a larger count means this call is a re-send of one already applied
  ARGV[6]  '' for a reentrant lock; else the error text a re-acquire by the holder is refused with
  ARGV[7]  '1': join the queue when the lock cannot be had now; '0': a single attempt that never queues
  ARGV[8]  longest re-check hint in ms while the lock is free but it is another waiter's turn

  Returns
    nil      acquired (or re-entered); the lease was set to ARGV[1]
    integer  not acquired; ms after which another attempt makes sense: the lock's PTTL while it is
             held (-1: held without expiry, wait for a message), or, while it is free but another
             waiter's turn, the time until that head's deadline, at most ARGV[8]
    error    ARGV[6], when the lock is non-reentrant and the owner holds it already
]]
--- @include "purge-expired-heads"
local lock, queue, timeouts = KEYS[1], KEYS[2], KEYS[3]
local owner = ARGV[2]
local wait, now = tonumber(ARGV[3]), tonumber(ARGV[4])

purgeExpiredHeads(queue, timeouts, now)

-- A free lock goes to the head of the queue, or to anyone when nobody waits.
if redis.call('exists', lock) == 0 then
  local head = redis.call('lindex', queue, 0)
  if (not head) or head == owner then
    redis.call('lpop', queue)
    redis.call('zrem', timeouts, owner)
    -- Everyone behind moved up one place: each deadline comes closer by one slack.
    for _, waiter in ipairs(redis.call('zrange', timeouts, 0, -1)) do
      redis.call('zincrby', timeouts, -wait, waiter)
    end
    redis.call('hset', lock, owner, 1)
    redis.call('pexpire', lock, ARGV[1])
    return nil
  end
end

local held = redis.call('hget', lock, owner)
if held then
  if tonumber(held) > tonumber(ARGV[5]) then
    redis.call('pexpire', lock, ARGV[1])
    return nil
  end
  if ARGV[6] ~= '' then
    return redis.error_reply(ARGV[6])
  end
  redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, ARGV[1])
  return nil
end

-- Not acquired: when to try again.
local function retryIn()
  local ttl = redis.call('pttl', lock)
  if ttl ~= -2 then
    return ttl
  end
  local hint = tonumber(ARGV[8])
  local head = redis.call('lindex', queue, 0)
  local deadline = head and tonumber(redis.call('zscore', timeouts, head))
  if deadline then
    hint = math.min(hint, math.max(math.floor(deadline - now), 0))
  end
  return hint
end

if ARGV[7] ~= '1' or redis.call('zscore', timeouts, owner) then
  return retryIn()
end

-- Join the tail: the deadline is one slack after the waiter ahead's (or after the lock's lease).
local ttl
local last = redis.call('lindex', queue, -1)
if last and last ~= owner then
  local lastDeadline = tonumber(redis.call('zscore', timeouts, last))
  if lastDeadline then
    ttl = lastDeadline - now
  end
end
if ttl == nil then
  ttl = redis.call('pttl', lock)
end
if redis.call('zadd', timeouts, ttl + wait + now, owner) == 1 then
  redis.call('rpush', queue, owner)
end
return retryIn()
