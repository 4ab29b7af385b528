// ioredisson's fair lock: waiters queue in Redis, and a release wakes exactly the next one.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

export const name = 'ioredisson fair lock';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub, the next waiter only';

export async function setup({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  return {
    async lock(key) {
      const handle = await redisson.getFairLock(key).acquire();
      return () => handle.release();
    },
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}
