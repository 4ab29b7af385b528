// @sesamecare-oss/redlock (maintained fork of redlock 5). Retry delay and jitter at their defaults
// (200 ms ± 100); retryCount -1 ("retry until acquired") replaces the default cap of 10 retries.
import Redis from 'ioredis';
import { Redlock } from '@sesamecare-oss/redlock';

export const name = '@sesamecare-oss/redlock';
export const pkg = '@sesamecare-oss/redlock';
export const waiting = 'polls every 200 ms ± 100';

export async function setup({ url }) {
  const redis = new Redis(url);
  const redlock = new Redlock([redis], { retryCount: -1 });
  redlock.on('error', () => undefined); // emitted for every attempt that finds the lock taken
  return {
    async lock(key) {
      const lock = await redlock.acquire([key], 30_000);
      return () => lock.release();
    },
    teardown: () => redis.disconnect(),
  };
}
