--[[
  A waiter gives up (time-out, abort, error, shutdown): take it out of the queue and the deadline
  set, and bring the deadline of every waiter behind it one slack closer (Redisson's acquireFailed).
  One addition to Redisson's effects: when the leaving waiter was the head and the lock is free,
  the new head is woken on its channel, so that it need not wait for its re-check to find its turn.

  KEYS[1]  wait queue (LIST) redisson_lock_queue:{<name>}
  KEYS[2]  waiter deadlines (ZSET) redisson_lock_timeout:{<name>}
  KEYS[3]  lock hash <name>
  KEYS[4]  channel base redisson_lock__channel:{<name>} (a waiter's channel: base:<its owner token>)
  ARGV[1]  owner token <clientId>:<threadId> of the waiter leaving
  ARGV[2]  its slack in ms: the call's wait time, or fairLockWaitTimeout
  ARGV[3]  unlock message (0)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  1 when the waiter was in the queue, 0 when it was not
]]
local queue, timeouts = KEYS[1], KEYS[2]
local owner = ARGV[1]
local wait = tonumber(ARGV[2])

local waiters = redis.call('lrange', queue, 0, -1)
local at
for i, waiter in ipairs(waiters) do
  if waiter == owner then
    at = i
    break
  end
end

if at then
  for i = at + 1, #waiters do
    -- A waiter without a deadline (an inconsistent queue) is left alone rather than given one.
    if waiters[i] ~= owner and redis.call('zscore', timeouts, waiters[i]) then
      redis.call('zincrby', timeouts, -wait, waiters[i])
    end
  end
end

redis.call('zrem', timeouts, owner)
redis.call('lrem', queue, 0, owner)

if at == 1 and redis.call('exists', KEYS[3]) == 0 then
  local head = redis.call('lindex', queue, 0)
  if head then
    redis.call(ARGV[4], KEYS[4] .. ':' .. head, ARGV[3])
  end
end
return at and 1 or 0
