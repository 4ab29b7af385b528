// At most 3 calls to a rate-limited API at once, shared by every process running this script.
// Usage: node examples/semaphore-api-limit.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const redisson = new RedissonClient(redis);
const limit = redisson.getSemaphore('example:api-slots');
await limit.trySetPermits(3); // only the first process to get here creates the slots

async function callApi(/** @type {string} */ request) {
  // `using` takes a slot, runs the call, and gives the slot back whatever happens.
  return limit.using(async () => {
    await new Promise((resolve) => setTimeout(resolve, 100)); // stands in for the real call
    return `response to ${request}`;
  }, { waitTime: 10_000 });
}

const started = performance.now();
const responses = await Promise.all(Array.from({ length: 9 }, (_, i) => callApi(`request ${i + 1}`)));
console.log(`${responses.length} calls, 3 at a time, took ${Math.round(performance.now() - started)} ms`);
console.log(`slots free now: ${await limit.availablePermits()}`);
await redisson.shutdown();
redis.disconnect();
