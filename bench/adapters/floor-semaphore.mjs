// Semaphore floor: lua/semaphore/ on bare ioredis (bench/lib/floor.mjs). A release publishes the
// count; it wakes that many waiters. No TTL to fall back on: a waiter waits for a message.
import { floorClient, tag } from '../lib/floor.mjs';

export const name = 'semaphore floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, as many waiters as permits';
export const floor = true;
export const floorOf = 'ioredisson';
export const mutex = false;

export async function setupSemaphore({ url }) {
  const client = floorClient(url, (message, waiting) => Math.min(Number(message), waiting));
  const trySetPermits = client.script('semaphore/try-set-permits');
  const tryAcquire = client.script('semaphore/try-acquire');
  const release = client.script('semaphore/release');
  const channel = (key) => `redisson_sc:${tag(key)}`;
  return {
    prepare: (key, permits) => trySetPermits([key, channel(key)], [permits, 0, 'PUBLISH']),
    async acquire(key) {
      await client.acquire(channel(key), async () => (await tryAcquire([key], [1]))[0] === 1 || -1);
      return () => release([key, channel(key)], [1, 'PUBLISH']);
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
