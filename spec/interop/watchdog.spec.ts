import type { LockEvent } from '../../lib';
import { delay } from '../helpers/fixture';
import { describeInterop } from './helpers/java-tools';
import { useInterop } from './helpers/use-interop';

/** Short leases on both sides: each side renews every third of this. */
const WATCHDOG = 2_000;
/** How long the other side tries to take the lock: several leases. */
const CONTEND = 4 * WATCHDOG;

describeInterop('interop: watchdog renewal holds the lock against the other side', () => {
  const { admin, client, peer, javaLock } = useInterop({ lockWatchdogTimeout: WATCHDOG });

  /** Samples the lock's PTTL and fields until `done` settles: the lease never lapses, the owner never changes. */
  async function watch(name: string, done: Promise<unknown>): Promise<{ ttls: number[]; owners: Set<string> }> {
    let finished = false;
    void done.finally(() => (finished = true)).catch(() => undefined);
    const ttls: number[] = [];
    const owners = new Set<string>();
    while (!finished) {
      ttls.push(await admin().pttl(name));
      for (const field of Object.keys(await admin().hgetall(name))) owners.add(field);
      await delay(100);
    }
    return { ttls, owners };
  }

  it('a Java lock renewed by Redisson is never taken by Node over several leases', async () => {
    const name = 'watchdog:java-held';
    const java = javaLock(name);
    const owner = `${peer().clientId}:${await peer().threadId(java.thread)}`;
    await java.lock();
    const node = client({ lockWatchdogTimeout: WATCHDOG }).getLock(name);

    const startedAt = performance.now();
    const attempt = node.tryLock({ threadId: 1, waitTime: CONTEND });
    const { ttls, owners } = await watch(name, attempt);
    expect(await attempt).toBe(false);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(CONTEND - 50);
    expect(Math.min(...ttls)).toBeGreaterThan(0);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(WATCHDOG);
    expect([...owners]).toEqual([owner]);

    const next = node.lock({ threadId: 1 });
    await java.unlock();
    await next;
    expect(await node.isHeldByThread(1)).toBe(true);
    await node.unlock({ threadId: 1 });
  });

  it('a Node lock renewed by ioredisson is never taken by Java over several leases', async () => {
    const redisson = client({ lockWatchdogTimeout: WATCHDOG });
    const lost: LockEvent[] = [];
    redisson.on('lockLost', (event) => lost.push(event));
    const name = 'watchdog:node-held';
    const handle = await redisson.getLock(name).acquire();
    const java = javaLock(name);

    const startedAt = performance.now();
    const attempt = java.tryLock(CONTEND);
    const { ttls, owners } = await watch(name, attempt);
    expect(await attempt).toBe(false);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(CONTEND - 50);
    expect(Math.min(...ttls)).toBeGreaterThan(0);
    expect(Math.max(...ttls)).toBeLessThanOrEqual(WATCHDOG);
    expect([...owners]).toEqual([`${redisson.id}:${handle.threadId}`]);
    expect(handle.signal.aborted).toBe(false);
    expect(lost).toEqual([]);

    const next = java.lock();
    await handle.release();
    await next;
    expect(await java.isHeldByCurrentThread()).toBe(true);
    await java.unlock();
  });

  it.each(['java', 'node'] as const)('a %s lock with an explicit lease expires unrenewed, and the other side then takes it', async (holderSide) => {
    const name = `watchdog:lease:${holderSide}`;
    const lease = 1_500;
    const java = javaLock(name);
    const node = client({ lockWatchdogTimeout: WATCHDOG }).getLock(name);
    const acquiredAt = performance.now();
    if (holderSide === 'java') await java.lock(lease);
    else await node.lock({ threadId: 1, leaseTime: lease });

    const taken = holderSide === 'java' ? node.tryLock({ threadId: 2, waitTime: 10_000 }) : java.tryLock(10_000);
    expect(await taken).toBe(true);
    // No message: the waiter re-checked when the TTL it was given ran out.
    expect(performance.now() - acquiredAt).toBeGreaterThanOrEqual(lease - 100);
    if (holderSide === 'java') {
      await expect(java.unlock()).rejects.toThrow(/IllegalMonitorStateException/);
      await node.unlock({ threadId: 2 });
    } else {
      await java.unlock();
    }
    expect(await admin().exists(name)).toBe(0);
  });
});
