--[[
  Release one hold of a group multi-lock, on every value of the set or on none: when the owner
  holds every value (its expiry not passed), each value's count drops by one, and a value whose
  count reaches 0 is freed (its three fields deleted); the unlock message is published when any
  value was freed. The outcome is recorded in an unlock latch so that a re-sent call with the same
  request id replays it.

  KEYS[1]     group hash <group>
  KEYS[2]     unlock channel redisson_lock__channel:{<group>}
  KEYS[3]     unlock latch redisson_unlock_latch:{<group>}:<requestId>
  ARGV[1]     owner token <clientId>:<threadId>
  ARGV[2]     unlock message (0)
  ARGV[3]     lease in ms applied to values still held
  ARGV[4]     publish command (PUBLISH or SPUBLISH)
  ARGV[5]     latch time-to-live in ms
  ARGV[6]     the caller's clock in ms
  ARGV[7..n]  value fields

  Returns
    1    every value was freed (or a previous call with this request id did so)
    0    holds remain on some value (or replay of that outcome)
    nil  the owner does not hold every value; nothing changed
]]
local group, channel, latch = KEYS[1], KEYS[2], KEYS[3]
local owner, lease, now = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[6])

local replay = redis.call('get', latch)
if replay then
  return tonumber(replay)
end

for i = 7, #ARGV do
  local expiry = tonumber(redis.call('hget', group, ARGV[i] .. ':' .. owner .. ':expire_time'))
  if redis.call('hget', group, ARGV[i]) ~= owner or not expiry or expiry < now then
    return nil
  end
end

local freed, kept = false, false
local until_ = lease + now
for i = 7, #ARGV do
  local prefix = ARGV[i] .. ':' .. owner
  if redis.call('hincrby', group, prefix .. ':lock_count', -1) <= 0 then
    redis.call('hdel', group, ARGV[i], prefix .. ':expire_time', prefix .. ':lock_count')
    freed = true
  else
    if tonumber(redis.call('hget', group, prefix .. ':expire_time')) < until_ then
      redis.call('hset', group, prefix .. ':expire_time', until_)
    end
    kept = true
  end
end

if freed then
  redis.call(ARGV[4], channel, ARGV[2])
end
if kept then
  if redis.call('pttl', group) < lease then
    redis.call('pexpire', group, lease)
  end
  redis.call('set', latch, 0, 'px', ARGV[5])
  return 0
end
redis.call('set', latch, 1, 'px', ARGV[5])
return 1
