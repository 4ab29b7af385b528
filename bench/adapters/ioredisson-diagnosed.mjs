// ioredisson with "who holds it" and deadlock detection on (options ownerInfo and deadlockDetection):
// what the two cost against the plain ioredisson adapter in the same run.
import Redis from 'ioredis';
import { RedissonClient } from 'ioredisson';

export const name = 'ioredisson + ownerInfo, deadlockDetection';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub wake-up; waits over 1 s recorded and searched';
export const variantOf = 'ioredisson';

export async function setup({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis, { ownerInfo: { service: 'bench' }, deadlockDetection: { after: 1_000 } });
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
