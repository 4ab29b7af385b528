// Permit-expirable semaphore floor: lua/permit-expirable-semaphore/ on bare ioredis
// (bench/lib/floor.mjs). A permit is a 16-byte id under an explicit lease; a failed attempt returns
// the earliest expiry, the retry time without a message.
import { randomBytes } from 'node:crypto';
import { LEASE, floorClient, tag } from '../lib/floor.mjs';

export const name = 'expirable semaphore floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, as many waiters as permits';
export const floor = true;
export const floorOf = 'ioredisson-expirable';
export const mutex = false;

const NO_EXPIRY = 922337203685477;

export async function setupSemaphore({ url }) {
  const client = floorClient(url, (message, waiting) => Math.min(Number(message), waiting));
  const trySetPermits = client.script('semaphore/try-set-permits');
  const tryAcquire = client.script('permit-expirable-semaphore/try-acquire');
  const release = client.script('permit-expirable-semaphore/release');
  const keys = (key) => [key, `${tag(key)}:timeout`, `redisson_sc:${tag(key)}`];
  return {
    prepare: (key, permits) => trySetPermits([key, `redisson_sc:${tag(key)}`], [permits, 0, 'PUBLISH']),
    async acquire(key) {
      const id = randomBytes(16);
      const [name, timeouts, channel] = keys(key);
      await client.acquire(channel, async () => {
        const now = Date.now();
        const reply = await tryAcquire([name, timeouts, channel], [1, now + LEASE, now, NO_EXPIRY, id, 'PUBLISH']);
        return reply === 'OK' || (reply === null ? -1 : Math.max(0, Number(reply.slice(1)) - now));
      });
      return () => release([name, channel, timeouts], [id, 1, Date.now(), 'PUBLISH']);
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
