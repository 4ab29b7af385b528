--[[
  Delete a read/write lock whoever holds it, if it is in the given mode, and wake waiters. Read
  holds' timeout keys are left to expire on their own (as Redisson does).

  KEYS[1]  lock hash <name>
  KEYS[2]  channel redisson_rwlock:{<name>}
  ARGV[1]  mode the lock must be in: `read` (read lock) or `write` (write lock)
  ARGV[2]  message: 0 for the read lock, 1 for the write lock (wakes every waiter)
  ARGV[3]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  the lock was in that mode and was deleted
    0  it was not (free, or in the other mode)
]]
if redis.call('hget', KEYS[1], 'mode') == ARGV[1] then
  redis.call('del', KEYS[1])
  redis.call(ARGV[3], KEYS[2], ARGV[2])
  return 1
end
return 0
