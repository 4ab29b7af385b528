// ioredisson: handles (acquire/release), so each concurrent caller releases exactly its own hold.
import Redis, { Cluster } from 'ioredis';
import { RedissonClient } from 'ioredisson';

export const name = 'ioredisson';
export const pkg = 'ioredisson';
export const waiting = 'pub/sub wake-up';

/**
 * `options`: the client's, where a scenario needs other than the defaults (renewal: a short watchdog);
 * `cluster`: the nodes of a Redis Cluster to connect to instead of `url`.
 */
export async function setup({ url, options, cluster }) {
  const redis = cluster ? new Cluster(cluster) : new Redis(url);
  const redisson = new RedissonClient(redis, options);
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

/** The read/write lock (`getReadWriteLock`), for the read-write scenario. */
export async function setupReadWrite({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  const released = (handle) => () => handle.release();
  return {
    read: async (name) => released(await redisson.getReadWriteLock(name).readLock().acquire()),
    write: async (name) => released(await redisson.getReadWriteLock(name).writeLock().acquire()),
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}

/** The count-down latch (`getCountDownLatch`), for the latch scenario. */
export async function setupLatch({ url }) {
  const redis = new Redis(url);
  const redisson = new RedissonClient(redis);
  return {
    trySetCount: (name, count) => redisson.getCountDownLatch(name).trySetCount(count),
    countDown: (name) => redisson.getCountDownLatch(name).countDown(),
    await: (name) => redisson.getCountDownLatch(name).await(),
    diagnostics: () => redisson.diagnostics(),
    async teardown() {
      await redisson.shutdown();
      redis.disconnect();
    },
  };
}
