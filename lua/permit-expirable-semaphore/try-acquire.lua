--[[
  Acquire permits of a permit-expirable semaphore (RPermitExpirableSemaphore), each under an id of
  16 raw bytes recorded in the ZSET with its expiry. Up to ARGV[1] expired permits are reclaimed
  first. When the semaphore key has a TTL, the ZSET gets the same TTL.

  KEYS[1]  semaphore <name> (STRING integer: available permits)
  KEYS[2]  ZSET {<name>}:timeout (member: permit id, 16 raw bytes; score: expiry, epoch ms)
  KEYS[3]  channel redisson_sc:{<name>}
  ARGV[1]  permits wanted n (a positive integer)
  ARGV[2]  expiry score of the new permits: now + lease, or the no-expiry score
  ARGV[3]  now (the caller's epoch ms)
  ARGV[4]  the no-expiry score 922337203685477
  ARGV[5 .. 4+n]  the n permit ids (raw bytes)
  ARGV[5+n]       publish command (PUBLISH or SPUBLISH), the last argument

  Returns
    'OK'          acquired: the count was decremented by n and the ids added with ARGV[2]
    ':<score>'    not acquired; <score> is the earliest expiry among the acquired permits
    nil           not acquired, and no acquired permit will expire by itself
]]
--- @include "reclaim-expired-permits"

local name, zset, channel = KEYS[1], KEYS[2], KEYS[3]
local wanted = tonumber(ARGV[1])
reclaim(name, zset, channel, ARGV[3], ARGV[#ARGV], wanted)

local available = tonumber(redis.call('get', name) or '0')
if available >= wanted then
  redis.call('decrby', name, wanted)
  for i = 1, wanted do
    redis.call('zadd', zset, ARGV[2], ARGV[4 + i])
  end
  local ttl = redis.call('pttl', name)
  if ttl > 0 then
    redis.call('pexpire', zset, ttl)
  end
  return 'OK'
end

local earliest = redis.call('zrange', zset, 0, 0, 'withscores')
if earliest[2] ~= nil and earliest[2] ~= ARGV[4] then
  return ':' .. earliest[2]
end
return nil
