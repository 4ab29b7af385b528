// A coordinator waits until 4 workers have finished their part; each worker counts the latch down.
// Usage: node examples/latch-workers.mjs   (REDIS_URL, default redis://127.0.0.1:6379; `npm run build` first)
import { Redis } from 'ioredis';
import { RedissonClient } from 'ioredisson';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const coordinatorRedis = new Redis(url);
const coordinator = new RedissonClient(coordinatorRedis);
const done = coordinator.getCountDownLatch('example:batch-done');
await done.delete(); // start from a clean latch
await done.trySetCount(4);

// The workers would normally be other processes; each has its own client here.
const workers = [1, 2, 3, 4].map(async (n) => {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  await new Promise((resolve) => setTimeout(resolve, 100 * n)); // the work
  console.log(`worker ${n} finished`);
  await redisson.getCountDownLatch('example:batch-done').countDown();
  await redisson.shutdown();
  redis.disconnect();
});

const opened = await done.await({ waitTime: 10_000 });
console.log(opened ? 'all workers finished' : 'timed out waiting for the workers');
await Promise.all(workers);
await coordinator.shutdown();
coordinatorRedis.disconnect();
