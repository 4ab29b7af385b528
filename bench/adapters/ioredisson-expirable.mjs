// ioredisson's permit-expirable semaphore (getPermitExpirableSemaphore), for the semaphore scenario.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

export const name = 'ioredisson expirable semaphore';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub wake-up';
export const mutex = false;

export async function setupSemaphore({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  return {
    prepare: (key, permits) => redisson.getPermitExpirableSemaphore(key).trySetPermits(permits),
    async acquire(key) {
      const handle = await redisson.getPermitExpirableSemaphore(key).acquire({ leaseTime: 30_000 });
      return () => handle.release();
    },
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}
