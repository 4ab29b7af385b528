--[[
  Read the holders of a group multi-lock's values, for its queries (is it locked, by whom, how many
  holds, how long).

  KEYS[1]     group hash <group>
  ARGV[1..n]  value fields

  Returns
    array of 3n: per value, its owner token (nil when free), that owner's expiry in absolute ms
    and its hold count (nil when free or missing)
]]
local group = KEYS[1]
local out = {}
for i = 1, #ARGV do
  local holder = redis.call('hget', group, ARGV[i])
  out[3 * i - 2] = holder
  if holder then
    out[3 * i - 1] = redis.call('hget', group, ARGV[i] .. ':' .. holder .. ':expire_time')
    out[3 * i] = redis.call('hget', group, ARGV[i] .. ':' .. holder .. ':lock_count')
  else
    out[3 * i - 1] = false
    out[3 * i] = false
  end
end
return out
