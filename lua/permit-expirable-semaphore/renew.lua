--[[
  Watchdog renewal of permits (beyond Redisson: its permits are never renewed). For each ZSET in
  KEYS, extend the listed permits that are still acquired and not expired to the new expiry. A
  group whose permits are not all alive is reported lost; expired ones are left for reclaiming.

  KEYS[i]  ZSET {<name>}:timeout of group i (one group per held lease)
  ARGV[1]  new expiry score: now + lease (epoch ms)
  ARGV[2]  now (the caller's epoch ms)
  ARGV[3 ..]  for each group in order: its number of ids c, then its c permit ids (raw bytes)

  Returns
    array  one flag per group: 1 every permit of it was extended, 0 at least one is gone or expired
]]
local flags = {}
local at = 3
local now = tonumber(ARGV[2])
for i, zset in ipairs(KEYS) do
  local count = tonumber(ARGV[at])
  local alive = 1
  for j = 1, count do
    local id = ARGV[at + j]
    local score = redis.call('zscore', zset, id)
    if score ~= false and tonumber(score) > now then
      redis.call('zadd', zset, 'xx', ARGV[1], id)
    else
      alive = 0
    end
  end
  at = at + count + 1
  flags[i] = alive
end
return flags
