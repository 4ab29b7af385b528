--[[
  Delete a fenced lock and its token counter, whoever holds it; wake a waiter if it was held.
  Unlike a force-unlock (which keeps the counter), this restarts the token sequence: tokens
  drawn afterwards start again from 1, so only use it when no guarded store still remembers old ones.

  KEYS[1]  lock hash <name>
  KEYS[2]  token counter redisson_lock_token:{<name>}
  KEYS[3]  unlock channel redisson_lock__channel:{<name>}
  ARGV[1]  unlock message (0)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)

  Returns
    1  at least one of the two keys existed and was deleted
    0  neither existed
]]
local held = redis.call('del', KEYS[1])
if held == 1 then
  redis.call(ARGV[2], KEYS[3], ARGV[1])
end
return math.min(1, held + redis.call('del', KEYS[2]))
