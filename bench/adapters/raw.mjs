// Raw baseline: SET key token NX PX, retried every 1 ms; released by a compare-and-delete script.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { sleep } from '../lib/stats.mjs';

export const name = 'raw SET NX';
export const pkg = 'ioredis';
export const waiting = 'polls every 1 ms';

const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

export async function setup({ url }) {
  const redis = new Redis(url);
  redis.defineCommand('compareAndDelete', { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
  return {
    async lock(key) {
      const token = randomBytes(16).toString('hex');
      while ((await redis.set(key, token, 'PX', 30_000, 'NX')) !== 'OK') await sleep(1);
      return () => redis.compareAndDelete(key, token);
    },
    teardown: () => redis.disconnect(),
  };
}
