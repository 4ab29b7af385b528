--[[
  Acquire (or re-enter) the read lock of a read/write lock (Redisson's RReadWriteLock.readLock()).
  Readers share the lock; the writer's own thread may also read (downgrade). Each read hold n of a
  reader gets its own timeout key <timeouts>:n, which is how a reader that stops renewing ceases to
  count once that key expires.

  KEYS[1]  lock hash <name>
  KEYS[2]  the reader's timeout key prefix {<name>}:<clientId>:<threadId>:rwlock_timeout
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  reader token <clientId>:<threadId>
  ARGV[3]  writer token of the same thread <clientId>:<threadId>:write
  ARGV[4]  read holds the caller believes the reader has, counting its acquisitions in flight.
           A larger stored count means this call is a re-send of one already applied: the hold it
           added is refreshed, nothing is counted twice.

  Returns
    nil      acquired: field `mode` is `read` (or stays `write` for the writer's own thread), the
             reader's count was incremented, its timeout key set, and the hash lives at least ARGV[1]
    integer  not acquired (another thread holds the write lock); PTTL of the hash in ms
]]
local lock, timeouts = KEYS[1], KEYS[2]
local lease, reader, writer = ARGV[1], ARGV[2], ARGV[3]

local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call('hset', lock, 'mode', 'read')
  redis.call('hset', lock, reader, 1)
  redis.call('set', timeouts .. ':1', 1, 'px', lease)
  redis.call('pexpire', lock, lease)
  return nil
end

if mode == 'read' or (mode == 'write' and redis.call('hexists', lock, writer) == 1) then
  local held = tonumber(redis.call('hget', lock, reader) or 0)
  local n = held
  if held <= tonumber(ARGV[4]) then
    n = redis.call('hincrby', lock, reader, 1)
  end
  redis.call('set', timeouts .. ':' .. n, 1, 'px', lease)
  local ttl = redis.call('pttl', lock)
  redis.call('pexpire', lock, math.max(ttl, tonumber(lease)))
  return nil
end

return redis.call('pttl', lock)
