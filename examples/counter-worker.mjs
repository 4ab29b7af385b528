// One contender: increments a shared Redis counter `iterations` times under the lock, with a
// deliberate await between the read and the write, so any overlap would lose an update.
// Usage: node examples/counter-worker.mjs <redis-url> <iterations> [name]
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const [url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', iterations = '100', name = `worker-${process.pid}`] = process.argv.slice(2);
const redis = new Redis(url);
const redisson = new RedissonClient(redis);
const lock = redisson.getLock('demo:counter-lock');

let longestWait = 0;
for (let i = 0; i < Number(iterations); i++) {
  const start = performance.now();
  await lock.using(async () => {
    longestWait = Math.max(longestWait, performance.now() - start);
    const value = Number((await redis.get('demo:counter')) ?? 0);
    await new Promise((resolve) => setImmediate(resolve));
    await redis.set('demo:counter', value + 1);
    if (i % 50 === 0) console.log(`${name} holds the lock (update ${i + 1}/${iterations}, counter was ${value})`);
  });
}
console.log(`${name} done: ${iterations} updates, longest wait ${longestWait.toFixed(1)} ms`);
await redisson.shutdown();
redis.disconnect();
