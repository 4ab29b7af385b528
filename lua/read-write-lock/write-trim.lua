--[[
  Undo write acquisitions whose outcome the caller never learned (abandoned, or failed in
  transit): bring the writer's hold count back down to what it had before them. When no write hold
  is left, the lock is deleted (or, if the same thread still reads, switched to `read`) and `1`
  published so that every waiter re-checks.

  KEYS[1]  lock hash <name>
  KEYS[2]  channel redisson_rwlock:{<name>}
  ARGV[1]  writer token <clientId>:<threadId>:write
  ARGV[2]  holds the writer had before the uncertain acquisitions
  ARGV[3]  write unlock message (1)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  holds removed (0 when the acquisitions never took effect)
]]
local lock, channel, writer = KEYS[1], KEYS[2], ARGV[1]
local held = tonumber(redis.call('hget', lock, writer) or 0)
local keep = tonumber(ARGV[2])

if held <= keep then
  return 0
end

if keep > 0 then
  redis.call('hset', lock, writer, keep)
  return held - keep
end

redis.call('hdel', lock, writer)
if redis.call('hlen', lock) <= 1 then
  redis.call('del', lock)
else
  redis.call('hset', lock, 'mode', 'read')
end
redis.call(ARGV[4], channel, ARGV[3])
return held - keep
