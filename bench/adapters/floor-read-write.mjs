// Read/write lock floor: lua/read-write-lock/ on bare ioredis (bench/lib/floor.mjs). A write release
// (message 1) wakes every waiter, a read release that frees the lock (message 0) wakes one.
import { LEASE, floorClient, tag } from '../lib/floor.mjs';

export const name = 'read/write lock floor';
export const pkg = 'ioredis';
export const waiting = 'pub/sub; a write release wakes all';
export const floor = true;
export const floorOf = 'ioredisson';
export const mutex = false;

export async function setupReadWrite({ url }) {
  const client = floorClient(url, (message, waiting) => (message === '1' ? waiting : 1));
  const [readAcquire, readUnlock, writeAcquire, writeUnlock] = [
    'read-acquire',
    'read-unlock',
    'write-acquire',
    'write-unlock',
  ].map((s) => client.script(`read-write-lock/${s}`));
  const channel = (name) => `redisson_rwlock:${tag(name)}`;
  return {
    async read(name) {
      const owner = client.owner();
      const timeouts = `${tag(name)}:${owner}:rwlock_timeout`;
      await client.acquire(
        channel(name),
        async () => (await readAcquire([name, timeouts], [LEASE, owner, `${owner}:write`, 0])) ?? true,
      );
      return () =>
        client.unlock(name, (latch, ttl) =>
          readUnlock([name, channel(name), timeouts, tag(name), latch], [0, owner, ttl, 'PUBLISH']),
        );
    },
    async write(name) {
      const writer = `${client.owner()}:write`;
      await client.acquire(channel(name), async () => (await writeAcquire([name], [LEASE, writer, 0])) ?? true);
      return () =>
        client.unlock(name, (latch, ttl) =>
          writeUnlock([name, channel(name), latch], [1, LEASE, writer, ttl, 'PUBLISH']),
        );
    },
    diagnostics: client.diagnostics,
    teardown: client.teardown,
  };
}
