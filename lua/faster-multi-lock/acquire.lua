--[[
  Acquire (or re-enter) a group multi-lock: every value of the set or none. Each value is a field of
  the group's hash holding its owner; the owner's hold on it is two more fields,
  <field>:<owner>:expire_time (absolute ms) and <field>:<owner>:lock_count.

  KEYS[1]     group hash <group>
  ARGV[1]     lease in ms (explicit lease, or the watchdog timeout)
  ARGV[2]     the caller's clock in ms (expiry times are absolute, as Redisson writes them)
  ARGV[3]     owner token <clientId>:<threadId>
  ARGV[4..n]  value fields (Redisson's hash of each value's codec bytes)

  Returns
    nil      acquired: every value is the owner's, its count incremented (restarted at 1 when the
             owner's own hold had run out), its expiry at least now + lease
    integer  not acquired, nothing changed: ms until the latest expiry among values held by others
]]
local group = KEYS[1]
local lease, now, owner = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]

local existed = redis.call('exists', group) == 1
if existed then
  -- A value counts as held by another owner until that owner's expiry passes.
  local latest = -1
  for i = 4, #ARGV do
    local holder = redis.call('hget', group, ARGV[i])
    if holder and holder ~= owner then
      local expiry = tonumber(redis.call('hget', group, ARGV[i] .. ':' .. holder .. ':expire_time'))
      if expiry and expiry > now and expiry > latest then
        latest = expiry
      end
    end
  end
  if latest ~= -1 then
    return latest - now
  end
end

local until_ = lease + now
for i = 4, #ARGV do
  local prefix = ARGV[i] .. ':' .. owner
  local holder = redis.call('hget', group, ARGV[i])
  if holder and holder ~= owner then
    -- The previous holder's hold ran out: its fields go with it.
    redis.call('hdel', group, ARGV[i] .. ':' .. holder .. ':expire_time', ARGV[i] .. ':' .. holder .. ':lock_count')
  end
  redis.call('hset', group, ARGV[i], owner)
  local expiry = tonumber(redis.call('hget', group, prefix .. ':expire_time'))
  if not expiry or expiry < now then
    -- A first hold, or the owner's own that ran out (no hold any more): counting starts again.
    redis.call('hset', group, prefix .. ':expire_time', until_, prefix .. ':lock_count', 1)
  else
    if expiry < until_ then
      redis.call('hset', group, prefix .. ':expire_time', until_)
    end
    redis.call('hincrby', group, prefix .. ':lock_count', 1)
  end
end

-- The hash lives at least as long as the longest lease in it (a hash without expiry keeps none).
if not existed then
  redis.call('pexpire', group, lease)
else
  local ttl = redis.call('pttl', group)
  if ttl > 0 and ttl < lease then
    redis.call('pexpire', group, lease)
  end
end
return nil
