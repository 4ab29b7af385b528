--[[
  Give permits back to a semaphore (RSemaphore) and, in the same step, take permits for acquisitions
  of the releasing client that the release may serve. The release is Redisson's (INCRBY, a missing
  key counting as 0); each acquisition then gets its permits, in order, if that many are available
  now, exactly as an attempt right behind the release would. So a count lowered meanwhile by anyone
  (addPermits with a negative delta) is obeyed: an acquisition the count does not cover gets nothing.
  The count left is announced only when it is positive, since no waiter could take a permit from a
  count at or below zero.

  KEYS[1]  semaphore <name> (STRING integer: available permits)
  KEYS[2]  channel redisson_sc:{<name>}
  ARGV[1]  permits released (a positive integer)
  ARGV[2]  publish command (PUBLISH or SPUBLISH)
  ARGV[3+] permits wanted by each acquisition (positive integers), oldest first

  Returns one flag per acquisition:
    1  taken: its permits were taken from the count
    0  not enough permits left for it
]]
local released = tonumber(ARGV[1])
local available = tonumber(redis.call('get', KEYS[1]) or '0') + released
local flags = {}
local taken = 0
for i = 3, #ARGV do
  local wanted = tonumber(ARGV[i])
  if available - taken >= wanted then
    taken = taken + wanted
    flags[i - 2] = 1
  else
    flags[i - 2] = 0
  end
end
local left = redis.call('incrby', KEYS[1], released - taken)
if left > 0 then
  redis.call(ARGV[2], KEYS[2], left)
end
return flags
