--[[
  Release one write hold. When the last one goes, the lock is deleted and `1` published, which
  wakes every waiter; if the same thread still holds read holds (a downgrade), `mode` becomes
  `read` instead and nothing is published (as Redisson does). The outcome is recorded in an unlock
  latch so a re-sent call with the same request id replays it.

  KEYS[1]  lock hash <name>
  KEYS[2]  channel redisson_rwlock:{<name>}
  KEYS[3]  unlock latch redisson_unlock_latch:{<name>}:<requestId>
  ARGV[1]  write unlock message (1, READ_UNLOCK_MESSAGE)
  ARGV[2]  lease in ms applied when write holds remain
  ARGV[3]  writer token <clientId>:<threadId>:write
  ARGV[4]  latch time-to-live in ms
  ARGV[5]  publish command (PUBLISH or SPUBLISH)

  Returns
    1    the last write hold was released (or replay of that outcome)
    0    one write hold released, the writer still holds the lock (or replay)
    nil  the writer holds no write lock (when the hash is gone, `1` is still published and the
         latch records 1, as Redisson does)
]]
local lock, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local message, lease, writer, latchTtl, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

local replay = redis.call('get', latch)
if replay then
  return tonumber(replay)
end

local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call(publish, channel, message)
  redis.call('set', latch, 1, 'px', latchTtl)
  return nil
end

if mode ~= 'write' or redis.call('hexists', lock, writer) == 0 then
  return nil
end

local left = redis.call('hincrby', lock, writer, -1)
if left > 0 then
  redis.call('pexpire', lock, lease)
  redis.call('set', latch, 0, 'px', latchTtl)
  return 0
end

redis.call('hdel', lock, writer)
if redis.call('hlen', lock) == 1 then
  redis.call('del', lock)
  redis.call(publish, channel, message)
else
  redis.call('hset', lock, 'mode', 'read')
end
redis.call('set', latch, 1, 'px', latchTtl)
return 1
