--[[
  Delete a spin lock whoever holds it, publishing nothing (spin-lock waiters poll). A script rather
  than a plain DEL so that replica sync can wait for it like every other lock write.

  KEYS[1]  lock hash <name>

  Returns
    1  the lock existed and was deleted
    0  there was no lock
]]
return redis.call('del', KEYS[1])
