// 5a. Many waiters over many locks in one process: subscriptions, connections, heap per waiter,
// time to drain, and nothing left subscribed afterwards. Needs diagnostics(): ioredisson and its RLock floor.
import { channelCount, subscriberConnections } from '../lib/redis-info.mjs';
import { settledHeap, until, withTimeout } from '../lib/stats.mjs';

export default {
  name: 'many-waiters',
  title: 'Many waiters over many locks',
  takesPart: (adapter) => adapter.id === 'ioredisson' || adapter.id === 'floor-rlock',
  cases: ({ quick, manyWaiters, manyLocks }) => {
    const waiters = manyWaiters ?? (quick ? 2_000 : 10_000);
    const locks = manyLocks ?? (quick ? 200 : 1_000);
    return [{ id: `${waiters}x${locks}`, label: `${waiters} waiters over ${locks} locks`, waiters, locks }];
  },
  columns: [
    { key: 'channels', label: 'channels subscribed', main: true },
    { key: 'subscriberConnections', label: 'subscriber connections' },
    { key: 'parked', label: 'diagnostics().waiters' },
    { key: 'bytesPerWaiter', label: 'heap B/waiter', better: 'lower' },
    { key: 'drainMs', label: 'drain ms' },
    { key: 'channelsAfter', label: 'channels after' },
    { key: 'leftAfter', label: 'diagnostics() after (channels+waiters+leases)' },
  ],

  async run(env, adapter, { waiters, locks }) {
    const keys = Array.from({ length: locks }, (_, i) => `bench:many:${i}`);
    // What earlier cases left on the shared server (a peer's subscriber that outlived its teardown)
    // is not this case's: the counts below are taken against it.
    const before = { channels: await channelCount(env.admin), connections: await subscriberConnections(env.admin) };
    const holder = await adapter.setup({ url: env.url });
    const lib = await adapter.setup({ url: env.url });
    try {
      await (await lib.lock('bench:many:warm-up'))();
      const releases = await Promise.all(keys.map((key) => holder.lock(key)));
      const heapBefore = await settledHeap();
      const done = Promise.all(Array.from({ length: waiters }, (_, i) => lib.lock(keys[i % locks]).then((r) => r())));
      done.catch(() => undefined);
      await until(() => lib.diagnostics().waiters === waiters, 60_000, 'waiters to park');
      const heapParked = await settledHeap();
      const parked = {
        channels: await channelCount(env.admin, 'redisson_lock__channel:*'),
        subscriberConnections: (await subscriberConnections(env.admin)) - before.connections,
        parked: lib.diagnostics().waiters,
        bytesPerWaiter: (heapParked - heapBefore) / waiters,
      };
      const t = performance.now();
      await Promise.all(releases.map((release) => release()));
      await withTimeout(done, 120_000, 'drain');
      const drainMs = performance.now() - t;
      await until(async () => (await channelCount(env.admin)) === before.channels, 2_000, 'unsubscribes').catch(() => undefined);
      const after = lib.diagnostics();
      return {
        ...parked,
        drainMs,
        channelsAfter: (await channelCount(env.admin)) - before.channels,
        leftAfter: after.channels + after.waiters + after.leases,
      };
    } finally {
      await holder.teardown();
      await lib.teardown();
    }
  },
};
