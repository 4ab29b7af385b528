// Fencing tokens guarding a write. A worker takes a fenced lock with a short lease, then stalls
// past it; meanwhile another worker takes the lock and writes. When the first one wakes up and
// writes, the store refuses it: its token is older than the last one the store accepted.
//
// Usage: node examples/fencing-token.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = new Redis(url);
const redisson = new RedissonClient(redis);
const lockName = 'example:fencing:lock';
const storeKey = 'example:fencing:store';

// The guarded store: a write lands only with a token larger than any accepted before, checked and
// applied in one step. Any store that can compare and set works (SQL: UPDATE ... WHERE token < ?).
const GUARDED_WRITE = `
local seen = tonumber(redis.call('hget', KEYS[1], 'token') or 0)
if tonumber(ARGV[1]) <= seen then return 0 end
redis.call('hset', KEYS[1], 'token', ARGV[1], 'value', ARGV[2])
return 1`;
async function write(/** @type {number} */ token, /** @type {string} */ value) {
  const landed = (await redis.eval(GUARDED_WRITE, 1, storeKey, token, value)) === 1;
  console.log(`  write ${JSON.stringify(value)} with token ${token}: ${landed ? 'accepted' : 'REFUSED (stale token)'}`);
  return landed;
}

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

await redis.del(storeKey);
const lock = redisson.getFencedLock(lockName);

console.log('worker A takes the lock with a 500 ms lease');
const a = await lock.acquire({ leaseTime: 500 });
await write(a.fencingToken, 'A: step 1');

console.log('worker A stalls for 1 s (GC pause, slow call...), its lease runs out');
await sleep(1_000);

console.log('worker B takes the lock');
const b = await lock.acquire({ waitTime: 5_000 });
await write(b.fencingToken, 'B: step 1');

console.log('worker A wakes up and carries on without checking its signal');
await write(a.fencingToken, 'A: step 2');
console.log(`A's signal aborted: ${a.signal.aborted}; the store holds ${JSON.stringify(await redis.hget(storeKey, 'value'))}`);

await a.release().catch((error) => console.log(`A's release: ${error.name} (${error.code})`));
await b.release();
console.log(`last token handed out: ${await lock.getToken()}`);

// The store is gone too, so the token counter may start again from 1: delete() removes both keys.
await redis.del(storeKey);
await lock.delete();
await redisson.shutdown();
redis.disconnect();
