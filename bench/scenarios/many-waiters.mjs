// 5a. Many waiters over many locks in one process: subscriptions, connections, heap per waiter,
// time to drain, and nothing left subscribed afterwards. Needs diagnostics(): ioredisson and its RLock floor.
import { parkAndDrain } from '../lib/parked-waiters.mjs';

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

  run: parkAndDrain,
};
