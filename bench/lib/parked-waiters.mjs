// Parks many waiters over many held locks in one process, then drains them: what the many-waiters
// and waiter-scaling scenarios measure. Needs diagnostics(): ioredisson and its RLock floor.
import { channelCount, subscriberConnections } from './redis-info.mjs';
import { settledHeap, until, withTimeout } from './stats.mjs';

/**
 * Parks `waiters` waiters round-robin over `locks` locks held by another client, then releases the
 * locks and waits for every waiter to take and release its lock. Counts are taken against what
 * the server had before (a peer's subscriber that outlived an earlier case's teardown is not this one's).
 */
export async function parkAndDrain(env, adapter, { waiters, locks }) {
  const keys = Array.from({ length: locks }, (_, i) => `bench:many:${i}`);
  const before = { channels: await channelCount(env.admin), connections: await subscriberConnections(env.admin) };
  const holder = await adapter.setup({ url: env.url });
  const lib = await adapter.setup({ url: env.url });
  try {
    await (
      await lib.lock('bench:many:warm-up')
    )();
    const releases = await Promise.all(keys.map((key) => holder.lock(key)));
    const heapBefore = await settledHeap();
    const done = Promise.all(Array.from({ length: waiters }, (_, i) => lib.lock(keys[i % locks]).then((r) => r())));
    let failed; // a waiter's rejection, which would keep the count below `waiters` for good
    done.catch((error) => (failed = error));
    await until(() => lib.diagnostics().waiters === waiters, 120_000, 'waiters to park').catch((error) => {
      const why = failed ? `; a waiter failed: ${failed.message}` : '';
      throw new Error(`${error.message} (diagnostics ${JSON.stringify(lib.diagnostics())} of ${waiters}${why})`);
    });
    const heapParked = await settledHeap();
    const parked = {
      channels: await channelCount(env.admin, 'redisson_lock__channel:*'),
      subscriberConnections: (await subscriberConnections(env.admin)) - before.connections,
      parked: lib.diagnostics().waiters,
      heapBytes: heapParked - heapBefore,
      bytesPerWaiter: (heapParked - heapBefore) / waiters,
    };
    const t = performance.now();
    await Promise.all(releases.map((release) => release()));
    await withTimeout(done, 180_000, 'drain');
    const drainMs = performance.now() - t;
    await until(async () => (await channelCount(env.admin)) === before.channels, 2_000, 'unsubscribes').catch(
      () => undefined,
    );
    const after = lib.diagnostics();
    return {
      ...parked,
      drainMs,
      drainUsPerWaiter: (drainMs * 1000) / waiters,
      channelsAfter: (await channelCount(env.admin)) - before.channels,
      leftAfter: after.channels + after.waiters + after.leases,
    };
  } finally {
    await holder.teardown();
    await lib.teardown();
  }
}
