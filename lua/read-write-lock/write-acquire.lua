--[[
  Acquire (or re-enter) the write lock of a read/write lock (Redisson's RReadWriteLock.writeLock()).
  Only a free lock can be taken: a reader cannot upgrade, and a waiting writer does not stop new
  readers (reader preference).

  KEYS[1]  lock hash <name>
  ARGV[1]  lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]  writer token <clientId>:<threadId>:write
  ARGV[3]  write holds the caller believes the writer has, counting its acquisitions in flight.
           A larger stored count means this call is a re-send of one already applied: nothing is
           counted (or added to the lease) twice.

  Returns
    nil      acquired: `mode` is `write` and the writer's count incremented; a first hold sets the
             lease to ARGV[1], a re-entry adds ARGV[1] to the time left (as Redisson does)
    integer  not acquired; PTTL of the hash in ms (-1 when it has no expiry)
]]
local lock, lease, writer = KEYS[1], ARGV[1], ARGV[2]

local mode = redis.call('hget', lock, 'mode')
if mode == false then
  redis.call('hset', lock, 'mode', 'write')
  redis.call('hset', lock, writer, 1)
  redis.call('pexpire', lock, lease)
  return nil
end

if mode == 'write' then
  local held = tonumber(redis.call('hget', lock, writer) or 0)
  if held > 0 then
    if held <= tonumber(ARGV[3]) then
      redis.call('hincrby', lock, writer, 1)
      redis.call('pexpire', lock, redis.call('pttl', lock) + tonumber(lease))
    end
    return nil
  end
end

return redis.call('pttl', lock)
