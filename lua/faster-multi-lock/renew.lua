--[[
  Extend the holds of a batch of group multi-locks, each only if its owner still holds every value
  of its set: each value's expiry becomes at least now + lease, and the group hash lives at least
  the lease.

  KEYS[1..k]  group hashes (one per lock of the batch; a group may repeat)
  ARGV[1]     lease in ms
  ARGV[2]     the caller's clock in ms
  ARGV[3..]   per lock, in KEYS order: its owner token, its number of values m, then its m value fields

  Returns
    array of k integers: 1 when the lock at KEYS[i] was renewed, 0 when its owner lost a value
]]
local lease, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local until_ = lease + now
local renewed = {}
local at = 3
for k, group in ipairs(KEYS) do
  local owner, count = ARGV[at], tonumber(ARGV[at + 1])
  local first, last = at + 2, at + 1 + count
  at = last + 1
  local held = true
  for i = first, last do
    if redis.call('hget', group, ARGV[i]) ~= owner then
      held = false
      break
    end
  end
  if held then
    for i = first, last do
      local field = ARGV[i] .. ':' .. owner .. ':expire_time'
      local expiry = tonumber(redis.call('hget', group, field))
      if not expiry or expiry < until_ then
        redis.call('hset', group, field, until_)
      end
    end
    if redis.call('pttl', group) < lease then
      redis.call('pexpire', group, lease)
    end
  end
  renewed[k] = held and 1 or 0
end
return renewed
