--[[
  Whether a read/write lock is held in the sense of one of its two locks (Redisson's rule).

  KEYS[1]  lock hash <name>
  ARGV[1]  `read`: held by a reader (mode `read`, or mode `write` with the writer also reading);
           `write`: held by the writer (mode `write`)

  Returns
    1 when held in that sense, 0 otherwise
]]
local mode = redis.call('hget', KEYS[1], 'mode')
if ARGV[1] == 'write' then
  return mode == 'write' and 1 or 0
end
if mode == 'read' then
  return 1
end
if mode == 'write' and redis.call('hlen', KEYS[1]) > 2 then
  return 1
end
return 0
