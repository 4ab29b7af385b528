// redlock 4 on one ioredis connection. Retry delay and jitter stay at their defaults (200 ms ± 200);
// retryCount -1 (documented as "retry until acquired") replaces the default cap of 10 retries.
import Redis from 'ioredis';
import Redlock from 'redlock';

export const name = 'redlock';
export const pkg = 'redlock';
export const waiting = 'polls every 200 ms ± 200';

export async function setup({ url }) {
  const redis = new Redis(url);
  const redlock = new Redlock([redis], { retryCount: -1 });
  redlock.on('clientError', () => undefined);
  return {
    async lock(key) {
      const lock = await redlock.lock(key, 30_000);
      return () => lock.unlock();
    },
    teardown: () => redis.disconnect(),
  };
}
