// Child process of the latch scenario: counts the latch down on request, in its own event loop.
// Argv: url, latch name. Protocol (IPC): child sends {ready}; parent sends {countDown}; child sends
// {calledAt, doneAt} (process.hrtime: stamped as it calls countDown and as the call resolves).
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

const [url, name] = process.argv.slice(2);
const redis = new Redis(url);
const redisson = new RedissonClient(redis);
await redis.ping();
process.on('message', async (msg) => {
  if (msg.exit) {
    await redisson.shutdown();
    process.exit(0);
  }
  const calledAt = process.hrtime.bigint().toString();
  await redisson.getCountDownLatch(name).countDown();
  process.send({ calledAt, doneAt: process.hrtime.bigint().toString() });
});
process.send({ ready: true });
