// Handling a lost lock. A worker holds a lock (renewed by the watchdog) and processes a batch item by
// item, checking its handle's `signal` before each one. Midway an operator force-unlocks the lock
// (as `npx ioredisson force-unlock` does); the watchdog's next renewal finds it gone, the signal
// aborts with LockLostError, the worker stops, and `release()` rejects with LockNotHeldError.
// Usage: node examples/lost-lock.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { LockLostError, LockNotHeldError, RedissonClient } from 'ioredisson';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A short watchdog (1.5 s lease, renewed every 0.5 s) so that the loss shows within a second.
const redis = new Redis(url);
const redisson = new RedissonClient(redis, { lockWatchdogTimeout: 1_500 });
redisson.on('lockLost', ({ name, owner }) => console.log(`event lockLost: ${name} (owner ${owner})`));

const operatorRedis = new Redis(url);
const operator = new RedissonClient(operatorRedis);
const held = await redisson.getLock('example:batch:lock').acquire();
setTimeout(async () => {
  console.log('operator: force-unlocking the lock');
  await operator.getLock('example:batch:lock').forceUnlock();
}, 300);
held.signal.addEventListener('abort', () => console.log(`signal aborted: ${held.signal.reason.name}`));
let processed = 0;
try {
  for (let item = 1; item <= 20; item++) {
    held.signal.throwIfAborted(); // before each step that must not overlap with another holder
    await sleep(100); // process one item
    processed++;
  }
} catch (error) {
  if (!(error instanceof LockLostError)) throw error;
  console.log(`worker: stopped after ${processed} of 20 items: ${error.message}`);
}

try {
  await held.release();
  console.log('released normally');
} catch (error) {
  if (!(error instanceof LockNotHeldError)) throw error;
  console.log(`release() rejected with ${error.name} (${error.code}): the batch may need a re-run`);
}

await Promise.all([redisson.shutdown(), operator.shutdown()]);
redis.disconnect();
operatorRedis.disconnect();
