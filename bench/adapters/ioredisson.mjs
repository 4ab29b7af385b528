// ioredisson: handles (acquire/release), so each concurrent caller releases exactly its own hold.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

export const name = 'ioredisson';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub wake-up';

export async function setup({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  return {
    async lock(key) {
      const handle = await redisson.getLock(key).acquire();
      return () => handle.release();
    },
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}

/** The counting semaphore (`getSemaphore`), for the semaphore scenario. */
export async function setupSemaphore({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  return {
    prepare: (key, permits) => redisson.getSemaphore(key).trySetPermits(permits),
    async acquire(key) {
      const handle = await redisson.getSemaphore(key).acquire();
      return () => handle.release();
    },
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}
