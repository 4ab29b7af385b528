--[[
  Set a count-down latch's count unless a count is set; announce it with NEW_COUNT.

  KEYS[1]  latch <name> (STRING integer count; missing = 0 = open)
  KEYS[2]  channel redisson_countdownlatch__channel__{<name>}; absent when it is in another cluster
           slot than the name (a name with braces): the caller then publishes after the reply
  ARGV[1]  message to publish: NEW_COUNT (1)
  ARGV[2]  count (a positive integer)
  ARGV[3]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  set; ARGV[1] published
    0  a count is set already; nothing changed
]]
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('set', KEYS[1], ARGV[2])
if KEYS[2] then redis.call(ARGV[3], KEYS[2], ARGV[1]) end
return 1
