// Count-down latch floor: lua/count-down-latch/ on bare ioredis (bench/lib/floor.mjs). A waiter
// checks the count with one GET; any message on the channel wakes every waiter.
import { floorClient } from '../lib/floor.mjs';

export const name = 'latch floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, all waiters';
export const floor = true;
export const floorOf = 'ioredisson';
export const mutex = false;

export async function setupLatch({ url }) {
  const client = floorClient(url, (_message, waiting) => waiting);
  const trySetCount = client.script('count-down-latch/try-set-count');
  const countDown = client.script('count-down-latch/count-down');
  const channel = (name) => `redisson_countdownlatch__channel__{${name}}`;
  return {
    trySetCount: async (name, count) => (await trySetCount([name, channel(name)], [1, count, 'PUBLISH'])) === 1,
    countDown: (name) => countDown([name, channel(name)], [0, 'PUBLISH']),
    /** Resolves true once the count is 0 (the library's await() without a timeout). */
    async await(name) {
      await client.acquire(channel(name), async () => Number((await client.redis.get(name)) ?? 0) <= 0 || -1);
      return true;
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
