--[[
  Delete a latch; if it existed, announce NEW_COUNT (Redisson's message for a deletion).

  KEYS[1]  latch <name>
  KEYS[2]  channel redisson_countdownlatch__channel__{<name>}; absent when it is in another cluster
           slot than the name (a name with braces): the caller then publishes after the reply
  ARGV[1]  message to publish: NEW_COUNT (1)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  deleted; ARGV[1] published
    0  there was no latch
]]
if redis.call('del', KEYS[1]) == 1 then
  if KEYS[2] then redis.call(ARGV[2], KEYS[2], ARGV[1]) end
  return 1
end
return 0
