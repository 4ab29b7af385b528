// redis-semaphore Mutex: defaults (lockTimeout 10 s with refresh, retryInterval 10 ms), except that
// acquireTimeout is lifted from 10 s so that every waiter waits until it gets the lock.
import Redis from 'ioredis';
import { Mutex, Semaphore } from 'redis-semaphore';

export const name = 'redis-semaphore';
export const pkg = 'redis-semaphore';
export const waiting = 'polls every 10 ms';

export async function setup({ url }) {
  const redis = new Redis(url);
  return {
    async lock(key) {
      const mutex = new Mutex(redis, key, { acquireTimeout: 3_600_000 });
      await mutex.acquire();
      return () => mutex.release();
    },
    teardown: () => redis.disconnect(),
  };
}

/** Its `Semaphore` at the same defaults (the permit count is the constructor's limit), for the semaphore scenario. */
export async function setupSemaphore({ url }) {
  const redis = new Redis(url);
  let limit;
  return {
    prepare: async (key, permits) => {
      limit = permits;
    },
    async acquire(key) {
      const semaphore = new Semaphore(redis, key, limit, { acquireTimeout: 3_600_000 });
      await semaphore.acquire();
      return () => semaphore.release();
    },
    teardown: () => redis.disconnect(),
  };
}
