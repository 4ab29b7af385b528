--[[
  Release one read hold (the most recent: holds go LIFO) and delete its timeout key. The hash
  then lives as long as the longest live read hold of any reader; readers whose timeout keys are
  gone (a client that stopped renewing) no longer count, and when no live reader (and no writer)
  is left the hash is deleted and `0` published. The outcome is recorded in an unlock latch so a
  re-sent call with the same request id replays it.

  KEYS[1]  lock hash <name>
  KEYS[2]  channel redisson_rwlock:{<name>}
  KEYS[3]  the reader's timeout key prefix {<name>}:<clientId>:<threadId>:rwlock_timeout
  KEYS[4]  key prefix of every reader's timeout keys: {<name>} (or <name> when it contains '{')
  KEYS[5]  unlock latch redisson_unlock_latch:{<name>}:<requestId>
  ARGV[1]  unlock message (0)
  ARGV[2]  reader token <clientId>:<threadId>
  ARGV[3]  latch time-to-live in ms
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    1    the lock is free now (deleted, `0` published), or replay of that outcome
    0    one hold released, the lock is still held (by this reader, other readers or the writer)
    nil  the reader holds no read lock (when the hash is gone, `0` is still published and the
         latch records 1, as Redisson does)
]]
local lock, channel, timeouts, prefix, latch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, reader, latchTtl, publish = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

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

if redis.call('hexists', lock, reader) == 0 then
  return nil
end

local left = redis.call('hincrby', lock, reader, -1)
if left == 0 then
  redis.call('hdel', lock, reader)
end
redis.call('del', timeouts .. ':' .. (left + 1))

if redis.call('hlen', lock) > 1 then
  -- The longest live read hold of any reader (the writer's field has no timeout keys: -2).
  local longest = -3
  local entries = redis.call('hgetall', lock)
  for i = 1, #entries, 2 do
    local holds = tonumber(entries[i + 1])
    if holds ~= nil then
      for n = holds, 1, -1 do
        local ttl = redis.call('pttl', prefix .. ':' .. entries[i] .. ':rwlock_timeout:' .. n)
        longest = math.max(longest, ttl)
      end
    end
  end
  if longest > 0 then
    redis.call('pexpire', lock, longest)
    redis.call('set', latch, 0, 'px', latchTtl)
    return 0
  end
  if mode == 'write' then
    redis.call('set', latch, 0, 'px', latchTtl)
    return 0
  end
end

redis.call('del', lock)
redis.call(publish, channel, message)
redis.call('set', latch, 1, 'px', latchTtl)
return 1
