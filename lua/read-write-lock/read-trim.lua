--[[
  Undo read acquisitions whose outcome the caller never learned (abandoned, or failed in transit):
  bring the reader's hold count back down to what it had before them, deleting the timeout keys of
  the holds removed. A lock left with no holder is deleted and `0` published.

  KEYS[1]  lock hash <name>
  KEYS[2]  channel redisson_rwlock:{<name>}
  KEYS[3]  the reader's timeout key prefix {<name>}:<clientId>:<threadId>:rwlock_timeout
  ARGV[1]  reader token <clientId>:<threadId>
  ARGV[2]  holds the reader had before the uncertain acquisitions
  ARGV[3]  unlock message (0)
  ARGV[4]  publish command (PUBLISH or SPUBLISH)

  Returns
    integer  holds removed (0 when the acquisitions never took effect)
]]
local lock, channel, timeouts = KEYS[1], KEYS[2], KEYS[3]
local reader = ARGV[1]
local held = tonumber(redis.call('hget', lock, reader) or 0)
local keep = tonumber(ARGV[2])

if held <= keep then
  return 0
end

for n = held, keep + 1, -1 do
  redis.call('del', timeouts .. ':' .. n)
end
if keep > 0 then
  redis.call('hset', lock, reader, keep)
else
  redis.call('hdel', lock, reader)
  if redis.call('hlen', lock) <= 1 then
    redis.call('del', lock)
    redis.call(ARGV[4], channel, ARGV[3])
  end
end
return held - keep
