// Issue 23, item 4: how parked waiters cost as their number grows, over 1 000 and over 10 000 held
// locks (one curve each): heap, subscriber connections, channels, drain time. Not in the default run.
import { parkAndDrain } from '../lib/parked-waiters.mjs';

const k = (n) => (n >= 1000 ? `${n / 1000}k` : String(n));

export default {
  name: 'waiter-scaling',
  title: 'Parked waiters, scaling',
  takesPart: (adapter) => adapter.id === 'ioredisson',
  cases: ({ quick, scalingWaiters, scalingLocks }) => {
    const waiters = scalingWaiters ?? (quick ? [1_000, 5_000, 10_000] : [1_000, 10_000, 100_000]);
    const locks = scalingLocks ?? (quick ? [1_000] : [1_000, 10_000]);
    return locks.flatMap((l) =>
      waiters.map((w) => ({
        id: `${w}x${l}`,
        label: `${k(w)} waiters over ${k(l)} locks`,
        waiters: w,
        locks: l,
        curve: `over ${k(l)} locks`,
        x: w,
      })),
    );
  },
  columns: [
    { key: 'heapBytes', label: 'heap B', main: true, fit: 'waiter' },
    { key: 'bytesPerWaiter', label: 'heap B/waiter' },
    { key: 'subscriberConnections', label: 'subscriber connections' },
    { key: 'channels', label: 'channels subscribed' },
    { key: 'drainMs', label: 'drain ms', fit: 'waiter' },
    { key: 'drainUsPerWaiter', label: 'drain µs/waiter' },
    { key: 'leftAfter', label: 'diagnostics() after (channels+waiters+leases)' },
  ],
  run: parkAndDrain,
};
