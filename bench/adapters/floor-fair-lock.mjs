// Fair lock floor: lua/fair-lock/ on bare ioredis (bench/lib/floor.mjs). Each acquisition is its own
// owner with its own channel, queued with the library's default slack; the release wakes the head.
import { LEASE, floorClient, tag } from '../lib/floor.mjs';

export const name = 'fair lock floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, the next waiter only';
export const floor = true;
export const floorOf = 'ioredisson-fair';

/** A waiter's place in the queue lasts this long without an attempt (the library's fairLockWaitTimeout). */
const SLACK = 300_000;
/** Longest re-check while the lock is free but another waiter's turn (the library's). */
const RECHECK = 1_000;

export async function setup({ url }) {
  const client = floorClient(url, () => 1);
  const acquire = client.script('fair-lock/acquire');
  const unlock = client.script('fair-lock/unlock');
  return {
    async lock(key) {
      const owner = client.owner();
      const keys = [key, `redisson_lock_queue:${tag(key)}`, `redisson_lock_timeout:${tag(key)}`];
      const channel = `redisson_lock__channel:${tag(key)}`;
      await client.acquire(
        `${channel}:${owner}`,
        async () => (await acquire(keys, [LEASE, owner, SLACK, Date.now(), 0, '', '1', RECHECK])) ?? true,
      );
      return () =>
        client.unlock(key, (latch, ttl) =>
          unlock([...keys, channel, latch], [0, LEASE, owner, Date.now(), ttl, 'PUBLISH']),
        );
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
