import { randomUUID } from 'node:crypto';
import { RedissonClient } from '../lib';
import { delay, useRedis, within } from './helpers/fixture';
import { eventually } from './helpers/redis-server';

/*
 * What parked waiters do when what they wait for may end without a message (a holder's lease runs
 * out): the channel re-checks once per reading of the lease, not each waiter on its own, and a
 * re-check that finds the lock free serves every waiter that can be served.
 */

const { server, client, admin } = useRedis();

/** A client on a connection of its own whose EVALSHA calls are counted; shut down after `fn`. */
async function withCountedClient(
  fn: (redisson: RedissonClient, evalshas: () => number) => Promise<void>,
): Promise<void> {
  const connection = server().connect();
  const redisson = new RedissonClient(connection);
  const spy = jest.spyOn(connection, 'sendCommand');
  try {
    await fn(redisson, () => spy.mock.calls.filter(([command]) => command.name === 'evalsha').length);
  } finally {
    spy.mockRestore();
    await redisson.shutdown();
    connection.disconnect();
  }
}

const parkedCount = (redisson: RedissonClient, count: number) =>
  eventually(() => redisson.diagnostics().waiters === count, 20_000, `${count} parked waiters`);

describe('parked waiters and the lease of a held lock', () => {
  it('re-check once per lease reading per channel, not once per waiter', async () => {
    const name = `recheck:${randomUUID()}`;
    // Renewed every second: each attempt reads a TTL of 2,000 to 3,000 ms, with room for a stalled
    // renewal on a loaded machine.
    const holder = await client({ lockWatchdogTimeout: 3_000 }).getLock(name).acquire();
    await withCountedClient(async (redisson, evalshas) => {
      const waiters = 40;
      const done = Array.from({ length: waiters }, async () => (await redisson.getLock(name).acquire()).release());
      await parkedCount(redisson, waiters);
      const before = evalshas();
      await delay(4_000);
      // One waiter re-checks when the latest reading runs out: at most 2 in 4 s. Each waiter on its
      // own re-checks at least once in that time: 40 or more (measured: 40).
      expect(evalshas() - before).toBeLessThanOrEqual(8);
      await holder.release();
      await within(Promise.all(done), 30_000, 'every waiter served in turn');
      expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
    });
  });

  it('serve every waiter in turn once the lease of a holder that died runs out (no message)', async () => {
    const name = `recheck:${randomUUID()}`;
    await admin().hset(name, 'gone-client:1', 1);
    await admin().pexpire(name, 1_000);
    const redisson = client();
    const done = Array.from({ length: 10 }, async () => (await redisson.getLock(name).acquire()).release());
    await within(Promise.all(done), 30_000, 'every waiter served');
    expect(redisson.diagnostics()).toEqual({ channels: 0, waiters: 0, leases: 0 });
  });

  it('let every parked reader in once a write lease runs out (no message): the re-check passes on', async () => {
    const name = `recheck:${randomUUID()}`;
    await client().getReadWriteLock(name).writeLock().acquire({ leaseTime: 1_000 }); // never released
    const redisson = client();
    const readers = 5;
    let holding = 0;
    let allIn!: () => void;
    const everyoneIn = new Promise<void>((resolve) => (allIn = resolve));
    // Each reader keeps its hold until all do: served one after another, the first would wait forever.
    const done = Array.from({ length: readers }, async () => {
      const read = await redisson.getReadWriteLock(name).readLock().acquire();
      if (++holding === readers) allIn();
      await everyoneIn;
      await read.release();
    });
    await within(Promise.all(done), 30_000, 'every reader in at once');
  });
});
