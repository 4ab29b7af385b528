// RLock floor: lua/lock/ on bare ioredis (bench/lib/floor.mjs), the least client that runs it: a
// fresh owner per acquisition, an explicit lease, one waiter woken per release message.
import { LEASE, floorClient, tag } from '../lib/floor.mjs';

export const name = 'RLock floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub, one waiter per message';
export const floor = true;
/** The library adapter whose figures this floor divides, in every scenario both run. */
export const floorOf = 'ioredisson';

export async function setup({ url }) {
  const client = floorClient(url, () => 1);
  const acquire = client.script('lock/acquire');
  const unlock = client.script('lock/unlock');
  return {
    async lock(key) {
      const owner = client.owner();
      const channel = `redisson_lock__channel:${tag(key)}`;
      await client.acquire(channel, async () => (await acquire([key], [LEASE, owner, 0])) ?? true);
      return () => client.unlock(key, (latch, ttl) => unlock([key, channel, latch], [0, LEASE, owner, ttl, 'PUBLISH']));
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
