--[[
  Extend the read holds of this client only: for each lock, the given reader tokens (all this
  client's readers of that lock) that still have a field get every timeout key of theirs extended,
  and the hash too if at least one of them is alive. Other clients' readers are never touched, so a
  reader whose client died stops counting once its timeout keys expire.

  KEYS     pairs: lock hash <name>, then its key prefix {<name>} (or <name> when it contains '{')
  ARGV[1]  lease in ms
  ARGV     then, for each pair of KEYS in order: a count c, followed by c reader tokens
           <clientId>:<threadId>

  Returns
    array of one integer per reader token, in order: 1 when that reader still held the lock and
    was renewed, 0 when it no longer holds it
]]
local lease = ARGV[1]
local renewed = {}
local arg = 2
for i = 1, #KEYS, 2 do
  local lock, prefix = KEYS[i], KEYS[i + 1]
  local count = tonumber(ARGV[arg])
  arg = arg + 1
  local alive = false
  for _ = 1, count do
    local token = ARGV[arg]
    arg = arg + 1
    local holds = tonumber(redis.call('hget', lock, token) or 0)
    if holds > 0 then
      alive = true
      for n = 1, holds do
        redis.call('pexpire', prefix .. ':' .. token .. ':rwlock_timeout:' .. n, lease)
      end
      renewed[#renewed + 1] = 1
    else
      renewed[#renewed + 1] = 0
    end
  end
  if alive then
    redis.call('pexpire', lock, lease)
  end
end
return renewed
